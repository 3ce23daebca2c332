package reassembly

import "time"

// TCP ordering: each direction's segments are put in order by sequence
// number into one ordered byte stream, with its gaps, the packet numbers
// and capture times of its bytes. What consumes that stream (the framer, or
// a Layer in front of it) is reached through stream and gap only.

// tcpOrder is the TCP ordering state of a direction.
type tcpOrder struct {
	started, synSeen, closed, fin bool
	isn, nextSeq                  uint32
	nextOff                       int64
	finOff                        int64
	finTs                         int64 // when the FIN came, for ReorderWait
	ooo                           []held
	oooBytes                      int
	// ackOff is the highest stream offset the peer has acknowledged: bytes
	// below it that were not captured will never be sent again.
	ackOff int64
}

// held is an out-of-order piece of a direction: [off, end) in stream
// offsets, of which data holds the captured prefix (snaplen may cut it).
type held struct {
	off, end int64
	data     []byte
	pkt      int
	ts       int64    // capture nanoseconds
	chunk    chunkRef // data's memory when it is a chunk; see pool.go
}

// segment handles one TCP segment of this direction.
func (h *half) segment(s *segment, pkt int, ts time.Time) {
	syn := s.flags&flagSYN != 0
	if !h.ord.started {
		h.ord.started = true
		if syn {
			h.ord.synSeen, h.ord.isn, h.ord.nextSeq = true, s.seq, s.seq+1
		} else {
			h.ord.nextSeq = s.seq
		}
		h.fr.start(syn)
	}
	if h.ord.closed {
		return
	}
	seq := s.seq
	if syn {
		seq++ // data on a SYN (TCP Fast Open) follows the SYN's sequence number
	}
	off := h.ord.nextOff + int64(int32(seq-h.ord.nextSeq))
	end := off + int64(s.claimed)
	if s.flags&flagFIN != 0 && !h.ord.fin {
		h.ord.fin, h.ord.finOff, h.ord.finTs = true, end, ts.UnixNano()
	}
	if end > off {
		h.data(off, end, s.payload, pkt, ts)
	}
	h.checkFin(ts)
}

// What the framers of a connection may ask of its ordering: DetectPorts
// (detect.go) needs to know how far a direction got and whether its first
// bytes were lost. They read no ordering state otherwise.

// delivered is the stream offset up to which the direction's bytes were
// passed on or given up on.
func (h *half) delivered() int64 { return h.ord.nextOff }

// acksUnseen reports whether bytes of the direction that were not passed on
// are known to exist: held out of order, or acknowledged by the peer
// without having been captured.
func (h *half) acksUnseen() bool { return h.ord.ackOff > h.ord.nextOff || len(h.ord.ooo) > 0 }

// ordHolds reports whether ordering holds bytes of the direction not passed
// on: out-of-order segments, or missing bytes before a FIN.
func (h *half) ordHolds() bool {
	return len(h.ord.ooo) > 0 || (h.ord.fin && !h.ord.closed && h.ord.nextOff < h.ord.finOff)
}

func (h *half) checkFin(ts time.Time) {
	if h.ord.fin && !h.ord.closed && len(h.ord.ooo) == 0 && h.ord.nextOff >= h.ord.finOff {
		h.finish("connection closed", ts)
		if h.c.closed() {
			h.c.p.endConn(h.c, "connection closed", ts, false)
		}
	}
}

