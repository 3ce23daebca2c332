package reassembly

import (
	"cmp"
	"slices"
	"time"
)

// tick runs the capture-time housekeeping: give up waiting for holes older
// than ReorderWait, drop idle connections and forget ended ones. It is the
// equivalent of gopacket's FlushWithOptions driven by packet timestamps,
// and costs what is due, not a pass over every connection.
func (p *Pipeline) tick() {
	p.nextTick = p.now.Add(time.Second)
	p.trimFree()
	now := p.now.UnixNano()
	reorder := now - int64(p.cfg.ReorderWait)
	idle := now - int64(p.cfg.IdleTimeout)
	for c := p.ended.head; c != nil && c.lastSeen < reorder; c = p.ended.head {
		p.removeConn(c)
	}
	due := p.due[:0]
	for c := p.active.head; c != nil && c.lastSeen < idle; c = c.next {
		due = append(due, c)
	}
	for c, _ := p.waits.popDue(now); c != nil; c, _ = p.waits.popDue(now) {
		due = append(due, c)
	}
	// Creation order, as a pass over all connections would take them, so
	// that the events of one tick come out in a deterministic order.
	slices.SortFunc(due, func(a, b *conn) int { return cmp.Compare(a.key.ID, b.key.ID) })
	due = slices.Compact(due)
	for _, c := range due {
		if c.ended {
			continue
		}
		if c.lastSeen < idle {
			p.endConn(c, "idle timeout", p.now, false)
			p.removeConn(c)
			continue
		}
		for _, h := range c.h {
			if h == nil {
				continue
			}
			for len(h.ord.ooo) > 0 && h.ord.ooo[0].ts < reorder {
				h.skipHole(p.now)
			}
			// A FIN is out of order too when bytes before it are missing.
			if h.finHole(reorder) {
				h.skipFinHole(p.now)
			}
		}
		if !c.ended {
			p.scheduleWake(c)
		}
	}
	clear(due)
	p.due = due[:0]
	if cap(p.due) > 4096 {
		p.due = nil
	}
	p.freeLow = len(p.free)
}

// scheduleWake puts c in p.waits when one of its directions waits for a
// hole to be filled: the tick after ReorderWait gives up on it.
func (p *Pipeline) scheduleWake(c *conn) {
	at := int64(-1)
	for _, h := range c.h {
		if h == nil || h.ord.closed {
			continue
		}
		var since int64
		switch {
		case len(h.ord.ooo) > 0:
			since = h.ord.ooo[0].ts
		case h.ord.fin && h.ord.nextOff < h.ord.finOff:
			since = h.ord.finTs
		default:
			continue
		}
		if at < 0 || since < at {
			at = since
		}
	}
	if at >= 0 {
		p.waits.schedule(c, at+int64(p.cfg.ReorderWait))
	}
}

// makeRoom frees a place in the connection table for a new connection:
// an ended connection that was only remembered, or else the least recently
// active one, which is ended as evicted.
func (p *Pipeline) makeRoom(ts time.Time) {
	if c := p.ended.head; c != nil {
		p.removeConn(c)
		p.recycle(c, c.h)
		return
	}
	c := p.active.head
	if c == nil {
		return
	}
	p.stats.Evicted++
	if c.decided {
		p.emit(&Evicted{Conn: c.key, ConnID: c.key.ID, Time: ts, LastSeen: p.timeAt(c.lastSeen), MaxConns: p.cfg.MaxConns})
	}
	hs := c.h
	p.endConn(c, "evicted", ts, false)
	p.removeConn(c)
	p.recycle(c, hs)
}

// recycle keeps the memory of a connection made room for, which nothing
// refers to any more (events carry its key by value), for the connection
// that takes its place: at the cap, every new connection evicts one, and
// this spares the collector that garbage.
func (p *Pipeline) recycle(c *conn, hs [2]*half) {
	*c = conn{}
	p.spareConn = c
	for _, h := range hs {
		if h != nil && len(p.spareHalves) < 2 {
			*h = half{}
			p.spareHalves = append(p.spareHalves, h)
		}
	}
}

func (p *Pipeline) newHalf() *half {
	if n := len(p.spareHalves); n > 0 {
		h := p.spareHalves[n-1]
		p.spareHalves[n-1] = nil
		p.spareHalves = p.spareHalves[:n-1]
		return h
	}
	return new(half)
}

// timeAt turns capture nanoseconds kept in connection state back into the
// time.Time the capture gave, in its location.
func (p *Pipeline) timeAt(ns int64) time.Time {
	return time.Unix(0, ns).In(p.loc)
}
