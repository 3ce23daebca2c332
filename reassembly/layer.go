package reassembly

import (
	"slices"
	"time"
)

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

// Prover is a Layer that may have accepted a connection on weaker evidence
// than its protocol's opening: on a port DetectPorts is still probing, such
// a Layer is not used unless Proven.
type Prover interface {
	Proven() bool
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
	// Hold asks to buffer n more bytes of a direction's input (n < 0: gives
	// n back, always granted), buffered from TCP stream offset off, under
	// the caps that bound out-of-order segments and frame bodies
	// (Config.MaxConnBuffer, MaxTotalBuffer). When a cap refuses, it
	// reports a BufferLimit event and false: the Layer must do without
	// those bytes. What a Layer holds when its connection ends is taken
	// back by the Pipeline.
	Hold(fromClient bool, off int64, n int, ts time.Time) bool
}

// A Skipper is a LayerOutput that also says which of a direction's next
// output bytes the framer will not read, so that a Layer can spare making
// them: TLS decrypts only the heads of frames whose bodies are not kept.
// layerOut, the Pipeline's LayerOutput, is one; a Layer type-asserts it.
type Skipper interface {
	// Unread tells how the framer takes the next output bytes of a
	// direction. skip > 0: the next skip bytes lie in a frame body that is
	// not kept, and Skip may stand for them. Otherwise, head > 0: only the
	// next head bytes are read before the framer judges a frame (its size
	// prefix and head) and may skip again; head == 0: every byte is read.
	Unread(fromClient bool) (skip, head int64)
	// Skip passes n output bytes at off that Unread said are not read:
	// they count as Data would, without being made.
	Skip(fromClient bool, off, n int64, pkt int, ts time.Time)
	// Settled reports whether every byte handed over since the last call
	// went to a frame the rules did not keep, judged already: a Layer that
	// made those bytes cheaply (unauthenticated) must authenticate them
	// when it is not. It starts a new account.
	Settled(fromClient bool) bool
}

// LayerEvent carries a Layer's own report to the Pipeline's emit.
type LayerEvent struct {
	Flow
	Time  time.Time
	Value any
}

func (*LayerEvent) isEvent() {}

// layerFirst is how many in-order client bytes NewLayer is given (fewer
// when the direction ends or loses bytes sooner); layerHold caps what a
// direction holds until NewLayer has answered.
const (
	layerFirst = 16
	layerHold  = 64 << 10
)

// connLayer is a connection's Layer state, kept in Pipeline.layers (a conn
// stays small: most connections have none), indexed by dir.
type connLayer struct {
	l    Layer
	held [2]int // what l holds against the buffer caps (LayerOutput.Hold)
	// wait holds the ordered streams of both directions until NewLayer
	// answers; a client whose first bytes come whole needs none.
	wait *layerWait
}

type layerWait struct {
	pre      [2][]preItem
	preBytes [2]int // also counted against the buffer caps
	first    int    // client bytes held from the start without a gap
	cut      bool   // the client's first bytes ended at a gap
}

// bytes is what the connection's Layer state holds against the caps.
func (cl *connLayer) bytes() int {
	n := cl.held[0] + cl.held[1]
	if w := cl.wait; w != nil {
		n += w.preBytes[0] + w.preBytes[1]
	}
	return n
}

// dropLayer forgets c's Layer state, and what it held.
func (p *Pipeline) dropLayer(c *conn) {
	if cl := p.layers[c]; cl != nil {
		p.buffered -= cl.bytes()
		delete(p.layers, c)
	}
}

// overCap reports whether n more bytes buffered for c would exceed a cap.
func (c *conn) overCap(n int) bool {
	p := c.p
	return c.buffered()+n > p.cfg.MaxConnBuffer || p.buffered+n > p.cfg.MaxTotalBuffer
}

// flow is the Flow of c's direction.
func (c *conn) flow(fromClient bool) Flow {
	f := Flow{Conn: c.key, ConnID: c.key.ID, FromClient: fromClient, Src: c.key.Client, Dst: c.key.Server}
	if !fromClient {
		f.Src, f.Dst = f.Dst, f.Src
	}
	return f
}

// preItem is a piece of a held ordered stream: bytes, or a gap when data is
// nil (whose Gap event was reported when it came).
type preItem struct {
	seq    uint64 // delivery order across both directions
	off, n int64
	data   []byte
	pkt    int
	ts     time.Time
}

func dir(fromClient bool) int {
	if fromClient {
		return 0
	}
	return 1
}

