package reassembly

import (
	"slices"
	"time"
)

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

func (h *half) resyncFeed(data []byte, off int64, pkt int, ts time.Time) {
	if len(h.rbuf) == 0 {
		h.rOff = off
	}
	h.rbuf = append(h.rbuf, data...)
	h.rmarks = append(h.rmarks, mark{off, pkt, ts.UnixNano()})
	h.scan(ts, false)
}

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
	rules, pl := cfg.Framing, h.c.p.prefix
	var corrMask uint64
	if c := h.client(); !h.fromClient && c != nil {
		for _, id := range c.corr {
			corrMask |= 1 << (id & 63)
		}
	}
	b := h.rbuf
	h.c.p.knownListed = false
	i := 0
	if d := h.scanFrom - h.rOff; d > 0 {
		i = int(min(d, int64(len(b))))
	}
	for ; len(b)-i >= pl; i++ {
		n := rules.Size(b[i:])
		if n > int64(cfg.MaxFrame) {
			continue
		}
		if h.fromClient {
			if n < h.c.p.minRequest {
				continue
			}
			need := pl + int(min(n, HeadLen))
			if len(b)-i < need {
				if !final {
					break
				}
				// A gap or the end follows: judge the header by what was
				// captured, so that a request cut there still names its
				// response (it becomes Incomplete with its head).
				if len(b)-i < rules.MinHead() {
					continue
				}
				need = len(b) - i
			}
			if !rules.PlausibleRequest(b[i : i+need]) {
				continue
			}
		} else {
			if n < h.c.p.minResponse {
				continue
			}
			key, ok := rules.ResponseKey(b[i:])
			if !ok {
				break
			}
			if !h.knownResponse(key, corrMask) {
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

// knownResponse reports whether key is the key of a recent request.
func (h *half) knownResponse(key uint32, corrMask uint64) bool {
	cl := h.client()
	return corrMask&(1<<(key&63)) != 0 && cl != nil && cl.hasCorr(key)
}

// hasKey reports whether the bytes kept for a scan hold a response key.
func (h *half) hasKey() bool {
	_, ok := h.c.p.cfg.Framing.ResponseKey(h.rbuf)
	return ok
}

// chain follows the size prefixes from b[i] and says whether they form a
// chain of response frames that ends exactly where a response to a known
// request starts, at the end of the captured bytes (final: a gap or the end
// of the direction follows), or holds maxChainFrames frames. wait: more
// bytes are needed for the verdict. A chain that would swallow the start of
// a response to a known request is no chain: that start wins.
func (h *half) chain(b []byte, i int, final bool, corrMask uint64) (ok, wait bool) {
	rules, pl := h.cfg().Framing, int64(h.c.p.prefix)
	j := i
	for frames := 1; ; frames++ {
		n := rules.Size(b[j:])
		if n < h.c.p.minResponse || n > int64(h.cfg().MaxFrame) {
			return false, false
		}
		next := int64(j) + pl + n
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
		key, ok := rules.ResponseKey(b[j:])
		if !ok {
			return false, !final
		}
		if h.knownResponse(key, corrMask) {
			return true, false
		}
	}
}

// swallowsKnown reports whether b(i, end) holds the start of a response to
// a known request whose own chain of size prefixes ends exactly at end: the
// frame from i would swallow real frames. (A known key alone is
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
		rules := p.cfg.Framing
		for k := 0; ; k++ {
			key, ok := rules.ResponseKey(b[k:])
			if !ok {
				break
			}
			if h.knownResponse(key, corrMask) && h.sizeOK(rules.Size(b[k:])) {
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
	rules, pl := h.cfg().Framing, h.c.p.prefix
	for end-j >= pl {
		n := rules.Size(b[j:])
		if !h.sizeOK(n) {
			return false
		}
		next := int64(j) + int64(pl) + n
		if next >= int64(end) {
			return next == int64(end)
		}
		j = int(next)
	}
	return false
}

func (h *half) hasCorr(corr uint32) bool {
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
