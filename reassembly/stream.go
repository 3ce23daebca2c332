package reassembly

import (
	"net/netip"
	"time"
)

// mark remembers where a packet's bytes begin in a buffer, for Packets and
// for feeding buffered bytes again after a re-synchronisation.
type mark struct {
	off int64
	pkt int
	ts  int64 // capture nanoseconds
}

// half is one direction of a connection: its TCP ordering (ord, order.go)
// feeding, directly or through a Layer, its framer (fr, framer.go). Each
// owns its state; the ordering side drives the framer through its methods,
// and the framer learns of the ordering only what it is handed (framer.start,
// and the two questions of order.go it may ask, delivered and acksUnseen).
// Its size matters (see conn); times are capture nanoseconds.
type half struct {
	c          *conn
	fromClient bool
	ord        tcpOrder
	fr         framer
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

// buffered is what the direction holds against the buffer caps.
func (h *half) buffered() int { return h.ord.oooBytes + h.fr.reservedBytes() }

// unreleased reports whether h holds bytes not yet emitted as a frame or
// an event: held out-of-order data or missing bytes before a FIN (the
// ordering), a frame being collected or bytes being scanned for a frame
// start (the framer), or bytes waiting for NewLayer.
func (h *half) unreleased() bool {
	return h.ordHolds() || h.fr.holds() || h.layerHeld()
}

// finish ends the direction: what ordering waits for is given up on
// (flushOrder), then the framer ends: bytes being scanned are Unparseable,
// a cut frame is Incomplete.
func (h *half) finish(reason string, ts time.Time) {
	if h.ord.closed || !h.ord.started {
		h.ord.closed = true
		return
	}
	h.flushOrder(ts)
	if h.c.layered {
		h.c.p.layerFinish(h.c, ts)
	}
	h.ord.closed = true
	h.fr.end(reason, ts)
	h.release()
}

func (h *half) release() {
	p := h.c.p
	p.buffered -= h.ord.oooBytes
	h.ord.oooBytes = 0
	for _, s := range h.ord.ooo {
		p.freeHeld(s)
	}
	h.ord.ooo = nil
	h.fr.release()
}
