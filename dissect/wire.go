package dissect

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
)

// The wire primitives: fixed-width values, Kafka's unsigned varint, and the
// length prefixes of strings, bytes and arrays, each checked against the
// bytes left before it is used.

// problem records a lesser problem with n at off; the walk goes on.
func (d *decoder) problem(n *Node, off int, msg string) {
	p := Problem{Offset: off, Message: msg}
	n.Problems = append(n.Problems, p)
	d.probs = append(d.probs, p)
}

// fail records a structural problem: the walk stops there.
func (d *decoder) fail(n *Node, off int, msg string) {
	d.problem(n, off, msg)
	d.failed = true
}

func (d *decoder) left() int { return d.end - d.off }

// short is fail for running out of bytes: a truncated frame is a problem,
// but a frame whose rest was deliberately not kept simply ends there.
func (d *decoder) short(n *Node, off int, msg string) {
	if d.notKept > 0 && d.end == len(d.b) {
		d.failed, d.cut = true, true
		n.noval = true
		return
	}
	d.fail(n, off, msg)
}

// need fails n unless k more bytes are in the region.
func (d *decoder) need(n *Node, k int) bool {
	if d.left() >= k {
		return true
	}
	d.short(n, d.off, fmt.Sprintf("truncated: needs %d bytes, %d left", k, max(d.left(), 0)))
	return false
}

// uvarint reads Kafka's unsigned varint, at most 5 bytes for 32 bits.
func (d *decoder) uvarint(n *Node) (uint32, bool) {
	var v uint32
	for i := 0; i < 5; i++ {
		if d.off+i >= d.end {
			d.short(n, d.off, "truncated: varint runs past the end")
			return 0, false
		}
		c := d.b[d.off+i]
		if i == 4 && c > 0x0f {
			d.fail(n, d.off, "varint longer than 5 bytes or above 2^32-1")
			return 0, false
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			d.off += i + 1
			return v, true
		}
	}
	d.fail(n, d.off, "varint longer than 5 bytes")
	return 0, false
}

func (d *decoder) uvarintLeaf(name, doc string) (*Node, uint32, bool) {
	n := d.node(name, "uvarint", KindInt)
	n.Doc = doc
	v, ok := d.uvarint(n)
	n.Int = int64(v)
	n.noval = !ok
	n.Size = d.off - n.Offset
	return n, v, ok
}

// fixed decodes a fixed-width value.
func (d *decoder) fixed(k kind, name, typ string) *Node {
	n := d.node(name, typ, KindInt)
	size := fixedSize[k]
	if !d.need(n, size) {
		n.noval = true // nothing was read: show no value rather than a made-up 0
		return n
	}
	b := d.b[d.off:]
	switch k {
	case kBool:
		n.Kind = KindBool
		n.Int = int64(b[0])
		if b[0] > 1 {
			d.problem(n, d.off, fmt.Sprintf("bool is %d, not 0 or 1", b[0]))
		}
	case kInt8:
		n.Int = int64(int8(b[0]))
	case kInt16:
		n.Int = int64(int16(binary.BigEndian.Uint16(b)))
	case kUint16:
		n.Int = int64(binary.BigEndian.Uint16(b))
	case kInt32:
		n.Int = int64(int32(binary.BigEndian.Uint32(b)))
	case kUint32:
		n.Int = int64(binary.BigEndian.Uint32(b))
	case kInt64:
		n.Int = int64(binary.BigEndian.Uint64(b))
	case kFloat64:
		n.Kind = KindFloat
		n.Float = math.Float64frombits(binary.BigEndian.Uint64(b))
	case kUUID:
		n.Kind = KindUUID
		n.Str = uuidString(b[:16])
	}
	d.off += size
	n.Size = size
	return n
}

// length reads a string, bytes or array length prefix: compact uvarint
// (n+1, 0 = null) when flexible, else int16 (strings) or int32. It
// returns -1 for null.
func (d *decoder) length(n *Node, flex, short bool) (int64, bool) {
	if flex {
		u, ok := d.uvarint(n)
		return int64(u) - 1, ok
	}
	if short {
		if !d.need(n, 2) {
			return 0, false
		}
		v := int64(int16(binary.BigEndian.Uint16(d.b[d.off:])))
		d.off += 2
		return v, true
	}
	if !d.need(n, 4) {
		return 0, false
	}
	v := int64(int32(binary.BigEndian.Uint32(d.b[d.off:])))
	d.off += 4
	return v, true
}

// prefix checks a length just read at lenOff against nullability and the
// bytes left; it returns false when the walk cannot go on.
func (d *decoder) prefix(n *Node, f *Field, l int64, lenOff int, what string) bool {
	switch {
	case l == -1:
		n.Null = true
		if !f.Nullable.Has(d.v) {
			d.problem(n, lenOff, fmt.Sprintf("%s is null but not nullable in v%d", f.Name, d.v))
		}
	case l < -1:
		d.fail(n, lenOff, fmt.Sprintf("%s length %d is negative", what, l))
		return false
	case l > int64(d.left()+d.notKept):
		d.fail(n, lenOff, fmt.Sprintf("%s length %d exceeds the %d bytes left", what, l, d.left()+d.notKept))
		return false
	case l > int64(d.left()):
		d.short(n, lenOff, fmt.Sprintf("%s length %d exceeds the %d bytes left", what, l, d.left()))
		return false
	}
	return true
}

func lengthKind(flex bool, width lenKind) lenKind {
	if flex {
		return lenCompact
	}
	return width
}

// uuidString is the 8-4-4-4-12 text form of a 16-byte UUID.
func uuidString(b []byte) string {
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	hex.Encode(out[9:13], b[4:6])
	hex.Encode(out[14:18], b[6:8])
	hex.Encode(out[19:23], b[8:10])
	hex.Encode(out[24:36], b[10:16])
	out[8], out[13], out[18], out[23] = '-', '-', '-', '-'
	return string(out[:])
}