func (h *half) data(off, end int64, payload []byte, pkt int, ts time.Time) {
	if end <= h.ord.nextOff {
		h.retransmission(off, end-off, ts)
		return
	}
	if off < h.ord.nextOff {
		cut := h.ord.nextOff - off
		h.retransmission(off, cut, ts)
		payload = payload[min(cut, int64(len(payload))):]
		off = h.ord.nextOff
	}
	if off > h.ord.nextOff {
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
	if !h.ord.started || h.ord.closed {
		return
	}
	d := int64(int32(ack - h.ord.nextSeq))
	if d <= 0 || d > FarAway {
		return
	}
	h.ord.ackOff = max(h.ord.ackOff, h.ord.nextOff+d)
	h.ackedHoles(ts)
}

// ackedHoles declares the acknowledged part of a hole lost. A hole with
// nothing captured after it waits for the next segment (which is then held
// and declared here): an acknowledgement one beyond the last byte may be
// for a FIN the capture missed, not for data.
func (h *half) ackedHoles(ts time.Time) {
	for !h.ord.closed && h.ord.ackOff > h.ord.nextOff {
		switch {
		case len(h.ord.ooo) > 0 && h.ord.ooo[0].off <= h.ord.ackOff:
			h.skipHole(ts)
			continue
		case len(h.ord.ooo) > 0:
			to := h.ord.ackOff
			h.gap(h.ord.nextOff, to-h.ord.nextOff, ts)
			h.advance(to)
		case h.ord.fin && h.ord.nextOff < h.ord.finOff:
			to := min(h.ord.ackOff, h.ord.finOff)
			h.gap(h.ord.nextOff, to-h.ord.nextOff, ts)
			h.advance(to)
			h.checkFin(ts)
		}
		return
	}
}

func (h *half) retransmission(off, n int64, ts time.Time) {
	h.c.p.stats.Retransmissions++
	h.emit(&Retransmission{Flow: h.flow(), StreamOffset: off, Length: n, Time: ts})
}

// deliver passes in-order bytes [nextOff, end), of which payload was captured.
func (h *half) deliver(end int64, payload []byte, pkt int, ts time.Time) {
	off := h.ord.nextOff
	if len(payload) > 0 {
		h.stream(payload, off, pkt, ts)
	}
	if cut := off + int64(len(payload)); cut < end {
		h.gap(cut, end-cut, ts)
	}
	h.advance(end)
}

func (h *half) advance(to int64) {
	h.ord.nextSeq += uint32(to - h.ord.nextOff)
	h.ord.nextOff = to
}

// hold copies the parts of an out-of-order segment not held yet.
func (h *half) hold(off, end int64, payload []byte, pkt int, ts time.Time) {
	p := h.c.p
	var overlap int64
	cur := off
	var pieces [][2]int64
	for _, s := range h.ord.ooo {
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
		h.ord.oooBytes += len(data)
		p.buffered += len(data)
		i := len(h.ord.ooo)
		for i > 0 && h.ord.ooo[i-1].off > pc[0] {
			i--
		}
		h.ord.ooo = append(h.ord.ooo, held{})
		copy(h.ord.ooo[i+1:], h.ord.ooo[i:])
		h.ord.ooo[i] = held{off: pc[0], end: pc[1], data: data, pkt: pkt, ts: ts.UnixNano(), chunk: chunk}
	}
	if h.overCap() {
		p.stats.BufferLimits++
		h.emit(&BufferLimit{Flow: h.flow(), StreamOffset: h.ord.ooo[0].off, Length: int64(h.ord.oooBytes), Time: ts})
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
	return len(h.ord.ooo) > 0 && (h.c.buffered() > p.cfg.MaxConnBuffer || p.buffered > p.cfg.MaxTotalBuffer)
}

// buffered is what the connection holds against MaxConnBuffer: out-of-order
// segments and reserved frame bodies of both directions, and what its
// Layer holds.
func (c *conn) buffered() int {
	n := 0
	for _, h := range c.h {
		if h != nil {
			n += h.buffered()
		}
	}
	if c.layered {
		if cl := c.p.layers[c]; cl != nil {
			n += cl.bytes()
		}
	}
	return n
}

// drain delivers held segments that became contiguous.
func (h *half) drain() {
	for len(h.ord.ooo) > 0 && h.ord.ooo[0].off <= h.ord.nextOff {
		s := h.ord.ooo[0]
		copy(h.ord.ooo, h.ord.ooo[1:])
		h.ord.ooo[len(h.ord.ooo)-1] = held{} // the copy must not keep s.data alive
		h.ord.ooo = h.ord.ooo[:len(h.ord.ooo)-1]
		if len(h.ord.ooo) == 0 {
			h.ord.ooo = nil
		}
		h.ord.oooBytes -= len(s.data)
		h.c.p.buffered -= len(s.data)
		if s.end > h.ord.nextOff {
			cut := min(h.ord.nextOff-s.off, int64(len(s.data)))
			h.deliver(s.end, s.data[cut:], s.pkt, h.c.p.timeAt(s.ts))
		}
		h.c.p.freeHeld(s)
	}
}

// finHole reports whether the bytes before a FIN are missing with no
// held segment after them, since before the given time.
func (h *half) finHole(before int64) bool {
	return h.ord.fin && !h.ord.closed && len(h.ord.ooo) == 0 && h.ord.nextOff < h.ord.finOff && h.ord.finTs < before
}

// skipFinHole gives up on the bytes missing before the FIN, which closes
// the direction.
func (h *half) skipFinHole(ts time.Time) {
	h.gap(h.ord.nextOff, h.ord.finOff-h.ord.nextOff, ts)
	h.advance(h.ord.finOff)
	h.checkFin(ts)
}

// skipHole gives up on the bytes missing before the first held segment.
func (h *half) skipHole(ts time.Time) {
	first := h.ord.ooo[0].off
	h.gap(h.ord.nextOff, first-h.ord.nextOff, ts)
	h.advance(first)
	h.drain()
	h.checkFin(ts)
}

// gap reports lost bytes [off, off+n) of the TCP stream and passes them on.
// The framer ends what the gap cuts before the Gap event, so that the event
// comes after what the gap ends and before what follows it.
func (h *half) gap(off, n int64, ts time.Time) {
	if h.c.layered {
		h.reportGap(off, n, ts)
		h.layerGap(off, n, ts)
		return
	}
	inFrame := h.fr.gapCuts(off, n, ts)
	h.reportGap(off, n, ts)
	h.fr.gapEnds(off, n, ts, inFrame)
}

func (h *half) reportGap(off, n int64, ts time.Time) {
	p := h.c.p
	p.stats.Gaps++
	p.stats.GapBytes += n
	h.emit(&Gap{Flow: h.flow(), StreamOffset: off, Length: n, Time: ts})
}

// stream passes captured in-order bytes at stream offset off on: to the
// framer, or to the connection's Layer (or its wait for NewLayer).
func (h *half) stream(data []byte, off int64, pkt int, ts time.Time) {
	if h.c.layered {
		h.layerData(data, off, pkt, ts)
		return
	}
	h.fr.frame(data, off, pkt, ts)
}

// flushOrder gives up on what ordering still waits for, as at the end of
// the direction: held data is delivered after gaps, and a lost tail before
// a FIN is a gap.
func (h *half) flushOrder(ts time.Time) {
	if h.ord.closed || !h.ord.started {
		return
	}
	for len(h.ord.ooo) > 0 {
		first := h.ord.ooo[0].off
		h.gap(h.ord.nextOff, first-h.ord.nextOff, ts)
		h.advance(first)
		h.drain()
	}
	if h.ord.fin && h.ord.nextOff < h.ord.finOff {
		h.gap(h.ord.nextOff, h.ord.finOff-h.ord.nextOff, ts)
		h.advance(h.ord.finOff)
	}
}
