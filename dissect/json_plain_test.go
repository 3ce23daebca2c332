package dissect

import (
	"encoding/hex"
	"strconv"
	"testing"
)

// TestPlainJSON8 checks the word-at-a-time test against the byte rule on
// every byte value at every position of a word of plain text.
func TestPlainJSON8(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			plain := c >= 0x20 && c != '"' && c != '\\' && c < 0x7f
			if got := plainJSON8(string(w)); got && !plain {
				t.Errorf("byte %#x at %d passes", c, pos)
			} else if !got && plain {
				t.Errorf("plain byte %#x at %d does not pass", c, pos)
			}
		}
	}
}

// TestAppendQuoteBytesIsQuote: for the printable text it is given,
// appendQuoteBytes writes what strconv.AppendQuote does.
func TestAppendQuoteBytesIsQuote(t *testing.T) {
	for _, s := range []string{``, `"`, `\`, `a"b\c`, `""\\`, `{"id":1,"x":"\\n"}`, `héllo "wörld" \ 日本`, `\"`, `"\`} {
		if !printableUTF8([]byte(s)) {
			t.Fatalf("%q is not printable", s)
		}
		if got, want := string(appendQuoteBytes(nil, []byte(s))), strconv.Quote(s); got != want {
			t.Errorf("%s: got %s, want %s", s, got, want)
		}
	}
}

func TestAppendHexFast(t *testing.T) {
	v := make([]byte, 600)
	for i := range v {
		v[i] = byte(i * 7)
	}
	for n := range v {
		if got, want := string(appendHexFast([]byte("x"), v[:n])), "x"+hex.EncodeToString(v[:n]); got != want {
			t.Fatalf("%d bytes: %s", n, got)
		}
	}
}
