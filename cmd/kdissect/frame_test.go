package main

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// runCLI runs kdissect in-process and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// refLine reduces a tree line to what the reference pins down: drawing,
// name, type, value and [offset, size]. The doc column is ours to word, and
// naming an enum value ("= 2 (TOPIC)") is allowed where the reference
// leaves it bare.
var refLine = regexp.MustCompile(`^([|+\- ]*)(.*?) (\[0x[0-9a-f]{4,}, \d+B\])`)

func normalise(line string, refHasEnum bool) string {
	m := refLine.FindStringSubmatch(line)
	if m == nil {
		return "UNPARSED: " + line
	}
	label := m[2]
	if !refHasEnum {
		label = regexp.MustCompile(` = (-?\d+) \([A-Z_]+\)$`).ReplaceAllString(label, " = $1")
	}
	return m[1] + label + " " + m[3]
}

func TestFrameMatchesReferenceTrees(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"createacls-v3-request", []string{"frame", "../../testdata/frames/createacls-v3-request.bin"}},
		{"createacls-v3-response", []string{"frame", "--response", "--api", "CreateAcls", "--version", "3", "../../testdata/frames/createacls-v3-response.bin"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := os.ReadFile("../../testdata/frames/" + c.name + ".tree")
			if err != nil {
				t.Fatal(err)
			}
			got, stderr, code := runCLI(t, "", c.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			wl := strings.Split(strings.TrimRight(string(want), "\n"), "\n")
			gl := strings.Split(strings.TrimRight(got, "\n"), "\n")
			if len(wl) != len(gl) {
				t.Fatalf("%d lines, reference has %d:\n%s", len(gl), len(wl), got)
			}
			for i := range wl {
				refEnum := strings.Contains(wl[i], "(CreateAcls)")
				if w, g := normalise(wl[i], refEnum), normalise(gl[i], refEnum); w != g {
					t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
				}
			}
		})
	}
}

func TestFrameHexDumpAnnotatesRows(t *testing.T) {
	out, _, code := runCLI(t, "", "frame", "-x", "--hex", "00000015001e0003000000000000000200010001010000 0000")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := []string{
		"0000  00 00 00 15 00 1e 00 03  00 00 00 00 00 00 00 02  ................  size, request_api_key, request_api_version, correlation_id, client_id, tagged_fields, length",
		"0010  00 01 00 01 01 00 00 00  00                       .........         ResourceType, ResourceName, ResourcePatternType, Principal, Host, Operation, PermissionType, tagged_fields, tagged_fields",
	}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("missing hex row\n%s\nin\n%s", w, out)
		}
	}
}

func TestFrameJSONContract(t *testing.T) {
	out, _, code := runCLI(t, "", "frame", "--json", "--response", "--api", "30", "--version", "3", "../../testdata/frames/createacls-v3-response.bin")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var m struct {
		APIKey        int    `json:"api_key"`
		APIName       string `json:"api_name"`
		APIVersion    int    `json:"api_version"`
		Direction     string `json:"direction"`
		CorrelationID int    `json:"correlation_id"`
		Summary       string `json:"summary"`
		Problems      []any  `json:"problems"`
		Tree          struct {
			Name     string `json:"name"`
			Size     int    `json:"size"`
			Children []struct {
				Name     string `json:"name"`
				Category string `json:"category"`
			} `json:"children"`
		} `json:"tree"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if m.APIKey != 30 || m.APIName != "CreateAcls" || m.APIVersion != 3 || m.Direction != "response" ||
		m.Problems == nil || len(m.Problems) != 0 || m.Tree.Name != "CreateAclsResponse" || m.Tree.Size != 19 {
		t.Errorf("unexpected message: %+v", m)
	}
	if m.Summary != "CreateAcls v3 response corr=0: 1 result, all ok" {
		t.Errorf("summary %q", m.Summary)
	}
	var cats []string
	for _, c := range m.Tree.Children {
		cats = append(cats, c.Name+"="+c.Category)
	}
	if got := strings.Join(cats, " "); got != "Frame=frame ResponseHeader=rpc header CreateAclsResponse=response body" {
		t.Errorf("categories: %s", got)
	}
}

func TestFrameInputErrors(t *testing.T) {
	dir := t.TempDir()
	empty := dir + "/empty.bin"
	os.WriteFile(empty, nil, 0o644)
	cases := []struct {
		args []string
		want string
		code int
	}{
		{[]string{"frame"}, "kdissect: no frame: give a FILE, - for standard input, or --hex\n", 1},
		{[]string{"frame", dir + "/missing.bin"}, "kdissect: " + dir + "/missing.bin: no such file or directory\n", 1},
		{[]string{"frame", dir}, "kdissect: " + dir + ": is a directory, not a frame file\n", 1},
		{[]string{"frame", empty}, "kdissect: " + empty + ": empty: no frame to decode\n", 1},
		{[]string{"frame", "--hex", "0g"}, "kdissect: --hex: 'g' is not a hex digit\n", 1},
		{[]string{"frame", "--hex", "000"}, "kdissect: --hex has an odd number of digits (3)\n", 1},
		{[]string{"frame", "--response", "--hex", "00"}, "kdissect: a response needs --api and --version: it does not carry its API key\n", 1},
		{[]string{"frame", "--response", "--api", "Nope", "--version", "1", "--hex", "00"}, "kdissect: unknown API \"Nope\": give a number (30) or a name (CreateAcls)\n", 1},
		{[]string{"frame", "--response", "--api", "30", "--version", "40000", "--hex", "00"}, "kdissect: version 40000 is out of range\n", 1},
		{[]string{"frame", "--api", "30", "--hex", "00"}, "kdissect: --api and --version describe a response: add --response (a request carries its own)\n", 1},
		// The flags are judged before standard input (empty here) is read.
		{[]string{"frame", "--version", "1", "-"}, "kdissect: --api and --version describe a response: add --response (a request carries its own)\n", 1},
		{[]string{"frame", "--hex", "00", empty}, "kdissect: give the frame either with --hex or as a FILE, not both\n", 1},
		{[]string{"frame", empty, empty}, "kdissect: one frame at a time: give a single FILE\n", 1},
		{[]string{"frame", "--hex", " 0x "}, "kdissect: --hex is empty\n", 1},
	}
	for _, c := range cases {
		out, stderr, code := runCLI(t, "", c.args...)
		first := strings.SplitAfter(stderr, "\n")[0]
		if code != c.code || first != c.want || out != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit %d, %q", c.args, code, stderr, out, c.code, c.want)
		}
	}
}

func TestFrameMalformedExitsTwoWithPartialTree(t *testing.T) {
	// CreateAcls v3 whose Creations array claims 0x7e elements in 2 bytes.
	out, _, code := runCLI(t, "", "frame", "--hex", "0000000e001e0003000000070000007f0100")
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, out)
	}
	if !strings.Contains(out, "!! 0x000f: array length 126 exceeds the 2 bytes left") {
		t.Errorf("problem not shown at its offset:\n%s", out)
	}
}

func TestFrameFromStdin(t *testing.T) {
	seed, _ := os.ReadFile("../../testdata/frames/createacls-v3-request.bin")
	out, _, code := runCLI(t, string(seed), "frame", "--summary", "-")
	if code != 0 || out != "CreateAcls v3 request corr=0: UNKNOWN \"\" UNKNOWN on UNKNOWN \"\" (UNKNOWN) from \"\"\n" {
		t.Errorf("exit %d, %q", code, out)
	}
}
