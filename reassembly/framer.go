package reassembly

import "time"

// The framer cuts one direction's ordered byte stream into frames. It is fed
// by TCP ordering (order.go) or by a connection's Layer through three
// calls: frame (the next in-order bytes, with the packet and time that
// carried them), frameGap (bytes that will never come) and finish. It knows
// the protocol only through Config.Framing.

// FrameRules is what the framer knows of a protocol whose frames start with
// a size prefix, and of how its responses name their requests. Frames are
// passed to it from their first byte, the prefix included.
type FrameRules interface {
	// PrefixLen is the length of the size prefix; it must not change.
	PrefixLen() int
	// Size reads the prefix at the start of b (at least PrefixLen bytes): the
	// length of the frame after the prefix. A size below MinSize or above
	// Config.MaxFrame is corruption.
	Size(b []byte) int64
	// MinSize is the smallest size of a frame sent by the client
	// (fromClient) or by the server that a re-synchronising direction takes
	// for a frame start: smaller candidates are skipped.
	MinSize(fromClient bool) int64
	// MinSyncedSize is the smallest size a frame of that side may have
	// where a frame is known to start (in sync); a smaller size prefix is
	// corruption.
	MinSyncedSize(fromClient bool) int64
	// MinHead is how many bytes (prefix included) of a request candidate cut
	// by a gap or the end of its direction must have been captured for
	// PlausibleRequest to judge it.
	MinHead() int
	// PlausibleRequest is given the prefix followed by the first min(size,
	// HeadLen) bytes of a candidate client→broker frame (fewer, at least
	// MinHead in all, when a gap or the end of the stream cuts it before)
	// and says whether it looks like a request's head. Used while
	// re-synchronising and for DetectPorts.
	PlausibleRequest(head []byte) bool
	// RequestKey is the key by which a response names the request frame f
	// (Kafka: the correlation id); ok is false when f is too short to hold it.
	RequestKey(f []byte) (key uint32, ok bool)
	// ResponseKey is the key a response frame f carries; ok is false when f
	// is too short to hold it.
	ResponseKey(f []byte) (key uint32, ok bool)
}

// framer is the framing state of a direction.
type framer struct {
	decidedWant, want bool // in sync, see below
	resyncing         bool // out of sync, see below
	// framed: a frame boundary has been known in this direction (after the
	// SYN or an accepted re-synchronisation). Until then, skipped bytes of a
	// direction captured without its SYN are the tail of frames sent before
	// the capture started, not damage.
	framed bool

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
	corr  []uint32 // client side: recent request keys, a ring of RecentRequests
	ncorr int
}

// frameGap is the framer's side of lost bytes [off, off+n). When they end
// inside a frame whose size is known, the frame's remaining bytes are
// counted (it is reported Incomplete at its end) and the next frame starts
// at that end: the framer stays in sync. Otherwise it is out of sync after
// the gap. report: the gap is the TCP stream's own, whose Gap event comes
// after what the gap ends and before what follows it.
func (h *half) frameGap(off, n int64, ts time.Time, report bool) {
	end := off + max(n, 0) // a Layer may lose an unknown number of bytes
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
		h.reportGap(off, n, ts)
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

func (h *half) incomplete(reason string, ts time.Time) {
	want := int64(-1)
	if h.size > 0 {
		want = h.size
	}
	head := h.buf[:min(len(h.buf), h.c.p.prefix+HeadLen)]
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

// frame passes in-order bytes at stream offset off to the framer.
func (h *half) frame(data []byte, off int64, pkt int, ts time.Time) {
	switch {
	case !h.c.decided && !h.fromClient && h.synSeen:
		h.keepEarly(data, off, pkt, ts)
	case !h.c.decided:
		h.probe(data, off, pkt, ts)
	case h.resyncing:
		h.resyncFeed(data, off, pkt, ts)
	default:
		h.synced(data, off, pkt, ts)
	}
}

func (h *half) sizeOK(n int64) bool {
	return n >= h.c.p.minSize && n <= int64(h.cfg().MaxFrame)
}

// syncedSizeOK bounds a size prefix where a frame is known to start.
func (h *half) syncedSizeOK(n int64) bool {
	return n >= h.c.p.minSynced[dir(h.fromClient)] && n <= int64(h.cfg().MaxFrame)
}

// synced splits bytes at frame boundaries. Frames wholly inside data are
// emitted without copying; others are collected in buf.
func (h *half) synced(data []byte, off int64, pkt int, ts time.Time) {
	rules, pl := h.c.p.cfg.Framing, int64(h.c.p.prefix)
	for len(data) > 0 {
		if h.have == 0 {
			if int64(len(data)) >= pl {
				n := rules.Size(data)
				if !h.syncedSizeOK(n) {
					h.corrupt(off)
					h.resyncFeed(data, off, pkt, ts)
					return
				}
				if total := n + pl; int64(len(data)) >= total {
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
			take = min(pl-h.have, int64(len(data)))
		case !h.decidedWant:
			take = min(min(h.size, pl+HeadLen)-h.have, int64(len(data)))
		default:
			take = min(h.size-h.have, int64(len(data)))
		}
		if h.size == 0 || !h.decidedWant || h.want {
			h.buf = append(h.buf, data[:take]...)
		}
		h.have += take
		data, off = data[take:], off+take
		if h.size == 0 {
			if h.have < pl {
				return
			}
			n := rules.Size(h.buf)
			if !h.syncedSizeOK(n) {
				h.corruptSplitPrefix(ts)
				if len(data) > 0 {
					h.frame(data, off, pkt, ts)
				}
				return
			}
			h.size = n + pl
		}
		if !h.decidedWant {
			if h.have < min(h.size, pl+HeadLen) {
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
// its bytes are scanned again as candidates, with their packet numbers.
func (h *half) corruptSplitPrefix(ts time.Time) {
	pl := h.c.p.prefix
	// A prefix spans at most pl packets; the copies are taken before
	// corrupt resets buf and marks.
	b := append([]byte(nil), h.buf[:pl]...)
	ms := append([]mark(nil), h.marks[:min(len(h.marks), pl)]...)
	nm := len(ms)
	start := h.fOff
	h.corrupt(start)
	for i := 0; i < nm; i++ {
		end := start + int64(pl)
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
	pl := int64(h.c.p.prefix)
	if h.size <= pl+HeadLen {
		h.want = true
		return
	}
	h.want = cfg.WantBody == nil || cfg.WantBody(h.flow(), h.buf[pl:h.have])
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

// noteCorr remembers a request's key so the response direction can
// re-synchronise on the matching response.
func (h *half) noteCorr(f []byte) {
	if !h.fromClient {
		return
	}
	if id, ok := h.c.p.cfg.Framing.RequestKey(f); ok {
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
	if srv := h.c.h[1]; h.fromClient && srv != nil && srv != h && srv.resyncing && srv.hasKey() {
		srv.scan(ts, false)
	}
}

func (h *half) emitWhole(f []byte, off int64, pkt int, ts time.Time) {
	h.noteCorr(f)
	data, trunc := f, false
	if pl := h.c.p.prefix; len(f) > pl+HeadLen {
		if wb := h.cfg().WantBody; wb != nil && !wb(h.flow(), f[pl:pl+HeadLen]) {
			data, trunc = f[:pl+HeadLen], true
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
