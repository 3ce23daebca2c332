package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/tui"
)

// runFrameTUI opens one decoded frame in the explorer.
func runFrameTUI(m *dissect.Message) error {
	entries := make(chan tui.Entry, 1)
	e := tui.EntryOf(m)
	e.Index, e.Peer = 1, -1
	entries <- e
	close(entries)
	load := func(int) (*dissect.Message, error) { return m, nil }
	return tui.Run(load, entries, nil, tui.Options{Title: "frame"})
}

// store keeps the bytes of every listed message, not its tree: the
// explorer decodes the selected one on demand.
type store struct {
	mu   sync.Mutex
	reg  *dissect.Registry
	recs map[int]stored
}

// stored is a listed message's frame and how it was decoded.
type stored struct {
	frame []byte
	opts  dissect.Options
}

func (s *store) load(index int) (*dissect.Message, error) {
	s.mu.Lock()
	r, ok := s.recs[index]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("message #%d is not in the capture", index)
	}
	return s.reg.Decode(r.frame, r.opts), nil
}

// tuiPrinter hands each message to the explorer instead of a terminal.
type tuiPrinter struct {
	st      *store
	entries chan<- tui.Entry
	// malformed mirrors the session's flag where the explorer can read it
	// while the reader goroutine still runs (the user may quit first).
	malformed atomic.Bool
}

func (p *tuiPrinter) message(w *origin, x dissect.Exchange, m *dissect.Message) {
	p.st.mu.Lock()
	p.st.recs[x.Index] = stored{frame: m.Raw, opts: x.Options} // the session's own copy of the frame
	p.st.mu.Unlock()
	if len(m.Problems) > 0 {
		p.malformed.Store(true)
	}
	e := tui.EntryOf(m)
	e.Index, e.Time, e.Src, e.Dst, e.Peer = x.Index, w.time, w.flow.Src.String(), w.flow.Dst.String(), x.Peer
	e.Who = x.Identity.String()
	if w.tls != nil {
		e.TLS = "TLS " + w.tls.version + " " + w.tls.cipher
	}
	if e.Peer == 0 || x.PeerCut { // the explorer lists messages only
		e.Peer = -1
	}
	p.entries <- e
}

func (p *tuiPrinter) event(e reassembly.Event) {
	if u, ok := e.(*reassembly.Unparseable); ok && !u.Leading {
		p.malformed.Store(true)
	}
	if l, ok := e.(*reassembly.LayerEvent); ok {
		if _, bad := l.Value.(*tlslayer.Problem); bad {
			p.malformed.Store(true)
		}
	}
}

func (p *tuiPrinter) unmatched(*origin, dissect.Unmatched)                  {}
func (p *tuiPrinter) incomplete(*reassembly.Incomplete, dissect.Incomplete) {}

// runCaptureTUI reads the capture in the background while the explorer
// shows what has arrived so far.
func runCaptureTUI(o captureOpts, reg *dissect.Registry, sel selector, ports reassembly.PortSet, sources []namedSource) (bool, error) {
	load, entries, progress, result := startCaptureReader(o, reg, sel, ports, sources)
	title := o.iface
	if title == "" {
		var names []string
		for _, src := range sources {
			names = append(names, filepath.Base(src.name))
		}
		title = strings.Join(names, ", ")
	}
	if err := tui.Run(load, entries, progress, tui.Options{Title: title, Live: o.iface != ""}); err != nil {
		return false, err
	}
	// The explorer may quit before the reader finishes: its error no longer
	// matters then, and what was shown so far says whether it was malformed.
	return result(false)
}

// startCaptureReader starts reading the capture (the files of sources, or
// the interface o.iface) into the explorer's channels: an entry for each
// message, progress reports, and a last report with Finished set before
// both close. load decodes a listed message again from its stored bytes.
// result says whether a malformed message or unparseable stream was met and
// how the reading ended; with wait false it does not wait for the reader,
// and the error is nil while it runs.
//
// runCaptureTUI hands the channels to the explorer; the tests read them.
func startCaptureReader(o captureOpts, reg *dissect.Registry, sel selector, ports reassembly.PortSet, sources []namedSource) (
	load tui.Loader, entries <-chan tui.Entry, progress <-chan tui.ProgressMsg, result func(wait bool) (malformed bool, err error)) {
	st := &store{reg: reg, recs: map[int]stored{}}
	ech := make(chan tui.Entry, 1024)
	pch := make(chan tui.ProgressMsg, 16)
	tp := &tuiPrinter{st: st, entries: ech}
	s := newSession(reg, sel, tp, true)
	s.limit = o.count
	s.lib.Hold = o.iface == ""
	s.lib.ShowSecrets = o.showSecrets
	newPipe := func() *reassembly.Pipeline { return reassembly.NewPipeline(pipelineConfig(o, ports, s), s.event) }
	done := make(chan struct{})
	var readErr error
	go func() {
		var err error
		if o.iface != "" {
			pipe := newPipe()
			err = s.live(pipe, o, io.Discard)
			pipe.Close()
		} else {
			var last int64
			err = s.files(newPipe, sources, func(doneBytes, total int64) {
				if doneBytes-last < 1<<20 {
					return
				}
				last = doneBytes
				select {
				case pch <- tui.ProgressMsg{Done: doneBytes, Total: total}:
				default: // the explorer is busy: it gets the next report
				}
			}, nil)
		}
		s.flushAll()
		pch <- tui.ProgressMsg{Finished: true, Err: err}
		close(ech)
		close(pch)
		readErr = err
		close(done)
	}()
	result = func(wait bool) (bool, error) {
		if wait {
			<-done
		}
		select {
		case <-done:
			return tp.malformed.Load(), readErr
		default:
			return tp.malformed.Load(), nil
		}
	}
	return st.load, ech, pch, result
}
