package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/tui"
)

// runFrameTUI opens one decoded frame in the explorer.
func runFrameTUI(m *dissect.Message) error {
	entries := make(chan tui.Entry, 1)
	entries <- tui.Entry{Index: 1, Direction: m.Direction, APIKey: m.APIKey, APIName: m.APIName,
		APIVersion: m.APIVersion, CorrelationID: m.CorrelationID, Summary: m.Summary,
		HasProblems: len(m.Problems) > 0, Peer: -1}
	close(entries)
	load := func(int) (*dissect.Message, error) { return m, nil }
	return tui.Run(load, entries, nil, tui.Options{Title: "frame"})
}

// store keeps the bytes of every listed message, not its tree: the
// explorer decodes the selected one on demand.
type store struct {
	mu   sync.Mutex
	reg  *dissect.Registry
	recs map[int]storedFrame
}

type storedFrame struct {
	frame    []byte
	dir      dissect.Direction
	key, ver int16
}

func (s *store) load(index int) (*dissect.Message, error) {
	s.mu.Lock()
	r, ok := s.recs[index]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("message #%d is not in the capture", index)
	}
	if r.dir == dissect.Request {
		return s.reg.DecodeRequest(r.frame), nil
	}
	return s.reg.DecodeResponse(r.frame, r.key, r.ver), nil
}

// tuiPrinter hands each message to the explorer instead of a terminal.
type tuiPrinter struct {
	st      *store
	entries chan<- tui.Entry
	// malformed mirrors the session's flag where the explorer can read it
	// while the reader goroutine still runs (the user may quit first).
	malformed atomic.Bool
}

func (p *tuiPrinter) message(it *item, m *dissect.Message) {
	p.st.mu.Lock()
	p.st.recs[it.index] = storedFrame{frame: it.frame, dir: it.dir, key: it.key, ver: it.ver}
	p.st.mu.Unlock()
	if len(m.Problems) > 0 {
		p.malformed.Store(true)
	}
	peer := it.peer
	if peer == 0 {
		peer = -1
	}
	p.entries <- tui.Entry{
		Index: it.index, Time: it.time, Src: it.flow.Src.String(), Dst: it.flow.Dst.String(),
		Direction: m.Direction, APIKey: m.APIKey, APIName: m.APIName, APIVersion: m.APIVersion,
		CorrelationID: m.CorrelationID, Summary: m.Summary, HasProblems: len(m.Problems) > 0, Peer: peer,
	}
}

func (p *tuiPrinter) event(it *item) {
	if _, ok := it.event.(*reassembly.Unparseable); ok {
		p.malformed.Store(true)
	}
}

// runCaptureTUI reads the capture in the background while the explorer
// shows what has arrived so far.
func runCaptureTUI(o captureOpts, reg *dissect.Registry, sel selector, ports reassembly.PortSet, sources []namedSource) (bool, error) {
	st := &store{reg: reg, recs: map[int]storedFrame{}}
	entries := make(chan tui.Entry, 1024)
	progress := make(chan tui.ProgressMsg, 16)
	tp := &tuiPrinter{st: st, entries: entries}
	s := newSession(reg, sel, tp, true)
	s.limit = o.count
	s.hold = o.iface == ""
	pipe := reassembly.NewPipeline(pipelineConfig(o, ports, s), s.event)
	done := make(chan error, 1)
	go func() {
		var err error
		if o.iface != "" {
			err = s.live(pipe, o, io.Discard)
		} else {
			var last int64
			err = s.files(pipe, sources, func(doneBytes, total int64) {
				if doneBytes-last < 1<<20 {
					return
				}
				last = doneBytes
				select {
				case progress <- tui.ProgressMsg{Done: doneBytes, Total: total}:
				default: // the explorer is busy: it gets the next report
				}
			})
		}
		pipe.Close()
		s.flushAll()
		progress <- tui.ProgressMsg{Finished: true, Err: err}
		close(entries)
		close(progress)
		done <- err
	}()
	title := o.iface
	if title == "" {
		var names []string
		for _, src := range sources {
			names = append(names, filepath.Base(src.name))
		}
		title = strings.Join(names, ", ")
	}
	if err := tui.Run(st.load, entries, progress, tui.Options{Title: title, Live: o.iface != ""}); err != nil {
		return false, err
	}
	// The explorer may quit before the reader finishes: its error no longer
	// matters then, and what was shown so far says whether it was malformed.
	select {
	case err := <-done:
		return tp.malformed.Load(), err
	default:
		return tp.malformed.Load(), nil
	}
}
