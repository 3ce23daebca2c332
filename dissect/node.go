package dissect

import (
	"encoding/hex"
	"strconv"
)

// Category says what kind of region a node covers; it drives the colour
// legend of the byte layout (the reference's legend).
type Category uint8

const (
	CatFrame Category = iota
	CatHeader
	CatRequestBody
	CatResponseBody
	CatTaggedFields
	CatRecordBatch // a record batch's header (or a MessageSet wrapper)
	CatRecord      // a record and its fields
)

var categoryNames = [...]string{"frame", "rpc header", "request body", "response body", "tagged_fields", "record batch", "record"}

func (c Category) String() string {
	if int(c) < len(categoryNames) {
		return categoryNames[c]
	}
	return "unknown"
}

// Categories lists every category in legend order.
func Categories() []Category {
	return []Category{CatFrame, CatHeader, CatRequestBody, CatResponseBody, CatTaggedFields, CatRecordBatch, CatRecord}
}

// Kind is the shape of a node's value.
type Kind uint8

const (
	KindGroup  Kind = iota // no value: Frame, headers, message root, body struct
	KindInt                // signed or unsigned integer, bool as 0/1
	KindFloat              // float64
	KindString             // string; Null for a null string
	KindBytes              // raw bytes; Null for null bytes
	KindArray              // array; Int holds the element count, Null for a null array
	KindStruct             // one element of a struct array, or a struct field
	KindUUID               // 16 bytes in the usual 8-4-4-4-12 hex form
	KindBool               // Int is 0 or 1 (other bytes are flagged)
)

// Problem is something wrong found at a byte offset of the frame.
type Problem struct {
	Offset  int    `json:"offset"`
	Message string `json:"message"`
}

// Node is one line of the field tree.
//
// Offsets are from the first byte of the frame (its size prefix), or of
// the decompressed bytes of Message.Sources[Source-1]. The raw
// value lives in Int, Float, Str or Bytes depending on Kind; Display and
// Value derive the text and JSON forms from it, so decoding never formats.
type Node struct {
	Name     string
	Type     string // as the text tree shows it: int16, string, []AclCreation, v2, message v3
	Offset   int
	Size     int
	Doc      string
	Children []*Node
	Problems []Problem

	Int   int64
	Float float64
	Str   string
	Bytes []byte

	// The small fields sit together so that a node, of which a decode
	// makes many, stays compact.
	Kind     Kind
	Category Category
	Null     bool
	noval    bool    // a struct or group, or a value never read: no "= value"
	lenKind  lenKind // how rawLen is noted after the value
	redact   redaction
	Source   uint16 // 0: Offset counts in the frame; k: in Message.Sources[k-1]
	rawLen   int64  // a string's or bytes' length prefix as read
	enum     *Enum  // names the integer value
	note     string // shown in parentheses after the value: "compact, n+1"
}

// lenKind says how a length prefix was encoded, for the note after a
// string or bytes value: "compact, len+1=6", "int16 len=5". The note is
// formatted when displayed, not when decoded.
type lenKind uint8

const (
	lenNone lenKind = iota
	lenCompact
	lenInt16
	lenInt32
	lenVarint // a record's zigzag varint
)

// HasValue reports whether the text line prints "= value".
func (n *Node) HasValue() bool { return !n.noval && n.Kind != KindGroup }

// EnumName is the symbolic name of an enum-like integer, or "".
func (n *Node) EnumName() string {
	if n.enum == nil || n.Kind != KindInt || n.enum.strs != nil {
		return ""
	}
	return n.enum.Name(n.Int)
}

// Value is the raw decoded value for JSON: int64, float64, string, nil for a
// null string, bytes or array, the element count for an array, or nil for
// groups and structs. Bytes are lowercase hex.
func (n *Node) Value() any {
	if n.noval {
		return nil // a struct, or a value the frame was cut before
	}
	if n.redact != 0 {
		return string(n.appendRedacted(nil))
	}
	switch n.Kind {
	case KindInt:
		return n.Int
	case KindBool:
		return n.Int != 0
	case KindFloat:
		return n.Float
	case KindString, KindUUID:
		if n.Null {
			return nil
		}
		return n.Str
	case KindBytes:
		if n.Null || n.Bytes == nil {
			return nil
		}
		return hexString(n.Bytes)
	case KindArray:
		if n.Null {
			return nil
		}
		return n.Int
	}
	return nil
}

// Display is the text form of the value as the tree prints it after "= ",
// with wire text escaped so it is safe for a terminal.
func (n *Node) Display() string { return string(n.AppendDisplay(nil)) }

