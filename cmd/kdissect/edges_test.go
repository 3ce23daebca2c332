package main

import (
	"os"
	"strings"
	"testing"
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
	out, stderr, code := runCLI(t, "", "frame", "--summary", "../../testdata/frames/createacls-v3-response.bin")
	if code != 0 || !strings.HasPrefix(out, "Produce v0 request") {
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
