package dissect

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"
)

// The headers are defined like any message, with the two oddities Kafka's
// RequestHeader.json has: client_id arrived in v1 and is never compact.
var (
	requestHeaderFields = []*Field{
		{Name: "request_api_key", Type: "int16", kind: kInt16, Versions: Versions{0, math.MaxInt16}, Tag: -1, enum: apiEnum,
			About: "numeric id of the API being invoked"},
		{Name: "request_api_version", Type: "int16", kind: kInt16, Versions: Versions{0, math.MaxInt16}, Tag: -1,
			About: "version of the API being invoked"},
		{Name: "correlation_id", Type: "int32", kind: kInt32, Versions: Versions{0, math.MaxInt16}, Tag: -1,
			About: "echoed back by the broker in the response"},
		{Name: "client_id", Type: "string", kind: kString, Versions: Versions{1, math.MaxInt16}, Nullable: Versions{1, math.MaxInt16},
			Tag: -1, flexible: &noVersions, label: "nullable_string",
			About: "always a non-flexible int16-prefixed string"},
	}
	responseHeaderFields = []*Field{
		{Name: "correlation_id", Type: "int32", kind: kInt32, Versions: Versions{0, math.MaxInt16}, Tag: -1,
			About: "matches the correlation_id of the request"},
	}
)

const (
	docFrame       = "length-delimited framing"
	docSize        = "number of bytes that follow"
	docTaggedCount = "number of tagged fields in this struct"
	docTaggedHead  = "number of tagged fields in the header"
)

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
	d.b, d.off, d.end, d.v, d.flex, d.failed, d.cat, d.used, d.usedPtrs = b, 0, len(b), 0, false, false, 0, 0, 0
	d.notKept, d.cut, d.covered = 0, false, false
	d.probs = d.probs[:0]
	d.m = Message{}
	d.stack = d.stack0[:0]
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
	*n = Node{Name: name, Type: typ, Kind: k, Offset: d.off, Category: d.cat}
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

func (d *decoder) problem(n *Node, off int, msg string) {
	p := Problem{Offset: off, Message: msg}
	n.Problems = append(n.Problems, p)
	d.probs = append(d.probs, p)
}

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
	d.short(n, d.off, "truncated: needs "+strconv.Itoa(k)+" bytes, "+strconv.Itoa(max(d.left(), 0))+" left")
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

// fieldFlexible is whether f uses the compact encoding at this version.
func (d *decoder) fieldFlexible(f *Field) bool {
	if f.flexible != nil {
		return f.flexible.Has(d.v)
	}
	return d.flex
}

// fields decodes a struct's fields at the decoder's version and, when
// flexible, its tagged-field section.
func (d *decoder) fields(fs []*Field, taggedDoc string) {
	for _, f := range fs {
		if d.failed {
			return
		}
		if !f.Versions.Has(d.v) || (d.flex && f.Tag >= 0 && f.Tagged.Has(d.v)) {
			continue
		}
		d.field(f)
	}
	if d.flex && !d.failed {
		d.tagged(fs, taggedDoc)
	}
}

func (d *decoder) field(f *Field) {
	typ := f.Type
	if f.label != "" {
		typ = f.label
	}
	switch f.kind {
	case kArray:
		d.array(f)
	case kStruct:
		n, mark := d.open(f.Name, f.sname, KindStruct)
		n.Doc = f.About
		d.fields(f.Fields, docTaggedCount)
		d.close(n, mark)
	case kString:
		d.str(f, f.Name, typ)
	case kBytes, kRecords:
		d.bytesField(f, f.Name, typ)
	default:
		n := d.fixed(f.kind, f.Name, typ)
		n.Doc = f.About
		n.enum = f.enum
	}
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
			d.problem(n, d.off, "bool is "+strconv.Itoa(int(b[0]))+", not 0 or 1")
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
			d.problem(n, lenOff, f.Name+" is null but not nullable in v"+strconv.Itoa(int(d.v)))
		}
	case l < -1:
		d.fail(n, lenOff, what+" length "+strconv.FormatInt(l, 10)+" is negative")
		return false
	case l > int64(d.left()+d.notKept):
		d.fail(n, lenOff, what+" length "+strconv.FormatInt(l, 10)+" exceeds the "+strconv.Itoa(d.left()+d.notKept)+" bytes left")
		return false
	case l > int64(d.left()):
		d.short(n, lenOff, what+" length "+strconv.FormatInt(l, 10)+" exceeds the "+strconv.Itoa(d.left())+" bytes left")
		return false
	}
	return true
}

