package tui

import (
	"bytes"
	"io"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// A key press may carry several runes (keys that arrived together), and
// a paste is a message of its own: every rune acts as if typed alone.
func TestKeysArrivingTogether(t *testing.T) {
	fc := newFake(20)
	burst := tea.KeyPressMsg{Code: tea.KeyExtended, Text: "jjjjj"}
	for _, c := range []struct {
		name string
		msg  tea.Msg
	}{
		{"one press", burst},
		{"paste", tea.PasteMsg{Content: "jjjjj"}},
	} {
		m := newTestModel(t, fc.load, fc.entries, 100, 30)
		m = send(m, c.msg)
		if got := m.selectedIndex(); got != 5 {
			t.Errorf("%s of jjjjj: selected #%d, want #5", c.name, got)
		}
		// Keys of every kind in one burst: G to the end, k up one, tab to
		// the tree.
		m = send(m, tea.PasteMsg{Content: "Gk\t"})
		if got := m.selectedIndex(); got != 18 || m.focus != paneTree {
			t.Errorf("%s, then Gk<tab>: selected #%d focus %d, want #18 in the tree", c.name, got, m.focus)
		}
	}

	// qq quits; the keys after the first q are not acted on.
	m := newTestModel(t, fc.load, fc.entries, 100, 30)
	for _, msg := range []tea.Msg{tea.KeyPressMsg{Code: tea.KeyExtended, Text: "qq"}, tea.PasteMsg{Content: "qj"}} {
		nm, cmd := m.Update(msg)
		if cmd == nil {
			t.Fatalf("%#v: no command", msg)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%#v does not quit", msg)
		}
		if after := nm.(Model); after.selectedIndex() != 0 {
			t.Errorf("%#v: a key after q moved the selection to #%d", msg, after.selectedIndex())
		}
	}

	// In a prompt the runes are text; a line end submits it, once for a
	// CR LF; controls are dropped, so a paste cannot press esc.
	m = send(m, keys("/")...)
	m = send(m, tea.PasteMsg{Content: "user1\x1b[2J2\r\n"})
	if m.input != inputNone || m.query != "user1[2J2" {
		t.Errorf("paste into the search prompt: input %d, query %q", m.input, m.query)
	}
	if m.focus != paneList {
		t.Errorf("the LF after CR acted as a second enter: focus %d", m.focus)
	}
	m = send(m, keys("/")...)
	m = send(m, tea.KeyPressMsg{Code: tea.KeyExtended, Text: "user13"}, keyMsg("enter"))
	if got := m.selectedIndex(); got != 13 {
		t.Errorf("search typed in one press: selected #%d, want #13", got)
	}
}

// burstReader hands its bytes out in one read once start is closed, then
// blocks until released: the program sees the keys as a terminal on a
// slow link delivers them.
type burstReader struct {
	start <-chan struct{}
	burst []byte
	done  chan struct{}
}

func (r *burstReader) Read(p []byte) (int, error) {
	<-r.start
	if len(r.burst) == 0 {
		<-r.done
		return 0, io.EOF
	}
	n := copy(p, r.burst)
	r.burst = r.burst[n:]
	return n, nil
}

// The real program, its terminal reader included, takes keys that arrive
// in one read: typed, and pasted (bracketed paste, which the program
// turns on). q at the end of each burst must quit it.
func TestRunProgramKeyBursts(t *testing.T) {
	for _, c := range []struct {
		name  string
		burst string
		want  int // selected entry at the end
	}{
		{"typed", "jjjjjq", 5},
		{"qq", "qq", 0},
		{"pasted", "\x1b[200~jjjjj\x1b[201~q", 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			fc := newFake(20)
			ch := make(chan Entry, len(fc.entries))
			for _, e := range fc.entries {
				ch <- e
			}
			close(ch)
			drained := make(chan struct{})
			var once sync.Once
			seeClose := func(_ tea.Model, msg tea.Msg) tea.Msg {
				if _, ok := msg.(entriesClosedMsg); ok {
					once.Do(func() { close(drained) })
				}
				return msg
			}
			in := &burstReader{start: drained, burst: []byte(c.burst), done: make(chan struct{})}
			defer close(in.done)
			var out bytes.Buffer
			m, err := run(fc.load, ch, nil, Options{Title: "run"},
				tea.WithInput(in), tea.WithOutput(&out), tea.WithoutSignalHandler(), tea.WithFilter(seeClose),
				tea.WithWindowSize(100, 30))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.selectedIndex(); got != c.want {
				t.Errorf("%q: selected #%d, want #%d", c.burst, got, c.want)
			}
		})
	}
}

// The program draws the explorer on the alternate screen with mouse
// reporting, and the screen is what render draws.
func TestViewAsksForTheScreen(t *testing.T) {
	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 80, 24)
	v := m.View()
	if !v.AltScreen || v.MouseMode != tea.MouseModeCellMotion || v.Content != m.render() {
		t.Errorf("View: alt screen %v, mouse mode %v, content is render's: %v", v.AltScreen, v.MouseMode, v.Content == m.render())
	}
}
