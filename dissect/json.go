package dissect

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// AppendJSON renders a message as one JSON object (the contract in
// README.md): api_key, api_name, api_version, direction, correlation_id,
// summary, problems and tree.
func AppendJSON(dst []byte, m *Message) []byte {
	dst = append(dst, '{')
	dst = AppendJSONFields(dst, m)
	return append(dst, '}')
}

// AppendJSONFields writes the message's members without the enclosing
// braces, so that a caller can add members of its own to the object.
func AppendJSONFields(dst []byte, m *Message) []byte {
	dst = append(dst, `"api_key":`...)
	dst = strconv.AppendInt(dst, int64(m.APIKey), 10)
	dst = append(dst, `,"api_name":`...)
	dst = AppendJSONString(dst, m.APIName)
	dst = append(dst, `,"api_version":`...)
	dst = strconv.AppendInt(dst, int64(m.APIVersion), 10)
	dst = append(dst, `,"direction":"`...)
	dst = append(dst, m.Direction.String()...)
	dst = append(dst, `","correlation_id":`...)
	dst = strconv.AppendInt(dst, int64(m.CorrelationID), 10)
	dst = append(dst, `,"summary":`...)
	dst = AppendJSONString(dst, m.Summary)
	dst = append(dst, `,"problems":`...)
	dst = appendProblems(dst, m.Problems)
	dst = append(dst, `,"tree":`...)
	dst = appendNodeJSON(dst, m.Tree)
	return appendSourcesJSON(dst, m)
}

