package tui

import (
	"bytes"
	"io"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// scriptReader hands out its keys once start is closed (at once when it
// is nil), then blocks until released, so the program reads "q" only after
// the keys before it.
type scriptReader struct {
	start <-chan struct{}
	keys  []byte
	done  chan struct{}
}

func (r *scriptReader) Read(p []byte) (int, error) {
	if r.start != nil {
		<-r.start
	}
	if len(r.keys) == 0 {
		<-r.done
		return 0, io.EOF
	}
	n := copy(p, r.keys[:1])
	r.keys = r.keys[1:]
	return n, nil
}

// The real program: Run's wiring with scripted input and no terminal.
// Entries and progress are queued and closed before it starts; "q" is typed
// once the program has seen the entry channel closed, which it drains only
// after listing every entry before it, so all 50 rows must be there. No
// timing is asserted.
func TestRunProgram(t *testing.T) {
	fc := newFake(50)
	ch := make(chan Entry, len(fc.entries))
	for _, e := range fc.entries {
		ch <- e
	}
	close(ch)
	pc := make(chan ProgressMsg, 1)
	pc <- ProgressMsg{Done: 10, Total: 10, Finished: true}
	close(pc)

	drained := make(chan struct{})
	var once sync.Once
	seeClose := func(_ tea.Model, msg tea.Msg) tea.Msg {
		if _, ok := msg.(entriesClosedMsg); ok {
			once.Do(func() { close(drained) })
		}
		return msg
	}
	in := &scriptReader{start: drained, keys: []byte("q"), done: make(chan struct{})}
	defer close(in.done)
	var out bytes.Buffer
	m, err := run(fc.load, ch, pc, Options{Title: "run"},
		tea.WithInput(in), tea.WithOutput(&out), tea.WithoutSignalHandler(), tea.WithFilter(seeClose))
	if err != nil {
		t.Fatal(err)
	}
	if n := m.list.len(); n != len(fc.entries) {
		t.Errorf("%d rows from %d entries", n, len(fc.entries))
	}
	if out.Len() == 0 {
		t.Error("nothing rendered")
	}
}
