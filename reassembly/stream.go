package reassembly

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"time"
)

// held is an out-of-order piece of a direction: [off, end) in stream
// offsets, of which data holds the captured prefix (snaplen may cut it).
type held struct {
	off, end int64
	data     []byte
	pkt      int
	ts       int64    // capture nanoseconds
	chunk    chunkRef // data's memory when it is a chunk; see pool.go
}

// mark remembers where a packet's bytes begin in a buffer, for Packets and
// for feeding buffered bytes again after a re-synchronisation.
type mark struct {
	off int64
	pkt int
	ts  int64 // capture nanoseconds
}

// half is one direction of a connection: sequence tracking plus framing.
// Its size matters (see conn); times are capture nanoseconds.
type half struct {
	c *conn

	// The flags are together, so that they share one word.
	fromClient, started, synSeen, closed, fin bool
	decidedWant, want                         bool // in sync, see below
	resyncing                                 bool // out of sync, see below
	// framed: a frame boundary has been known in this direction (after the
	// SYN or an accepted re-synchronisation). Until then, skipped bytes of a
	// direction captured without its SYN are the tail of frames sent before
	// the capture started, not damage.
	framed bool

	isn, nextSeq uint32
	nextOff      int64
	finOff       int64
	finTs        int64 // when the FIN came, for ReorderWait
	ooo          []held
	oooBytes     int
	// ackOff is the highest stream offset the peer has acknowledged: bytes
	// below it that were not captured will never be sent again.
	ackOff int64

	// In sync: the frame being collected; have == 0 at a boundary.
	have, fOff, size int64 // size 0 = prefix not complete yet
	// lost counts the bytes of the current frame that a gap took; a frame
	// with lost bytes is collected to its known end and reported Incomplete.
	lost     int64
	reserved int // bytes reserved against the buffer caps for buf
	buf      []byte
	marks    []mark
	last     int64 // the frame's first packet is marks[0]

	// Out of sync; the state is allocated by the first startResync.
	*resyncState
	corr  []int32 // client side: recent correlation IDs, a ring of RecentRequests
	ncorr int
}

// resyncState is what a direction needs while out of sync: rbuf holds
// bytes from rOff not yet rejected as frame starts; junkOff is where
// skipped bytes begin.
type resyncState struct {
	rbuf              []byte
	rmarks            []mark
	rOff              int64
	scanFrom, junkOff int64
	spare             []byte
	spareMarks        []mark
}

// src and dst follow the connection's roles, which DetectPorts may swap.
func (h *half) src() netip.AddrPort {
	if h.fromClient {
		return h.c.key.Client
	}
	return h.c.key.Server
}

func (h *half) dst() netip.AddrPort {
	if h.fromClient {
		return h.c.key.Server
	}
	return h.c.key.Client
}

// other is the opposite direction, nil until it sends a packet.
func (h *half) other() *half {
	if h.c.h[0] == h {
		return h.c.h[1]
	}
	return h.c.h[0]
}

// client is the client→broker direction of h's connection, nil until it
// sends a packet.
func (h *half) client() *half { return h.c.h[0] }

func (h *half) flow() Flow {
	return Flow{Conn: h.c.key, ConnID: h.c.key.ID, FromClient: h.fromClient, Src: h.src(), Dst: h.dst()}
}

func (h *half) emit(e Event) {
	if h.c.decided {
		h.c.p.emit(e)
	}
}

func (h *half) cfg() *Config { return &h.c.p.cfg }

// segment handles one TCP segment of this direction.
func (h *half) segment(s *segment, pkt int, ts time.Time) {
	syn := s.flags&flagSYN != 0
	if !h.started {
		h.started = true
		if syn {
			h.synSeen, h.isn, h.nextSeq = true, s.seq, s.seq+1
		} else {
			h.nextSeq = s.seq
			h.startResync(0)
		}
	}
	if h.closed {
		return
	}
	seq := s.seq
	if syn {
		seq++ // data on a SYN (TCP Fast Open) follows the SYN's sequence number
	}
	off := h.nextOff + int64(int32(seq-h.nextSeq))
	end := off + int64(s.claimed)
	if s.flags&flagFIN != 0 && !h.fin {
		h.fin, h.finOff, h.finTs = true, end, ts.UnixNano()
	}
	if end > off {
		h.data(off, end, s.payload, pkt, ts)
	}
	h.checkFin(ts)
}

