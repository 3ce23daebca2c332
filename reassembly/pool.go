package reassembly

// Out-of-order segments are copied into buffers of heldChunk bytes that
// are reused once delivered: the hole-after-hole pattern of a lossy
// capture then recycles the same memory instead of making the garbage
// collector double the heap. Smaller pieces are copied exactly, so a held
// byte never costs more than two.
const (
	heldChunk = 2048      // a full-size Ethernet segment fits
	maxFree   = 256 << 10 // free chunks kept; the rest goes back to the collector
)

func (p *Pipeline) heldBuf(n int) []byte {
	if n < heldChunk/2 || n > heldChunk {
		return make([]byte, 0, n)
	}
	if k := len(p.free); k > 0 {
		b := p.free[k-1]
		p.free[k-1] = nil
		p.free = p.free[:k-1]
		p.freeBytes -= heldChunk
		return b
	}
	return make([]byte, 0, heldChunk)
}

func (p *Pipeline) freeHeld(b []byte) {
	if cap(b) == heldChunk && p.freeBytes < maxFree {
		p.free = append(p.free, b[:0])
		p.freeBytes += heldChunk
	}
}
