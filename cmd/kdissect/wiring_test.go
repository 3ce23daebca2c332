package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// principals lists the principal of every NDJSON message line.
func principals(t *testing.T, out string) []any {
	t.Helper()
	var got []any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if _, ok := m["event"]; !ok {
			got = append(got, m["principal"])
		}
	}
	return got
}

// A --schema-dir that replaces SaslAuthenticate with a definition whose
// bytes field has another name takes neither the connections' principals
// nor the redaction of their passwords away: the SASL definitions are the
// built-in ones after any schema dir.
func TestSchemaDirKeepsTheSASLDefinitions(t *testing.T) {
	def, err := os.ReadFile("../../dissect/defs/SaslAuthenticateRequest.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	renamed := strings.Replace(string(def), `"AuthBytes"`, `"Token"`, 1)
	if renamed == string(def) {
		t.Fatal("the SaslAuthenticateRequest definition has no AuthBytes field to rename")
	}
	if err := os.WriteFile(filepath.Join(dir, "SaslAuthenticateRequest.json"), []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, _, _ := runCLI(t, "", "--json", "--all", saslCapture)
	withDir, _, _ := runCLI(t, "", "--json", "--all", "--schema-dir", dir, saslCapture)
	want, got := principals(t, plain), principals(t, withDir)
	named := 0
	for _, p := range want {
		if p != nil {
			named++
		}
	}
	if named == 0 {
		t.Fatal("the shipped SASL capture names no principal")
	}
	if len(got) != len(want) {
		t.Fatalf("%d messages with --schema-dir, %d without", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d: principal %v with --schema-dir, %v without", i, got[i], want[i])
		}
	}
	hexPlain, _, _ := runCLI(t, "", "-x", "--all", saslCapture)
	hexDir, _, _ := runCLI(t, "", "-x", "--all", "--schema-dir", dir, saslCapture)
	if hexDir != hexPlain {
		t.Errorf("-x differs with a --schema-dir SASL definition (redaction lost?)")
	}
	if !strings.Contains(hexPlain, "redacted") {
		t.Errorf("-x of the SASL capture redacts nothing")
	}
}

// guessCapture holds two CreateAcls responses and a DeleteAcls response
// whose requests were not captured (the capture began mid-connection).
func guessCapture(t *testing.T) string {
	b := newPcap(t)
	c := midConn(b, 50500, 9092)
	del := kmsg.NewDeleteACLsResponse()
	del.Version = 3
	res := kmsg.NewDeleteACLsResponseResult()
	mt := kmsg.NewDeleteACLsResponseResultMatchingACL()
	mt.ResourceType, mt.ResourceName = kmsg.ACLResourceTypeTopic, "orders"
	mt.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
	mt.Principal, mt.Host = "User:bob", "*"
	mt.Operation, mt.PermissionType = kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	res.MatchingACLs = append(res.MatchingACLs, mt)
	del.Results = append(del.Results, res)
	c.Send(false, append(append(aclResponse(7, 0), aclResponse(8, 0, 42)...), testkit.Response(9, true, del.AppendTo(nil))...))
	return b.File(t)
}

// --tui --guess guesses as the main command does.
func TestExplorerGuessesLikeTheMainCommand(t *testing.T) {
	file := guessCapture(t)
	cli, _, _ := runCLI(t, "", "--summary", "--guess", file)
	o := capture.DefaultOptions()
	o.Guess = true
	_, ech, pch, result := startReader(t, o, file)
	go func() {
		for range pch {
		}
	}()
	var listed []string
	for e := range ech {
		listed = append(listed, e.Summary)
	}
	if _, err := result(true); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 3 {
		t.Fatalf("the explorer listed %d messages, want the 3 guessed: %q", len(listed), listed)
	}
	for _, s := range listed {
		if !strings.Contains(cli, s+" (inferred)") {
			t.Errorf("explorer lists %q, which --summary --guess does not infer:\n%s", s, cli)
		}
	}
}

// kdissect audit infers what responses without their request prove (issue
// 16; --guess is still accepted and changes nothing): the deletion a
// guessed DeleteAcls response confirms is a row, marked inferred, and the
// log says it may be incomplete (exit 3).
func TestAuditGuesses(t *testing.T) {
	file := guessCapture(t)
	plain, _, code := runCLI(t, "", "audit", "--format", "json", file)
	if code != exitIncomplete {
		t.Fatalf("exit %d, want %d", code, exitIncomplete)
	}
	out, stderr, code := runCLI(t, "", "audit", "--format", "json", "--guess", file)
	if code != exitIncomplete || out != plain {
		t.Fatalf("--guess: exit %d: %s\n%s", code, stderr, out)
	}
	var row map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if r["action"] == "delete" {
			row = r
		}
	}
	b, _ := row["binding"].(map[string]any)
	if row["result"] != "ok" || row["inferred"] != true || b["resource_name"] != "orders" || b["principal"] != "User:bob" {
		t.Errorf("row %v", row)
	}
}

// `kdissect frame` of bytes that are not a frame says why on stderr.
func TestFrameOfTextSaysItIsNotAFrame(t *testing.T) {
	f := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(f, []byte("protocol notes, not a frame\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "", "frame", f)
	// "prot" is the size prefix, "oc" the API key.
	want := `kdissect: these bytes do not look like a Kafka request frame: its size prefix says 1886547828 bytes follow, but 24 do; API key 28515 is not one Kafka defines` + "\n"
	if code != exitMalformed || stderr != want {
		t.Errorf("exit %d, stderr %q\nwant %q", code, stderr, want)
	}
	// A real request says nothing.
	_, stderr, code = runCLI(t, "", "frame", "../../testdata/frames/createacls-v3-request.bin")
	if code != exitOK || stderr != "" {
		t.Errorf("a CreateAcls request: exit %d, %q", code, stderr)
	}
}

// Mistakes on the command line get one sentence in our words and the help
// of the command they were made on.
func TestUsageErrorsInOurWords(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-conns", "abc", "x.pcap"}, "kdissect: --max-conns \"abc\": not a whole number\nRun 'kdissect --help' for usage.\n"},
		{[]string{"--duration", "soon", "x.pcap"}, "kdissect: --duration \"soon\": not a duration (e.g. 30s, 5m)\nRun 'kdissect --help' for usage.\n"},
		{[]string{"--nosuch", "x.pcap"}, "kdissect: unknown flag --nosuch\nRun 'kdissect --help' for usage.\n"},
		{[]string{"-c"}, "kdissect: -c needs a value\nRun 'kdissect --help' for usage.\n"},
		{[]string{"-Y"}, "kdissect: -Y needs a value\nRun 'kdissect --help' for usage.\n"},
		{[]string{"-c", "x", "x.pcap"}, "kdissect: -c \"x\": not a whole number\nRun 'kdissect --help' for usage.\n"},
		{[]string{"-x=maybe", "x.pcap"}, "kdissect: -x \"maybe\": not true or false\nRun 'kdissect --help' for usage.\n"},
		{[]string{"--summary=2", "x.pcap"}, "kdissect: --summary \"2\": not true or false\nRun 'kdissect --help' for usage.\n"},
		{[]string{"--api", "999", "x.pcap"}, "kdissect: --api: 999 is not an API key Kafka defines (0 to 94)\nRun 'kdissect --help' for usage.\n"},
		{[]string{"audit", "--max-conns", "abc", "x.pcap"}, "kdissect: --max-conns \"abc\": not a whole number\nRun 'kdissect audit --help' for usage.\n"},
		{[]string{"audit"}, "kdissect: no capture: give pcap/pcapng FILEs, - for standard input, or --iface NAME\nRun 'kdissect audit --help' for usage.\n"},
		{[]string{"frame", "--hex", "0"}, "kdissect: --hex has an odd number of digits (1)\nRun 'kdissect frame --help' for usage.\n"},
	} {
		_, stderr, code := runCLI(t, "", c.args...)
		if c.args[0] == "--api" { // the newest key grows with Kafka
			c.want = strings.Replace(c.want, "94", strconv.Itoa(int(dissect.MaxAPIKey)), 1)
		}
		if code != exitUsage || stderr != c.want {
			t.Errorf("%q: exit %d, %q\nwant %q", c.args, code, stderr, c.want)
		}
	}
}

// `kdissect help` is --help, not a file named help.
func TestHelpCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "Usage: kdissect [flags] FILE..."},
		{[]string{"help", "audit"}, "Usage: kdissect audit [flags] FILE..."},
		{[]string{"help", "frame"}, "Usage: kdissect frame [flags]"},
	} {
		out, stderr, code := runCLI(t, "", c.args...)
		if code != exitOK || !strings.HasPrefix(out, c.want) || stderr != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout starts %.60q", c.args, code, stderr, out)
		}
	}
}

// TestGuardedPanic: a panic under main is one line on stderr and exit 1,
// or, with KDISSECT_TRACEBACK, the panic itself.
func TestGuardedPanic(t *testing.T) {
	var stderr strings.Builder
	code := guarded(&stderr, false, func() int { panic("boom \x1b[31m") })
	if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 || strings.Contains(stderr.String(), "\x1b") ||
		!strings.HasPrefix(stderr.String(), "kdissect: internal error: boom") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	if code := guarded(&stderr, false, func() int { return exitMalformed }); code != exitMalformed {
		t.Errorf("no panic: exit %d", code)
	}
	defer func() {
		if v := recover(); v != "again" {
			t.Errorf("with traceback: recovered %v", v)
		}
	}()
	guarded(&stderr, true, func() int { panic("again") })
	t.Error("with traceback: no panic")
}
