package main

import (
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly"
)

// selector decides which APIs are shown.
type selector struct {
	filter map[int16]bool // --api; nil: the ACL APIs, or all with --all
	all    bool
}

func (s selector) wants(key int16) bool {
	if s.filter != nil {
		return s.filter[key]
	}
	return s.all || key == 30 || key == 31
}

// origin is what the capture says of a message or event: the connection
// side, the capture time of its first byte, its place in the stream and
// the packets that carried it; event is the pipeline event for an event
// (an *reassembly.Incomplete for a cut frame).
type origin struct {
	flow    reassembly.Flow
	time    time.Time
	offset  int64
	packets []int
	event   reassembly.Event
	tls     *tlsMeta // the connection's TLS session, when decrypted
}

// printer writes what the session hands out.
type printer interface {
	message(w *origin, x dissect.Exchange, m *dissect.Message)
	unmatched(w *origin, u dissect.Unmatched)
	incomplete(e *reassembly.Incomplete, c dissect.Incomplete)
	event(e reassembly.Event)
}

// session feeds a capture's pipeline events to a dissect.Session and its
// output to a printer: the wiring between reassembly and dissect, plus
// the run's count limit and malformed flag.
type session struct {
	lib       *dissect.Session[origin]
	p         printer
	text      bool // a person reads the output: retransmissions are noise there
	limit     int
	printed   int
	malformed bool
	tls       map[uint64]*tlsMeta // decrypted connections
	// afterPrint runs after each printed message or event (live output
	// flushes there).
	afterPrint func()
}

func newSession(reg *dissect.Registry, sel selector, p printer, text bool) *session {
	s := &session{p: p, text: text}
	s.lib = dissect.NewSession[origin](reg, sink{s})
	s.lib.Wants = sel.wants
	return s
}

func (s *session) stopped() bool { return s.limit > 0 && s.printed >= s.limit }

// wantBody tells the pipeline whether to buffer a frame's body.
func (s *session) wantBody(f reassembly.Flow, head []byte) bool {
	return s.lib.WantBody(f.ConnID, f.FromClient, head)
}

func (s *session) event(e reassembly.Event) {
	switch e := e.(type) {
	case *reassembly.Frame:
		w := origin{flow: e.Flow, time: e.First, offset: e.StreamOffset, packets: append([]int(nil), e.Packets...), tls: s.tls[e.ConnID]}
		s.lib.Frame(w, dissect.FrameInfo{Conn: e.ConnID, FromClient: e.FromClient, Data: e.Data, Head: e.Truncated,
			Offset: e.StreamOffset, PeerPending: e.PeerPending, First: e.First, Last: e.Last})
	case *reassembly.ConnEnd:
		s.lib.ConnEnd(e.ConnID)
		delete(s.tls, e.ConnID)
	case *reassembly.LayerEvent:
		s.layerEvent(e)
	case *reassembly.Retransmission:
		if !s.text {
			s.lib.Pass(origin{event: e}, e.Time)
		}
	case *reassembly.Unparseable:
		// Bytes before the first boundary of a connection that was open
		// when the capture started are expected, not damage.
		if !e.Leading {
			s.malformed = true
		}
		s.lib.Pass(origin{event: e}, e.Time)
	case *reassembly.Gap:
		s.lib.Pass(origin{event: e}, e.Time)
	case *reassembly.Incomplete:
		s.lib.Cut(origin{flow: e.Flow, time: e.Time, offset: e.StreamOffset, event: e},
			dissect.CutInfo{Conn: e.ConnID, FromClient: e.FromClient, Head: e.Head, Time: e.Time})
	case *reassembly.BufferLimit:
		s.lib.Pass(origin{event: e}, e.Time)
	case *reassembly.PortDetected:
		s.lib.Pass(origin{event: e}, e.Time)
	case *reassembly.Evicted:
		s.lib.Pass(origin{event: e}, e.Time)
	}
}

func (s *session) flushAll() { s.lib.Flush() }

// sink takes the dissect.Session's output to the printer while the count
// limit allows.
type sink struct{ s *session }

func (k sink) Message(w origin, x dissect.Exchange, m *dissect.Message) {
	s := k.s
	if s.stopped() {
		return
	}
	if len(m.Problems) > 0 && !x.Inferred {
		s.malformed = true
	}
	s.p.message(&w, x, m)
	s.printed++
	s.after()
}

func (k sink) Unmatched(w origin, u dissect.Unmatched) {
	if k.s.stopped() {
		return
	}
	k.s.p.unmatched(&w, u)
	k.s.after()
}

func (k sink) Incomplete(w origin, c dissect.Incomplete) {
	if k.s.stopped() {
		return
	}
	k.s.p.incomplete(w.event.(*reassembly.Incomplete), c)
	k.s.after()
}

func (k sink) Event(w origin) {
	if k.s.stopped() {
		return
	}
	k.s.p.event(w.event)
	k.s.after()
}

func (s *session) after() {
	if s.afterPrint != nil {
		s.afterPrint()
	}
}