func (h *half) checkFin(ts time.Time) {
	if h.fin && !h.closed && len(h.ooo) == 0 && h.nextOff >= h.finOff {
		h.finish("connection closed", ts)
		if h.c.closed() {
			h.c.p.endConn(h.c, "connection closed", ts, false)
		}
	}
}

func (h *half) data(off, end int64, payload []byte, pkt int, ts time.Time) {
	if end <= h.nextOff {
		h.retransmission(off, end-off, ts)
		return
	}
	if off < h.nextOff {
		cut := h.nextOff - off
		h.retransmission(off, cut, ts)
		payload = payload[min(cut, int64(len(payload))):]
		off = h.nextOff
	}
	if off > h.nextOff {
		h.hold(off, end, payload, pkt, ts)
		return
	}
	h.deliver(end, payload, pkt, ts)
	h.drain()
}

// acked takes an acknowledgement number the peer sent for h's bytes. Bytes
// the peer acknowledged that were not captured were lost by the capture,
// not by the network: they will never come again, so the hole before held
// data is declared a gap at once rather than after ReorderWait (Wireshark's
// "ACKed unseen segment").
func (h *half) acked(ack uint32, ts time.Time) {
	if !h.started || h.closed {
		return
	}
	d := int64(int32(ack - h.nextSeq))
	if d <= 0 || d > FarAway {
		return
	}
	h.ackOff = max(h.ackOff, h.nextOff+d)
	h.ackedHoles(ts)
}

// ackedHoles declares the acknowledged part of a hole lost. A hole with
// nothing captured after it waits for the next segment (which is then held
// and declared here): an acknowledgement one beyond the last byte may be
// for a FIN the capture missed, not for data.
func (h *half) ackedHoles(ts time.Time) {
	for !h.closed && h.ackOff > h.nextOff {
		switch {
		case len(h.ooo) > 0 && h.ooo[0].off <= h.ackOff:
			h.skipHole(ts)
			continue
		case len(h.ooo) > 0:
			to := h.ackOff
			h.gap(h.nextOff, to-h.nextOff, ts)
			h.advance(to)
		case h.fin && h.nextOff < h.finOff:
			to := min(h.ackOff, h.finOff)
			h.gap(h.nextOff, to-h.nextOff, ts)
			h.advance(to)
			h.checkFin(ts)
		}
		return
	}
}

// unreleased reports whether h holds bytes not yet emitted as a frame or
// an event: held out-of-order data, a frame being collected, bytes being
// scanned for a frame start, or missing bytes before a FIN.
func (h *half) unreleased() bool {
	return len(h.ooo) > 0 || h.have > 0 || (h.resyncing && len(h.rbuf) > 0) ||
		(h.fin && !h.closed && h.nextOff < h.finOff)
}

func (h *half) retransmission(off, n int64, ts time.Time) {
	h.c.p.stats.Retransmissions++
	h.emit(&Retransmission{Flow: h.flow(), StreamOffset: off, Length: n, Time: ts})
}

// deliver passes in-order bytes [nextOff, end), of which payload was captured.
func (h *half) deliver(end int64, payload []byte, pkt int, ts time.Time) {
	off := h.nextOff
	if len(payload) > 0 {
		h.input(payload, off, pkt, ts)
	}
	if cut := off + int64(len(payload)); cut < end {
		h.gap(cut, end-cut, ts)
	}
	h.advance(end)
}

func (h *half) advance(to int64) {
	h.nextSeq += uint32(to - h.nextOff)
	h.nextOff = to
}

// hold copies the parts of an out-of-order segment not held yet.
func (h *half) hold(off, end int64, payload []byte, pkt int, ts time.Time) {
	p := h.c.p
	var overlap int64
	cur := off
	var pieces [][2]int64
	for _, s := range h.ooo {
		if s.end <= cur {
			continue
		}
		if s.off >= end {
			break
		}
		if s.off > cur {
			pieces = append(pieces, [2]int64{cur, s.off})
		}
		overlap += min(s.end, end) - max(s.off, cur)
		cur = max(cur, s.end)
	}
	if cur < end {
		pieces = append(pieces, [2]int64{cur, end})
	}
	if overlap > 0 {
		h.retransmission(off, overlap, ts)
	}
	for _, pc := range pieces {
		lo := min(pc[0]-off, int64(len(payload)))
		hi := min(pc[1]-off, int64(len(payload)))
		data, chunk := p.heldBuf(int(hi - lo))
		data = append(data, payload[lo:hi]...)
		h.oooBytes += len(data)
		p.buffered += len(data)
		i := len(h.ooo)
		for i > 0 && h.ooo[i-1].off > pc[0] {
			i--
		}
		h.ooo = append(h.ooo, held{})
		copy(h.ooo[i+1:], h.ooo[i:])
		h.ooo[i] = held{off: pc[0], end: pc[1], data: data, pkt: pkt, ts: ts.UnixNano(), chunk: chunk}
	}
	if h.overCap() {
		p.stats.BufferLimits++
		h.emit(&BufferLimit{Flow: h.flow(), StreamOffset: h.ooo[0].off, Length: int64(h.oooBytes), Time: ts})
		for h.overCap() {
			h.skipHole(ts)
		}
	}
	h.ackedHoles(ts)
}

