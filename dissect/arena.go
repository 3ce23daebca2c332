package dissect

// The decoder's state and its node storage: nodes come from slabs handed
// out in chunks, so that a pointer to a node stays valid while the tree
// grows, and a reused decoder keeps its largest chunks for the next frame.

// decoder walks one frame. Its first failure is sticky: the walk stops
// there, every open node is closed at the bytes it consumed, and the
// problem stays on the node where it happened.
type decoder struct {
	b      []byte
	off    int
	end    int // limit of the current region (frame end, or a tagged field's end)
	v      int16
	flex   bool
	failed bool
	cat    Category
	probs  []Problem
	opts   Options // kept across reset: a Decoder's options last until changed
	reg    *Registry

	// An Envelope's forwarded message and who it is by, which the
	// message points to; nested: the walk is inside the forwarded one.
	inner  Message
	fwd    Forwarded
	nested bool

	// notKept counts the bytes of the frame after b that exist on the wire
	// but were deliberately not kept (a capture skipped an uninteresting
	// body); running into them ends the walk without a problem.
	notKept int
	cut     bool // the walk stopped at bytes that were not kept
	covered bool // an opaque body already spans the bytes not kept

	stack    []*Node // children of the nodes being built, innermost last
	slab     []Node  // node storage, handed out in chunks so pointers stay valid
	ptrs     []*Node // storage for Children slices
	used     int     // nodes handed out for this frame
	usedPtrs int     // children pointers handed out for this frame

	// A reused decoder (Decoder) starts from the largest chunks it has
	// needed so far, so a steady stream of frames allocates nothing.
	spareSlab []Node
	sparePtrs []*Node

	// The message and first chunks of storage live in the decoder, so
	// that a small frame costs one allocation for all of them; the tree
	// keeps the decoder alive, which holds nothing else of size.
	m      Message
	slab0  [24]Node
	ptrs0  [32]*Node
	stack0 [16]*Node
}

func newDecoder(b []byte) *decoder {
	d := &decoder{b: b, end: len(b)}
	d.slab, d.ptrs, d.stack = d.slab0[:0], d.ptrs0[:0], d.stack0[:0]
	return d
}

// reset readies a decoder for the next frame, reusing its storage: the
// previous message's tree is overwritten.
func (d *decoder) reset(b []byte) {
	// One right-sized chunk for the largest frame so far, so the next frame
	// like it needs no allocation.
	if d.used > cap(d.spareSlab) {
		d.spareSlab = make([]Node, 0, d.used)
	}
	if n := len(d.ptrs); n > cap(d.sparePtrs) || d.usedPtrs > cap(d.sparePtrs) {
		d.sparePtrs = make([]*Node, 0, max(n, d.usedPtrs))
	}
	// The stack is kept too: a batch's records wait on it until the batch
	// closes, thousands at once, and growing it again by doubling in each
	// such frame (and collecting what that left) was a third of decoding
	// them. Its entries are cleared, so that no node of the frame before
	// stays reachable; it never held more of them than nodes were made.
	if cap(d.stack) > len(d.stack0) {
		clear(d.stack[:min(d.used, cap(d.stack))])
		d.stack = d.stack[:0]
	} else {
		d.stack = d.stack0[:0]
	}
	d.b, d.off, d.end, d.v, d.flex, d.failed, d.cat, d.used, d.usedPtrs = b, 0, len(b), 0, false, false, 0, 0, 0
	d.notKept, d.cut, d.covered = 0, false, false
	d.probs = d.probs[:0]
	d.fwd, d.nested = Forwarded{}, false
	if d.inner.Tree != nil || d.inner.APIKey != 0 {
		d.inner = Message{} // only an Envelope used it
	}
	d.m = Message{}
	d.slab, d.ptrs = d.slab0[:0], d.ptrs0[:0]
	if cap(d.spareSlab) > len(d.slab0) {
		d.slab = d.spareSlab[:0]
	}
	if cap(d.sparePtrs) > len(d.ptrs0) {
		d.ptrs = d.sparePtrs[:0]
	}
}

func (d *decoder) node(name, typ string, k Kind) *Node {
	if len(d.slab) == cap(d.slab) {
		d.slab = make([]Node, 0, max(cap(d.slab), d.used)) // doubles what the frame has so far
	}
	d.slab = d.slab[:len(d.slab)+1]
	d.used++
	n := &d.slab[len(d.slab)-1]
	*n = Node{}
	n.Name, n.Type, n.Kind, n.Offset, n.Category = name, typ, k, d.off, d.cat
	d.stack = append(d.stack, n)
	return n
}

// open starts a composite node; its children are what is added until close.
func (d *decoder) open(name, typ string, k Kind) (*Node, int) {
	n := d.node(name, typ, k)
	return n, len(d.stack)
}

func (d *decoder) close(n *Node, mark int) {
	d.adopt(n, mark)
	n.Size = d.off - n.Offset
}

// adopt makes the nodes added since mark n's children, leaving its size.
func (d *decoder) adopt(n *Node, mark int) {
	kids := d.stack[mark:]
	if len(kids) > 0 {
		if cap(d.ptrs)-len(d.ptrs) < len(kids) {
			d.ptrs = make([]*Node, 0, max(cap(d.ptrs), d.usedPtrs, len(kids)))
		}
		d.usedPtrs += len(kids)
		start := len(d.ptrs)
		d.ptrs = append(d.ptrs, kids...)
		n.Children = d.ptrs[start:len(d.ptrs):len(d.ptrs)]
	}
	d.stack = d.stack[:mark]
}

// openChild finds by name a child of the still-open node whose mark is given.
func (d *decoder) openChild(mark int, name string) *Node {
	for _, c := range d.stack[mark:] {
		if c.Name == name {
			return c
		}
	}
	return nil
}
