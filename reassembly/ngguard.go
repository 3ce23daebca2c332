package reassembly

import (
	"encoding/binary"
	"fmt"
	"io"
)

// ngGuard sits under the buffer pcapgo's pcapng reader reads through and
// checks each block before the reader sees it. pcapgo allocates a packet's
// buffer by lengths the file states (the larger of its interface's snap
// length and its captured length, up to 4 GiB each) and walks a block's
// options by their own lengths, so a lying block could make it allocate
// gigabytes, or read on past the block into bytes this guard took for the
// next one. The guard follows the blocks as pcapgo does, by their lengths:
// a snap length above maxSnaplen becomes 0 ("no limit": the packets' own
// lengths, checked here, size the buffer), and a packet longer than its
// block or than maxSnaplen, an option past its block's end, a block too
// short for its fields or a timestamp resolution pcapgo would divide by
// zero with ends the stream there with an ngBlockError, which the reader
// reports. A stream that does not start as pcapng is passed on untouched.
// On the way it hands over the Decryption Secrets Blocks (secrets), by
// the same walk.
type ngGuard struct {
	r     io.Reader
	state uint8
	order binary.ByteOrder
	off   int64  // stream offset of the next byte the guard returns
	read  int64  // bytes read from r
	carry []byte // bytes read past the last checked one: part of a head
	stage []byte // for reads too small to hold a head (see Read)
	ready []byte // checked bytes in stage, not yet returned
	err   error  // what ends the stream once ready and carry are out

	skip   int64 // bytes to pass on unchecked: a block's body, an option's value
	inOpts bool  // the position is an option's head, not a block's
	left   int64 // of the block, what pcapgo still counts for its options
	typ    uint32
	ifaces int    // interfaces in this section
	snap0  uint32 // interface 0's snap length, as pcapgo sees it

	// onSecrets, when set, is handed each Decryption Secrets Block's
	// secrets (see secrets); body collects the block, keep says the
	// current block is one, given counts the secrets handed over.
	onSecrets func(kind uint32, data []byte)
	body      []byte
	keep      bool
	given     int
}

const (
	guardStart = iota // the stream's first bytes decide
	guardOn
	guardOff // not pcapng
)

// ngHeadMax is the most bytes of a block or option head the guard looks
// at before passing them on: an Enhanced Packet Block's captured length
// ends 24 bytes in.
const ngHeadMax = 24

// Block types pcapgo reads fields of.
const (
	ngIDB = 1
	ngPB  = 2 // the obsolete Packet Block
	ngSPB = 3
	ngISB = 5
	ngEPB = 6
)

// ngBlockError is a pcapng block the guard stopped at.
type ngBlockError struct {
	off int64
	msg string
}

func (e ngBlockError) Error() string {
	return fmt.Sprintf("byte %d of the pcapng stream: %s", e.off, e.msg)
}

func (g *ngGuard) Read(p []byte) (int, error) {
	if len(g.ready) > 0 {
		n := copy(p, g.ready)
		g.ready = g.ready[n:]
		g.off += int64(n)
		return n, nil
	}
	if g.state == guardOff {
		return g.r.Read(p)
	}
	if g.err != nil {
		return 0, g.err
	}
	if len(p) < 2*ngHeadMax {
		// Too small to hold a head and bytes after it (bufio reads a
		// megabyte at a time; this is for other readers): read and check
		// in the stage, return from it.
		if g.stage == nil {
			g.stage = make([]byte, 4096)
		}
		n, err := g.fill(g.stage)
		g.ready = g.stage[:n]
		m := copy(p, g.ready)
		g.ready = g.ready[m:]
		g.off += int64(m)
		if len(g.ready) > 0 {
			err = nil // after ready
		}
		return m, err
	}
	n, err := g.fill(p)
	g.off += int64(n)
	return n, err
}