func (d *decoder) str(f *Field, name, typ string) {
	n := d.node(name, typ, KindString)
	n.Doc = f.About
	flex := d.fieldFlexible(f)
	l, ok := d.length(n, flex, true)
	n.noval = true // until the whole value has been read
	if ok {
		// The raw length is worth showing even when it is bad; a length
		// that was never read is not.
		n.lenKind, n.rawLen = lengthKind(flex, lenInt16), l
		if d.prefix(n, f, l, n.Offset, "string") {
			n.noval = false
			if l >= 0 {
				s := d.b[d.off : d.off+int(l)]
				if len(s) > 0 {
					n.Str = string(s)
				}
				if !utf8.Valid(s) {
					d.problem(n, d.off, f.Name+" is not valid UTF-8")
				}
				d.off += int(l)
			}
		}
	}
	n.Size = d.off - n.Offset
}

func (d *decoder) bytesField(f *Field, name, typ string) {
	n := d.node(name, typ, KindBytes)
	n.Doc = f.About
	flex := d.fieldFlexible(f)
	l, ok := d.length(n, flex, false)
	n.noval = true // until the whole value has been read
	if ok {
		n.lenKind, n.rawLen = lengthKind(flex, lenInt32), l
		if d.prefix(n, f, l, n.Offset, "bytes") {
			n.noval = false
			if l >= 0 {
				n.Bytes = d.b[d.off : d.off+int(l) : d.off+int(l)]
				d.off += int(l)
				if f.saslToken {
					d.saslToken(n, d.m.Direction)
				}
			}
		}
	}
	n.Size = d.off - n.Offset
}

func lengthKind(flex bool, width lenKind) lenKind {
	if flex {
		return lenCompact
	}
	return width
}

func (d *decoder) array(f *Field) {
	n, mark := d.open(f.Name, f.Type, KindArray)
	n.Doc = f.About
	flex := d.fieldFlexible(f)
	var ln *Node
	if flex {
		ln = d.node("length", "uvarint", KindInt)
	} else {
		ln = d.node("length", "int32", KindInt)
	}
	count, ok := d.length(ln, flex, false)
	ln.Size = d.off - ln.Offset
	if !ok {
		ln.noval, n.noval = true, true
		d.close(n, mark)
		return
	}
	if flex {
		ln.Int = count + 1
		ln.note = "compact, n+1"
	} else {
		ln.Int = count
	}
	ln.Doc = countDoc(count)
	if !d.prefix(n, f, count, ln.Offset, "array") {
		n.noval = true // the count is unusable; the length child shows it raw
		d.close(n, mark)
		return
	}
	if count >= 0 {
		n.Int = count
		// prefix bounded the count by the bytes left, so elements of at
		// least one byte cannot loop for long; the elements that are there
		// are decoded, as a partial tree shows more than a refusal. Only
		// elements that may take no bytes at all need a cap of their own.
		if d.minSize(f) == 0 && count > 4096 {
			d.fail(ln, ln.Offset, plural(count, "element")+" cannot fit in the "+strconv.Itoa(d.left())+" bytes left")
			d.close(n, mark)
			return
		}
	}
	elemType := f.Type[2:]
	for i := int64(0); i < count && !d.failed; i++ {
		if f.elem == kStruct {
			e, emark := d.open(f.elemName(i), f.sname, KindStruct)
			d.fields(f.Fields, docTaggedCount)
			d.close(e, emark)
			continue
		}
		name := f.elemName(i)
		switch f.elem {
		case kString:
			d.str(f, name, elemType)
		case kBytes, kRecords:
			d.bytesField(f, name, elemType)
		default:
			d.fixed(f.elem, name, elemType)
		}
	}
	d.close(n, mark)
}

func countDoc(count int64) string {
	switch count {
	case -1:
		return "null array"
	case 1:
		return "1 element follows"
	}
	return strconv.FormatInt(count, 10) + " elements follow"
}

// minSize is the fewest bytes one element of array f can take.
func (d *decoder) minSize(f *Field) int {
	switch f.elem {
	case kStruct:
		return d.structMin(f.Fields)
	case kString:
		return d.lenMin(f, 2)
	case kBytes, kRecords:
		return d.lenMin(f, 4)
	}
	return fixedSize[f.elem]
}

