package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// Every example in 'kdissect frame --help' works as printed (run from the
// repository's root, where its paths point).
func TestFrameHelpExamplesRunAsPrinted(t *testing.T) {
	help, _, code := runCLI(t, "", "frame", "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	t.Chdir("../..")
	var ran []string
	for _, line := range strings.Split(help, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "kdissect frame ") {
			continue
		}
		cmd, piped, _ := strings.Cut(line, " | ")
		args := strings.Fields(cmd)[1:]
		stdin := ""
		if i := indexOf(args, "<"); i >= 0 {
			b, err := os.ReadFile(args[i+1])
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			stdin, args = string(b), args[:i]
		}
		out, stderr, code := runCLI(t, stdin, args...)
		if code != 0 || stderr != "" || !strings.Contains(out, "CreateAcls") {
			t.Errorf("%s: exit %d, stderr %q, stdout:\n%s", line, code, stderr, out)
		}
		if piped == "jq .summary" && !strings.Contains(out, `"summary":"CreateAcls v3 request corr=0`) {
			t.Errorf("%s: no summary for jq in %s", line, out)
		}
		ran = append(ran, args[1])
	}
	// The four examples, the --hex one included: its trailing " 00" used
	// to be read as a FILE.
	if strings.Join(ran, " ") != "testdata/frames/createacls-v3-request.bin -x --response --json" {
		t.Errorf("examples run: %q", ran)
	}
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

// A response given without --response decodes as some request (its
// correlation id's bytes spell Produce v0); kdissect says it also fits an
// ACL response exactly and names the flags, keeping exit status 0.
func TestFrameHintsAtACLResponse(t *testing.T) {
	// Read as a request, its correlation id spells Produce v0, whose body
	// these bytes do not hold: the decode shown is malformed (exit 2).
	out, stderr, code := runCLI(t, "", "frame", "--summary", "../../testdata/frames/createacls-v3-response.bin")
	if code != exitMalformed || !strings.HasPrefix(out, "Produce v0 request") {
		t.Errorf("exit %d, %q", code, out)
	}
	want := "kdissect: this frame also decodes exactly as a CreateAcls response (v2, v3); to read it so, add --response --api 30 --version 3\n"
	if stderr != want {
		t.Errorf("stderr %q\nwant   %q", stderr, want)
	}
	// Following the hint gives the reference response, silently.
	out, stderr, code = runCLI(t, "", "frame", "--summary", "--response", "--api", "30", "--version", "3", "../../testdata/frames/createacls-v3-response.bin")
	if code != 0 || stderr != "" || !strings.HasPrefix(out, "CreateAcls v3 response corr=0") {
		t.Errorf("with the hint's flags: exit %d, %q, %q", code, out, stderr)
	}
	// A genuine ACL request gets no hint.
	_, stderr, _ = runCLI(t, "", "frame", "--summary", "../../testdata/frames/createacls-v3-request.bin")
	if stderr != "" {
		t.Errorf("request: stderr %q", stderr)
	}
	// Nor does a frame that fits no ACL response exactly.
	_, stderr, code = runCLI(t, "", "frame", "--summary", "--hex", metadataHex)
	if stderr != "" || code != 0 {
		t.Errorf("metadata request: exit %d, stderr %q", code, stderr)
	}
}

const metadataHex = "00000011000300010000000100036369 6cffffffff"

// --version prints what the toolchain stamped into the binary: the module
// version and, when built from a VCS checkout, the revision.
func TestVersionNamesModuleAndRevision(t *testing.T) {
	bin := kdissectBinary(t)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	version, rev, modified, when, goVersion := "", "", false, "", ""
	for i, line := range strings.Split(string(info), "\n") {
		f := strings.Fields(line)
		switch {
		case i == 0 && len(f) == 2:
			goVersion = f[1]
		case len(f) >= 3 && f[0] == "mod":
			version = f[2]
		case len(f) == 2 && f[0] == "build":
			k, v, _ := strings.Cut(f[1], "=")
			switch k {
			case "vcs.revision":
				rev = v
			case "vcs.modified":
				modified = v == "true"
			case "vcs.time":
				when = v
			}
		}
	}
	vcs := "revision unknown"
	if rev != "" {
		vcs = "revision " + rev
		if modified {
			vcs += ", modified"
		}
		vcs += ", " + when
	}
	want := "kdissect " + version + " (" + vcs + ") " + goVersion + "\n"
	if version == "" || string(out) != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}
	// In process too, with exit status 0 and nothing else done.
	got, stderr, code := runCLI(t, "", "--version", "--json")
	if code != 0 || stderr != "" || !strings.HasPrefix(got, "kdissect ") || strings.Count(got, "\n") != 1 {
		t.Errorf("exit %d, %q, %q", code, got, stderr)
	}
}

