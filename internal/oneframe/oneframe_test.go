package oneframe

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/render"
)

const frames = "../../testdata/frames/"

func TestReadInputs(t *testing.T) {
	want, err := os.ReadFile(frames + "createacls-v3-request.bin")
	if err != nil {
		t.Fatal(err)
	}
	h := strings.ToUpper(hex.EncodeToString(want))
	for name, c := range map[string]struct {
		hexIn string
		args  []string
		stdin io.Reader
	}{
		"file":                   {"", []string{frames + "createacls-v3-request.bin"}, nil},
		"stdin":                  {"", []string{"-"}, bytes.NewReader(want)},
		"hex, 0x and colons":     {"0x" + strings.Join(pairs(h), ":"), nil, nil},
		"hex split by the shell": {"", []string{h[:10], h[10:]}, nil},
	} {
		got, err := Read(c.hexIn, c.args, c.stdin)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: % x, %v", name, got, err)
		}
	}
}

// More than MaxInput bytes is no single frame, and no more than that is read.
func TestReadCapped(t *testing.T) {
	r := &countReader{}
	_, err := Read("", []string{"-"}, io.LimitReader(r, 4*MaxInput))
	if err == nil || !strings.Contains(err.Error(), "more than 64 MiB: not a single frame") {
		t.Errorf("err %v", err)
	}
	if r.n > MaxInput+1<<20 {
		t.Errorf("read %d bytes", r.n)
	}
}

func TestReadUsageErrors(t *testing.T) {
	for _, c := range []struct {
		hexIn string
		args  []string
		want  string
	}{
		{"00", []string{"x.bin"}, "not both"},
		{"", nil, "no frame"},
		{"", []string{"a.bin", "b.bin"}, "one frame at a time"},
		{" : ", nil, "--hex is empty"},
		{"abc", nil, "odd number of digits (3)"},
		{"zz", nil, `'z' is not a hex digit`},
	} {
		_, err := Read(c.hexIn, c.args, nil)
		var ue capture.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v, want a usage error with %q", c.hexIn, c.args, err, c.want)
		}
	}
}

func TestDecodeNotes(t *testing.T) {
	reg := dissect.NewRegistry()
	req, _ := os.ReadFile(frames + "createacls-v3-request.bin")
	resp, _ := os.ReadFile(frames + "createacls-v3-response.bin")

	if m, notes := Decode(reg, req, Options{}); m.APIKey != 30 || len(m.Problems) != 0 || notes != nil {
		t.Errorf("a clean request: %s, problems %v, notes %q", m.APIName, m.Problems, notes)
	}
	// A response given as a request: read as a request all the same, with
	// the flags that read it as the response it is.
	m, notes := Decode(reg, resp, Options{})
	if m.APIKey == 30 || len(notes) != 1 || !strings.Contains(notes[0], "also decodes exactly as a CreateAcls response") ||
		!strings.Contains(notes[0], "--response --api 30 --version 3") {
		t.Errorf("a response as a request: %s, notes %q", m.APIName, notes)
	}
	m, notes = Decode(reg, resp, Options{Response: true, APIKey: 30, APIVersion: 3})
	if m.APIKey != 30 || len(m.Problems) != 0 || notes != nil {
		t.Errorf("the response: %s, problems %v, notes %q", m.APIName, m.Problems, notes)
	}
	_, notes = Decode(reg, []byte{0, 0, 0, 9, 0x7f, 0x7f, 0, 0, 0, 0, 0, 0, 0}, Options{})
	if len(notes) != 1 || notes[0] != "these bytes do not look like a Kafka request frame: API key 32639 is not one Kafka defines" {
		t.Errorf("not a request: notes %q", notes)
	}
	for frame, why := range map[string]string{
		"\x00\x00\x00\x01\x00":                                 "5 bytes, fewer than a request header's 12",
		"\x00\x00\x00\x20\x00\x1e\x00\x09\x00\x00\x00\x01\x00": "its size prefix says 32 bytes follow, but 9 do; CreateAcls has no version 9 (the newest is 3)",
	} {
		if _, notes := Decode(reg, []byte(frame), Options{}); len(notes) != 1 || !strings.HasSuffix(notes[0], ": "+why) {
			t.Errorf("% x: notes %q, want %q", frame, notes, why)
		}
	}
}

func TestAppendForms(t *testing.T) {
	req, _ := os.ReadFile(frames + "createacls-v3-request.bin")
	m, _ := Decode(dissect.NewRegistry(), req, Options{})
	var v map[string]any
	if out := Append(nil, m, render.JSON, false); json.Unmarshal(out, &v) != nil || v["api_key"] != float64(30) {
		t.Errorf("JSON: %.200s", out)
	}
	if out := string(Append(nil, m, render.Summary, false)); out != dissect.Escape(m.Summary)+"\n" || strings.Count(out, "\n") != 1 {
		t.Errorf("summary: %q", out)
	}
	tree, layout := Append(nil, m, render.Tree, false), Append(nil, m, render.Tree, true)
	if !bytes.HasPrefix(layout, tree) || len(layout) <= len(tree) || !bytes.HasPrefix(tree, []byte("CreateAclsRequest")) {
		t.Errorf("tree %d bytes, with the layout %d", len(tree), len(layout))
	}
}

func pairs(s string) []string {
	var out []string
	for i := 0; i < len(s); i += 2 {
		out = append(out, s[i:i+2])
	}
	return out
}

type countReader struct{ n int }

func (r *countReader) Read(p []byte) (int, error) {
	clear(p)
	r.n += len(p)
	return len(p), nil
}