func (d *decoder) lenMin(f *Field, width int) int {
	if d.fieldFlexible(f) {
		return 1
	}
	return width
}

func (d *decoder) structMin(fs []*Field) int {
	total := 0
	if d.flex {
		total = 1 // the tagged-field count
	}
	for _, f := range fs {
		if !f.Versions.Has(d.v) || (d.flex && f.Tag >= 0 && f.Tagged.Has(d.v)) {
			continue
		}
		switch f.kind {
		case kStruct:
			total += d.structMin(f.Fields)
		case kArray:
			total += d.lenMin(f, 4)
		case kString:
			total += d.lenMin(f, 2)
		case kBytes, kRecords:
			total += d.lenMin(f, 4)
		default:
			total += fixedSize[f.kind]
		}
	}
	return total
}

// tagged decodes a flexible struct's tagged-field section: a count, then
// for each field its tag, its size and its bytes. Tags the definition
// knows are decoded as that field; the others are shown as raw data.
func (d *decoder) tagged(fs []*Field, doc string) {
	saved := d.cat
	d.cat = CatTaggedFields
	defer func() { d.cat = saved }()
	tn, mark := d.open("tagged_fields", "uvarint", KindInt)
	tn.Doc = doc
	count, ok := d.uvarint(tn)
	tn.Int = int64(count)
	if !ok {
		tn.noval = true
		d.close(tn, mark)
		return
	}
	if int64(count) > int64((d.left()+d.notKept)/2) { // each tagged field takes at least a tag and a size byte
		d.fail(tn, tn.Offset, strconv.FormatUint(uint64(count), 10)+" tagged fields cannot fit in the "+strconv.Itoa(d.left())+" bytes left")
		d.close(tn, mark)
		return
	}
	last := int64(-1)
	for i := uint32(0); i < count && !d.failed; i++ {
		tf, tmark := d.open("TaggedField["+strconv.FormatUint(uint64(i), 10)+"]", "tagged_field", KindInt)
		tag, ok1 := d.uvarintLeafDoc("tag", "tag number")
		if !ok1 {
			tf.noval = true
			d.close(tf, tmark)
			break
		}
		tf.Int = int64(tag)
		known := knownTag(fs, int(tag), d.v)
		if known != nil {
			tf.note = known.Name
			tf.Doc = known.About
		} else {
			tf.note = "unknown tag"
			tf.Doc = "a tag this definition does not know; its bytes are shown raw"
		}
		if int64(tag) <= last {
			d.problem(tf, tf.Offset, "tag "+strconv.FormatUint(uint64(tag), 10)+" is not above the previous tag "+strconv.FormatInt(last, 10))
		}
		last = int64(tag)
		sn, size, ok2 := d.uvarintLeaf("size", "bytes of tagged data that follow")
		if !ok2 {
			d.close(tf, tmark)
			break
		}
		if int64(size) > int64(d.left()) {
			d.short(sn, sn.Offset, "tagged field size "+strconv.FormatUint(uint64(size), 10)+" exceeds the "+strconv.Itoa(d.left())+" bytes left")
			d.close(tf, tmark)
			break
		}
		stop := d.off + int(size)
		if f := known; f != nil {
			end := d.end
			d.end = stop
			d.field(f)
			d.end = end
			if !d.failed && d.off < stop {
				d.problem(tf, d.off, strconv.Itoa(stop-d.off)+" bytes of tagged field "+f.Name+" left unread")
				d.off = stop
			}
		} else {
			dn := d.node("data", "bytes", KindBytes)
			dn.Bytes = d.b[d.off:stop:stop]
			dn.Size = int(size)
			d.off = stop
		}
		d.close(tf, tmark)
	}
	d.close(tn, mark)
}

func (d *decoder) uvarintLeafDoc(name, doc string) (uint32, bool) {
	_, v, ok := d.uvarintLeaf(name, doc)
	return v, ok
}

func knownTag(fs []*Field, tag int, v int16) *Field {
	for _, f := range fs {
		if f.Tag == tag && f.Tagged.Has(v) && f.Versions.Has(v) {
			return f
		}
	}
	return nil
}

func uuidString(b []byte) string {
	const h = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, h[c>>4], h[c&15])
	}
	return string(out)
}