// AppendDisplay appends Display's text to dst without building a string,
// for renderers that walk whole trees.
func (n *Node) AppendDisplay(b []byte) []byte {
	kind := n.Kind
	if n.redact != 0 {
		b = n.appendRedacted(b)
		kind = KindGroup // the value is not shown; the notes after it are
	}
	switch kind {
	case KindInt:
		b = strconv.AppendInt(b, n.Int, 10)
		if n.enum != nil {
			b = append(b, " ("...)
			b = append(b, n.enum.Name(n.Int)...)
			b = append(b, ')')
		}
	case KindBool:
		b = strconv.AppendBool(b, n.Int != 0)
	case KindFloat:
		b = strconv.AppendFloat(b, n.Float, 'g', -1, 64)
	case KindString:
		if n.Null {
			b = append(b, "null"...)
		} else {
			b = appendQuote(b, n.Str)
			if n.enum != nil && n.enum.strs != nil && !n.enum.KnownString(n.Str) {
				b = append(b, " (unknown "...)
				b = append(b, n.enum.title...)
				b = append(b, ')')
			}
		}
	case KindUUID:
		b = append(b, n.Str...)
	case KindBytes:
		switch {
		case n.Null:
			b = append(b, "null"...)
		case n.Bytes == nil:
			b = strconv.AppendInt(b, int64(n.Size), 10)
			b = append(b, " bytes"...)
		case len(n.Bytes) == 0:
			b = append(b, "(empty)"...)
		case n.Category == CatRecord:
			b = appendRecordBytes(b, n.Bytes) // keys and values: text when printable
		default:
			const max = 32
			b = append(b, "0x"...)
			b = hex.AppendEncode(b, n.Bytes[:min(len(n.Bytes), max)])
			if len(n.Bytes) > max {
				b = append(b, "… ("...)
				b = strconv.AppendInt(b, int64(len(n.Bytes)), 10)
				b = append(b, " bytes)"...)
			}
		}
	case KindArray:
		if n.Null {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, n.Int, 10)
			if n.Int == 1 {
				b = append(b, " element"...)
			} else {
				b = append(b, " elements"...)
			}
		}
	case KindStruct:
		if n.Null {
			b = append(b, "null"...)
		} else {
			b = append(b, "struct"...)
		}
	}
	b = n.appendLenNote(b)
	if n.note != "" {
		b = append(b, " ("...)
		b = appendEscape(b, n.note) // may name a field of a loaded definition
		b = append(b, ')')
	}
	return b
}

// appendLenNote writes how a string's or bytes' length was encoded.
func (n *Node) appendLenNote(b []byte) []byte {
	switch n.lenKind {
	case lenCompact:
		b = append(b, " (compact, len+1="...)
		b = strconv.AppendInt(b, n.rawLen+1, 10)
		b = append(b, ')')
	case lenInt16:
		b = append(b, " (int16 len="...)
		b = strconv.AppendInt(b, n.rawLen, 10)
		b = append(b, ')')
	case lenInt32:
		b = append(b, " (int32 len="...)
		b = strconv.AppendInt(b, n.rawLen, 10)
		b = append(b, ')')
	case lenVarint:
		b = append(b, " (varint len="...)
		b = strconv.AppendInt(b, n.rawLen, 10)
		b = append(b, ')')
	}
	return b
}

// Child returns the first child with the given name, or nil.
func (n *Node) Child(name string) *Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Find follows a path of child names from n, or returns nil.
func (n *Node) Find(path ...string) *Node {
	for _, p := range path {
		n = n.Child(p)
		if n == nil {
			return nil
		}
	}
	return n
}

// At returns the path (root first) to the innermost node whose bytes
// cover off of the frame, or nil when no node does; AtSource finds bytes
// of a decompressed source.
func (n *Node) At(off int) []*Node {
	if n == nil || off < n.Offset || off >= n.Offset+n.Size {
		return nil
	}
	path := []*Node{n}
	for cur := n; ; {
		var next *Node
		for _, c := range cur.Children {
			if c.Size > 0 && c.Source == 0 && off >= c.Offset && off < c.Offset+c.Size {
				next = c
			}
		}
		if next == nil {
			return path
		}
		path = append(path, next)
		cur = next
	}
}

// Walk calls fn for n and every descendant, depth first, with its depth.
func (n *Node) Walk(fn func(n *Node, depth int)) { n.walk(fn, 0) }

func (n *Node) walk(fn func(*Node, int), d int) {
	fn(n, d)
	for _, c := range n.Children {
		c.walk(fn, d+1)
	}
}

func hexString(b []byte) string { return hex.EncodeToString(b) }
