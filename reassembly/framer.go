package reassembly

import "time"

// The framer cuts one direction's ordered byte stream into frames. It is fed
// by TCP ordering (order.go) or by a connection's Layer through a few
// calls: start (once, saying whether the stream is captured from its first
// byte), frame (the next in-order bytes, with the packet and time that
// carried them), the gap calls (bytes that will never come) and end. It
// knows the protocol only through Config.Framing, and the ordering only
// through what those calls hand it and the two questions order.go answers
// (delivered, acksUnseen).

// FrameRules is what the framer knows of a protocol whose frames start with
// a size prefix, whose client sends requests and whose server answers them
// with responses that name their request by a key. Frames are passed from
// their first byte, the prefix included; a head is the prefix and the first
// min(size, HeadLen) bytes after it, fewer when a gap or the end of the
// direction cuts the frame before. Its methods use no type of this package,
// so that a protocol's package can implement it without importing it.
type FrameRules interface {
	// PrefixLen is the length of the size prefix; it must not change.
	PrefixLen() int
	// Size reads the prefix at the start of b (at least PrefixLen bytes):
	// the length of the frame after the prefix.
	Size(b []byte) int64
	// MinSize is the smallest size of a frame from the client (fromClient)
	// or from the server: where a frame is known to start (inSync), a
	// smaller size is corruption; while re-synchronising, smaller
	// candidates are skipped. It must not change.
	MinSize(fromClient, inSync bool) int64
	// PlausibleRequest says whether a client→broker head looks like the
	// start of a request. It is the test of a frame start while
	// re-synchronising and for DetectPorts, and it ends what Keep's all
	// began. A head too short to be judged is not plausible.
	PlausibleRequest(head []byte) bool
	// Key is the key that names a request: a request frame's own
	// (fromClient), or the one a response frame names. ok is false when f
	// is too short to hold it.
	Key(fromClient bool, f []byte) (key uint32, ok bool)
	// Keep says, from a request's head, what to keep whole: the request
	// (body), its response (response), and every frame of the connection,
	// both ways, after it until the client sends a frame whose head is a
	// PlausibleRequest, which is then judged as any request (all: what
	// comes in between may be in a format the rules cannot read, such as
	// Kafka's raw SASL tokens after a SaslHandshake v0). A body not kept is
	// not buffered: its frame is emitted Truncated with only its head,
	// which is what makes skipping large uninteresting frames cheap. A
	// response whose key names none of the connection's last
	// RecentRequests requests is kept whole: its request may still come
	// out, or not have been captured.
	Keep(head []byte) (body, response, all bool)
}

// framer is the framing state of a direction.
type framer struct {
	h *half // its direction: connection, side, events

	decidedWant, want bool // in sync, see below
	resyncing         bool // out of sync, see below
	// framed: a frame boundary has been known in this direction (after the
	// SYN or an accepted re-synchronisation). Until then, skipped bytes of a
	// direction captured without its SYN are the tail of frames sent before
	// the capture started, not damage.
	framed bool
	// whole: the stream was captured from its first byte (its SYN), which
	// starts a frame.
	whole bool
	// keepAll: client side, a request whose Keep said all came, and no
	// plausible request since.
	keepAll bool
	// touched: since the Layer last asked (settled), bytes went to a frame
	// that the rules keep.
	touched bool
	// reserving: the body of the frame being collected is reserved against
	// the buffer caps (its size, prefix included).
	reserving bool

	// In sync: the frame being collected; have == 0 at a boundary.
	have, fOff, size int64 // size 0 = prefix not complete yet
	// lost counts the bytes of the current frame that a gap took; a frame
	// with lost bytes is collected to its known end and reported Incomplete.
	lost  int64
	buf   []byte
	marks []mark
	last  int64 // the frame's first packet is marks[0]

	// Out of sync; the state is allocated by the first startResync.
	*resyncState
	// Client side, allocated by the first request with a key.
	reqs *requests
}

// requests is what a client direction remembers of its recent requests:
// their keys, in a ring of RecentRequests, and for each (bit i for keys[i])
// whether its response keeps its body and whether that response is still
// awaited. Most connections carry a few requests: their keys fit in first,
// and a busy one takes the whole ring at once, not in doublings.
type requests struct {
	keys       []uint32
	first      [4]uint32
	next       int // where the next key goes once keys is full
	keep, open uint64
}