// frame decodes the size prefix and returns the frame node; it sets the
// region end to the frame's end.
func (d *decoder) frame() *Node {
	d.cat = CatFrame
	fn, mark := d.open("Frame", "", KindGroup)
	fn.Doc = docFrame
	sn := d.fixed(kInt32, "size", "int32")
	sn.Doc = docSize
	d.close(fn, mark)
	if d.failed {
		return fn
	}
	have := int64(len(d.b) - 4)
	switch size := sn.Int; {
	case size < 0:
		d.fail(sn, 0, "size "+strconv.FormatInt(size, 10)+" is negative")
	case size > have && d.notKept > 0:
		d.notKept = int(size - have) // the size prefix is authoritative
	case size > have:
		d.problem(sn, 0, "frame is truncated: size says "+strconv.FormatInt(size, 10)+" bytes follow, "+strconv.FormatInt(have, 10)+" present")
	default:
		d.end = 4 + int(size)
		d.notKept = 0
	}
	return fn
}

// header decodes a request or response header of version hv with fields fs.
func (d *decoder) header(name, doc string, hv int16, fs []*Field, flexFrom int16) *Node {
	d.cat = CatHeader
	hn, mark := d.open(name, versioned(&headerTypes, "v", hv), KindGroup)
	hn.Doc = doc
	v, flex := d.v, d.flex
	d.v, d.flex = hv, hv >= flexFrom
	d.fields(fs, docTaggedHead)
	d.v, d.flex = v, flex
	d.close(hn, mark)
	return hn
}