// fill reads into p after the bytes carried from the last read, checks
// them and returns how many of them are checked, to be passed on; the
// rest, part of a head, is carried to the next.
func (g *ngGuard) fill(p []byte) (int, error) {
	c := copy(p, g.carry)
	g.carry = g.carry[:0]
	// Each read ends 64 bytes past a page boundary of the file, so that
	// the next, which lands the carried bytes further into p, reads from
	// 40 to 64 bytes before its destination modulo a page: the kernel's
	// copy (rep movsb) runs four times slower when the destination is 1
	// to 63 bytes past its source modulo a page, as a page-aligned read
	// into p[c:] would be.
	m := len(p)
	if k := m - c; k > 4<<10 {
		m -= int((g.read + int64(k) - 64) & (4<<10 - 1))
	}
	n, err := g.r.Read(p[c:m])
	g.read += int64(n)
	n += c
	if g.state == guardStart {
		if n < 4 && err == nil {
			g.carry = append(g.carry, p[:n]...)
			return 0, nil
		}
		g.state = guardOff
		if n >= 4 && binary.LittleEndian.Uint32(p) == ngSectionHeader {
			g.state = guardOn
		}
	}
	if g.state == guardOff {
		return n, err
	}
	ok, bad := g.scan(p[:n])
	if bad != nil {
		g.err = bad
		return ok, nil
	}
	if err != nil {
		// The stream ends inside a head: pass its bytes on, the reader
		// says the file is truncated.
		return n, err
	}
	g.carry = append(g.carry, p[ok:n]...)
	return ok, nil
}

// scan follows b's blocks from the guard's position and returns how many
// bytes are checked: all but a head that does not end in b. A head is
// checked (and a snap length rewritten) in b, before it is passed on.
func (g *ngGuard) scan(b []byte) (int, *ngBlockError) {
	i := 0
	for {
		if g.skip > 0 {
			k := int(min(g.skip, int64(len(b)-i)))
			if g.keep {
				g.body = append(g.body, b[i:i+k]...)
			}
			i += k
			g.skip -= int64(k)
			if g.skip > 0 {
				return i, nil
			}
			if g.keep {
				g.secrets()
			}
		}
		if i == len(b) {
			return i, nil
		}
		var need int
		var err *ngBlockError
		if g.inOpts {
			need, err = g.option(b[i:], g.off+int64(i))
		} else {
			need, err = g.block(b[i:], g.off+int64(i))
		}
		if err != nil {
			return i, err
		}
		if need > 0 {
			return i, nil
		}
	}
}

// block checks the block head at the start of b (at stream offset off):
// it returns how many bytes it needs when b holds fewer, else sets what
// follows the head up.
func (g *ngGuard) block(b []byte, off int64) (int, *ngBlockError) {
	if len(b) < 8 {
		return 8, nil
	}
	if binary.LittleEndian.Uint32(b) == ngSectionHeader { // the same in either order
		if len(b) < 12 {
			return 12, nil
		}
		switch {
		case binary.LittleEndian.Uint32(b[8:]) == ngByteOrder:
			g.order = binary.LittleEndian
		case binary.BigEndian.Uint32(b[8:]) == ngByteOrder:
			g.order = binary.BigEndian
		default:
			return 0, &ngBlockError{off, "a section header of no known byte order"}
		}
		g.ifaces, g.snap0 = 0, 0
	}
	// g.order is set: a stream is guarded only when it starts with a
	// section header.
	g.typ = g.order.Uint32(b)
	n := int64(g.order.Uint32(b[4:]))
	// fixed: the bytes of fields after type and length that pcapgo reads
	// before the options or the packet data; head: what is checked here.
	fixed, head, opts := int64(0), 8, false
	switch g.typ {
	case ngSectionHeader:
		fixed, head, opts = 16, 12, true
	case ngIDB:
		fixed, head, opts = 8, 16, true
	case ngISB:
		fixed, opts = 12, true
	case ngEPB, ngPB:
		fixed, head = 20, 24
	case ngSPB:
		fixed, head = 4, 12
	}
	if n < 12 || n < 8+fixed+4 {
		return 0, &ngBlockError{off, fmt.Sprintf("%s of %d bytes, too short for its fields", ngBlockName(g.typ), n)}
	}
	if len(b) < head {
		return head, nil
	}
	caplen := int64(-1)
	switch g.typ {
	case ngIDB:
		snap := g.order.Uint32(b[12:])
		if snap > maxSnaplen {
			g.order.PutUint32(b[12:], 0) // no limit: the packets' checked lengths size the buffer
			snap = 0
		}
		if g.ifaces == 0 {
			g.snap0 = snap
		}
		g.ifaces++
	case ngEPB, ngPB:
		caplen = int64(g.order.Uint32(b[20:]))
		if caplen > n-32 {
			return 0, &ngBlockError{off, fmt.Sprintf("a packet of %d captured bytes in a block of %d", caplen, n)}
		}
	case ngSPB:
		caplen = int64(g.order.Uint32(b[8:]))
		if g.snap0 != 0 && caplen > int64(g.snap0) {
			caplen = int64(g.snap0)
		}
		if caplen > n-16 {
			return 0, &ngBlockError{off, fmt.Sprintf("a packet of %d bytes in a simple packet block of %d", caplen, n)}
		}
	}
	if caplen > maxSnaplen {
		return 0, &ngBlockError{off, fmt.Sprintf("a packet of %d captured bytes, more than the %d kdissect reads", caplen, maxSnaplen)}
	}
	if opts {
		g.skip, g.inOpts, g.left = 8+fixed, true, n-8-fixed
	} else {
		g.skip = n
	}
	if g.typ == ngSecrets && g.onSecrets != nil && int64(g.given)+n <= maxSecrets {
		g.keep, g.body = true, g.body[:0]
	}
	return 0, nil
}

