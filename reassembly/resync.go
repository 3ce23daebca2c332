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
	// While a direction's first bytes are not framed (leading), they are
	// shown to a Config.LeadingTLS sniffer until it knows; tls: they are
	// TLS records.
	sniff     Sniffer
	sniffDone bool
	tls       bool
}

// flushJunk reports the bytes skipped while out of sync, up to upTo; ended:
// the direction ends there.
func (f *framer) flushJunk(upTo int64, ts time.Time, ended bool) {
	if upTo > f.junkOff {
		f.p().stats.UnparseableBytes += upTo - f.junkOff
		leading := !f.whole && !f.framed
		f.emit(&Unparseable{Flow: f.flow(), StreamOffset: f.junkOff, Length: upTo - f.junkOff, Time: ts,
			Leading: leading, Unframed: leading && ended, TLS: leading && f.tls})
	}
	f.junkOff = upTo
}

func (f *framer) startResync(at int64) {
	f.resetFrame()
	if f.resyncState == nil {
		f.resyncState = new(resyncState)
	}
	f.resyncing = true
	f.rbuf, f.rmarks = f.rbuf[:0], f.rmarks[:0]
	if cap(f.rbuf) > keepResync {
		f.rbuf, f.rmarks = nil, nil
	}
	f.rOff, f.junkOff, f.scanFrom = at, at, at
}

func (f *framer) resyncFeed(data []byte, off int64, pkt int, ts time.Time) {
	if !f.whole && !f.framed && !f.sniffDone {
		f.sniffLeading(data)
	}
	if len(f.rbuf) == 0 {
		f.rOff = off
	}
	f.rbuf = append(f.rbuf, data...)
	f.rmarks = append(f.rmarks, mark{off, pkt, ts.UnixNano()})
	f.scan(ts, false)
}

// sniffLeading shows the sniffer the next bytes a direction starts with.
func (f *framer) sniffLeading(data []byte) {
	if f.sniff == nil {
		mk := f.cfg().LeadingTLS
		if mk == nil {
			f.sniffDone = true
			return
		}
		f.sniff = mk()
	}
	found, done := f.sniff.Feed(data)
	f.tls = f.tls || found
	if done {
		f.sniff, f.sniffDone = nil, true
	}
}

// maxChain bounds how far the frame chain of a response candidate is
// followed (and so how many bytes wait for its verdict); maxChainFrames
// complete frames in a row are proof enough.
const (
	maxChain       = 64 << 10
	maxChainFrames = 4
)

// dropPending forgets the first i bytes of rbuf.
func (f *framer) dropPending(i int) {
	n := copy(f.rbuf, f.rbuf[i:])
	f.rbuf = f.rbuf[:n]
	// A direction out of sync keeps what it may still need, not the
	// capacity of the largest segment it scanned: there may be a million.
	if c := cap(f.rbuf); c > 256 && n < c/4 {
		f.rbuf = append(make([]byte, 0, max(2*n, 64)), f.rbuf...)
	}
	f.rOff += int64(i)
	k := 0
	for k+1 < len(f.rmarks) && f.rmarks[k+1].off <= f.rOff {
		k++
	}
	f.rmarks = f.rmarks[:copy(f.rmarks, f.rmarks[k:])]
}

// scan looks for the first plausible frame start in rbuf; see the package
// documentation for the tests. A candidate whose head has not arrived yet
// waits for more bytes, unless final (no more bytes will come before a gap
// or the end): then it is skipped.
func (f *framer) scan(ts time.Time, final bool) {
	cfg := f.cfg()
	rules, pl := cfg.Framing, f.p().prefix
	var corrMask uint64
	if c := f.client(); !f.fromClient() && c != nil {
		for _, id := range c.keys() {
			corrMask |= 1 << (id & 63)
		}
	}
	b := f.rbuf
	f.p().knownListed = false
	i := 0
	if d := f.scanFrom - f.rOff; d > 0 {
		i = int(min(d, int64(len(b))))
	}
	for ; len(b)-i >= pl; i++ {
		n := rules.Size(b[i:])
		if n > int64(cfg.MaxFrame) {
			continue
		}
		if f.fromClient() {
			if n < f.p().minRequest {
				continue
			}
			need := pl + int(min(n, HeadLen))
			if len(b)-i < need {
				if !final {
					break
				}
				// A gap or the end follows: judge the header by what was
				// captured, so that a request cut there still names its
				// response (it becomes Incomplete with its head). Too
				// little of it to judge is not plausible.
				need = len(b) - i
			}
			if !rules.PlausibleRequest(b[i : i+need]) {
				continue
			}
		} else {
			if n < f.p().minResponse {
				continue
			}
			key, ok := rules.Key(false, b[i:])
			if !ok {
				break
			}
			if !f.knownResponse(key, corrMask) {
				ok, wait := f.chain(b, i, final, corrMask)
				if wait {
					break
				}
				if !ok {
					continue
				}
			}
		}
		f.accept(i, ts)
		if final && f.resyncing {
			f.scan(ts, true)
		}
		return
	}
	if i > 0 {
		f.dropPending(i)
	}
}