// overCap reports whether held segments of h must be given up on because a
// buffer cap is exceeded.
func (h *half) overCap() bool {
	p := h.c.p
	return len(h.ooo) > 0 && (h.c.buffered() > p.cfg.MaxConnBuffer || p.buffered > p.cfg.MaxTotalBuffer)
}

// buffered is what the connection holds against MaxConnBuffer: out-of-order
// segments and reserved frame bodies of both directions.
func (c *conn) buffered() int {
	n := 0
	for _, h := range c.h {
		if h != nil {
			n += h.oooBytes + h.reserved
		}
	}
	return n
}

// drain delivers held segments that became contiguous.
func (h *half) drain() {
	for len(h.ooo) > 0 && h.ooo[0].off <= h.nextOff {
		s := h.ooo[0]
		copy(h.ooo, h.ooo[1:])
		h.ooo[len(h.ooo)-1] = held{} // the copy must not keep s.data alive
		h.ooo = h.ooo[:len(h.ooo)-1]
		if len(h.ooo) == 0 {
			h.ooo = nil
		}
		h.oooBytes -= len(s.data)
		h.c.p.buffered -= len(s.data)
		if s.end > h.nextOff {
			cut := min(h.nextOff-s.off, int64(len(s.data)))
			h.deliver(s.end, s.data[cut:], s.pkt, h.c.p.timeAt(s.ts))
		}
		h.c.p.freeHeld(s)
	}
}

// finHole reports whether the bytes before a FIN are missing with no
// held segment after them, since before the given time.
func (h *half) finHole(before int64) bool {
	return h.fin && !h.closed && len(h.ooo) == 0 && h.nextOff < h.finOff && h.finTs < before
}

// skipFinHole gives up on the bytes missing before the FIN, which closes
// the direction.
func (h *half) skipFinHole(ts time.Time) {
	h.gap(h.nextOff, h.finOff-h.nextOff, ts)
	h.advance(h.finOff)
	h.checkFin(ts)
}

// skipHole gives up on the bytes missing before the first held segment.
func (h *half) skipHole(ts time.Time) {
	first := h.ooo[0].off
	h.gap(h.nextOff, first-h.nextOff, ts)
	h.advance(first)
	h.drain()
	h.checkFin(ts)
}

// gap reports lost bytes [off, off+n). When they end inside a frame whose
// size is known, the frame's remaining bytes are counted (it is reported
// Incomplete at its end) and the next frame starts at that end: the framer
// stays in sync. Otherwise it is out of sync after the gap.
func (h *half) gap(off, n int64, ts time.Time) {
	if h.c.lay != nil {
		h.layerGap(off, n, ts)
		return
	}
	h.framerGap(off, n, ts, true)
}

// framerGap is gap for the framer; report: count and emit it (a Layer's
// output gap was reported as the TCP gap or the Layer's event).
func (h *half) framerGap(off, n int64, ts time.Time, report bool) {
	p := h.c.p
	end := off + max(n, 0)
	if h.resyncing {
		h.scan(ts, true)
	}
	inFrame := false
	if h.resyncing {
		h.flushJunk(off, ts)
	} else if h.have > 0 {
		if h.size > 0 && n >= 0 && end <= h.fOff+h.size {
			inFrame = true
		} else {
			h.incomplete("gap", ts)
		}
	}
	if report {
		p.stats.Gaps++
		p.stats.GapBytes += n
		h.emit(&Gap{Flow: h.flow(), StreamOffset: off, Length: n, Time: ts})
	}
	if !inFrame {
		h.startResync(end)
		return
	}
	h.cutFrame(n)
	if h.have == h.size {
		h.incomplete("gap", ts)
	}
}

