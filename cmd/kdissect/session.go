package main

import (
	"encoding/binary"
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

// Bounds on what the session holds while it matches responses to requests.
const (
	maxPendingPerConn = 4096             // requests awaiting a response on one connection
	maxQueued         = 1 << 16          // messages held for their peer before printing
	holdFor           = 30 * time.Second // capture time a request waits for its response
)

// pending is a request awaiting its response.
type pending struct {
	key, ver int16
	index    int
	last     time.Time // the request's last byte
	held     *item     // the request itself while it waits in the queue
	cut      bool      // the request is an incomplete event, not a message
}

// item is one line of output in the making: a message (decoded when it is
// printed, so the queue holds bytes, not trees) or an event.
type item struct {
	index    int // Kafka message number, 1-based over the capture; 0 for events
	flow     reassembly.Flow
	time     time.Time
	offset   int64
	packets  []int
	frame    []byte
	dir      dissect.Direction
	key, ver int16
	peer     int
	latency  time.Duration
	hasLat   bool
	waiting  bool // a request held until its response shows up
	head     bool // frame holds only the head: the rest was not kept
	event    reassembly.Event
	corr     int32 // unmatched responses and incomplete frames
	size     int
	// An incomplete frame whose header was captured: hasHead, with key and
	// ver known (hasAPI) for a request or a response matched to one.
	hasHead, hasAPI bool
	// awaiting: an unmatched response held while its connection's request
	// direction still holds bytes its request may be in.
	awaiting bool
	inferred bool // --guess decoded an unmatched response
	drop     bool // matched late to an API that is not shown
	peerCut  bool // peer is an incomplete event, not a message
}

// printer writes items; session decides what and when.
type printer interface {
	message(it *item, m *dissect.Message)
	event(it *item)
}

// session matches responses to requests per connection and prints
// messages in capture order. In file mode a request is held until its
// response arrives (or its connection ends, or holdFor of capture time
// passes) so that its line can name the response: output order is still
// the capture's order.
type session struct {
	reg       *dissect.Registry
	dec       *dissect.Decoder // printers use each message before the next is decoded
	sel       selector
	p         printer
	text      bool // a person reads the output: retransmissions are noise there
	hold      bool
	limit     int
	printed   int
	index     int
	malformed bool
	now       time.Time
	conns     map[uint64]map[int32]*pending
	// awaiting holds, per connection and correlation id, responses that
	// wait for their request (item.awaiting).
	awaiting   map[uint64]map[int32]*item
	queue      []*item
	afterPrint func()
	guess      bool // --guess: try the ACL response definitions on unmatched responses
}

func newSession(reg *dissect.Registry, sel selector, p printer, text bool) *session {
	return &session{reg: reg, dec: reg.NewDecoder(), sel: sel, p: p, text: text,
		conns: map[uint64]map[int32]*pending{}, awaiting: map[uint64]map[int32]*item{}}
}

func (s *session) stopped() bool { return s.limit > 0 && s.printed >= s.limit }

// wantBody tells the pipeline whether to buffer a frame's body: only for
// messages that will be printed, which is what lets it skip large Produce
// and Fetch frames cheaply.
func (s *session) wantBody(f reassembly.Flow, head []byte) bool {
	if len(head) < 4 {
		return true
	}
	// A body is only worth keeping where a definition can dissect it:
	// other APIs show their header and an opaque body either way.
	if f.FromClient {
		key := int16(binary.BigEndian.Uint16(head))
		return s.sel.wants(key) && s.reg.HasDefinition(key, true)
	}
	p := s.conns[f.ConnID][int32(binary.BigEndian.Uint32(head))]
	if p == nil {
		// Its request may still come out (Frame.PeerPending), or --guess
		// may decode it: keep it whole.
		return true
	}
	return s.sel.wants(p.key) && s.reg.HasDefinition(p.key, false)
}

func (s *session) event(e reassembly.Event) {
	switch e := e.(type) {
	case *reassembly.Frame:
		s.now = e.Last
		if e.FromClient {
			s.request(e)
		} else {
			s.response(e)
		}
	case *reassembly.ConnEnd:
		for _, p := range s.conns[e.ConnID] {
			if p.held != nil {
				p.held.waiting = false
			}
		}
		delete(s.conns, e.ConnID)
		for _, it := range s.awaiting[e.ConnID] {
			it.waiting, it.awaiting = false, false
		}
		delete(s.awaiting, e.ConnID)
	case *reassembly.Retransmission:
		if !s.text {
			s.enqueue(&item{event: e, time: e.Time})
		}
	case *reassembly.Unparseable:
		// Bytes before the first boundary of a connection that was open
		// when the capture started are expected, not damage.
		if !e.Leading {
			s.malformed = true
		}
		s.enqueue(&item{event: e, time: e.Time})
	case *reassembly.Gap:
		s.enqueue(&item{event: e, time: e.Time})
	case *reassembly.Incomplete:
		s.incomplete(e)
	case *reassembly.BufferLimit:
		s.enqueue(&item{event: e, time: e.Time})
	case *reassembly.PortDetected:
		s.enqueue(&item{event: e, time: e.Time})
	case *reassembly.Evicted:
		s.enqueue(&item{event: e, time: e.Time})
	}
	s.pump()
}

func (s *session) newItem(f *reassembly.Frame) *item {
	s.index++
	return &item{
		index:   s.index,
		flow:    f.Flow,
		time:    f.First,
		offset:  f.StreamOffset,
		packets: append([]int(nil), f.Packets...),
		size:    f.Size,
		head:    f.Truncated,
	}
}

func (s *session) request(f *reassembly.Frame) {
	it := s.newItem(f)
	h, ok := dissect.PeekRequest(f.Data)
	if ok && !s.expect(f.ConnID, h, it, f.Last) {
		return
	}
	it.dir, it.key, it.ver = dissect.Request, h.APIKey, h.APIVersion
	it.frame = append([]byte(nil), f.Data...)
	s.enqueue(it)
}

// expect records that the request it (a frame or an incomplete one) with
// header h awaits its response, or gives it the response that was waiting
// for it. It reports whether it is to be shown.
func (s *session) expect(connID uint64, h dissect.RequestHead, it *item, last time.Time) bool {
	if r := s.awaiting[connID][h.CorrelationID]; r != nil {
		delete(s.awaiting[connID], h.CorrelationID)
		r.awaiting, r.waiting, r.event = false, false, nil
		r.dir, r.key, r.ver, r.peer = dissect.Response, h.APIKey, h.APIVersion, it.index
		r.latency, r.hasLat = max(r.time.Sub(last), 0), true
		_, r.peerCut = it.event.(*reassembly.Incomplete)
		r.drop = !s.sel.wants(h.APIKey)
		it.peer = r.index
		return s.sel.wants(h.APIKey)
	}
	conn := s.conns[connID]
	if conn == nil {
		conn = map[int32]*pending{}
		s.conns[connID] = conn
	}
	if len(conn) >= maxPendingPerConn {
		// A client that never reads its responses (or acks=0 producers)
		// must not grow this without bound; forget the oldest.
		s.evictOldest(conn)
	}
	_, cut := it.event.(*reassembly.Incomplete)
	p := &pending{key: h.APIKey, ver: h.APIVersion, index: it.index, last: last, cut: cut}
	conn[h.CorrelationID] = p
	if !s.sel.wants(h.APIKey) {
		return false
	}
	it.waiting = s.hold
	p.held = it
	return true
}

// incomplete handles a frame cut short. When its header was captured it is
// a message that was seen in part: it gets an index, and a request still
// names its response (and the response it) like a complete one.
func (s *session) incomplete(e *reassembly.Incomplete) {
	it := &item{event: e, time: e.Time, flow: e.Flow, offset: e.StreamOffset}
	if e.FromClient {
		if h, ok := dissect.PeekRequest(e.Head); ok {
			s.index++
			it.index, it.hasHead, it.hasAPI = s.index, true, true
			it.key, it.ver, it.corr = h.APIKey, h.APIVersion, h.CorrelationID
			s.expect(e.ConnID, h, it, e.Time)
		}
	} else if corr, ok := dissect.PeekCorrelationID(e.Head); ok {
		s.index++
		it.index, it.hasHead, it.corr = s.index, true, corr
		if p := s.conns[e.ConnID][corr]; p != nil {
			delete(s.conns[e.ConnID], corr)
			it.hasAPI, it.key, it.ver, it.peer = true, p.key, p.ver, p.index
			if p.held != nil {
				p.held.peer, p.held.waiting = it.index, false
			}
		}
	}
	s.enqueue(it)
}

func (s *session) evictOldest(conn map[int32]*pending) {
	var oldCorr int32
	var old *pending
	for c, p := range conn {
		if old == nil || p.index < old.index {
			oldCorr, old = c, p
		}
	}
	if old != nil {
		if old.held != nil {
			old.held.waiting = false
		}
		delete(conn, oldCorr)
	}
}

func (s *session) response(f *reassembly.Frame) {
	it := s.newItem(f)
	corr, _ := dissect.PeekCorrelationID(f.Data)
	p := s.conns[f.ConnID][corr]
	if p == nil {
		it.event, it.corr = unmatched{}, corr
		it.frame = append([]byte(nil), f.Data...)
		if f.PeerPending && s.hold && s.awaiting[f.ConnID][corr] == nil {
			// Its request may be in the bytes the other direction still
			// holds: wait for them (as long as a request waits for its
			// response) before calling it unmatched.
			it.awaiting, it.waiting = true, true
			if s.awaiting[f.ConnID] == nil {
				s.awaiting[f.ConnID] = map[int32]*item{}
			}
			s.awaiting[f.ConnID][corr] = it
		}
		s.enqueue(it)
		return
	}
	delete(s.conns[f.ConnID], corr)
	if p.held != nil {
		p.held.peer = it.index
		p.held.waiting = false
	}
	if !s.sel.wants(p.key) {
		return
	}
	it.dir, it.key, it.ver = dissect.Response, p.key, p.ver
	it.peer, it.peerCut = p.index, p.cut
	it.latency, it.hasLat = f.First.Sub(p.last), true
	it.frame = append([]byte(nil), f.Data...)
	s.enqueue(it)
}

// unmatched marks a response whose request was not captured.
type unmatched struct{ reassembly.Event }

func (s *session) enqueue(it *item) { s.queue = append(s.queue, it) }

// pump prints the queue up to the first request still waiting for its
// response.
func (s *session) pump() {
	n := 0
	for _, it := range s.queue {
		if it.waiting && s.now.Sub(it.time) < holdFor && len(s.queue)-n < maxQueued {
			break
		}
		s.print(it)
		n++
	}
	if n > 0 {
		clear(s.queue[:n])
		s.queue = s.queue[n:]
		if len(s.queue) == 0 {
			s.queue = s.queue[:0:0]
		}
	}
}

func (s *session) flushAll() {
	for _, it := range s.queue {
		s.print(it)
	}
	s.queue = nil
}

func (s *session) print(it *item) {
	if it.awaiting {
		// Printed unmatched: a request that comes later is not its own.
		it.awaiting = false
		delete(s.awaiting[it.flow.ConnID], it.corr)
		if len(s.awaiting[it.flow.ConnID]) == 0 {
			delete(s.awaiting, it.flow.ConnID)
		}
	}
	if s.stopped() || it.drop {
		return
	}
	if it.event != nil {
		s.p.event(it)
		if _, ok := it.event.(unmatched); ok && s.guess && !it.head {
			s.printGuess(it)
		}
	} else {
		var m *dissect.Message
		switch {
		case it.dir == dissect.Request && it.head:
			m = s.dec.RequestHead(it.frame)
		case it.dir == dissect.Request:
			m = s.dec.Request(it.frame)
		case it.head:
			m = s.dec.ResponseHead(it.frame, it.key, it.ver)
		default:
			m = s.dec.Response(it.frame, it.key, it.ver)
		}
		if len(m.Problems) > 0 {
			s.malformed = true
		}
		s.p.message(it, m)
		s.printed++
	}
	if s.afterPrint != nil {
		s.afterPrint()
	}
}

// guesses are the definitions --guess tries on a response without its
// request, in this order; the first whose decode consumes the frame
// exactly, without a problem, is shown. Newer versions come first: where
// two versions share a layout (CreateAcls v0/v1 and v2/v3, DeleteAcls v2/v3)
// the bytes cannot tell them apart, and current clients send the newest.
var guesses = [...][2]int16{{30, 3}, {30, 2}, {30, 1}, {30, 0}, {31, 3}, {31, 2}, {31, 1}, {31, 0}}

// printGuess shows an unmatched response decoded as the first ACL response
// definition that fits it, marked inferred. The event line before it says
// that the request was not captured.
func (s *session) printGuess(it *item) {
	for _, g := range guesses {
		if !s.sel.wants(g[0]) {
			continue
		}
		m := s.dec.Response(it.frame, g[0], g[1])
		if len(m.Problems) > 0 {
			continue
		}
		guessed := *it
		guessed.event, guessed.inferred = nil, true
		guessed.dir, guessed.key, guessed.ver = dissect.Response, g[0], g[1]
		s.p.message(&guessed, m)
		s.printed++
		return
	}
}