func (f *framer) p() *Pipeline     { return f.h.c.p }
func (f *framer) cfg() *Config     { return &f.h.c.p.cfg }
func (f *framer) fromClient() bool { return f.h.fromClient }
func (f *framer) flow() Flow       { return f.h.flow() }
func (f *framer) emit(e Event)     { f.h.emit(e) }
func (f *framer) reservedBytes() int {
	if f.reserving {
		return int(f.size)
	}
	return 0
}

// client is the framer of the connection's client→broker direction, nil
// until it sends a packet.
func (f *framer) client() *framer {
	if cl := f.h.client(); cl != nil {
		return &cl.fr
	}
	return nil
}

// server is the framer of the broker→client direction, nil until it sends
// a packet.
func (f *framer) server() *framer {
	if srv := f.h.c.h[1]; srv != nil {
		return &srv.fr
	}
	return nil
}

// start is told once, before any bytes, whether the stream is captured
// from its first byte; if not, it starts out of sync.
func (f *framer) start(whole bool) {
	f.whole = whole
	if !whole {
		f.startResync(0)
	}
}

// holds reports whether the framer holds bytes not yet emitted: a frame
// being collected, or bytes being scanned for a frame start.
func (f *framer) holds() bool {
	return f.have > 0 || (f.resyncing && len(f.rbuf) > 0)
}

// end ends the direction: bytes being scanned are Unparseable, a cut frame
// is Incomplete.
func (f *framer) end(reason string, ts time.Time) {
	if f.resyncing {
		f.scan(ts, true)
	}
	if f.resyncing {
		end := f.h.delivered()
		if f.h.c.layered {
			// The stream is the Layer's output, not the TCP stream: it ends
			// with the last bytes the Layer handed over.
			end = f.rOff + int64(len(f.rbuf))
		}
		f.flushJunk(end, ts, true)
	} else if f.have > 0 {
		f.incomplete(reason, ts)
	}
}

// release gives back what the framer holds.
func (f *framer) release() {
	f.unreserve()
	f.buf, f.marks, f.resyncState = nil, nil, nil
	f.have, f.resyncing = 0, false
}

func (f *framer) unreserve() {
	if f.reserving {
		f.p().buffered -= int(f.size)
		f.reserving = false
	}
}

// frameGap is the framer's side of lost bytes [off, off+n) of a Layer's
// output: see gapCuts and gapEnds.
func (f *framer) frameGap(off, n int64, ts time.Time) {
	f.gapEnds(off, n, ts, f.gapCuts(off, n, ts))
}

// gapCuts ends what lost bytes [off, off+n) cut: bytes being scanned, or a
// frame that the gap runs past. It reports whether the gap ends inside the
// frame being collected, whose size is known: then the frame's remaining
// bytes are counted (it is reported Incomplete at its end) and the next
// frame starts at that end, so the framer stays in sync. gapEnds follows,
// after the ordering reported the gap.
func (f *framer) gapCuts(off, n int64, ts time.Time) (inFrame bool) {
	end := off + max(n, 0) // a Layer may lose an unknown number of bytes
	if f.resyncing {
		f.scan(ts, true)
	}
	if f.resyncing {
		f.flushJunk(off, ts, false)
		f.sniff = nil // the bytes after the gap are no continuation: a new look
	} else if f.have > 0 {
		if f.size > 0 && n >= 0 && end <= f.fOff+f.size {
			return true
		}
		f.incomplete("gap", ts)
	}
	return false
}

// gapEnds goes on after lost bytes: out of sync after them, or still in
// the frame they ended in.
func (f *framer) gapEnds(off, n int64, ts time.Time, inFrame bool) {
	if !inFrame {
		f.startResync(off + max(n, 0))
		return
	}
	f.cutFrame(n)
	if f.have == f.size {
		f.incomplete("gap", ts)
	}
}

// cutFrame counts n lost bytes in the frame being collected. Its body is
// no longer buffered (it cannot be decoded); its head, captured before the
// gap, is kept for the Incomplete event.
func (f *framer) cutFrame(n int64) {
	if !f.decidedWant {
		f.decidedWant = true
		if f.fromClient() {
			f.keepRequest(f.buf)
		} else {
			f.keepResponse(f.buf)
		}
	}
	f.want = false
	f.unreserve()
	f.have += n
	f.lost += n
}

