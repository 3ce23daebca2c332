package reassembly

import "time"

// DetectPorts: the framer's side of finding the protocol on unknown ports.

// keepEarly handles the bytes of the side that sent the SYN-ACK (so the
// server: a response that looks like a request, as a Kafka response with
// correlation id 0 reads as a Produce v0 header, must not make it the
// client) before its connection is found to carry the protocol. They are
// kept, up to maxChain bytes from the first, only when the client's first
// bytes are missing (its peer acknowledged bytes the capture lacks): the
// answer to a lost first request is then still reported once the next
// request shows what the connection carries. Other connections on unknown
// ports keep nothing.
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
	rules, pl := h.cfg().Framing, h.c.p.prefix
	if len(data) < pl {
		return
	}
	n := rules.Size(data)
	if n < h.c.p.minRequest || n > int64(h.cfg().MaxFrame) {
		return
	}
	need := pl + int(min(n, HeadLen))
	if len(data) < need || !rules.PlausibleRequest(data[:need]) {
		return
	}
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
	cl.resyncing, cl.framed = false, true
	cl.resetFrame()
	cl.synced(data, off, pkt, ts)
}
