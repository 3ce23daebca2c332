package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/kdissect/kdissect/dissect"
)

// Golden screens of the seed capture. The plain ones pin the NoTTY profile
// (no escape sequences at all); the ANSI256 one shows the colours of the
// byte legend and the marked field; the nocolor one is what NO_COLOR gets
// (the ASCII profile: attributes only). go test ./tui/ -update rewrites
// them.
func TestGoldenScreens(t *testing.T) {
	entries, load := seedCapture(t)
	cases := []struct {
		name    string
		w, h    int
		profile colorprofile.Profile
		msgs    []tea.Msg
	}{
		{"request-80x24.golden", 80, 24, colorprofile.NoTTY, nil},
		{"request-160x48.golden", 160, 48, colorprofile.NoTTY, nil},
		// tree focused, cursor on Principal: its byte is marked, the status
		// line shows the path, value and doc.
		{"principal-80x24.golden", 80, 24, colorprofile.NoTTY,
			keys("tab", "G", "k", "k", "k", "k", "k")},
		{"principal-160x48.ansi256.golden", 160, 48, colorprofile.ANSI256,
			keys("tab", "G", "k", "k", "k", "k", "k")},
		{"principal-80x24.nocolor.golden", 80, 24, colorprofile.ASCII,
			keys("tab", "G", "k", "k", "k", "k", "k")},
		{"response-160x48.golden", 160, 48, colorprofile.NoTTY, keys("p")},
		{"help-80x24.golden", 80, 24, colorprofile.NoTTY, keys("?")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newTestModel(t, load, entries, c.w, c.h)
			m = send(m, tea.ColorProfileMsg{Profile: c.profile})
			m = send(m, c.msgs...)
			screenLines(t, m)
			golden(t, c.name, m.render()+"\n")
		})
	}
}

// Every tree row is the reference text of its node: the line AppendText
// writes for it, minus the doc, which goes to the status line.
func TestTreeRowsAreReferenceLabels(t *testing.T) {
	entries, load := seedCapture(t)
	for _, idx := range []int{0, 1} {
		m := newTestModel(t, load, entries, 160, 48)
		if idx == 1 {
			m = send(m, keyMsg("p"))
		}
		want := strings.Split(strings.TrimSuffix(string(dissect.AppendText(nil, m.cur.Tree)), "\n"), "\n")
		if len(m.tree.rows) != len(want) {
			t.Fatalf("message %d: %d rows, reference text has %d lines", idx, len(m.tree.rows), len(want))
		}
		for i := range m.tree.rows {
			r := &m.tree.rows[i]
			got := r.prefix + label(r.node)
			if !strings.HasPrefix(want[i], got) {
				t.Errorf("message %d row %d:\n got %q\nwant %q", idx, i, got, want[i])
			}
			if doc := r.node.Doc; doc != "" && want[i] != got+" "+doc {
				t.Errorf("message %d row %d: reference line %q is not label + doc %q", idx, i, want[i], doc)
			}
		}
	}
}

// The seed request's tree rows match the committed reference tree file
// line by line, up to the doc column and the enum names the decoder adds.
func TestTreeMatchesReferenceFile(t *testing.T) {
	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 160, 48)
	ref := strings.Split(strings.TrimSpace(string(readSeed(t, "createacls-v3-request.tree"))), "\n")
	if len(ref) != len(m.tree.rows) {
		t.Fatalf("%d rows, reference has %d", len(m.tree.rows), len(ref))
	}
	for i := range m.tree.rows {
		r := &m.tree.rows[i]
		got := r.prefix + label(r.node)
		// The reference leaves ResourceType/Operation/... bare; naming
		// them is allowed: drop " (NAME)" after an int value.
		stripped := stripEnumName(got)
		if !strings.HasPrefix(ref[i], stripped) && !strings.HasPrefix(ref[i], got) {
			t.Errorf("row %d:\n got %q\n ref %q", i, got, ref[i])
		}
	}
}

func stripEnumName(s string) string {
	i := strings.Index(s, " = ")
	j := strings.LastIndex(s, " [0x")
	if i < 0 || j < i {
		return s
	}
	val := s[i+3 : j]
	if k := strings.Index(val, " ("); k > 0 && !strings.Contains(val, "compact") && !strings.Contains(val, "len") {
		return s[:i+3] + val[:k] + s[j:]
	}
	return s
}