// cutFrame counts n lost bytes in the frame being collected. Its body is
// no longer buffered (it cannot be decoded); its head, captured before the
// gap, is kept for the Incomplete event.
func (h *half) cutFrame(n int64) {
	if !h.decidedWant {
		h.decidedWant = true
		h.noteCorr(h.buf)
	}
	h.want = false
	h.c.p.buffered -= h.reserved
	h.reserved = 0
	h.have += n
	h.lost += n
}

// finish ends the direction: held data is delivered after gaps, a lost tail
// before a FIN is a gap, and a cut frame is Incomplete.
func (h *half) finish(reason string, ts time.Time) {
	if h.closed || !h.started {
		h.closed = true
		return
	}
	h.flushHeld(ts)
	h.closed = true
	if h.resyncing {
		h.scan(ts, true)
	}
	if h.resyncing {
		h.flushJunk(h.outEnd(), ts)
	} else if h.have > 0 {
		h.incomplete(reason, ts)
	}
	h.release()
}

// flushHeld delivers held data after gaps; a lost tail before a FIN is a gap.
func (h *half) flushHeld(ts time.Time) {
	for len(h.ooo) > 0 {
		first := h.ooo[0].off
		h.gap(h.nextOff, first-h.nextOff, ts)
		h.advance(first)
		h.drain()
	}
	if h.fin && h.nextOff < h.finOff {
		h.gap(h.nextOff, h.finOff-h.nextOff, ts)
		h.advance(h.finOff)
	}
}

func (h *half) release() {
	p := h.c.p
	p.buffered -= h.oooBytes + h.reserved
	h.oooBytes, h.reserved = 0, 0
	for _, s := range h.ooo {
		p.freeHeld(s)
	}
	h.ooo, h.buf, h.marks, h.resyncState = nil, nil, nil, nil
	h.have, h.resyncing = 0, false
}

func (h *half) incomplete(reason string, ts time.Time) {
	want := int64(-1)
	if h.size > 0 {
		want = h.size
	}
	head := h.buf[:min(len(h.buf), 4+HeadLen)]
	h.emit(&Incomplete{Flow: h.flow(), StreamOffset: h.fOff, Have: h.have - h.lost, Want: want, Reason: reason,
		Time: ts, Head: head})
	h.resetFrame()
	h.kickResponses(ts)
}

func (h *half) resetFrame() {
	h.c.p.buffered -= h.reserved
	h.reserved = 0
	h.have, h.size, h.lost = 0, 0, 0
	// What a connection keeps between frames stays small: a million idle
	// connections must not each hold the largest frame they ever carried.
	if cap(h.buf) > keepBuf {
		h.c.p.putBig(h.buf)
		h.buf = nil
	}
	if cap(h.marks) > keepMarks {
		h.marks = nil
	}
}

// Capacities kept for reuse between frames and resynchronisations; larger
// buffers are dropped.
const (
	keepBuf    = 512
	keepMarks  = 16
	keepResync = 512
)

// flushJunk reports the bytes skipped while out of sync, up to upTo.
func (h *half) flushJunk(upTo int64, ts time.Time) {
	if upTo > h.junkOff {
		h.c.p.stats.UnparseableBytes += upTo - h.junkOff
		h.emit(&Unparseable{Flow: h.flow(), StreamOffset: h.junkOff, Length: upTo - h.junkOff, Time: ts,
			Leading: !h.synSeen && !h.framed})
	}
	h.junkOff = upTo
}

func (h *half) startResync(at int64) {
	h.resetFrame()
	if h.resyncState == nil {
		h.resyncState = new(resyncState)
	}
	h.resyncing = true
	h.rbuf, h.rmarks = h.rbuf[:0], h.rmarks[:0]
	if cap(h.rbuf) > keepResync {
		h.rbuf, h.rmarks = nil, nil
	}
	h.rOff, h.junkOff, h.scanFrom = at, at, at
}

// frame passes captured in-order bytes at stream offset off to the framer.
func (h *half) frame(data []byte, off int64, pkt int, ts time.Time) {
	switch {
	case !h.c.decided && !h.fromClient && h.synSeen:
		h.keepEarly(data, off, pkt, ts)
	case !h.c.decided:
		if !h.probeLayer(data, off, pkt, ts) {
			h.probe(data, off, pkt, ts)
		}
	case h.resyncing:
		h.resyncFeed(data, off, pkt, ts)
	default:
		h.synced(data, off, pkt, ts)
	}
}

