package tui

import (
	"encoding/hex"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/kdissect/kdissect/dissect"
)

// hexModel is the byte layout of the selected frame: 16 bytes a row, an
// offset column, hex and printable ASCII, each byte coloured by the
// category of the innermost node covering it.
type hexModel struct {
	raw    []byte
	cats   []uint8 // per byte: dissect.Category, or numCats when uncovered
	secret []bool  // per byte: a secret, drawn masked; nil when none is
	cursor int     // byte offset
	top    int     // first visible row
	// src is the data source shown: 0 the frame, k the decompressed
	// bytes of Message.Sources[k-1]; only nodes of it are painted.
	src uint16
}

const bytesPerRow = 16

func (h *hexModel) setData(raw []byte, root *dissect.Node) { h.setSource(raw, root, 0) }

// setSource shows raw, the bytes of source src of the tree root.
func (h *hexModel) setSource(raw []byte, root *dissect.Node, src uint16) {
	h.src = src
	h.raw = raw
	h.cats = make([]uint8, len(raw))
	for i := range h.cats {
		h.cats[i] = uint8(numCats)
	}
	if root != nil {
		// Pre-order: children come after their parents and paint over them.
		root.Walk(func(n *dissect.Node, _ int) {
			if n.Source != src {
				return // its offsets count in other bytes
			}
			c := uint8(n.Category)
			if int(c) >= numCats {
				c = uint8(numCats)
			}
			for i := max(n.Offset, 0); i < n.Offset+n.Size && i < len(raw); i++ {
				h.cats[i] = c
			}
		})
	}
	h.secret = nil
	for _, r := range root.SecretRanges() { // empty when the message was decoded with ShowSecrets
		if h.secret == nil {
			h.secret = make([]bool, len(raw))
		}
		for i := max(r.Offset, 0); i < r.Offset+r.Size && i < len(raw); i++ {
			h.secret[i] = true
		}
	}
	h.cursor = clamp(h.cursor, 0, max(len(raw)-1, 0))
	h.top = 0
}

func (h *hexModel) rows() int { return (len(h.raw) + bytesPerRow - 1) / bytesPerRow }

// offsetWidth is the width of the offset column: at least four digits.
func (h *hexModel) offsetWidth() int {
	return max(4, len(strconv.FormatInt(int64(max(len(h.raw)-1, 0)), 16)))
}

// width is the width of a full row with the ASCII column.
func (h *hexModel) width() int { return h.offsetWidth() + 2 + 3*bytesPerRow + 1 + 1 + bytesPerRow }

func (h *hexModel) moveTo(off, height int) {
	if len(h.raw) == 0 {
		return
	}
	h.cursor = clamp(off, 0, len(h.raw)-1)
	h.reveal(h.cursor, h.cursor+1, height)
}

// reveal scrolls so that bytes [lo, hi) are visible, or at least the first
// rows of them when they are taller than the pane.
func (h *hexModel) reveal(lo, hi, height int) {
	if height <= 0 || len(h.raw) == 0 {
		return
	}
	first, last := lo/bytesPerRow, max(hi-1, lo)/bytesPerRow
	if last-first+1 > height {
		last = first + height - 1
	}
	if first < h.top {
		h.top = first
	}
	if last >= h.top+height {
		h.top = last - height + 1
	}
	h.top = clamp(h.top, 0, max(h.rows()-height, 0))
}

func (h *hexModel) scroll(d, height int) {
	h.top = clamp(h.top+d, 0, max(h.rows()-height, 0))
}

// byteCol is the column of byte i of a row in the hex part.
func (h *hexModel) byteCol(i int) int {
	c := h.offsetWidth() + 2 + 3*i
	if i >= bytesPerRow/2 {
		c++
	}
	return c
}

func (h *hexModel) asciiCol() int { return h.offsetWidth() + 2 + 3*bytesPerRow + 1 + 1 }

// at maps a click at (x, y) inside the pane to a byte offset, or -1.
func (h *hexModel) at(x, y, w int) int {
	row := h.top + y
	if row < 0 || row >= h.rows() {
		return -1
	}
	i := -1
	for j := 0; j < bytesPerRow; j++ {
		if c := h.byteCol(j); x >= c && x < c+3 {
			i = j
		}
	}
	if a := h.asciiCol(); w >= h.width() && x >= a && x < a+bytesPerRow {
		i = x - a
	}
	if i < 0 {
		return -1
	}
	off := row*bytesPerRow + i
	if off >= len(h.raw) {
		return -1
	}
	return off
}

// view renders height rows from the scroll position; bytes in [mlo, mhi)
// are marked as the selected field, and the cursor byte is shown when
// showCursor.
func (h *hexModel) view(st *Styles, w, height, mlo, mhi int, showCursor bool) []string {
	lines := make([]string, 0, height)
	ow := h.offsetWidth()
	ascii := w >= h.width()
	for i := 0; i < height; i++ {
		row := h.top + i
		if row >= h.rows() {
			if i == 0 {
				lines = append(lines, st.Dim.Render(fit("  (no bytes)", w)))
				continue
			}
			lines = append(lines, fit("", w))
			continue
		}
		var b strings.Builder
		off := strconv.FormatInt(int64(row*bytesPerRow), 16)
		b.WriteString(st.Offset.Render(strings.Repeat("0", ow-len(off)) + off))
		b.WriteString("  ")
		base := row * bytesPerRow
		var asc strings.Builder
		for j := 0; j < bytesPerRow; j++ {
			if j == bytesPerRow/2 {
				b.WriteByte(' ')
			}
			k := base + j
			if k >= len(h.raw) {
				b.WriteString("   ")
				asc.WriteByte(' ')
				continue
			}
			c := h.raw[k]
			style := h.style(st, k, mlo, mhi, showCursor)
			if h.secret != nil && h.secret[k] {
				b.WriteString(style.Render("**"))
				b.WriteByte(' ')
				asc.WriteString(style.Render("*"))
				continue
			}
			b.WriteString(style.Render(hexByte(c)))
			b.WriteByte(' ')
			asc.WriteString(style.Render(string(printable(c))))
		}
		if ascii {
			b.WriteByte(' ')
			b.WriteString(asc.String())
		}
		lines = append(lines, fit(b.String(), w))
	}
	return lines
}

func (h *hexModel) style(st *Styles, k, mlo, mhi int, showCursor bool) lipgloss.Style {
	switch {
	case showCursor && k == h.cursor:
		return st.HexCursor
	case k >= mlo && k < mhi:
		return st.CatMark[h.cats[k]]
	default:
		return st.Cat[h.cats[k]]
	}
}

func hexByte(c byte) string { return hex.EncodeToString([]byte{c}) }

func printable(c byte) byte {
	if c >= 0x20 && c < 0x7f {
		return c
	}
	return '.'
}

// legend is the colour legend of the byte layout.
func legend(st *Styles) string {
	var parts []string
	for _, c := range dissect.Categories() {
		parts = append(parts, st.Cat[c].Render("■ "+c.String()))
	}
	return strings.Join(parts, " ")
}
