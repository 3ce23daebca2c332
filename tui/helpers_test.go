package tui

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// stylesFor pins a colour profile without touching lipgloss's default
// renderer.
func stylesFor(p termenv.Profile) Styles { return NewStyles(rendererAt(p)) }

func rendererAt(p termenv.Profile) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(p)
	return r
}

func readSeed(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "frames", name)) // the repository's one copy of the seed frames
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// seedCapture is the two seed frames as a two-message capture: the
// request (index 0) and its response (index 1), decoded by the real
// registry.
func seedCapture(t *testing.T) ([]Entry, Loader) {
	t.Helper()
	req := readSeed(t, "createacls-v3-request.bin")
	resp := readSeed(t, "createacls-v3-response.bin")
	reg := dissect.Builtin()
	load := func(i int) (*dissect.Message, error) {
		switch i {
		case 0:
			return reg.Decode(req, dissect.Options{}), nil
		case 1:
			return reg.Decode(resp, dissect.Options{Direction: dissect.Response, APIKey: 30, APIVersion: 3}), nil
		}
		return nil, os.ErrNotExist
	}
	mreq, mresp := reg.Decode(req, dissect.Options{}), reg.Decode(resp, dissect.Options{Direction: dissect.Response, APIKey: 30, APIVersion: 3})
	entries := []Entry{
		entryOf(0, t0, "10.0.0.1:50312", "10.0.0.2:9092", mreq, 1),
		entryOf(1, t0.Add(1500*time.Microsecond), "10.0.0.2:9092", "10.0.0.1:50312", mresp, 0),
	}
	return entries, load
}

// entryOf is the production row of m (EntryOf, as the CLI builds it) at
// its place in a capture.
func entryOf(i int, ts time.Time, src, dst string, m *dissect.Message, peer int) Entry {
	e := EntryOf(m)
	e.Index, e.Time, e.Src, e.Dst, e.Peer = i, ts, src, dst, peer
	return e
}

// newTestModel is a sized explorer with a plain colour profile, fed the
// given entries.
func newTestModel(t *testing.T, load Loader, entries []Entry, w, h int) Model {
	t.Helper()
	m := New(load, Options{Title: "seed.pcap"})
	m.setStyles(stylesFor(termenv.Ascii))
	m = send(m, tea.WindowSizeMsg{Width: w, Height: h})
	return send(m, EntriesMsg(entries))
}

func send(m Model, msgs ...tea.Msg) Model {
	for _, msg := range msgs {
		nm, _ := m.Update(msg)
		m = nm.(Model)
	}
	return m
}

// keys turns "j", "tab", "shift+tab", "enter", ... into key messages.
func keys(names ...string) []tea.Msg {
	var out []tea.Msg
	for _, n := range names {
		out = append(out, keyMsg(n))
	}
	return out
}

func keyMsg(n string) tea.KeyMsg {
	switch n {
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "space":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	case "pgup":
		return tea.KeyMsg{Type: tea.KeyPgUp}
	case "home":
		return tea.KeyMsg{Type: tea.KeyHome}
	case "end":
		return tea.KeyMsg{Type: tea.KeyEnd}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	case "ctrl+u":
		return tea.KeyMsg{Type: tea.KeyCtrlU}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(n)}
}

// typed is the key messages of typing s into a prompt.
func typed(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		if r == ' ' {
			out = append(out, keyMsg("space"))
			continue
		}
		out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	return out
}

func join(groups ...[]tea.Msg) []tea.Msg {
	var out []tea.Msg
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// golden compares got with testdata/name; go test ./tui -update rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	testkit.Golden(t, filepath.Join("testdata", name), []byte(got))
}

// screenLines checks the frame geometry and returns the lines.
func screenLines(t *testing.T, m Model) []string {
	t.Helper()
	v := m.View()
	lines := strings.Split(v, "\n")
	if len(lines) != m.height {
		t.Errorf("view has %d lines, want %d", len(lines), m.height)
	}
	for i, l := range lines {
		if w := lipgloss.Width(l); w != m.width {
			t.Errorf("line %d is %d cells wide, want %d: %q", i, w, m.width, l)
		}
	}
	return lines
}