func (h *half) sizeOK(n int64) bool {
	return n >= MinResponseSize && n <= int64(h.cfg().MaxFrame)
}

// synced splits bytes at frame boundaries. Frames wholly inside data are
// emitted without copying; others are collected in buf.
func (h *half) synced(data []byte, off int64, pkt int, ts time.Time) {
	for len(data) > 0 {
		if h.have == 0 {
			if len(data) >= 4 {
				n := int64(int32(binary.BigEndian.Uint32(data)))
				if !h.sizeOK(n) {
					h.corrupt(off)
					h.resyncFeed(data, off, pkt, ts)
					return
				}
				if total := n + 4; int64(len(data)) >= total {
					h.emitWhole(data[:total], off, pkt, ts)
					data, off = data[total:], off+total
					continue
				}
			}
			h.fOff, h.size, h.decidedWant, h.want = off, 0, false, false
			h.buf, h.marks = h.buf[:0], h.marks[:0]
		}
		if (len(h.marks) == 0 || h.marks[len(h.marks)-1].pkt != pkt) && len(h.marks) < MaxFramePackets {
			h.marks = append(h.marks, mark{off, pkt, ts.UnixNano()})
		}
		h.last = ts.UnixNano()
		var take int64
		switch {
		case h.size == 0:
			take = min(4-h.have, int64(len(data)))
		case !h.decidedWant:
			take = min(min(h.size, 4+HeadLen)-h.have, int64(len(data)))
		default:
			take = min(h.size-h.have, int64(len(data)))
		}
		if h.size == 0 || !h.decidedWant || h.want {
			h.buf = append(h.buf, data[:take]...)
		}
		h.have += take
		data, off = data[take:], off+take
		if h.size == 0 {
			if h.have < 4 {
				return
			}
			n := int64(int32(binary.BigEndian.Uint32(h.buf)))
			if !h.sizeOK(n) {
				h.corruptSplitPrefix(ts)
				if len(data) > 0 {
					h.frame(data, off, pkt, ts)
				}
				return
			}
			h.size = n + 4
		}
		if !h.decidedWant {
			if h.have < min(h.size, 4+HeadLen) {
				continue
			}
			h.decideWant(ts)
		}
		if h.have == h.size {
			if h.lost > 0 {
				h.incomplete("gap", ts)
			} else {
				h.emitCollected()
			}
		}
	}
}

// corrupt starts re-synchronising at a bad size prefix at off: the prefix
// itself is not tried again.
func (h *half) corrupt(off int64) {
	h.startResync(off)
	h.scanFrom = off + 1
}

// corruptSplitPrefix handles a bad prefix that arrived in several packets:
// its 4 bytes are scanned again as candidates, with their packet numbers.
func (h *half) corruptSplitPrefix(ts time.Time) {
	var b [4]byte
	copy(b[:], h.buf)
	var ms [4]mark
	nm := copy(ms[:], h.marks)
	start := h.fOff
	h.corrupt(start)
	for i := 0; i < nm; i++ {
		end := start + 4
		if i+1 < nm {
			end = ms[i+1].off
		}
		h.frame(b[ms[i].off-start:end-start], ms[i].off, ms[i].pkt, h.c.p.timeAt(ms[i].ts))
	}
}

func (h *half) decideWant(ts time.Time) {
	h.decidedWant = true
	h.noteCorr(h.buf)
	cfg := h.cfg()
	if h.size <= 4+HeadLen {
		h.want = true
		return
	}
	h.want = cfg.WantBody == nil || cfg.WantBody(h.flow(), h.buf[4:h.have])
	if !h.want {
		return
	}
	p := h.c.p
	if h.size+int64(h.c.buffered()) > int64(cfg.MaxConnBuffer) || int64(p.buffered)+h.size > int64(cfg.MaxTotalBuffer) {
		h.want = false
		p.stats.BufferLimits++
		h.emit(&BufferLimit{Flow: h.flow(), StreamOffset: h.fOff, Length: h.size, Time: ts})
		return
	}
	h.reserved = int(h.size)
	p.buffered += h.reserved
	if cap(h.buf) < int(h.size) {
		h.buf = append(p.bigBuf(int(h.size)), h.buf...)
	}
}