// A capture without Kafka on the given ports prints nothing on stdout and
// exits 0, but says on stderr what it held and which --port to try.
func TestNoKafkaSaysWhatWasSeen(t *testing.T) {
	b := newPcap(t)
	for i := range 3 {
		c := openConn(b, uint16(50000+i), 443)
		c.Send(true, []byte("\x16\x03\x01\x00\x05hello"))
	}
	openConn(b, 50100, 22).Send(false, []byte("SSH-2.0-OpenSSH_9.6\r\n"))
	for port := uint16(8000); port < 8005; port++ {
		openConn(b, 50200+port, port)
	}
	other := b.File(t)
	for _, detect := range []string{"--detect=true", "--detect=false"} {
		out, stderr, code := runCLI(t, "", detect, other)
		want := "kdissect: no Kafka traffic found on port 9092; saw 9 TCP connections on ports 443 (3), 22 (1), 8000 (1), 8001 (1), 8002 (1), and 2 more ports: if Kafka is there, try --port 443,22,8000\n"
		if out != "" || code != 0 || stderr != want {
			t.Errorf("%s: exit %d, stdout %q, stderr\n%q, want\n%q", detect, code, out, stderr, want)
		}
	}
	// Following the advice finds the Kafka on 9092 of another capture: no
	// hint then.
	if _, stderr, code := runCLI(t, "", "--summary", aclCapture(t)); stderr != "" || code != 0 {
		t.Errorf("Kafka capture: exit %d, %q", code, stderr)
	}
	// Connections on the broker port that carry no Kafka frame (TLS).
	b = newPcap(t)
	openConn(b, 50000, 9093).Send(true, []byte("\x16\x03\x01\x00\x05hello"))
	_, stderr, _ := runCLI(t, "", "--port", "9092-9093", b.File(t))
	if stderr != "kdissect: no Kafka frames in the 1 TCP connection on ports 9092-9093: its TLS was not decrypted: the capture began mid-connection: the handshake was not captured\n" {
		t.Errorf("TLS on the broker port: %q", stderr)
	}
	// No TCP at all.
	_, stderr, _ = runCLI(t, "", newPcap(t).File(t))
	if stderr != "kdissect: no Kafka traffic found: no TCP connection in 0 packets\n" {
		t.Errorf("empty capture: %q", stderr)
	}
}

// lossyCapture holds one of everything the NDJSON can report: a malformed
// request, an unmatched response, bytes not captured, garbage skipped, a
// retransmission, a frame cut by the end of the capture, and Kafka found
// on a port not given with --port.
func lossyCapture(t *testing.T) string {
	b := newPcap(t)
	c := openConn(b, 50500, 9092)
	req := testkit.WithCorr(seed(t, "createacls-v3-request"), 2, true)
	c.Raw(true, c.CSeq, "A", req, -1) // sent twice: a retransmission
	c.Send(true, req)
	c.Send(false, testkit.WithCorr(seed(t, "createacls-v3-response"), 2, false))
	c.Send(false, testkit.WithCorr(seed(t, "createacls-v3-response"), 99, false)) // no such request
	c.Send(true, []byte{0, 0, 0, 0x0e, 0, 30, 0, 3, 0, 0, 0, 7, 0, 0, 0, 0x7f, 0x01, 0x00})
	c.Send(true, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) // garbage: skipped
	c.Send(true, testkit.WithCorr(seed(t, "createacls-v3-request"), 8, true))
	c.Drop(true, 100) // lost, never retransmitted
	c.Send(true, testkit.WithCorr(seed(t, "createacls-v3-request"), 9, true))
	c.Send(true, testkit.WithCorr(seed(t, "createacls-v3-request"), 10, true)[:10]) // cut by the end
	d := openConn(b, 50600, 9999)
	d.Send(true, testkit.WithCorr(seed(t, "createacls-v3-request"), 11, true))
	return b.File(t)
}