func (f *framer) incomplete(reason string, ts time.Time) {
	if !f.decidedWant && !f.fromClient() {
		f.keepResponse(f.buf) // a cut response still answers its request
	}
	want := int64(-1)
	if f.size > 0 {
		want = f.size
	}
	head := f.buf[:min(len(f.buf), f.p().prefix+HeadLen)]
	f.emit(&Incomplete{Flow: f.flow(), StreamOffset: f.fOff, Have: f.have - f.lost, Want: want, Reason: reason,
		Time: ts, Head: head})
	f.resetFrame()
	f.kickResponses(ts)
}

func (f *framer) resetFrame() {
	f.unreserve()
	f.have, f.size, f.lost = 0, 0, 0
	// What a connection keeps between frames stays small: a million idle
	// connections must not each hold the largest frame they ever carried.
	if cap(f.buf) > keepBuf {
		f.p().putBig(f.buf)
		f.buf = nil
	}
	if cap(f.marks) > keepMarks {
		f.marks = nil
	}
}

// Capacities kept for reuse between frames and resynchronisations; larger
// buffers are dropped.
const (
	keepBuf    = 512
	keepMarks  = 16
	keepResync = 512
)

// frame passes in-order bytes at stream offset off to the framer.
func (f *framer) frame(data []byte, off int64, pkt int, ts time.Time) {
	switch {
	case !f.h.c.decided && !f.fromClient() && f.whole:
		f.keepEarly(data, off, pkt, ts)
	case !f.h.c.decided:
		f.probe(data, off, pkt, ts)
	case f.resyncing:
		f.resyncFeed(data, off, pkt, ts)
	default:
		f.synced(data, off, pkt, ts)
	}
}

func (f *framer) sizeOK(n int64) bool {
	return n >= f.p().minSize && n <= int64(f.cfg().MaxFrame)
}

// syncedSizeOK bounds a size prefix where a frame is known to start.
func (f *framer) syncedSizeOK(n int64) bool {
	return n >= f.p().minSynced[dir(f.fromClient())] && n <= int64(f.cfg().MaxFrame)
}

// synced splits bytes at frame boundaries. Frames wholly inside data are
// emitted without copying; others are collected in buf.
func (f *framer) synced(data []byte, off int64, pkt int, ts time.Time) {
	rules, pl := f.cfg().Framing, int64(f.p().prefix)
	for len(data) > 0 {
		if f.have == 0 {
			if int64(len(data)) >= pl {
				n := rules.Size(data)
				if !f.syncedSizeOK(n) {
					f.corrupt(off)
					f.resyncFeed(data, off, pkt, ts)
					return
				}
				if total := n + pl; int64(len(data)) >= total {
					f.emitWhole(data[:total], off, pkt, ts)
					data, off = data[total:], off+total
					continue
				}
			}
			f.fOff, f.size, f.decidedWant, f.want = off, 0, false, false
			f.buf, f.marks = f.buf[:0], f.marks[:0]
		}
		if (len(f.marks) == 0 || f.marks[len(f.marks)-1].pkt != pkt) && len(f.marks) < MaxFramePackets {
			f.marks = append(f.marks, mark{off, pkt, ts.UnixNano()})
		}
		f.last = ts.UnixNano()
		var take int64
		switch {
		case f.size == 0:
			take = min(pl-f.have, int64(len(data)))
		case !f.decidedWant:
			take = min(min(f.size, pl+HeadLen)-f.have, int64(len(data)))
		default:
			take = min(f.size-f.have, int64(len(data)))
		}
		if f.size == 0 || !f.decidedWant || f.want {
			f.buf = append(f.buf, data[:take]...)
		}
		f.have += take
		data, off = data[take:], off+take
		if f.size == 0 {
			if f.have < pl {
				return
			}
			n := rules.Size(f.buf)
			if !f.syncedSizeOK(n) {
				f.corruptSplitPrefix(ts)
				if len(data) > 0 {
					f.frame(data, off, pkt, ts)
				}
				return
			}
			f.size = n + pl
		}
		if !f.decidedWant {
			if f.have < min(f.size, pl+HeadLen) {
				continue
			}
			f.decideWant(ts)
		}
		if f.have == f.size {
			if f.lost > 0 {
				f.incomplete("gap", ts)
			} else {
				f.emitCollected()
			}
		}
	}
}