// requestHeader decodes a request header. Its version depends on its first
// two fields (API key and version), so those are read before the rest; a
// frame cut anywhere in the header still shows the fields it holds, and
// nothing is read beyond the frame's end.
func (d *decoder) requestHeader(r *Registry, m *Message) (keyKnown bool) {
	d.cat = CatHeader
	hn, mark := d.open("RequestHeader", "", KindGroup)
	hn.Doc = "common request header"
	defer d.close(hn, mark)
	d.v, d.flex = 0, false
	d.field(requestHeaderFields[0])
	if d.failed {
		return false
	}
	m.APIKey = int16(d.stack[len(d.stack)-1].Int)
	m.APIName = APIName(m.APIKey)
	d.field(requestHeaderFields[1])
	if d.failed {
		return true
	}
	m.APIVersion = int16(d.stack[len(d.stack)-1].Int)
	flex := r.isFlexible(m.APIKey, m.APIVersion)
	hv := requestHeaderVersion(m.APIKey, m.APIVersion, flex)
	hn.Type = versioned(&headerTypes, "v", hv)
	d.v, d.flex = hv, hv >= 2
	d.fields(requestHeaderFields[2:], docTaggedHead)
	if c := d.openChild(mark, "correlation_id"); c != nil && c.HasValue() {
		m.CorrelationID = int32(c.Int)
	}
	return true
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

// body decodes the message body with def, or shows it as opaque bytes
// when there is no definition for this API and version.
func (d *decoder) body(def *Def, apiName string, cat Category) {
	d.cat = cat
	if def == nil || !def.Valid.Has(d.v) {
		n := d.node("body", "bytes", KindBytes)
		n.Size = max(d.left(), 0)
		n.note = "not dissected"
		n.Doc = "message body: kdissect has no definition for " + apiName + " v" + strconv.Itoa(int(d.v))
		d.off += n.Size
		if d.end == len(d.b) {
			n.Size += d.notKept // the body's bytes that were not kept are still its bytes
			d.covered = true
		}
		if cat == CatRequestBody && d.m.APIKey == saslAuthenticateKey {
			// Without a definition the token cannot be read, and it may be a
			// PLAIN password: the whole body stays hidden.
			d.hide(n, redactSecret)
		}
		return
	}
	bn, mark := d.open(def.Name, "struct", KindStruct)
	bn.noval = true
	bn.Doc = versioned(&bodyDocs, "message body, version ", d.v)
	d.fields(def.Fields, docTaggedCount)
	d.close(bn, mark)
}

// trailing flags bytes before to that nothing accounted for.
func (d *decoder) trailing(to int, what string) {
	if d.failed || d.off >= to {
		return
	}
	n := d.node("trailing", "bytes", KindBytes)
	n.Bytes = d.b[d.off:to:to]
	n.Size = len(n.Bytes)
	n.Doc = what
	d.problem(n, d.off, strconv.Itoa(n.Size)+" "+what)
	d.off = to
}

func (d *decoder) request(r *Registry) *Message {
	m := &d.m
	m.Direction = Request
	root, mark := d.open("", "", KindGroup)
	d.frame()
	var def *Def
	if !d.failed && d.requestHeader(r, m) {
		def = r.req[m.APIKey]
		if !d.failed {
			d.checkAPI(root, 4, 6, m.APIKey, m.APIVersion, def)
			d.v, d.flex = m.APIVersion, r.isFlexible(m.APIKey, m.APIVersion)
			d.body(def, m.APIName, CatRequestBody)
		}
	}
	if m.APIName == "" {
		m.APIName = "Unknown"
	}
	return d.finish(m, root, mark, def, "Request")
}

func (d *decoder) response(r *Registry, key, ver int16) *Message {
	m := &d.m
	m.Direction, m.APIKey, m.APIVersion, m.APIName = Response, key, ver, APIName(key)
	root, mark := d.open("", "", KindGroup)
	d.frame()
	if !d.failed {
		d.v, d.flex = ver, r.isFlexible(key, ver)
		hv := responseHeaderVersion(key, d.flex)
		hn := d.header("ResponseHeader", "common response header", hv, responseHeaderFields, 1)
		if c := hn.Child("correlation_id"); c != nil && c.HasValue() {
			m.CorrelationID = int32(c.Int)
		}
		if !d.failed {
			// A response does not carry its API key or version: a problem
			// with them points at the body they leave undissected.
			d.checkAPI(root, d.off, d.off, key, ver, r.resp[key])
			d.v, d.flex = ver, r.isFlexible(key, ver)
			d.body(r.resp[key], m.APIName, CatResponseBody)
		}
	}
	return d.finish(m, root, mark, r.resp[key], "Response")
}

// checkAPI records problems with the API key and version themselves, at
// keyOff and verOff.
func (d *decoder) checkAPI(root *Node, keyOff, verOff int, key, ver int16, def *Def) {
	switch {
	case key < 0 || key > MaxAPIKey:
		d.problem(root, keyOff, "unknown API key "+strconv.Itoa(int(key)))
	case def != nil && !def.Valid.Has(ver):
		d.problem(root, verOff, def.Name+" v"+strconv.Itoa(int(ver))+" is not a known version (known: "+def.Valid.String()+")")
	case ver < 0:
		d.problem(root, verOff, "version "+strconv.Itoa(int(ver))+" is negative")
	case def == nil && ver > MaxVersion(key):
		d.problem(root, verOff, APIName(key)+" v"+strconv.Itoa(int(ver))+" is newer than kdissect knows (up to v"+strconv.Itoa(int(MaxVersion(key)))+")")
	}
}

func (d *decoder) finish(m *Message, root *Node, mark int, def *Def, dir string) *Message {
	d.trailing(d.end, "bytes after the end of the message body")
	d.trailing(len(d.b), "bytes after the end of the frame its size gives")
	if d.notKept > 0 && !d.covered {
		d.off = len(d.b)
		n := d.node("not_kept", "bytes", KindBytes)
		n.Size = d.notKept
		n.Doc = "the rest of the frame, which the capture did not keep: its API is not being shown in full"
	}
	d.close(root, mark)
	root.Size = len(d.b) + d.notKept
	if def != nil {
		root.Name = def.Name
	} else {
		root.Name = m.APIName + dir
	}
	root.Type = versioned(&rootTypes, "message v", m.APIVersion)
	m.Tree = root
	m.Problems = d.probs
	m.Summary = summarize(m)
	return m
}

// Strings that name a version are made once for the common versions
// rather than on every decode.
var bodyDocs, rootTypes, headerTypes [32]string

func init() {
	for v := range int16(len(bodyDocs)) {
		bodyDocs[v] = versionString("message body, version ", v)
		rootTypes[v] = versionString("message v", v)
		headerTypes[v] = versionString("v", v)
	}
}

func versioned(table *[32]string, prefix string, v int16) string {
	if v >= 0 && int(v) < len(table) {
		return table[v]
	}
	return versionString(prefix, v)
}

func versionString(prefix string, v int16) string { return prefix + strconv.Itoa(int(v)) }
