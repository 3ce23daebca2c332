package reassembly

import "time"

// DetectPorts: the framer's side of finding the protocol on unknown ports.

// keepEarly handles the bytes of the side that sent the SYN-ACK (so the
// server: a response that looks like a request, as a Kafka response with
// correlation id 0 reads as a Produce v0 header, must not make it the
// client) before its connection is found to carry the protocol. They are
// kept, up to maxChain bytes from the first, only when the client's first
// bytes are missing (its ordering knows of bytes it has not delivered): the
// answer to a lost first request is then still reported once the next
// request shows what the connection carries. Other connections on unknown
// ports keep nothing.
func (f *framer) keepEarly(data []byte, off int64, pkt int, ts time.Time) {
	cl := f.h.client()
	kept := 0
	if f.resyncState != nil {
		kept = len(f.rbuf)
	}
	if f.resyncing || cl == nil || !cl.acksUnseen() || off != int64(kept) || kept+len(data) > maxChain {
		if f.resyncState != nil {
			f.rbuf, f.rmarks = f.rbuf[:0], f.rmarks[:0]
		}
		return
	}
	if f.resyncState == nil {
		f.resyncState = new(resyncState) // only a direction that keeps bytes pays for it
	}
	f.rOff = 0
	f.rbuf = append(f.rbuf, data...)
	f.rmarks = append(f.rmarks, mark{off, pkt, ts.UnixNano()})
}

// probe implements DetectPorts: a connection on unknown ports is followed
// from the first segment that starts with a plausible request.
func (f *framer) probe(data []byte, off int64, pkt int, ts time.Time) {
	rules, pl := f.cfg().Framing, f.p().prefix
	if len(data) < pl {
		return
	}
	n := rules.Size(data)
	if n < f.p().minRequest || n > int64(f.cfg().MaxFrame) {
		return
	}
	need := pl + int(min(n, HeadLen))
	if len(data) < need || !rules.PlausibleRequest(data[:need]) {
		return
	}
	h := f.h
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
	c.p.detectedServer(c, ts, false)
	// A direction exists once its ordering started; it has bytes to frame
	// when it delivered some or was picked up mid-stream.
	if srv != nil {
		if s := &srv.fr; srv.delivered() > 0 || !s.whole {
			if s.whole && !s.resyncing && s.resyncState != nil && int64(len(s.rbuf)) == srv.delivered() {
				s.accept(0, ts) // what keepEarly kept is whole: frame it
			} else {
				s.startResync(srv.delivered())
			}
		}
	}
	f.resyncing, f.framed = false, true
	f.resetFrame()
	f.synced(data, off, pkt, ts)
}