// layerOut is the LayerOutput of a connection: it feeds the framers.
type layerOut struct{ c *conn }

// half is the open direction of o's connection, nil when it is closed or
// never sent a packet.
func (o layerOut) half(fromClient bool) *half {
	for _, h := range o.c.h {
		if h != nil && h.fromClient == fromClient && !h.ord.closed {
			return h
		}
	}
	return nil
}

func (o layerOut) Data(fromClient bool, off int64, data []byte, pkt int, ts time.Time) {
	if h := o.half(fromClient); h != nil && len(data) > 0 {
		h.fr.frame(data, off, pkt, ts)
	}
}

func (o layerOut) Unread(fromClient bool) (skip, head int64) {
	if h := o.half(fromClient); h != nil {
		return h.fr.unread()
	}
	return 0, 0
}

func (o layerOut) Skip(fromClient bool, off, n int64, pkt int, ts time.Time) {
	if h := o.half(fromClient); h != nil && n > 0 {
		h.fr.skipped(off, n, pkt, ts)
	}
}

func (o layerOut) Settled(fromClient bool) bool {
	if h := o.half(fromClient); h != nil {
		return h.fr.settled()
	}
	return false
}

func (o layerOut) Gap(fromClient bool, off, n int64, ts time.Time) {
	if h := o.half(fromClient); h != nil {
		h.fr.frameGap(off, n, ts)
	}
}

func (o layerOut) Event(fromClient bool, ts time.Time, v any) {
	c := o.c
	if !c.decided {
		return
	}
	c.p.emit(&LayerEvent{Flow: c.flow(fromClient), Time: ts, Value: v})
}

func (o layerOut) Hold(fromClient bool, off int64, n int, ts time.Time) bool {
	c := o.c
	p := c.p
	cl := p.layers[c]
	if cl == nil {
		return n <= 0 // ended: what it held was taken back
	}
	d := dir(fromClient)
	if n <= 0 {
		n = min(-n, cl.held[d])
		cl.held[d] -= n
		p.buffered -= n
		return true
	}
	if c.overCap(n) {
		p.stats.BufferLimits++
		if c.decided {
			p.emit(&BufferLimit{Flow: c.flow(fromClient), StreamOffset: off, Length: int64(n), Time: ts})
		}
		return false
	}
	cl.held[d] += n
	p.buffered += n
	return true
}

// layerData takes in-order bytes of a layered connection: held until
// NewLayer answers, then fed to the Layer.
func (h *half) layerData(data []byte, off int64, pkt int, ts time.Time) {
	c := h.c
	cl := c.p.layers[c]
	if cl == nil {
		if h.fromClient && len(data) >= layerFirst {
			// The client's first bytes came whole, before anything else:
			// NewLayer answers at once and nothing is held or copied.
			if l := c.p.newLayer(c, data, ts); l != nil {
				l.Feed(h.fromClient, off, data, pkt, ts, layerOut{c})
			} else {
				h.stream(data, off, pkt, ts)
			}
			return
		}
		cl = c.p.holdLayer(c)
	}
	if cl.l != nil {
		cl.l.Feed(h.fromClient, off, data, pkt, ts, layerOut{c})
		return
	}
	w := cl.waiting()
	d := dir(h.fromClient)
	// Past layerHold or the buffer caps NewLayer is asked at once, unless
	// these bytes are the client's first ones it must see.
	if (w.preBytes[d]+len(data) > layerHold || c.overCap(len(data))) && !(h.fromClient && !w.cut && w.first < layerFirst) {
		c.p.askLayer(c, ts)
		h.stream(data, off, pkt, ts)
		return
	}
	c.p.preSeq++
	w.pre[d] = append(w.pre[d], preItem{seq: c.p.preSeq, off: off, n: int64(len(data)), data: slices.Clone(data), pkt: pkt, ts: ts})
	w.preBytes[d] += len(data)
	c.p.buffered += len(data)
	if h.fromClient && !w.cut {
		w.first += len(data)
		if w.first >= layerFirst {
			c.p.askLayer(c, ts)
		}
	}
}

// waiting is the hold of c's streams until NewLayer answers.
func (cl *connLayer) waiting() *layerWait {
	if cl.wait == nil {
		cl.wait = new(layerWait)
	}
	return cl.wait
}

