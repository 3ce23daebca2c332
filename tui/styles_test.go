package tui

import (
	"io"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// sgrRE is one SGR sequence; its parameters are group 1.
var sgrRE = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// sgrParams is every parameter of every SGR sequence in s.
func sgrParams(s string) map[string]bool {
	ps := map[string]bool{}
	for _, m := range sgrRE.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			ps[p] = true
		}
	}
	return ps
}

// With NO_COLOR the terminal's profile is ASCII, at which the program
// drops every colour but keeps the attributes: the explorer then draws
// with reverse video, bold and underline alone, so the selection, the
// marked bytes and the hex cursor still show.
func TestNoColorStillShowsTheSelection(t *testing.T) {
	p := colorprofile.Env([]string{"TERM=xterm-256color", "NO_COLOR=1"})
	if p != colorprofile.ASCII {
		t.Fatalf("NO_COLOR: profile %v, want ASCII", p)
	}
	st := stylesFor(p)
	for name, s := range map[string]lipgloss.Style{
		"Selected": st.Selected, "SelectedBlur": st.SelectedBlur, "CatMark": st.CatMark[0], "HexCursor": st.HexCursor,
	} {
		if s.Render("x") == "x" {
			t.Errorf("%s renders no attribute", name)
		}
	}

	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 80, 24)
	m = send(m, tea.ColorProfileMsg{Profile: p})
	// Tree focused on Principal (byte 0x13), then the bytes focused: the
	// cursor is on the field's one byte.
	m = send(m, keys("tab", "G", "k", "k", "k", "k", "k")...)
	// Drawn without colours, not with colours the terminal then drops:
	// those would take the selection's reverse video with them.
	v := m.render()
	if got := onTerminal(t, v, p); got != v {
		t.Errorf("the screen at %v is not what the terminal shows:\n%q\n%q", p, v, got)
	}
	for p := range sgrParams(v) {
		if p == "38" || p == "48" || (len(p) == 2 && (p[0] == '3' || p[0] == '4' || p[0] == '9') && p[1] <= '7') || strings.HasPrefix(p, "10") {
			t.Errorf("a colour (SGR %s) on the screen with NO_COLOR", p)
		}
	}
	// The list's selected row (list not focused) is reversed; the tree's
	// selected row is reversed and bold.
	lines := strings.Split(v, "\n")
	row := func(prefix string) string {
		for _, l := range lines {
			if plain := stripSGR(l); strings.HasPrefix(strings.TrimLeft(plain, " "), prefix) {
				return l
			}
		}
		t.Fatalf("no line starting %q:\n%s", prefix, stripSGR(v))
		return ""
	}
	if l := row(">   0 "); !sgrParams(l)["7"] {
		t.Errorf("the list's selected row is not reversed: %q", l)
	}
	tree := row("> ")
	for _, l := range lines {
		if p := stripSGR(l); strings.HasPrefix(p, ">") && strings.Contains(p, "Principal") {
			tree = l
		}
	}
	if ps := sgrParams(tree); !ps["7"] || !ps["1"] {
		t.Errorf("the tree's selected row is not reversed and bold: %q", tree)
	}
	// The marked byte, 0x13 on the second hex row (01: an empty compact
	// string), in reverse video, hex and ASCII; no other byte is.
	checkByte := func(what string, v string, want func(attrs map[string]bool) bool) {
		t.Helper()
		var hexRow string
		for _, l := range strings.Split(v, "\n") {
			if strings.HasPrefix(stripSGR(l), "0010  ") {
				hexRow = l
			}
		}
		cells := cellAttrs(hexRow)
		plain := stripSGR(hexRow)
		hexCol, ascCol := 6+3*3, 6+3*16+1+1+3 // byte 3 of the row
		if plain[hexCol:hexCol+2] != "01" || plain[ascCol] != '.' {
			t.Fatalf("byte 0x13 not where expected in %q", plain)
		}
		for i, a := range cells {
			in := i == hexCol || i == hexCol+1 || i == ascCol
			if in != want(a) {
				t.Errorf("%s: cell %d (%q) of %q has %v", what, i, plain[i], plain, a)
			}
		}
	}
	checkByte("marked byte", v, func(a map[string]bool) bool { return a["7"] && a["1"] })
	// Bytes focused: the cursor (on the marked byte) is underlined, the
	// one byte of the field not reversed.
	m = send(m, keys("3")...)
	checkByte("hex cursor", onTerminal(t, m.render(), p), func(a map[string]bool) bool { return a["4"] && !a["7"] })

	// Other profiles keep the colours of NewStyles.
	for _, p := range []colorprofile.Profile{colorprofile.ANSI, colorprofile.ANSI256, colorprofile.TrueColor} {
		if got, want := stylesFor(p).CatMark[2].Render("x"), NewStyles().CatMark[2].Render("x"); got != want {
			t.Errorf("profile %v: %q, want NewStyles' %q", p, got, want)
		}
	}
}

// onTerminal is s as a terminal of profile p receives it: the program
// downsamples every frame's colours (and attributes, at NoTTY) to p.
func onTerminal(t *testing.T, s string, p colorprofile.Profile) string {
	t.Helper()
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: p}
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func stripSGR(s string) string { return sgrRE.ReplaceAllString(s, "") }

// cellAttrs is the SGR parameters in effect at each cell of a line of
// single-width runes.
func cellAttrs(line string) []map[string]bool {
	var out []map[string]bool
	cur := map[string]bool{}
	for len(line) > 0 {
		if loc := sgrRE.FindStringSubmatchIndex(line); loc != nil && loc[0] == 0 {
			params := line[loc[2]:loc[3]]
			if params == "" || params == "0" {
				cur = map[string]bool{}
			} else {
				next := map[string]bool{}
				for k := range cur {
					next[k] = true
				}
				for _, p := range strings.Split(params, ";") {
					next[p] = true
				}
				cur = next
			}
			line = line[loc[1]:]
			continue
		}
		_, size := utf8.DecodeRuneInString(line)
		out = append(out, cur)
		line = line[size:]
	}
	return out
}
