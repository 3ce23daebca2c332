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

func (h *half) retransmission(off, n int64, ts time.Time) {
	h.c.p.stats.Retransmissions++
	h.emit(&Retransmission{Flow: h.flow(), StreamOffset: off, Length: n, Time: ts})
}

// deliver passes in-order bytes [nextOff, end), of which payload was captured.
func (h *half) deliver(end int64, payload []byte, pkt int, ts time.Time) {
	off := h.nextOff
	if len(payload) > 0 {
		h.stream(payload, off, pkt, ts)
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

// gap reports lost bytes [off, off+n) of the TCP stream and passes them on.
func (h *half) gap(off, n int64, ts time.Time) {
	if h.c.layered {
		h.reportGap(off, n, ts)
		h.layerGap(off, n, ts)
		return
	}
	h.frameGap(off, n, ts, true)
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
	h.frame(data, off, pkt, ts)
}

// flushOrder gives up on what ordering still waits for, as at the end of
// the direction: held data is delivered after gaps, and a lost tail before
// a FIN is a gap.
func (h *half) flushOrder(ts time.Time) {
	if h.closed || !h.started {
		return
	}
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
