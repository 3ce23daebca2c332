package dissect

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// The walker: a definition's fields at one version, arrays of them, and
// the tagged-field section of a flexible struct.

// fieldFlexible is whether f uses the compact encoding at this version.
func (d *decoder) fieldFlexible(f *Field) bool {
	if f.flexible != nil {
		return f.flexible.Has(d.v)
	}
	return d.flex
}

// present is whether f is read where it stands in its struct at the
// decoder's version: it exists there and is not one of the tagged fields,
// which come after the struct's other fields in its tagged-field section.
func (d *decoder) present(f *Field) bool {
	return f.Versions.Has(d.v) && !(d.flex && f.taggedAt(d.v))
}

// taggedAt is whether f travels as a tagged field in version v.
func (f *Field) taggedAt(v int16) bool {
	return f.Tag >= 0 && f.Tagged.Has(v) && f.Versions.Has(v)
}

// fields decodes a struct's fields at the decoder's version and, when
// flexible, its tagged-field section.
func (d *decoder) fields(fs []*Field, taggedDoc string) {
	for _, f := range fs {
		if d.failed {
			return
		}
		if d.present(f) {
			d.field(f)
		}
	}
	if d.flex && !d.failed {
		d.tagged(fs, taggedDoc)
	}
}

// field decodes f, an array or one value.
func (d *decoder) field(f *Field) {
	if f.kind == kArray {
		d.array(f)
		return
	}
	typ := f.Type
	if f.label != "" {
		typ = f.label
	}
	n := d.value(f, f.kind, f.Name, typ, f.About)
	n.enum = f.enum // only integer and string fields have one
}

// value decodes one value of kind k: field f itself, or one element of
// array f, named and typed by the caller. doc describes a struct or a
// fixed-width value; a string or bytes value always carries f's.
func (d *decoder) value(f *Field, k kind, name, typ, doc string) *Node {
	switch k {
	case kStruct:
		n, mark := d.open(name, f.sname, KindStruct)
		n.Doc = doc
		// A struct field (not an array element) that may be null starts
		// with a marker byte, as Kafka writes it: -1 null, 1 present.
		if f.kind == kStruct && f.Nullable.Has(d.v) && !d.nullMarker(n) {
			d.close(n, mark)
			return n
		}
		d.fields(f.Fields, docTaggedCount)
		d.close(n, mark)
		if f.config {
			d.redactConfig(n)
		}
		return n
	case kString, kBytes, kRecords:
		return d.prefixed(f, k == kString, name, typ)
	}
	n := d.fixed(k, name, typ)
	n.Doc = doc
	return n
}

// prefixed decodes a length-prefixed value of f: a string (int16 length
// when not compact, checked as UTF-8) or bytes (int32 length).
func (d *decoder) prefixed(f *Field, str bool, name, typ string) *Node {
	nk, width, what := KindBytes, lenInt32, "bytes"
	if str {
		nk, width, what = KindString, lenInt16, "string"
	}
	n := d.node(name, typ, nk)
	n.Doc = f.About
	flex := d.fieldFlexible(f)
	l, ok := d.length(n, flex, str)
	n.noval = true // until the whole value has been read
	if ok {
		// The raw length is worth showing even when it is bad; a length
		// that was never read is not.
		n.lenKind, n.rawLen = lengthKind(flex, width), l
		if d.prefix(n, f, l, n.Offset, what) {
			n.noval = false
			if l >= 0 {
				v := d.b[d.off : d.off+int(l) : d.off+int(l)]
				switch {
				case !str:
					n.Bytes = v
				case len(v) > 0:
					n.Str = string(v)
				}
				if str && !utf8.Valid(v) {
					d.problem(n, d.off, fmt.Sprintf("%s is not valid UTF-8", f.Name))
				}
				d.off += int(l)
				switch {
				case !str && f.saslToken:
					d.saslToken(n, d.m.Direction)
				case f.secret:
					d.hide(n, redactSecret)
				case f.embedded != embedNone:
					d.embedded(n, f.embedded)
				case f.envelope != envNone:
					d.envelopePart(n, f.envelope)
				}
			}
		}
	}
	if f.kind == kRecords {
		n.note = noteRecords
		d.records(n)
	}
	n.Size = d.off - n.Offset
	return n
}