// layerGap takes a gap of a layered connection's TCP stream.
func (h *half) layerGap(off, n int64, ts time.Time) {
	c := h.c
	cl := c.p.layers[c]
	if cl == nil {
		cl = c.p.holdLayer(c)
	}
	if cl.l != nil {
		cl.l.Gap(h.fromClient, off, n, ts, layerOut{c})
		return
	}
	w := cl.waiting()
	d := dir(h.fromClient)
	c.p.preSeq++
	w.pre[d] = append(w.pre[d], preItem{seq: c.p.preSeq, off: off, n: n, ts: ts})
	if h.fromClient {
		// The client's first bytes end here: NewLayer gets what came.
		w.cut = true
		c.p.askLayer(c, ts)
	}
}

// layerFinish is called when a direction of a layered connection ends: if
// NewLayer has not been asked yet, it is asked with what came.
func (p *Pipeline) layerFinish(c *conn, ts time.Time) {
	if cl := p.layers[c]; cl != nil && cl.l == nil {
		p.askLayer(c, ts)
	}
}

// layerEnd tells the connection's Layer, if it has one, that it ended.
func (p *Pipeline) layerEnd(c *conn, reason string, ts time.Time) {
	for _, h := range c.h {
		if h != nil {
			h.flushOrder(ts)
		}
	}
	if c.layered {
		p.layerFinish(c, ts)
	}
	if cl := p.layers[c]; c.layered && cl != nil && cl.l != nil {
		cl.l.End(reason, ts, layerOut{c})
	}
}

// holdLayer starts holding c's streams until NewLayer is asked. The state
// is made on first use: most connections never need it (see layerData).
func (p *Pipeline) holdLayer(c *conn) *connLayer {
	cl := new(connLayer)
	p.layers[c] = cl
	return cl
}

// newLayer asks NewLayer for c's Layer given the client's first bytes and
// records the answer: a connection without one is framed plain from now
// on; one with it is followed even if DetectPorts was still probing.
func (p *Pipeline) newLayer(c *conn, first []byte, ts time.Time) Layer {
	f := Flow{Conn: c.key, ConnID: c.key.ID, FromClient: true, Src: c.key.Client, Dst: c.key.Server}
	l := p.cfg.NewLayer(f, first)
	if pr, ok := l.(Prover); ok && !c.decided && !pr.Proven() {
		l = nil // a connection still probed must prove what it is
	}
	if l == nil {
		c.layered = false
		return nil
	}
	cl := p.layers[c]
	if cl == nil {
		cl = p.holdLayer(c)
	}
	cl.l = l
	if !c.decided {
		c.decided = true
		p.detectedServer(c, ts, true)
	}
	return l
}

// askLayer asks NewLayer for c's Layer and feeds what was held to it, or to
// the framers when there is none. A Layer for a connection DetectPorts was
// still probing makes it followed.
func (p *Pipeline) askLayer(c *conn, ts time.Time) {
	cl := p.layers[c]
	w := cl.waiting()
	var first []byte
	for _, it := range w.pre[0] {
		if it.data == nil {
			break
		}
		first = append(first, it.data...)
	}
	l := p.newLayer(c, first, ts)
	// The directions are found before feeding: a DetectPorts probe on the
	// plain bytes may turn their roles round.
	var hs [2]*half
	for _, h := range c.h {
		if h != nil {
			hs[dir(h.fromClient)] = h
		}
	}
	// What was held goes out in the order it came, across both directions,
	// as it would have without the hold; what a direction still holds counts
	// as unreleased meanwhile, so a response replayed before its request
	// waits for it.
	for {
		d := -1
		for i := range w.pre {
			if len(w.pre[i]) > 0 && (d < 0 || w.pre[i][0].seq < w.pre[d][0].seq) {
				d = i
			}
		}
		if d < 0 {
			break
		}
		it := w.pre[d][0]
		w.pre[d] = w.pre[d][1:]
		w.preBytes[d] -= len(it.data)
		p.buffered -= len(it.data)
		h := hs[d]
		switch {
		case h == nil || h.ord.closed:
		case it.data != nil:
			h.stream(it.data, it.off, it.pkt, it.ts)
		case l != nil:
			l.Gap(h.fromClient, it.off, it.n, it.ts, layerOut{c})
		default:
			h.fr.frameGap(it.off, it.n, it.ts)
		}
	}
	cl.wait = nil
	if l == nil {
		p.dropLayer(c)
	}
}

// layerHeld reports whether h's direction holds bytes NewLayer has not
// been asked about yet.
func (h *half) layerHeld() bool {
	cl := h.c.p.layers[h.c]
	return cl != nil && cl.wait != nil && len(cl.wait.pre[dir(h.fromClient)]) > 0
}