func appendProblems(dst []byte, ps []Problem) []byte {
	dst = append(dst, '[')
	for i, p := range ps {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"offset":`...)
		dst = strconv.AppendInt(dst, int64(p.Offset), 10)
		dst = append(dst, `,"message":`...)
		dst = AppendJSONString(dst, p.Message)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// bigJSON is the length past which a message's JSON grows by doubling.
const bigJSON = 4 << 20

func appendNodeJSON(dst []byte, n *Node) []byte {
	t := treeJSONs.Get().(*treeJSON)
	dst = t.node(dst, n, 0, 0)
	treeJSONs.Put(t)
	return dst
}

// treeJSONs keeps memos from one tree for the next: the messages of a
// capture are mostly of a few kinds, each with the same nodes at the
// same places, which a fresh memo would look up again in every message.
var treeJSONs = sync.Pool{New: func() any { return new(treeJSON) }}

func (t *treeJSON) node(dst []byte, n *Node, depth, index int) []byte {
	if n == nil {
		return append(dst, "null"...)
	}
	dst, p := appendNodeHead(dst, n, &t.memo[depth&15][index&15])
	at := len(dst)
	dst = appendValueJSON(dst, n)
	switch {
	case !n.HasValue():
		dst = append(dst, `,"display":"","offset":`...)
	case plainDisplay(n):
		// The display is the value's digits (or true, false) as
		// written: copied, not formatted again.
		end := len(dst)
		dst = append(dst, `,"display":"`...)
		dst = append(dst, dst[at:end]...)
		dst = append(dst, `","offset":`...)
	case n.Kind == KindBytes && n.Category == CatRecord && n.redact == 0 && n.note == "" && !n.Null && len(n.Bytes) > 0:
		dst = append(dst, `,"display":"`...)
		dst = appendRecordBytesJSON(dst, n.Bytes)
		dst = n.appendLenNote(dst)
		dst = append(dst, `","offset":`...)
	default:
		dst = append(dst, `,"display":`...)
		dst = appendJSONDisplay(dst, n)
		dst = append(dst, `,"offset":`...)
	}
	dst = appendJSONInt(dst, int64(n.Offset))
	dst = append(dst, `,"size":`...)
	dst = appendJSONInt(dst, int64(n.Size))
	if n.Source != 0 { // absent for the frame, as in every message without compressed records
		dst = append(dst, `,"source":`...)
		dst = appendJSONInt(dst, int64(n.Source))
	}
	if len(n.Children) == 0 && len(n.Problems) == 0 {
		return append(dst, p.leaf...) // most nodes: one copy to the end
	}
	dst = append(dst, p.tail...)
	for i, c := range n.Children {
		if cap(dst)-len(dst) < 1<<12 && len(dst) >= bigJSON {
			// append grows a big slice by a quarter, so a tree of
			// hundreds of megabytes would be copied some twenty times
			// into fresh pages; doubling copies it about once.
			dst = slices.Grow(dst, len(dst))
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = t.node(dst, c, depth+1, i)
	}
	dst = append(dst, ']')
	if len(n.Problems) > 0 {
		dst = append(dst, `,"problems":`...)
		dst = appendProblems(dst, n.Problems)
	}
	return append(dst, '}')
}

// plainDisplay is whether n's display is its JSON value's text: an
// integer without an enum name or a note, or a bool.
func plainDisplay(n *Node) bool {
	return n.redact == 0 && n.lenKind == lenNone && n.note == "" &&
		(n.Kind == KindInt && n.enum == nil || n.Kind == KindBool)
}

// nodeJSONParts is the JSON of a node's members that come from its
// definition: everything before its value, and from its doc to its
// children. Names, types and docs are the same few strings in every
// record of a capture, and escaping them again for every node was much of
// the NDJSON's cost. An element's name (Record[123]) is left out and
// written apart: a batch of ten thousand records has ten thousand names,
// and no more types and docs than one of ten.
type nodeJSONParts struct {
	name, typ, doc string
	cat            Category
	named          bool   // head has the name; else the caller writes it
	head           string // {"name":…,"type":…,"value": (without the name: ,"type":…)
	tail           string // ,"doc":…,"category":"…","children":[
	leaf           string // tail and the end of a node without children: ]}
}

// fits is whether p holds n's parts, told by the strings' addresses.
func (p *nodeJSONParts) fits(n *Node, named bool) bool {
	return p != nil && p.named == named && p.cat == n.Category && sameString(p.typ, n.Type) && sameString(p.doc, n.Doc) &&
		(!named || sameString(p.name, n.Name))
}

// nodeParts caches the parts by a hash of the strings' contents: the
// entry found is used only when its strings are equal to the node's (a
// comparison that the same constant passes by its pointer), so a
// collision or a name built at decode costs a rebuild, never a wrong
// line. Entries are immutable and swapped atomically, as workers render
// at once.
var nodeParts [1 << partsBits]atomic.Pointer[nodeJSONParts]

// partsBits sizes the cache for the few hundred names, types and docs of
// a busy capture, with room enough that three seldom share a pair of slots.
const partsBits = 13

// treeJSON renders one tree. Its memo holds the parts last used at each
// depth and child position (both cut to 16): the nodes of a record are
// those of the record before it, so their parts are found by comparing
// the strings' addresses, without a hash or a look at the shared cache.
// Two a position, the newer first: where nodes take turns (a record's
// header count says "no headers follow" in most records and "1 element
// follows" in some), each finds its own.
type treeJSON struct {
	memo [16][16][2]*nodeJSONParts
}

// sameString is whether a and b are the same string in memory, which
// implies equal contents (not the converse).
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// appendNodeHead writes n's members up to its value, and returns the
// parts for the rest; slot is n's entry in the memo.
func appendNodeHead(dst []byte, n *Node, slot *[2]*nodeJSONParts) ([]byte, *nodeJSONParts) {
	// An element's name ends in its index.
	named := len(n.Name) == 0 || n.Name[len(n.Name)-1] != ']'
	p := slot[0]
	if !p.fits(n, named) {
		if p = slot[1]; !p.fits(n, named) {
			p = nodeJSONPartsOf(n, named)
		}
		slot[0], slot[1] = p, slot[0]
	}
	if !named {
		dst = append(dst, `{"name":`...)
		dst = AppendJSONString(dst, n.Name)
	}
	return append(dst, p.head...), p
}

func nodeJSONPartsOf(n *Node, named bool) *nodeJSONParts {
	name := n.Name
	if !named {
		name = ""
	}
	h := partsKey(name)*0x9e3779b1 ^ partsKey(n.Type)*0x85ebca77 ^ partsKey(n.Doc)*0xc2b2ae3d ^ uint32(n.Category)*0x27d4eb2f
	h ^= h >> 15
	h = (h * 0x2c1b3c6d) >> (32 - partsBits)
	// Two slots a key, the newest first: a pair of keys that collide does
	// not evict each other.
	s0, s1 := &nodeParts[h], &nodeParts[h^1]
	if p := s0.Load(); p != nil && p.name == name && p.typ == n.Type && p.doc == n.Doc && p.cat == n.Category && p.named == named {
		return p
	}
	if p := s1.Load(); p != nil && p.name == name && p.typ == n.Type && p.doc == n.Doc && p.cat == n.Category && p.named == named {
		return p
	}
	b := make([]byte, 0, 64+len(name)+len(n.Type)+len(n.Doc))
	if named {
		b = append(b, `{"name":`...)
		b = AppendJSONString(b, name)
	}
	b = append(b, `,"type":`...)
	b = AppendJSONString(b, n.Type)
	b = append(b, `,"value":`...)
	head := len(b)
	b = append(b, `,"doc":`...)
	b = AppendJSONString(b, n.Doc)
	b = append(b, `,"category":"`...)
	b = append(b, n.Category.String()...)
	b = append(b, `","children":[]}`...)
	s := string(b)
	p := &nodeJSONParts{name: name, typ: n.Type, doc: n.Doc, cat: n.Category, named: named, head: s[:head], tail: s[head : len(s)-2], leaf: s[head:]}
	s1.Store(s0.Load())
	s0.Store(p)
	return p
}

// partsKey sums a string's length and the bytes that tell names apart:
// the first, and the last three.
func partsKey(s string) uint32 {
	k := uint32(len(s))
	switch {
	case len(s) >= 3:
		k ^= uint32(s[0])<<6 ^ uint32(s[len(s)-1])<<12 ^ uint32(s[len(s)-2])<<18 ^ uint32(s[len(s)-3])<<24
	case len(s) > 0:
		k ^= uint32(s[0])<<6 ^ uint32(s[len(s)-1])<<12
	}
	return k
}

// appendJSONInt is strconv.AppendInt for the offsets, sizes and values of
// every node: small non-negative numbers, written from a table of digit
// pairs straight into dst, without a buffer and a copy from it.
func appendJSONInt(dst []byte, v int64) []byte {
	if v < 0 || v >= 1e8 {
		return strconv.AppendInt(dst, v, 10)
	}
	if v < 10 {
		return append(dst, byte('0'+v))
	}
	u := uint32(v)
	w := 2
	for p := uint32(100); w < 8 && u >= p; p *= 10 {
		w++
	}
	n := len(dst)
	dst = slices.Grow(dst, w)[:n+w]
	out := dst[n:]
	i := w
	for u >= 100 {
		q := u / 100
		d := (u - q*100) * 2
		i -= 2
		out[i], out[i+1] = digitPairs[d], digitPairs[d+1]
		u = q
	}
	if u >= 10 {
		out[0], out[1] = digitPairs[u*2], digitPairs[u*2+1]
	} else {
		out[0] = byte('0' + u)
	}
	return dst
}

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

// appendValueJSON mirrors Node.Value without boxing.
func appendValueJSON(dst []byte, n *Node) []byte {
	if n.noval {
		return append(dst, "null"...)
	}
	if n.redact != 0 {
		dst = append(dst, '"')
		dst = n.appendRedacted(dst)
		return append(dst, '"')
	}
	switch n.Kind {
	case KindInt:
		return appendJSONInt(dst, n.Int)
	case KindBool:
		return strconv.AppendBool(dst, n.Int != 0)
	case KindFloat:
		if math.IsInf(n.Float, 0) || math.IsNaN(n.Float) {
			return AppendJSONString(dst, strconv.FormatFloat(n.Float, 'g', -1, 64)) // JSON has no NaN or Inf
		}
		return strconv.AppendFloat(dst, n.Float, 'g', -1, 64)
	case KindString, KindUUID:
		if !n.Null {
			return AppendJSONString(dst, n.Str)
		}
	case KindBytes:
		if !n.Null && n.Bytes != nil {
			dst = append(dst, '"')
			dst = appendHexFast(dst, n.Bytes)
			return append(dst, '"')
		}
	case KindArray:
		if !n.Null {
			return appendJSONInt(dst, n.Int)
		}
	}
	return append(dst, "null"...)
}

// hexPairs holds each byte's two lowercase hex digits as one
// little-endian word: bytes values (records, their keys and values) are
// much of the NDJSON of a Produce or Fetch, and one store a byte writes
// them three times as fast as encoding/hex.
var hexPairs = func() (t [256]uint16) {
	const digits = "0123456789abcdef"
	for i := range t {
		t[i] = uint16(digits[i>>4]) | uint16(digits[i&15])<<8
	}
	return t
}()

func appendHexFast(dst, v []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 2*len(v))[:n+2*len(v)] // every byte is written below: no clearing first
	out := dst[n:]
	// Eight bytes a turn, the slices shortened as they go, so that the
	// compiler proves the stores in bounds: a third faster than a turn of
	// four indexed from the start.
	for len(v) >= 8 && len(out) >= 16 {
		binary.LittleEndian.PutUint64(out, uint64(hexPairs[v[0]])|uint64(hexPairs[v[1]])<<16|
			uint64(hexPairs[v[2]])<<32|uint64(hexPairs[v[3]])<<48)
		binary.LittleEndian.PutUint64(out[8:], uint64(hexPairs[v[4]])|uint64(hexPairs[v[5]])<<16|
			uint64(hexPairs[v[6]])<<32|uint64(hexPairs[v[7]])<<48)
		v, out = v[8:], out[16:]
	}
	for i, c := range v {
		binary.LittleEndian.PutUint16(out[2*i:], hexPairs[c])
	}
	return dst
}

