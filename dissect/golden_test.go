package dissect

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// The reference trees (testdata/*.tree, copied from the project's
// reference) are the format we are measured against: every line must match
// in names, types, values, offsets and sizes. The doc column is ours to
// write, and naming an enum value the reference leaves bare ("= 0
// (UNKNOWN)") is an improvement, not a difference.
func TestReferenceTrees(t *testing.T) {
	for _, tc := range []struct {
		name     string
		request  bool
		key, ver int16
	}{
		{"createacls-v3-request", true, 30, 3},
		{"createacls-v3-response", false, 30, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frame := readTestdata(t, tc.name+".bin")
			ref := lines(readTestdata(t, tc.name+".tree"))
			m := decodeWith(Builtin(), tc.request, frame, tc.key, tc.ver)
			if len(m.Problems) > 0 {
				t.Errorf("problems: %v", m.Problems)
			}
			got := lines(AppendText(nil, m.Tree))
			if len(got) != len(ref) {
				t.Errorf("%d lines, reference has %d", len(got), len(ref))
			}
			for i := range min(len(got), len(ref)) {
				g, r := stripDoc(got[i]), stripDoc(ref[i])
				if g != r && stripEnumName(g) != r {
					t.Errorf("line %d:\n got %s\nwant %s", i+1, g, r)
				}
			}
		})
	}
}

var docRE = regexp.MustCompile(`^(.*? \[0x[0-9a-f]{4,}, \d+B\])(?: .*)?$`)

// stripDoc cuts a tree line after its [offset, size] column.
func stripDoc(line string) string {
	if m := docRE.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return line
}

var enumRE = regexp.MustCompile(`^(.* = -?\d+) \([A-Za-z_ ]+\)( \[0x.*)$`)

// stripEnumName drops the " (NAME)" after an integer value.
func stripEnumName(line string) string { return enumRE.ReplaceAllString(line, "$1$2") }

// TestStripHelpers guards the comparison above: it must not be so loose
// that different lines compare equal.
func TestStripHelpers(t *testing.T) {
	if got := stripDoc("+-- a int8 = 1 (X) [0x0010, 1B] some doc [0x0001, 2B]"); got != "+-- a int8 = 1 (X) [0x0010, 1B]" {
		t.Errorf("stripDoc: %q", got)
	}
	if got := stripEnumName("+-- a int8 = 0 (UNKNOWN) [0x0010, 1B]"); got != "+-- a int8 = 0 [0x0010, 1B]" {
		t.Errorf("stripEnumName: %q", got)
	}
	// Only an enum name after an integer goes; a string's note stays.
	if got := stripEnumName(`+-- s string = "" (compact, len+1=1) [0x0011, 1B]`); got != `+-- s string = "" (compact, len+1=1) [0x0011, 1B]` {
		t.Errorf("stripEnumName on a string: %q", got)
	}
}

// TestGolden renders a set of frames in full (summary, problems, text tree,
// byte layout) and compares with testdata/golden/*.golden, which a person
// reads to judge the output. Run with -update to rewrite them after a
// deliberate change, then review the diff.
func TestGolden(t *testing.T) {
	type gcase struct {
		name     string
		request  bool
		key, ver int16
		frame    []byte
	}
	cases := []gcase{
		{"seed-request", true, 30, 3, readTestdata(t, "createacls-v3-request.bin")},
		{"seed-response", false, 30, 3, readTestdata(t, "createacls-v3-response.bin")},
	}
	for _, s := range sampleFrames(0) {
		cases = append(cases, gcase{strings.ReplaceAll(s.name, " ", "-"), s.request, s.key, s.ver, s.frame})
	}
	seed := readTestdata(t, "createacls-v3-request.bin")
	cases = append(cases,
		gcase{"malformed-truncated", true, 0, 0, seed[:19]},
		gcase{"malformed-unknown-key", true, 0, 0, testkit.SetSize(append(hexBytes("00000000 03e7 0000 00000001 ffff"), "opaque"...))},
		gcase{"malformed-trailing", true, 0, 0, testkit.SetSize(append(bytes.Clone(seed), 0xde, 0xad))},
		gcase{"malformed-hostile", false, 30, 1, testkit.KmsgResponse(hostileCreateResp(), 1)},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := decodeWith(Builtin(), c.request, c.frame, c.key, c.ver)
			var b []byte
			b = append(b, "summary: "...)
			b = append(b, m.Summary...)
			b = append(b, '\n')
			for _, p := range m.Problems {
				b = appendProblem(b, p)
				b = append(b, '\n')
			}
			b = append(b, '\n')
			b = AppendText(b, m.Tree)
			b = append(b, '\n')
			b = AppendHexDump(b, c.frame, m.Tree)
			testkit.Golden(t, filepath.Join("testdata", "golden", c.name+".golden"), b)
		})
	}
}