// README's "anything lost or malformed" recipe selects what its words say:
// every event that reports lost, skipped or cut bytes and every message
// with problems, but not retransmissions (nothing is lost) nor ports found
// by --detect. The selection is checked in Go, and with jq where installed.
func TestReadmeLostOrMalformedRecipe(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	_, recipe, ok := strings.Cut(text, "# anything lost or malformed")
	_, recipe, ok2 := strings.Cut(recipe, "jq -c '")
	filter, _, ok3 := strings.Cut(recipe, "'")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README has no 'anything lost or malformed' jq recipe")
	}
	_, in, _ := strings.Cut(filter, "IN(")
	in, _, _ = strings.Cut(in, ")")
	lost := map[string]bool{}
	for _, name := range strings.Split(in, ",") {
		lost[strings.Trim(strings.TrimSpace(name), `"`)] = true
	}
	if !strings.Contains(filter, "(.problems | length > 0)") {
		t.Errorf("the recipe does not select messages with problems: %s", filter)
	}
	// Every event of the contract's table is either in the recipe or one
	// of those that report nothing lost.
	_, table, _ := strings.Cut(text, "**NDJSON event lines**")
	table, _, _ = strings.Cut(table, "```")
	var events []string
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Split(line, "`"); strings.HasPrefix(line, "| `") && len(f) > 1 {
			events = append(events, f[1])
			// tls_session is selected only when not decrypted, below.
			if lost[f[1]] == (f[1] == "retransmission" || f[1] == "port_detected" || f[1] == "tls_session" || f[1] == "tls_alert") {
				t.Errorf("event %s: in the recipe = %v", f[1], lost[f[1]])
			}
		}
	}
	if !strings.Contains(filter, `(.event == "tls_session" and .decrypted == false and .refused == false)`) {
		t.Errorf("the recipe does not select TLS sessions without keys (refused handshakes hide nothing): %s", filter)
	}
	if len(events) < 7 || len(lost) != len(events)-4 {
		t.Errorf("table events %v, recipe events %v", events, lost)
	}

	out, _, _ := runCLI(t, "", "--json", lossyCapture(t))
	var all []string
	var selected []string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var d struct {
			Event         string `json:"event"`
			CorrelationID int    `json:"correlation_id"`
			Problems      []any  `json:"problems"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		kind := d.Event
		if kind == "" {
			kind = fmt.Sprintf("message-corr-%d", d.CorrelationID)
		}
		all = append(all, kind)
		if lost[d.Event] || len(d.Problems) > 0 {
			selected = append(selected, line)
		}
	}
	var kinds []string
	for _, line := range selected {
		var d map[string]any
		json.Unmarshal([]byte(line), &d)
		if e, ok := d["event"]; ok {
			kinds = append(kinds, e.(string))
		} else {
			kinds = append(kinds, fmt.Sprint("message-corr-", d["correlation_id"]))
		}
	}
	sort.Strings(kinds)
	if got := strings.Join(kinds, " "); got != "gap incomplete message-corr-7 unmatched_response unparseable" {
		t.Errorf("selected %s\nfrom %v", got, all)
	}
	// The capture does hold what must not be selected.
	for _, must := range []string{"retransmission", "port_detected", "message-corr-2"} {
		if !slices.Contains(all, must) {
			t.Errorf("lossyCapture gave no %s: %v", must, all)
		}
	}

	jq, err := exec.LookPath("jq")
	if err != nil {
		return // the selection above is the recipe's; jq is not a dependency
	}
	cmd := exec.Command(jq, "-c", filter)
	cmd.Stdin = strings.NewReader(out)
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("jq %s: %v", filter, err)
	}
	// jq prints its own compact form: compare parsed values.
	if normaliseJSONLines(string(got)) != normaliseJSONLines(strings.Join(selected, "\n")) {
		t.Errorf("jq selected:\n%s\nwant:\n%s", got, strings.Join(selected, "\n"))
	}
}

func normaliseJSONLines(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		var v any
		json.Unmarshal([]byte(line), &v)
		out, _ := json.Marshal(v)
		b.Write(out)
		b.WriteByte('\n')
	}
	return b.String()
}

// A connection does not run on from one file into the next: a frame cut
// at a file's end is reported incomplete in that file, and numbered there.
func TestFramesDoNotSpanFiles(t *testing.T) {
	req := testkit.WithCorr(seed(t, "createacls-v3-request"), 2, true)
	b := newPcap(t)
	c := openConn(b, 50500, 9092)
	c.Send(true, req[:10])
	first := b.File(t)
	b = newPcap(t)
	c.Cap = b
	c.Send(true, req[10:])
	second := b.File(t)
	out, _, _ := runCLI(t, "", "--json", first, second)
	line, _, _ := strings.Cut(out, "\n")
	want := `{"event":"incomplete","time":"2026-03-01T12:00:00.003Z","src":"192.0.2.10:50500","dst":"192.0.2.1:9092","stream_offset":0,"have":10,"want":25,"reason":"end of capture","file":` + quoteJSON(first) + `}`
	if line != want {
		t.Errorf("first line\n%s\nwant\n%s", line, want)
	}
	if strings.Contains(out, `"api_key":30`) {
		t.Errorf("a frame stitched across files:\n%s", out)
	}
}

func quoteJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

// internal/hugepages must advise .bss before gopacket/layers fills its
// tables, or it saves nothing: the built binary's init trace shows the
// order Go chose.
func TestHugePagesBeforeLayers(t *testing.T) {
	cmd := exec.Command(kdissectBinary(t), "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var trace strings.Builder
	cmd.Stderr = &trace
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	at := map[string]int{}
	for i, line := range strings.Split(trace.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			at[f[1]] = i + 1
		}
	}
	hp, layers := at["github.com/kdissect/kdissect/internal/hugepages"], at["github.com/google/gopacket/layers"]
	if hp == 0 || layers == 0 || hp > layers {
		t.Errorf("init trace line of internal/hugepages %d, of gopacket/layers %d (0: absent); want the first before the second:\n%s", hp, layers, trace.String())
	}
}