// noteCorr remembers a request's correlation ID so the response direction
// can re-synchronise on the matching response.
func (h *half) noteCorr(f []byte) {
	if h.fromClient && len(f) >= 12 {
		id := int32(binary.BigEndian.Uint32(f[8:]))
		// The ring grows as requests come: most connections carry a few.
		if len(h.corr) < RecentRequests {
			h.corr = append(h.corr, id)
		} else {
			h.corr[h.ncorr%RecentRequests] = id
		}
		h.ncorr++
	}
}

// kickResponses gives a response direction waiting for a known request
// another scan, after the request frame was emitted so that the caller sees
// the request first.
func (h *half) kickResponses(ts time.Time) {
	if srv := h.c.h[1]; h.fromClient && srv != nil && srv != h && srv.resyncing && len(srv.rbuf) >= 8 {
		srv.scan(ts, false)
	}
}

func (h *half) emitWhole(f []byte, off int64, pkt int, ts time.Time) {
	h.noteCorr(f)
	data, trunc := f, false
	if len(f) > 4+HeadLen {
		if wb := h.cfg().WantBody; wb != nil && !wb(h.flow(), f[4:4+HeadLen]) {
			data, trunc = f[:4+HeadLen], true
		}
	}
	p := h.c.p
	p.pk = append(p.pk[:0], pkt)
	p.stats.Frames++
	h.emit(&Frame{Flow: h.flow(), StreamOffset: off, Size: len(f), Data: data, Truncated: trunc,
		Packets: p.pk, First: ts, Last: ts, PeerPending: h.peerPending()})
	h.kickResponses(ts)
}

// peerPending is Frame.PeerPending.
func (h *half) peerPending() bool {
	cl := h.client()
	return !h.fromClient && cl != nil && cl.unreleased()
}

func (h *half) emitCollected() {
	p := h.c.p
	p.pk = p.pk[:0]
	for _, m := range h.marks {
		p.pk = append(p.pk, m.pkt)
	}
	p.stats.Frames++
	last := p.timeAt(h.last)
	h.emit(&Frame{Flow: h.flow(), StreamOffset: h.fOff, Size: int(h.size), Data: h.buf, Truncated: !h.want,
		Packets: p.pk, First: p.timeAt(h.marks[0].ts), Last: last, PeerPending: h.peerPending()})
	h.resetFrame()
	h.kickResponses(last)
}

func (h *half) resyncFeed(data []byte, off int64, pkt int, ts time.Time) {
	if len(h.rbuf) == 0 {
		h.rOff = off
	}
	h.rbuf = append(h.rbuf, data...)
	h.rmarks = append(h.rmarks, mark{off, pkt, ts.UnixNano()})
	h.scan(ts, false)
}

// minPartialHead is how much of a request candidate must have been captured
// before a gap for its header to be judged: the size prefix, api key and
// version, correlation ID and client_id's length.
const minPartialHead = 14

// maxChain bounds how far the frame chain of a response candidate is
// followed (and so how many bytes wait for its verdict); maxChainFrames
// complete frames in a row are proof enough.
const (
	maxChain       = 64 << 10
	maxChainFrames = 4
)

// dropPending forgets the first i bytes of rbuf.
func (h *half) dropPending(i int) {
	n := copy(h.rbuf, h.rbuf[i:])
	h.rbuf = h.rbuf[:n]
	// A direction out of sync keeps what it may still need, not the
	// capacity of the largest segment it scanned: there may be a million.
	if c := cap(h.rbuf); c > 256 && n < c/4 {
		h.rbuf = append(make([]byte, 0, max(2*n, 64)), h.rbuf...)
	}
	h.rOff += int64(i)
	k := 0
	for k+1 < len(h.rmarks) && h.rmarks[k+1].off <= h.rOff {
		k++
	}
	h.rmarks = h.rmarks[:copy(h.rmarks, h.rmarks[k:])]
}