// corrupt starts re-synchronising at a bad size prefix at off: the prefix
// itself is not tried again.
func (f *framer) corrupt(off int64) {
	f.startResync(off)
	f.scanFrom = off + 1
}

// corruptSplitPrefix handles a bad prefix that arrived in several packets:
// its bytes are scanned again as candidates, with their packet numbers.
func (f *framer) corruptSplitPrefix(ts time.Time) {
	pl := f.p().prefix
	// A prefix spans at most pl packets; the copies are taken before
	// corrupt resets buf and marks.
	b := append([]byte(nil), f.buf[:pl]...)
	ms := append([]mark(nil), f.marks[:min(len(f.marks), pl)]...)
	nm := len(ms)
	start := f.fOff
	f.corrupt(start)
	for i := 0; i < nm; i++ {
		end := start + int64(pl)
		if i+1 < nm {
			end = ms[i+1].off
		}
		f.frame(b[ms[i].off-start:end-start], ms[i].off, ms[i].pkt, f.p().timeAt(ms[i].ts))
	}
}

// decideWant decides, once the head of the frame being collected is in,
// whether its body is buffered: the rules must keep it and the caps must
// leave room for it.
func (f *framer) decideWant(ts time.Time) {
	f.decidedWant = true
	pl := int64(f.p().prefix)
	f.want = f.keep(f.buf[:f.have], f.size > pl+HeadLen)
	if !f.want || f.size <= pl+HeadLen {
		return
	}
	p, cfg := f.p(), f.cfg()
	if f.size+int64(f.h.c.buffered()) > int64(cfg.MaxConnBuffer) || int64(p.buffered)+f.size > int64(cfg.MaxTotalBuffer) {
		f.want = false
		p.stats.BufferLimits++
		f.emit(&BufferLimit{Flow: f.flow(), StreamOffset: f.fOff, Length: f.size, Time: ts})
		return
	}
	f.reserving = true
	p.buffered += int(f.size)
	if cap(f.buf) < int(f.size) {
		f.buf = append(p.bigBuf(int(f.size)), f.buf...)
	}
}

// keep says, from a frame's head, whether its body is kept; big: the frame
// is longer than its head (a shorter one is kept whole anyway). A request
// is remembered, and a response takes its request, either way.
func (f *framer) keep(head []byte, big bool) bool {
	var k bool
	if f.fromClient() {
		k = f.keepRequest(head)
	} else {
		k = f.keepResponse(head)
	}
	f.touched = f.touched || k
	return k || !big
}

// unread is Skipper.Unread: only in sync, once the connection is decided,
// are bytes ever passed over; anywhere else every byte is read.
func (f *framer) unread() (skip, head int64) {
	if !f.h.c.decided || f.resyncing {
		return 0, 0
	}
	pl := int64(f.p().prefix)
	switch {
	case f.have == 0:
		return 0, pl + HeadLen
	case f.size == 0:
		return 0, pl + HeadLen - f.have
	case !f.decidedWant:
		return 0, min(f.size, pl+HeadLen) - f.have
	case !f.want:
		return f.size - f.have, 0
	}
	return 0, 0
}

// skipped counts n bytes at off of a body not kept, as synced does when
// they come as data.
func (f *framer) skipped(off, n int64, pkt int, ts time.Time) {
	if skip, _ := f.unread(); skip < n {
		// Not what unread said: the framer cannot go on without the bytes.
		f.frameGap(off, n, ts)
		return
	}
	if (len(f.marks) == 0 || f.marks[len(f.marks)-1].pkt != pkt) && len(f.marks) < MaxFramePackets {
		f.marks = append(f.marks, mark{off, pkt, ts.UnixNano()})
	}
	f.last = ts.UnixNano()
	f.have += n
	if f.have == f.size {
		if f.lost > 0 {
			f.incomplete("gap", ts)
		} else {
			f.emitCollected()
		}
	}
}

// settled is Skipper.Settled.
func (f *framer) settled() bool {
	t := f.touched
	f.touched = false
	skip, head := f.unread()
	return !t && (skip > 0 || head > 0 && f.have == 0)
}

