// Package dissect turns the bytes of one Kafka frame into an annotated field
// tree. It does no I/O: bytes in, tree out. Messages are described by
// definitions in Kafka's own JSON message format and walked by one
// interpreter (see schema.go and decode.go).
package dissect

import (
	"strconv"
	"strings"
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
)

var categoryNames = [...]string{"frame", "rpc header", "request body", "response body", "tagged_fields"}

func (c Category) String() string {
	if int(c) < len(categoryNames) {
		return categoryNames[c]
	}
	return "unknown"
}

// Categories lists every category in legend order.
func Categories() []Category {
	return []Category{CatFrame, CatHeader, CatRequestBody, CatResponseBody, CatTaggedFields}
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
// Offsets are from the first byte of the frame (its size prefix). The raw
// value lives in Int, Float, Str or Bytes depending on Kind; Display and
// Value derive the text and JSON forms from it, so decoding never formats.
type Node struct {
	Name     string
	Type     string // as the text tree shows it: int16, string, []AclCreation, v2, message v3
	Kind     Kind
	Offset   int
	Size     int
	Doc      string
	Category Category
	Children []*Node
	Problems []Problem

	Int   int64
	Float float64
	Str   string
	Bytes []byte
	Null  bool

	enum  *Enum  // names the integer value
	note  string // shown in parentheses after the value: "compact, n+1", "int16 len=0"
	noval bool   // a struct or group whose text line has no "= value"
}

// HasValue reports whether the text line prints "= value".
func (n *Node) HasValue() bool { return !n.noval && n.Kind != KindGroup }

// EnumName is the symbolic name of an enum-like integer, or "".
func (n *Node) EnumName() string {
	if n.enum == nil || n.Kind != KindInt {
		return ""
	}
	return n.enum.Name(n.Int)
}

// Value is the raw decoded value for JSON: int64, float64, string, nil for a
// null string, bytes or array, the element count for an array, or nil for
// groups and structs. Bytes are lowercase hex.
func (n *Node) Value() any {
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
func (n *Node) Display() string {
	var b strings.Builder
	n.appendDisplay(&b)
	return b.String()
}

func (n *Node) appendDisplay(b *strings.Builder) {
	switch n.Kind {
	case KindInt:
		var tmp [24]byte
		b.Write(strconv.AppendInt(tmp[:0], n.Int, 10))
		if n.enum != nil {
			b.WriteString(" (")
			b.WriteString(n.enum.Name(n.Int))
			b.WriteByte(')')
		}
	case KindBool:
		b.WriteString(strconv.FormatBool(n.Int != 0))
	case KindFloat:
		b.WriteString(strconv.FormatFloat(n.Float, 'g', -1, 64))
	case KindString:
		if n.Null {
			b.WriteString("null")
		} else {
			b.WriteString(Quote(n.Str))
		}
	case KindUUID:
		b.WriteString(n.Str)
	case KindBytes:
		switch {
		case n.Null:
			b.WriteString("null")
		case n.Bytes == nil:
			b.WriteString(strconv.Itoa(n.Size))
			b.WriteString(" bytes")
		default:
			const max = 32
			if len(n.Bytes) == 0 {
				b.WriteString("(empty)")
			} else if len(n.Bytes) <= max {
				b.WriteString("0x")
				b.WriteString(hexString(n.Bytes))
			} else {
				b.WriteString("0x")
				b.WriteString(hexString(n.Bytes[:max]))
				b.WriteString("… (")
				b.WriteString(strconv.Itoa(len(n.Bytes)))
				b.WriteString(" bytes)")
			}
		}
	case KindArray:
		if n.Null {
			b.WriteString("null")
		} else {
			b.WriteString(strconv.FormatInt(n.Int, 10))
			if n.Int == 1 {
				b.WriteString(" element")
			} else {
				b.WriteString(" elements")
			}
		}
	case KindStruct:
		b.WriteString("struct")
	}
	if n.note != "" {
		b.WriteString(" (")
		b.WriteString(n.note)
		b.WriteByte(')')
	}
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
// cover off, or nil when no node does.
func (n *Node) At(off int) []*Node {
	if n == nil || off < n.Offset || off >= n.Offset+n.Size {
		return nil
	}
	path := []*Node{n}
	for cur := n; ; {
		var next *Node
		for _, c := range cur.Children {
			if c.Size > 0 && off >= c.Offset && off < c.Offset+c.Size {
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

const hexDigits = "0123456789abcdef"

func hexString(b []byte) string {
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i] = hexDigits[c>>4]
		out[2*i+1] = hexDigits[c&15]
	}
	return string(out)
}