// scan looks for the first plausible frame start in rbuf; see the package
// documentation for the tests. A candidate whose head has not arrived yet
// waits for more bytes, unless final (no more bytes will come before a gap
// or the end): then it is skipped.
func (h *half) scan(ts time.Time, final bool) {
	cfg := h.cfg()
	var corrMask uint64
	if c := h.client(); !h.fromClient && c != nil {
		for _, id := range c.corr {
			corrMask |= 1 << (uint32(id) & 63)
		}
	}
	b := h.rbuf
	h.c.p.knownListed = false
	i := 0
	if d := h.scanFrom - h.rOff; d > 0 {
		i = int(min(d, int64(len(b))))
	}
	for ; len(b)-i >= 4; i++ {
		n := int64(int32(binary.BigEndian.Uint32(b[i:])))
		if n > int64(cfg.MaxFrame) {
			continue
		}
		if h.fromClient {
			if n < MinRequestSize {
				continue
			}
			need := 4 + int(min(n, HeadLen))
			if len(b)-i < need {
				if !final {
					break
				}
				// A gap or the end follows: judge the header by what was
				// captured, so that a request cut there still names its
				// response (it becomes Incomplete with its head).
				if len(b)-i < minPartialHead {
					continue
				}
				need = len(b) - i
			}
			if cfg.PlausibleRequest != nil && !cfg.PlausibleRequest(b[i:i+need]) {
				continue
			}
		} else {
			if n < MinResponseSize {
				continue
			}
			if len(b)-i < 8 {
				break
			}
			if !h.knownResponse(b[i:], corrMask) {
				ok, wait := h.chain(b, i, final, corrMask)
				if wait {
					break
				}
				if !ok {
					continue
				}
			}
		}
		h.accept(i, ts)
		if final && h.resyncing {
			h.scan(ts, true)
		}
		return
	}
	if i > 0 {
		h.dropPending(i)
	}
}

// knownResponse reports whether f (at least 8 bytes) starts with the
// correlation ID of a recent request.
func (h *half) knownResponse(f []byte, corrMask uint64) bool {
	corr := int32(binary.BigEndian.Uint32(f[4:]))
	cl := h.client()
	return corrMask&(1<<(uint32(corr)&63)) != 0 && cl != nil && cl.hasCorr(corr)
}

// chain follows the size prefixes from b[i] and says whether they form a
// chain of response frames that ends exactly where a response to a known
// request starts, at the end of the captured bytes (final: a gap or the end
// of the direction follows), or holds maxChainFrames frames. wait: more
// bytes are needed for the verdict. A chain that would swallow the start of
// a response to a known request is no chain: that start wins.
func (h *half) chain(b []byte, i int, final bool, corrMask uint64) (ok, wait bool) {
	j := i
	for frames := 1; ; frames++ {
		n := int64(int32(binary.BigEndian.Uint32(b[j:])))
		if n < MinResponseSize || n > int64(h.cfg().MaxFrame) {
			return false, false
		}
		next := int64(j) + 4 + n
		if next-int64(i) > maxChain {
			return false, false
		}
		if next > int64(len(b)) || next == int64(len(b)) && !final {
			return false, !final
		}
		if h.swallowsKnown(b, i, int(next), corrMask) {
			return false, false
		}
		if next == int64(len(b)) || frames >= maxChainFrames {
			return true, false
		}
		j = int(next)
		if len(b)-j < 8 {
			return false, !final
		}
		if h.knownResponse(b[j:], corrMask) {
			return true, false
		}
	}
}

// swallowsKnown reports whether b(i, end) holds the start of a response to
// a known request whose own chain of size prefixes ends exactly at end: the
// frame from i would swallow real frames. (A known correlation ID alone is
// no evidence: small ones are common values inside bodies.) The positions
// that could start such a response are listed once per scan, so that a
// buffer full of candidates costs a pass over it, not one per candidate.
//
// The list lives in the Pipeline: it is only used between the start of a
// scan and its verdict, during which nothing else scans.
func (h *half) swallowsKnown(b []byte, i, end int, corrMask uint64) bool {
	p := h.c.p
	if !p.knownListed {
		p.knownListed = true
		p.known = p.known[:0]
		for k := 0; len(b)-k >= 8; k++ {
			if h.knownResponse(b[k:], corrMask) && h.sizeOK(int64(int32(binary.BigEndian.Uint32(b[k:])))) {
				p.known = append(p.known, k)
			}
		}
	}
	first, _ := slices.BinarySearch(p.known, i+1)
	for _, k := range p.known[first:] {
		if k >= end {
			break
		}
		if h.reaches(b, k, end) {
			return true
		}
	}
	return false
}