// option checks the option head at the start of b, as pcapgo reads it: it
// takes the 4 bytes left at the block's end for its trailing length, an
// end-of-options option or the block running out for the end; the rest of
// the block after the options is skipped.
func (g *ngGuard) option(b []byte, off int64) (int, *ngBlockError) {
	if g.left == 4 {
		g.skip, g.inOpts = 4, false
		return 0, nil
	}
	if g.left < 4 {
		return 0, &ngBlockError{off, "an option that runs past the end of its block"}
	}
	if len(b) < 4 {
		return 4, nil
	}
	code, n := g.order.Uint16(b), int64(g.order.Uint16(b[2:]))
	g.left -= 4
	if code == 0 {
		g.skip, g.inOpts = 4+g.left, false
		return 0, nil
	}
	v := n + (4-n%4)%4
	if v > g.left {
		return 0, &ngBlockError{off, "an option that runs past the end of its block"}
	}
	if least := ngOptionMin(g.typ, code); n < least {
		return 0, &ngBlockError{off, fmt.Sprintf("option %d of %s with %d bytes, fewer than the %d it holds", code, ngBlockName(g.typ), n, least)}
	}
	if g.typ == ngIDB && code == optTSResol {
		if len(b) < 5 {
			g.left += 4
			return 5, nil
		}
		// pcapgo divides by 2^e or 10^e in 64 bits: beyond these it
		// overflows to 0.
		if e := b[4] & 0x7f; b[4]&0x80 != 0 && e > 63 || b[4]&0x80 == 0 && e > 19 {
			return 0, &ngBlockError{off, fmt.Sprintf("an interface of timestamp resolution %#02x, finer than kdissect reads", b[4])}
		}
	}
	g.left -= v
	g.skip = 4 + v
	return 0, nil
}

// Option codes of an interface description block that pcapgo reads.
const (
	optTSResol  = 9  // if_tsresol
	optFilter   = 11 // if_filter
	optTSOffset = 14 // if_tsoffset
)

// ngOptionMin is the fewest value bytes pcapgo reads of option code of a
// block of type typ: it indexes the value at these lengths without
// checking it, and an option of no value leaves it the previous option's.
func ngOptionMin(typ uint32, code uint16) int64 {
	switch {
	case typ == ngIDB && (code == optTSResol || code == optFilter):
		return 1
	case typ == ngIDB && code == optTSOffset:
		return 8
	case typ == ngISB && code >= 2 && code <= 5: // isb_starttime, isb_endtime, isb_ifrecv, isb_ifdrop
		return 8
	}
	return 0
}

func ngBlockName(typ uint32) string {
	switch typ {
	case ngSectionHeader:
		return "a section header"
	case ngIDB:
		return "an interface description block"
	case ngPB, ngEPB:
		return "a packet block"
	case ngSPB:
		return "a simple packet block"
	case ngISB:
		return "an interface statistics block"
	}
	return fmt.Sprintf("a block of type %#x", typ)
}
