package dissect

import (
	"cmp"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// AppendText renders the tree in the reference format: one node a line,
// `NAME TYPE = VALUE [0xOFFSET, SIZEB] DOC`, children drawn with "+-- ".
// A node's problems follow it as "!! " lines at its children's depth.
func AppendText(dst []byte, n *Node) []byte {
	dst = appendLabel(dst, n)
	dst = append(dst, '\n')
	var prefix [64]byte // grows past 16 levels
	return appendChildren(dst, n, prefix[:0])
}

// appendChildren draws n's problems and children below it. prefix is the
// tree drawing of n's depth; a child's prefix is written after it in the
// same buffer, which leaves prefix itself intact, so that drawing a tree
// allocates nothing per node.
func appendChildren(dst []byte, n *Node, prefix []byte) []byte {
	for _, p := range n.Problems {
		dst = append(dst, prefix...)
		if len(n.Children) > 0 {
			dst = append(dst, "|   "...)
		} else {
			dst = append(dst, "    "...)
		}
		dst = appendProblem(dst, p)
		dst = append(dst, '\n')
	}
	for i, c := range n.Children {
		dst = append(dst, prefix...)
		dst = append(dst, "+-- "...)
		dst = appendLabel(dst, c)
		dst = append(dst, '\n')
		next := append(prefix, "|   "...)
		if i == len(n.Children)-1 {
			next = append(prefix, "    "...)
		}
		dst = appendChildren(dst, c, next)
	}
	return dst
}

func appendProblem(dst []byte, p Problem) []byte {
	dst = append(dst, "!! "...)
	dst = appendHexOffset(dst, p.Offset)
	dst = append(dst, ": "...)
	return appendEscape(dst, p.Message) // messages name fields of loaded definitions
}

// appendLabel renders one node's line without tree drawing: its head and
// its doc.
func appendLabel(dst []byte, n *Node) []byte {
	dst = AppendHead(dst, n)
	if n.Doc != "" {
		dst = append(dst, ' ')
		dst = appendEscape(dst, n.Doc)
	}
	return dst
}

// AppendHead renders the part of a node's line that identifies it,
// `NAME TYPE = VALUE [0xOFFSET, SIZEB]`, wire text escaped: AppendLabel
// without the doc, as the explorer's tree shows it.
func AppendHead(dst []byte, n *Node) []byte {
	dst = appendEscape(dst, n.Name)
	if n.Type != "" {
		dst = append(dst, ' ')
		dst = appendEscape(dst, n.Type) // types come from loaded definitions
	}
	if n.HasValue() {
		dst = append(dst, " = "...)
		dst = n.AppendDisplay(dst)
	}
	dst = append(dst, ' ')
	return appendSourceSpan(dst, int(n.Source), n.Offset, n.Size)
}

// AppendSpan renders a node's place, `[0xOFFSET, SIZEB]`, the offset in at
// least four hex digits.
func AppendSpan(dst []byte, off, size int) []byte {
	dst = append(dst, '[')
	dst = appendHexOffset(dst, off)
	dst = append(dst, ", "...)
	dst = strconv.AppendInt(dst, int64(size), 10)
	return append(dst, "B]"...)
}

// appendHexOffset writes 0x and at least four hex digits.
func appendHexOffset(dst []byte, off int) []byte {
	dst = append(dst, "0x"...)
	return appendHex4(dst, off)
}

// appendHex4 writes off in hex, at least four digits.
func appendHex4(dst []byte, off int) []byte {
	var tmp [20]byte
	h := strconv.AppendInt(tmp[:0], int64(off), 16)
	for i := len(h); i < 4; i++ {
		dst = append(dst, '0')
	}
	return append(dst, h...)
}

// AppendHexDump renders raw 16 bytes a row, as the reference's byte layout:
// offset column, hex, printable ASCII, and the names of the fields whose
// bytes the row holds.
// Nodes of decompressed sources are left out: AppendLayout dumps them.
func AppendHexDump(dst []byte, raw []byte, tree *Node) []byte {
	var leaves [][]*Node
	if tree != nil {
		leaves = sourceLeaves(tree, 0)
	}
	return appendHexDump(dst, raw, tree, leaves)
}

// appendHexDump is AppendHexDump with the leaves of each source listed.
func appendHexDump(dst []byte, raw []byte, tree *Node, leaves [][]*Node) []byte {
	var ls []*Node
	if leaves != nil {
		ls = leaves[0]
	}
	mask := secretMask(tree, len(raw)) // secret bytes read "**" in hex and "*" in ASCII
	dst = appendHexRows(dst, raw, ls, mask)
	if tree != nil && tree.Size > len(raw) {
		dst = append(dst, "....  "...)
		dst = strconv.AppendInt(dst, int64(tree.Size-len(raw)), 10)
		dst = append(dst, " more bytes of this frame were not kept\n"...)
	}
	return dst
}

// appendHexRows writes raw's rows, each with the names of the leaves
// that hold its bytes, in the leaves' order; mask (nil for none) marks the
// bytes to hide.
func appendHexRows(dst []byte, raw []byte, leaves []*Node, mask []bool) []byte {
	// A sweep over the leaves by offset keeps the ones on the current row,
	// so a frame of a million fields is not a million scans of them.
	byOff := make([]int32, len(leaves))
	for i := range byOff {
		byOff[i] = int32(i)
	}
	slices.SortStableFunc(byOff, func(a, b int32) int { return cmp.Compare(leaves[a].Offset, leaves[b].Offset) })
	var on []int32 // leaves begun before the row's end, in the leaves' order
	next := 0
	for row := 0; row < len(raw); row += 16 {
		end := min(row+16, len(raw))
		dst = appendHex4(dst, row)
		dst = append(dst, "  "...)
		for i := row; i < row+16; i++ {
			if i == row+8 {
				dst = append(dst, ' ')
			}
			switch {
			case i < end && mask != nil && mask[i]:
				dst = append(dst, "** "...)
			case i < end:
				dst = append(hex.AppendEncode(dst, raw[i:i+1]), ' ')
			default:
				dst = append(dst, "   "...)
			}
		}
		dst = append(dst, ' ')
		for i := row; i < row+16; i++ {
			switch {
			case i >= end:
				dst = append(dst, ' ')
			case mask != nil && mask[i]:
				dst = append(dst, '*')
			case raw[i] >= 0x20 && raw[i] < 0x7f:
				dst = append(dst, raw[i])
			default:
				dst = append(dst, '.')
			}
		}
		for ; next < len(byOff) && leaves[byOff[next]].Offset < end; next++ {
			i, _ := slices.BinarySearch(on, byOff[next])
			on = slices.Insert(on, i, byOff[next])
		}
		sep := "  "
		kept := on[:0]
		for _, i := range on {
			n := leaves[i]
			if n.Offset+n.Size <= row {
				continue // ended before this row, so before every later one
			}
			kept = append(kept, i)
			dst = append(dst, sep...)
			dst = appendEscape(dst, n.Name)
			sep = ", "
		}
		on = kept
		dst = append(dst, '\n')
	}
	return dst
}

// quote renders wire text as a double-quoted string a terminal can show
// safely: control characters, escape sequences, bidi overrides, invisible
// format characters and invalid UTF-8 come out as Go escapes.
func quote(s string) string {
	if safeASCII(s) && !strings.ContainsAny(s, `"\`) {
		return `"` + s + `"`
	}
	return strconv.Quote(s)
}

func appendQuote(dst []byte, s string) []byte {
	if safeASCII(s) && !strings.ContainsAny(s, `"\`) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	return strconv.AppendQuote(dst, s)
}

// Escape is the one policy for showing wire text on a terminal, used by
// every rendering of this package and by the explorer: printable ASCII and
// printable Unicode (strconv.IsPrint) pass, invalid UTF-8 becomes \xNN and
// everything else, C0 and C1 controls, DEL, bidi overrides and invisible
// format characters included, becomes its Go escape (\n, \x1b, \u202e).
// It is Quote without the quotes and leaves its own output unchanged, so
// text escaped once may be escaped again.
func Escape(s string) string {
	if safeASCII(s) {
		return s
	}
	return string(appendEscape(nil, s))
}

func appendEscape(dst []byte, s string) []byte {
	if safeASCII(s) {
		return append(dst, s...)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = hex.AppendEncode(append(dst, `\x`...), []byte{s[i]})
		case r < 0x80 && s[i] >= 0x20 && s[i] < 0x7f:
			dst = append(dst, s[i])
		case r >= 0x80 && strconv.IsPrint(r):
			dst = append(dst, s[i:i+size]...)
		default:
			q := strconv.AppendQuoteRune(nil, r)
			dst = append(dst, q[1:len(q)-1]...)
		}
		i += size
	}
	return dst
}

func safeASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
