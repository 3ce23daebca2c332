package reassembly

import "time"

// A Layer transforms both directions of one connection between TCP
// ordering and framing; TLS decryption is one. Its output streams are
// framed exactly like plain TCP streams; offsets in its output are offsets
// in that output stream (Frame.StreamOffset of a decrypted frame counts
// plaintext bytes).
type Layer interface {
	// Feed gives the next in-order captured bytes of one direction: data
	// starts at TCP stream offset off and was carried by packet pkt,
	// captured at ts. data is only valid during the call.
	Feed(fromClient bool, off int64, data []byte, pkt int, ts time.Time, out LayerOutput)
	// Gap says that n bytes (-1: unknown) at TCP stream offset off of one
	// direction were never captured.
	Gap(fromClient bool, off, n int64, ts time.Time, out LayerOutput)
	// End says the connection ended (reason as in Incomplete.Reason).
	End(reason string, ts time.Time, out LayerOutput)
}

// LayerOutput receives what a Layer makes of its input.
type LayerOutput interface {
	// Data is the next piece of a direction's output stream, at output
	// offset off, carried (mostly) by packet pkt. Pieces of one direction
	// come in order; data is only valid during the call.
	Data(fromClient bool, off int64, data []byte, pkt int, ts time.Time)
	// Gap says the output stream of a direction loses n bytes at off (n -1
	// when unknown): what comes next is not contiguous with what came
	// before, so the framer re-synchronises.
	Gap(fromClient bool, off, n int64, ts time.Time)
	// Event reports something of the layer's own (e.g. a TLS session, a
	// record that failed authentication), emitted as a *LayerEvent.
	Event(fromClient bool, ts time.Time, v any)
}

// LayerEvent carries a Layer's own report to the Pipeline's emit.
type LayerEvent struct {
	Flow
	Time  time.Time
	Value any
}

func (*LayerEvent) isEvent() {}

// layered is a connection's Layer and what it needs from the Pipeline;
// only connections with a Layer pay for it.
type layered struct {
	c     *conn
	l     Layer
	out   [2]int64 // end of each direction's output so far: client, server
	ended bool
}

// input takes a direction's in-order captured bytes: to the Layer when the
// connection has one, else to the framer. The Layer is asked once, with the
// client's first captured segment. This minimal hook does not hold bytes
// until 16 have come (Config.NewLayer, LAYER.md): a client whose first
// segment is shorter is asked with what it carried, and a server that
// speaks first (its client's first bytes were not captured) gets no Layer.
func (h *half) input(data []byte, off int64, pkt int, ts time.Time) {
	c := h.c
	if nl := h.cfg().NewLayer; nl != nil && c.decided && !c.layerAsked {
		c.layerAsked = true
		var first []byte
		if h.fromClient && off == 0 {
			first = data
		}
		if l := nl(c.clientFlow(), first); l != nil {
			c.lay = &layered{c: c, l: l}
		}
	}
	if c.lay != nil {
		c.lay.l.Feed(h.fromClient, off, data, pkt, ts, c.lay)
		return
	}
	h.frame(data, off, pkt, ts)
}

// probeLayer implements DetectPorts for layered connections: h's first
// bytes, accepted by NewLayer, make h the client.
func (h *half) probeLayer(data []byte, off int64, pkt int, ts time.Time) bool {
	nl := h.cfg().NewLayer
	if nl == nil || off != 0 || h.c.layerAsked {
		return false
	}
	f := h.flow()
	f.FromClient = true
	f.Conn.Client, f.Conn.Server = f.Src, f.Dst
	l := nl(f, data)
	if l == nil {
		return false
	}
	h.c.layerAsked, h.c.lay = true, &layered{c: h.c, l: l}
	h.decideClient(ts)
	h.input(data, off, pkt, ts)
	return true
}

func (c *conn) clientFlow() Flow {
	return Flow{Conn: c.key, ConnID: c.key.ID, FromClient: true, Src: c.key.Client, Dst: c.key.Server}
}

// dir returns the half of the connection going the given way, nil when it
// has sent nothing (c.h may not be in client, server order yet; see swap).
func (lo *layered) dir(fromClient bool) *half {
	for _, h := range lo.c.h {
		if h != nil && h.fromClient == fromClient {
			return h
		}
	}
	return nil
}

func (lo *layered) Data(fromClient bool, off int64, data []byte, pkt int, ts time.Time) {
	h := lo.dir(fromClient)
	if h == nil || h.closed {
		return
	}
	lo.out[outIndex(fromClient)] = off + int64(len(data))
	h.frame(data, off, pkt, ts)
}

func (lo *layered) Gap(fromClient bool, off, n int64, ts time.Time) {
	if h := lo.dir(fromClient); h != nil && !h.closed {
		if n > 0 {
			lo.out[outIndex(fromClient)] = off + n
		}
		h.framerGap(off, n, ts, false)
	}
}

func (lo *layered) Event(fromClient bool, ts time.Time, v any) {
	if !lo.c.decided {
		return
	}
	f := lo.c.clientFlow()
	if !fromClient {
		f.FromClient, f.Src, f.Dst = false, f.Dst, f.Src
	}
	lo.c.p.emit(&LayerEvent{Flow: f, Time: ts, Value: v})
}

func outIndex(fromClient bool) int {
	if fromClient {
		return 0
	}
	return 1
}

// layerGap reports lost TCP bytes of a layered direction and tells the
// Layer; the framer hears of it only through the Layer's output.
func (h *half) layerGap(off, n int64, ts time.Time) {
	p := h.c.p
	p.stats.Gaps++
	p.stats.GapBytes += n
	h.emit(&Gap{Flow: h.flow(), StreamOffset: off, Length: n, Time: ts})
	h.c.lay.l.Gap(h.fromClient, off, n, ts, h.c.lay)
}

// endLayer ends a layered connection: the held TCP bytes of both directions
// go to the Layer first, then End, and only then do the framers finish.
func (c *conn) endLayer(reason string, ts time.Time) {
	lo := c.lay
	if lo == nil || lo.ended {
		return
	}
	for _, h := range c.h {
		if h != nil && h.started && !h.closed {
			h.flushHeld(ts)
		}
	}
	lo.ended = true
	lo.l.End(reason, ts, lo)
}

// outEnd is where a direction's framer input ends: its TCP stream, or the
// Layer's output.
func (h *half) outEnd() int64 {
	if h.c.lay != nil {
		return h.c.lay.out[outIndex(h.fromClient)]
	}
	return h.nextOff
}