// noteRecords marks a records field: its record batches are shown as the
// bytes they are, not dissected.
const noteRecords = "record batches, not dissected"

// nullMarker reads the byte before a nullable struct; it reports whether
// the struct's fields follow. Kafka reads any negative marker as null and
// any other as present; values other than -1 and 1 are flagged.
func (d *decoder) nullMarker(n *Node) bool {
	m := d.fixed(kInt8, "present", "int8")
	m.Doc = "marker of a nullable struct: 1 when its fields follow, -1 when it is null"
	if !m.HasValue() {
		return false
	}
	if m.Int != -1 && m.Int != 1 {
		d.problem(m, m.Offset, fmt.Sprintf("nullable struct marker is %d, not -1 or 1", m.Int))
	}
	if m.Int < 0 {
		n.Null = true
		return false
	}
	return true
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
		if d.minSize(f, f.elem) == 0 && count > 4096 {
			d.fail(ln, ln.Offset, fmt.Sprintf("%s cannot fit in the %d bytes left", plural(count, "element"), d.left()))
			d.close(n, mark)
			return
		}
	}
	elemType := f.Type[2:]
	var names []string
	if count > 0 {
		names = f.names()
	}
	for i := int64(0); i < count && !d.failed; i++ {
		if d.used >= d.nodeBudget() {
			d.overBudget()
			break
		}
		e := d.value(f, f.elem, f.elemName(names, i), elemType, "")
		e.enum = f.enum // only arrays of integers and strings have one
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

// minSize is the fewest bytes a value of kind k of field f can take: f
// itself, or one element of array f.
func (d *decoder) minSize(f *Field, k kind) int {
	switch k {
	case kStruct:
		if f.kind == kStruct && f.Nullable.Has(d.v) {
			return 1 // the marker of a null struct
		}
		return d.structMin(f.Fields)
	case kString:
		return d.lenMin(f, 2)
	case kArray, kBytes, kRecords:
		return d.lenMin(f, 4)
	}
	return fixedSize[k]
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
		if d.present(f) {
			total += d.minSize(f, f.kind)
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
		d.fail(tn, tn.Offset, fmt.Sprintf("%d tagged fields cannot fit in the %d bytes left", count, d.left()))
		d.close(tn, mark)
		return
	}
	last := int64(-1)
	for i := uint32(0); i < count && !d.failed; i++ {
		if d.used >= d.nodeBudget() {
			d.overBudget()
			break
		}
		tf, tmark := d.open("TaggedField["+strconv.FormatUint(uint64(i), 10)+"]", "tagged_field", KindInt)
		_, tag, ok1 := d.uvarintLeaf("tag", "tag number")
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
			d.problem(tf, tf.Offset, fmt.Sprintf("tag %d is not above the previous tag %d", tag, last))
		}
		last = int64(tag)
		sn, size, ok2 := d.uvarintLeaf("size", "bytes of tagged data that follow")
		if !ok2 {
			d.close(tf, tmark)
			break
		}
		if int64(size) > int64(d.left()) {
			d.short(sn, sn.Offset, fmt.Sprintf("tagged field size %d exceeds the %d bytes left", size, d.left()))
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
				d.problem(tf, d.off, fmt.Sprintf("%d bytes of tagged field %s left unread", stop-d.off, f.Name))
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

func knownTag(fs []*Field, tag int, v int16) *Field {
	for _, f := range fs {
		if f.Tag == tag && f.taggedAt(v) {
			return f
		}
	}
	return nil
}
