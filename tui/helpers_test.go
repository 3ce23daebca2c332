package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

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
func newTestModel(t testing.TB, load Loader, entries []Entry, w, h int) Model {
	t.Helper()
	m := New(load, Options{Title: "seed.pcap"})
	m.setStyles(stylesFor(colorprofile.NoTTY)) // plain text, as on a terminal that takes no escape sequence
	m = send(m, tea.WindowSizeMsg{Width: w, Height: h})
	return send(m, EntriesMsg(entries))
}

// send updates m with each message and then with what the commands it
// gave answer, as the program would, until none is left: a search or a
// filter that decodes in the background has finished when send returns.
func send(m Model, msgs ...tea.Msg) Model {
	for _, msg := range msgs {
		queue := []tea.Msg{msg}
		for steps := 0; len(queue) > 0; steps++ {
			if steps > 1_000_000 {
				panic("the commands never stop answering") // a hang guard, not a timing
			}
			nm, cmd := m.Update(queue[0])
			m = nm.(Model)
			queue = append(queue[1:], runCmd(cmd)...)
		}
	}
	return m
}

// runCmd runs a command and the commands of a batch, returning their
// messages (tea.Quit's is dropped: the model has nothing to do with it).
func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case nil, tea.QuitMsg:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, runCmd(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

// keys turns "j", "tab", "shift+tab", "enter", ... into key messages.
func keys(names ...string) []tea.Msg {
	var out []tea.Msg
	for _, n := range names {
		out = append(out, keyMsg(n))
	}
	return out
}

func keyMsg(n string) tea.KeyPressMsg {
	switch n {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+u":
		return tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
	}
	// As the terminal reader delivers a printable key: Code the rune
	// itself (lower case, with shift for a capital), Text what it types.
	r := []rune(n)[0]
	k := tea.KeyPressMsg{Code: r, Text: n}
	if unicode.IsUpper(r) {
		k.Code, k.ShiftedCode, k.Mod = unicode.ToLower(r), r, tea.ModShift
	}
	return k
}

// typed is the key messages of typing s into a prompt.
func typed(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		if r == ' ' {
			out = append(out, keyMsg("space"))
			continue
		}
		out = append(out, keyMsg(string(r)))
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
	v := m.render()
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
