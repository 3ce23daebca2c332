package tui

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// clean makes text from the wire safe to put on a terminal: C0 and C1
// controls (ESC included), DEL, bidirectional and invisible format
// characters and invalid UTF-8 become visible escapes (\x1b, \u202e). Text
// already escaped (dissect.Display) passes through unchanged.
func clean(s string) string {
	if !needsClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeEscape(&b, `\x`, uint32(s[i]), 2)
		case r < 0x20 || r == 0x7f:
			writeEscape(&b, `\x`, uint32(r), 2)
		case r >= 0x80 && r < 0xa0, isFormatRune(r):
			writeEscape(&b, `\u`, uint32(r), 4)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsClean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			if c < 0x80 {
				return true
			}
			// Non-ASCII: decide per rune.
			for _, r := range s[i:] {
				if r == utf8.RuneError || r < 0x20 || (r >= 0x7f && r < 0xa0) || isFormatRune(r) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// isFormatRune reports the invisible characters that can reorder or hide
// text on a terminal: bidi embeddings, overrides and isolates, zero-width
// characters, the BOM and interlinear annotations.
func isFormatRune(r rune) bool {
	switch {
	case r == 0x061c, r == 0x180e, r == 0xfeff:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x2028 && r <= 0x202e, r >= 0x2060 && r <= 0x2069:
		return true
	case r >= 0xfff9 && r <= 0xfffb:
		return true
	}
	return false
}

func writeEscape(b *strings.Builder, prefix string, v uint32, digits int) {
	b.WriteString(prefix)
	h := strconv.FormatUint(uint64(v), 16)
	for i := len(h); i < digits; i++ {
		b.WriteByte('0')
	}
	b.WriteString(h)
}