// knownResponse reports whether key is the key of a recent request.
func (f *framer) knownResponse(key uint32, corrMask uint64) bool {
	cl := f.client()
	return corrMask&(1<<(key&63)) != 0 && cl != nil && cl.hasCorr(key)
}

// hasKey reports whether the bytes kept for a scan hold a response key.
func (f *framer) hasKey() bool {
	_, ok := f.p().cfg.Framing.Key(false, f.rbuf)
	return ok
}

// chain follows the size prefixes from b[i] and says whether they form a
// chain of response frames that ends exactly where a response to a known
// request starts, at the end of the captured bytes (final: a gap or the end
// of the direction follows), or holds maxChainFrames frames. wait: more
// bytes are needed for the verdict. A chain that would swallow the start of
// a response to a known request is no chain: that start wins.
func (f *framer) chain(b []byte, i int, final bool, corrMask uint64) (ok, wait bool) {
	rules, pl := f.cfg().Framing, int64(f.p().prefix)
	j := i
	for frames := 1; ; frames++ {
		n := rules.Size(b[j:])
		if n < f.p().minResponse || n > int64(f.cfg().MaxFrame) {
			return false, false
		}
		next := int64(j) + pl + n
		if next-int64(i) > maxChain {
			return false, false
		}
		if next > int64(len(b)) || next == int64(len(b)) && !final {
			return false, !final
		}
		if f.swallowsKnown(b, i, int(next), corrMask) {
			return false, false
		}
		if next == int64(len(b)) || frames >= maxChainFrames {
			return true, false
		}
		j = int(next)
		key, ok := rules.Key(false, b[j:])
		if !ok {
			return false, !final
		}
		if f.knownResponse(key, corrMask) {
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
func (f *framer) swallowsKnown(b []byte, i, end int, corrMask uint64) bool {
	p := f.p()
	if !p.knownListed {
		p.knownListed = true
		p.known = p.known[:0]
		rules := p.cfg.Framing
		for k := 0; ; k++ {
			key, ok := rules.Key(false, b[k:])
			if !ok {
				break
			}
			if f.knownResponse(key, corrMask) && f.sizeOK(rules.Size(b[k:])) {
				p.known = append(p.known, k)
			}
		}
	}
	first, _ := slices.BinarySearch(p.known, i+1)
	for _, k := range p.known[first:] {
		if k >= end {
			break
		}
		if f.reaches(b, k, end) {
			return true
		}
	}
	return false
}

// reaches reports whether the size prefixes from b[j] lead exactly to end.
func (f *framer) reaches(b []byte, j, end int) bool {
	rules, pl := f.cfg().Framing, f.p().prefix
	for end-j >= pl {
		n := rules.Size(b[j:])
		if !f.sizeOK(n) {
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

func (f *framer) hasCorr(corr uint32) bool {
	return slices.Contains(f.keys(), corr)
}

// accept re-enters sync at rbuf[i] and feeds the buffered bytes again.
func (f *framer) accept(i int, ts time.Time) {
	start := f.rOff + int64(i)
	f.flushJunk(start, ts, false)
	old, oldOff, marks := f.rbuf, f.rOff, f.rmarks
	// A nested re-synchronisation must not write into the bytes being fed.
	f.rbuf, f.rmarks, f.spare, f.spareMarks = f.spare[:0], f.spareMarks[:0], nil, nil
	f.resyncing = false
	f.framed = true
	f.have = 0
	end := oldOff + int64(len(old))
	for j, m := range marks {
		from := max(m.off, start)
		to := end
		if j+1 < len(marks) {
			to = marks[j+1].off
		}
		if to > from {
			f.frame(old[from-oldOff:to-oldOff], from, m.pkt, f.p().timeAt(m.ts))
		}
	}
	if f.resyncState != nil && f.spare == nil && cap(old) <= keepResync {
		f.spare, f.spareMarks = old[:0], marks[:0]
	}
	if f.resyncState != nil && cap(f.rbuf) > keepResync {
		f.rbuf, f.rmarks = nil, nil
	}
}