// AppendJSONString writes s as a JSON string. Invalid UTF-8 becomes
// U+FFFD so the output is always valid JSON. Control characters (C0, DEL,
// C1), format characters (Unicode category Cf: bidi overrides and
// isolates, zero-width characters, the BOM) and the JavaScript line
// separators are written as \uXXXX: the parsed value is unchanged, but
// the line itself, shown by cat, tail -f or a log viewer, never hands
// them to a terminal, where they would reorder or hide text.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plainJSON8(s[i:i+8]) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x7f {
			i++
			continue
		}
		if c < 0x80 {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = hex.AppendEncode(append(dst, `\u00`...), []byte{c})
			}
			i++
			start = i
			continue
		}
		// Most letters beyond ASCII are in blocks without a control or
		// format character: U+00C0-U+05FF (lead bytes C3-D7) and
		// U+3000-U+CFFF, U+E000-U+EFFF (E3-EC, EE). Their well-formed
		// sequences pass without decoding.
		if c >= 0xc3 && c <= 0xd7 && i+1 < len(s) && s[i+1]&0xc0 == 0x80 {
			i += 2
			continue
		}
		if (c >= 0xe3 && c <= 0xec || c == 0xee) && i+2 < len(s) && s[i+1]&0xc0 == 0x80 && s[i+2]&0xc0 == 0x80 {
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if jsonEscapesRune(r) {
			dst = append(dst, s[start:i]...)
			dst = appendJSONRuneEscape(dst, r)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainJSON8 reports whether the 8 bytes of s are printable ASCII that a
// JSON string holds as they are (no control, quote, backslash, DEL or
// byte past ASCII), testing them at once as one word: most wire text and
// every name and description of ours is such. A false answer may be
// wrong (a carry from a byte that does need care); the byte loop decides.
func plainJSON8(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	below := (x - 0x20*ones) &^ x // a byte below 0x20
	high := x | (x + ones)        // a byte of 0x7f or more
	q, b := x^('"'*ones), x^('\\'*ones)
	quote := (q - ones) &^ q  // a '"' (a zero byte of q)
	bslash := (b - ones) &^ b // a '\\'
	return (below|high|quote|bslash)&highs == 0
}

// jsonEscapesRune reports whether a non-ASCII rune is written as an
// escape: C1 controls, format characters and U+2028/U+2029. The BMP's
// format characters sit in a few blocks (U+00AD, U+0600-U+08FF,
// U+180E-U+206F, U+FEFF-U+FFFB): letters elsewhere, the usual wire text
// beyond ASCII, are let through without a table lookup.
func jsonEscapesRune(r rune) bool {
	switch {
	case r < 0xa0:
		return true // C1 controls (U+0080-U+009F)
	case r < 0x600:
		return r == 0xad
	case r < 0x900, r >= 0x180e && r < 0x2070, r >= 0xfeff:
		return r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r)
	}
	return false
}

// appendJSONRuneEscape writes r as \uXXXX, as a UTF-16 surrogate pair
// above the BMP (the tag characters U+E0001-U+E007F are format characters).
func appendJSONRuneEscape(dst []byte, r rune) []byte {
	const hexDigits = "0123456789abcdef"
	u := func(dst []byte, v rune) []byte {
		return append(dst, '\\', 'u', hexDigits[v>>12&0xf], hexDigits[v>>8&0xf], hexDigits[v>>4&0xf], hexDigits[v&0xf])
	}
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		return u(u(dst, hi), lo)
	}
	return u(dst, r)
}

var quoteByte, backslashByte = []byte{'"'}, []byte{'\\'}

// appendJSONDisplay writes n's Display as a JSON string. Display text is
// already escaped for a terminal (valid UTF-8, no control characters), so
// only its quotes and backslashes need JSON escapes: the text is written
// in place and, when it holds any, spread out from its end, so that no
// display of any length is copied through a buffer of its own.
func appendJSONDisplay(dst []byte, n *Node) []byte {
	dst = append(dst, '"')
	start := len(dst)
	dst = n.AppendDisplay(dst)
	extra := bytes.Count(dst[start:], quoteByte) + bytes.Count(dst[start:], backslashByte)
	if extra == 0 {
		return append(dst, '"')
	}
	end := len(dst)
	dst = append(dst, make([]byte, extra)...)
	for i, j := end-1, len(dst)-1; extra > 0; i-- {
		c := dst[i]
		dst[j] = c
		j--
		if c == '"' || c == '\\' {
			dst[j] = '\\'
			j--
			extra--
		}
	}
	return append(dst, '"')
}