// keepRequest judges a request from its head: it remembers the request's
// key, so that the response direction can re-synchronise on its response
// and knows whether to keep that response's body, and says whether to keep
// its own body.
func (f *framer) keepRequest(head []byte) bool {
	rules := f.cfg().Framing
	body, resp, all := rules.Keep(head)
	open := true
	if f.keepAll && !rules.PlausibleRequest(head) {
		// Not a request: the format all is kept for, answered by no
		// response. Its key is still a candidate for re-synchronising.
		body, resp, all, open = true, true, true, false
	}
	f.keepAll = all
	if key, ok := rules.Key(true, head); ok {
		f.remember(key, resp, open)
	}
	return body
}

// keepResponse takes the request a response's head names and says whether
// to keep the response's body, as that request asked. A response whose
// request is not known, or whose request was answered already, is kept.
func (f *framer) keepResponse(head []byte) bool {
	cl := f.client()
	if cl == nil {
		return true
	}
	key, ok := f.cfg().Framing.Key(false, head)
	if !ok {
		return true
	}
	keep, found := cl.take(key)
	return keep || !found || cl.keepAll
}

// remember adds a request key to the ring.
func (f *framer) remember(key uint32, keepResp, open bool) {
	r := f.reqs
	if r == nil {
		r = new(requests)
		r.keys = r.first[:0]
		f.reqs = r
	}
	i := len(r.keys)
	if i < RecentRequests {
		if i == cap(r.keys) {
			r.keys = append(make([]uint32, 0, RecentRequests), r.keys...)
		}
		r.keys = append(r.keys, key)
	} else {
		i = r.next
		r.keys[i] = key
		r.next = (i + 1) % RecentRequests
	}
	bit := uint64(1) << i
	r.keep &^= bit
	r.open &^= bit
	if keepResp {
		r.keep |= bit
	}
	if open {
		r.open |= bit
	}
}

// take finds the newest request with key still awaiting its response and
// marks it answered: whether the response keeps its body.
func (f *framer) take(key uint32) (keepResp, found bool) {
	r := f.reqs
	if r == nil {
		return false, false
	}
	n := len(r.keys)
	newest := n - 1
	if n == RecentRequests {
		newest = r.next + RecentRequests - 1
	}
	for j := range n {
		i := (newest - j) % RecentRequests
		if bit := uint64(1) << i; r.keys[i] == key && r.open&bit != 0 {
			r.open &^= bit
			return r.keep&bit != 0, true
		}
	}
	return false, false
}

// keys is the ring of recent request keys, nil before the first.
func (f *framer) keys() []uint32 {
	if f.reqs == nil {
		return nil
	}
	return f.reqs.keys
}

// kickResponses gives a response direction waiting for a known request
// another scan, after the request frame was emitted so that the caller sees
// the request first.
func (f *framer) kickResponses(ts time.Time) {
	if !f.fromClient() {
		return
	}
	if srv := f.server(); srv != nil && srv != f && srv.resyncing && srv.hasKey() {
		srv.scan(ts, false)
	}
}

func (f *framer) emitWhole(fr []byte, off int64, pkt int, ts time.Time) {
	pl := f.p().prefix
	data, trunc := fr, false
	if !f.keep(fr[:min(len(fr), pl+HeadLen)], len(fr) > pl+HeadLen) {
		data, trunc = fr[:pl+HeadLen], true
	}
	p := f.p()
	p.pk = append(p.pk[:0], pkt)
	p.stats.Frames++
	p.fr = Frame{Flow: f.flow(), StreamOffset: off, Size: len(fr), Data: data, Truncated: trunc,
		Packets: p.pk, First: ts, Last: ts, PeerPending: f.peerPending(), Opened: f.whole}
	f.emit(&p.fr)
	f.kickResponses(ts)
}

// peerPending is Frame.PeerPending.
func (f *framer) peerPending() bool {
	cl := f.h.client()
	return !f.fromClient() && cl != nil && cl.unreleased()
}

func (f *framer) emitCollected() {
	p := f.p()
	p.pk = p.pk[:0]
	for _, m := range f.marks {
		p.pk = append(p.pk, m.pkt)
	}
	p.stats.Frames++
	last := p.timeAt(f.last)
	p.fr = Frame{Flow: f.flow(), StreamOffset: f.fOff, Size: int(f.size), Data: f.buf, Truncated: !f.want,
		Packets: p.pk, First: p.timeAt(f.marks[0].ts), Last: last, PeerPending: f.peerPending(), Opened: f.whole}
	f.emit(&p.fr)
	f.resetFrame()
	f.kickResponses(last)
}
