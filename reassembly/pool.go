package reassembly

// Out-of-order segments of about a full packet are copied into chunks of
// heldChunk bytes, carved from slabs mapped outside the Go heap where the
// platform allows (slab_unix.go). Held data is long-lived, up to
// MaxTotalBuffer, and its lifetime is exact (a chunk is free once its
// segment is delivered or given up on), so keeping it away from the garbage
// collector spares the heap the doubling the collector would otherwise
// allow it: a capture holding 64 MiB does not need 128. Chunks are reused;
// each tick unmaps whole slabs no packet needed since the last one, so an
// idle pipeline gives the memory back. Pieces of other sizes are copied
// exactly onto the heap: a held byte never costs two.
//
// A chunk may be reused or unmapped once its segment is delivered: what
// the framer passes on (Frame.Data) is valid only during the emit call,
// as Event says.
const (
	heldChunk  = 1536 // a full-size Ethernet segment (MSS 1460) fits
	slabChunks = 64   // 96 KiB, a whole number of pages
	slabSize   = heldChunk * slabChunks
)

// chunkRef names a chunk: slab+1 (0 = not a chunk) and index.
type chunkRef struct{ slab, i int32 }

type slab struct {
	mem  []byte
	free int // chunks of it in Pipeline.free
}

func (p *Pipeline) heldBuf(n int) ([]byte, chunkRef) {
	if n < heldChunk/2 || n > heldChunk {
		return make([]byte, 0, n), chunkRef{}
	}
	if len(p.free) == 0 && !p.newSlab() {
		return make([]byte, 0, n), chunkRef{}
	}
	k := len(p.free) - 1
	r := p.free[k]
	p.free = p.free[:k]
	p.freeLow = min(p.freeLow, k)
	s := p.slabs[r.slab-1]
	s.free--
	off := int(r.i) * heldChunk
	return s.mem[off : off : off+heldChunk], r
}

func (p *Pipeline) newSlab() bool {
	mem := mapSlab(slabSize)
	if mem == nil {
		return false
	}
	id := int32(-1)
	for i, s := range p.slabs {
		if s == nil {
			id = int32(i)
			break
		}
	}
	if id < 0 {
		id = int32(len(p.slabs))
		p.slabs = append(p.slabs, nil)
	}
	p.slabs[id] = &slab{mem: mem, free: slabChunks}
	for i := slabChunks - 1; i >= 0; i-- {
		p.free = append(p.free, chunkRef{id + 1, int32(i)})
	}
	return true
}

// freeHeld takes back the chunk of a held segment that was delivered or
// given up on.
func (p *Pipeline) freeHeld(h held) {
	if h.chunk.slab == 0 {
		return
	}
	p.free = append(p.free, h.chunk)
	p.slabs[h.chunk.slab-1].free++
}

// trimFree, at the start of a tick, unmaps whole free slabs for half the
// chunks that stayed free since the end of the last tick, rounded up to
// whole slabs.
func (p *Pipeline) trimFree() {
	budget := p.freeLow - p.freeLow/2
	if budget <= 0 {
		return
	}
	var gone []bool
	for i, s := range p.slabs {
		if s != nil && s.free == slabChunks && budget > 0 {
			unmapSlab(s.mem)
			p.slabs[i] = nil
			if gone == nil {
				gone = make([]bool, len(p.slabs))
			}
			gone[i] = true
			budget -= slabChunks
		}
	}
	if gone == nil {
		return
	}
	kept := p.free[:0]
	for _, r := range p.free {
		if !gone[r.slab-1] {
			kept = append(kept, r)
		}
	}
	p.free = kept
	if cap(p.free) > 1024 && len(p.free) < cap(p.free)/4 {
		p.free = append([]chunkRef(nil), p.free...)
	}
}

// freeAll unmaps every slab; no chunk may be held.
func (p *Pipeline) freeAll() {
	for _, s := range p.slabs {
		if s != nil {
			unmapSlab(s.mem)
		}
	}
	p.slabs, p.free, p.freeLow = nil, nil, 0
}

// A wanted frame body larger than a connection keeps between frames
// (keepBuf) is collected in a buffer sized to the frame, reserved against
// the caps first, and handed back here once the frame is emitted: the
// next large frame, on any connection, reuses it.
const (
	bigPool = 16      // buffers kept
	bigMax  = 1 << 20 // largest kept
)

func (p *Pipeline) bigBuf(n int) []byte {
	for i, b := range p.big {
		if cap(b) >= n {
			last := len(p.big) - 1
			p.big[i] = p.big[last]
			p.big[last] = nil
			p.big = p.big[:last]
			return b
		}
	}
	return make([]byte, 0, n)
}

func (p *Pipeline) putBig(b []byte) {
	if cap(b) > bigMax {
		return
	}
	if len(p.big) < bigPool {
		p.big = append(p.big, b[:0])
		return
	}
	// Full: keep the larger buffers, which serve more frames.
	for i, o := range p.big {
		if cap(o) < cap(b) {
			p.big[i] = b[:0]
			return
		}
	}
}