// reaches reports whether the size prefixes from b[j] lead exactly to end.
func (h *half) reaches(b []byte, j, end int) bool {
	for end-j >= 4 {
		n := int64(int32(binary.BigEndian.Uint32(b[j:])))
		if !h.sizeOK(n) {
			return false
		}
		next := int64(j) + 4 + n
		if next >= int64(end) {
			return next == int64(end)
		}
		j = int(next)
	}
	return false
}

func (h *half) hasCorr(corr int32) bool {
	return slices.Contains(h.corr, corr)
}

// accept re-enters sync at rbuf[i] and feeds the buffered bytes again.
func (h *half) accept(i int, ts time.Time) {
	start := h.rOff + int64(i)
	h.flushJunk(start, ts)
	old, oldOff, marks := h.rbuf, h.rOff, h.rmarks
	// A nested re-synchronisation must not write into the bytes being fed.
	h.rbuf, h.rmarks, h.spare, h.spareMarks = h.spare[:0], h.spareMarks[:0], nil, nil
	h.resyncing = false
	h.framed = true
	h.have = 0
	end := oldOff + int64(len(old))
	for j, m := range marks {
		from := max(m.off, start)
		to := end
		if j+1 < len(marks) {
			to = marks[j+1].off
		}
		if to > from {
			h.frame(old[from-oldOff:to-oldOff], from, m.pkt, h.c.p.timeAt(m.ts))
		}
	}
	if h.resyncState != nil && h.spare == nil && cap(old) <= keepResync {
		h.spare, h.spareMarks = old[:0], marks[:0]
	}
	if h.resyncState != nil && cap(h.rbuf) > keepResync {
		h.rbuf, h.rmarks = nil, nil
	}
}

// keepEarly handles the bytes of the side that sent the SYN-ACK (so the
// server: a response that looks like a request, as one with correlation id
// 0 reads as a Produce v0 header, must not make it the client) before its
// connection is found to be Kafka. They are kept, up to maxChain bytes from
// the first, only when the client's first bytes are missing (its peer
// acknowledged bytes the capture lacks): the answer to a lost first request
// is then still reported once the next request shows the connection is
// Kafka. Other connections on unknown ports keep nothing.
func (h *half) keepEarly(data []byte, off int64, pkt int, ts time.Time) {
	cl := h.client()
	kept := 0
	if h.resyncState != nil {
		kept = len(h.rbuf)
	}
	if h.resyncing || cl == nil || (cl.ackOff <= cl.nextOff && len(cl.ooo) == 0) ||
		off != int64(kept) || kept+len(data) > maxChain {
		if h.resyncState != nil {
			h.rbuf, h.rmarks = h.rbuf[:0], h.rmarks[:0]
		}
		return
	}
	if h.resyncState == nil {
		h.resyncState = new(resyncState) // only a direction that keeps bytes pays for it
	}
	h.rOff = 0
	h.rbuf = append(h.rbuf, data...)
	h.rmarks = append(h.rmarks, mark{off, pkt, ts.UnixNano()})
}

// probe implements DetectPorts: a connection on unknown ports is followed
// from the first segment that starts with a plausible request.
func (h *half) probe(data []byte, off int64, pkt int, ts time.Time) {
	pr := h.cfg().PlausibleRequest
	if pr == nil || len(data) < 4 {
		return
	}
	n := int64(int32(binary.BigEndian.Uint32(data)))
	if n < MinRequestSize || n > int64(h.cfg().MaxFrame) {
		return
	}
	need := 4 + int(min(n, HeadLen))
	if len(data) < need || !pr(data[:need]) {
		return
	}
	h.decideClient(ts)
	h.resyncing, h.framed = false, true
	h.resetFrame()
	h.synced(data, off, pkt, ts)
}

// decideClient makes h the client of its connection, found by DetectPorts.
func (h *half) decideClient(ts time.Time) {
	c := h.c
	cl, srv := h, h.other()
	if !h.fromClient {
		c.key.Client, c.key.Server = c.key.Server, c.key.Client
		cl.fromClient, c.swap = true, true
		if srv != nil {
			srv.fromClient = false
		}
	}
	c.decided = true
	c.p.detectedServer(c, ts)
	if srv != nil && srv.started && (srv.nextOff > 0 || !srv.synSeen) {
		if srv.synSeen && !srv.resyncing && srv.resyncState != nil && int64(len(srv.rbuf)) == srv.nextOff {
			srv.accept(0, ts) // what keepEarly kept is whole: frame it
		} else {
			srv.startResync(srv.nextOff)
		}
	}
}
