package filter

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind is what a token is.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tLParen         // (
	tRParen         // )
	tLBrace         // {
	tRBrace         // }
	tComma          // ,
	tAnd            // && and
	tOr             // || or
	tXor            // ^^ xor
	tNot            // ! not
	tCmp            // a comparison operator: op says which
	tIn             // in
	tQuant          // any, all
	tString         // "..." (text holds the decoded value)
	tRaw            // r"..." (text holds the value, backslashes kept)
	tChar           // 'c' (num holds the code point)
	tWord           // a field name or an unquoted literal
)

// op is a comparison.
type op uint8

const (
	opExists   op = iota
	opEq          // == eq any_eq: some occurrence equals
	opAllNe       // != ne all_ne: no occurrence equals
	opAllEq       // === all_eq: every occurrence equals
	opAnyNe       // ~= !== any_ne: some occurrence differs
	opLt          // < lt
	opLe          // <= le
	opGt          // > gt
	opGe          // >= ge
	opContains    // contains
	opMatches     // matches ~
	opIn          // in {...}
	opNotIn       // not in {...}
)

var opNames = [...]string{opExists: "", opEq: "==", opAllNe: "!=", opAllEq: "===", opAnyNe: "~=",
	opLt: "<", opLe: "<=", opGt: ">", opGe: ">=", opContains: "contains", opMatches: "matches",
	opIn: "in", opNotIn: "not in"}

func (o op) String() string { return opNames[o] }

// ordered: the operator compares by order, not by equality.
func (o op) ordered() bool { return o >= opLt && o <= opGe }

type token struct {
	kind tokKind
	op   op     // tCmp
	all  bool   // tQuant: all (else any)
	text string // as written for words; the decoded value for strings
	src  string // as written, for messages
	num  int64  // tChar
	col  int    // 1-based column of its first character, in runes
	end  int    // column just after it
}

// words are the keywords spelled with letters. Kafka's field names are
// CamelCase and kdissect's snake_case, so none of them collides.
var words = map[string]token{
	"and": {kind: tAnd}, "or": {kind: tOr}, "xor": {kind: tXor}, "not": {kind: tNot},
	"in": {kind: tIn}, "any": {kind: tQuant}, "all": {kind: tQuant, all: true},
	"eq": {kind: tCmp, op: opEq}, "any_eq": {kind: tCmp, op: opEq},
	"ne": {kind: tCmp, op: opAllNe}, "all_ne": {kind: tCmp, op: opAllNe},
	"all_eq": {kind: tCmp, op: opAllEq}, "any_ne": {kind: tCmp, op: opAnyNe},
	"lt": {kind: tCmp, op: opLt}, "le": {kind: tCmp, op: opLe},
	"gt": {kind: tCmp, op: opGt}, "ge": {kind: tCmp, op: opGe},
	"contains": {kind: tCmp, op: opContains}, "matches": {kind: tCmp, op: opMatches},
}

// symbols, longest first so that "===" is not read as "==" and "=".
var symbols = []struct {
	s string
	t token
}{
	{"===", token{kind: tCmp, op: opAllEq}}, {"!==", token{kind: tCmp, op: opAnyNe}},
	{"==", token{kind: tCmp, op: opEq}}, {"!=", token{kind: tCmp, op: opAllNe}},
	{"~=", token{kind: tCmp, op: opAnyNe}}, {"<=", token{kind: tCmp, op: opLe}},
	{">=", token{kind: tCmp, op: opGe}}, {"&&", token{kind: tAnd}}, {"||", token{kind: tOr}},
	{"^^", token{kind: tXor}},
	{"<", token{kind: tCmp, op: opLt}}, {">", token{kind: tCmp, op: opGt}},
	{"~", token{kind: tCmp, op: opMatches}}, {"!", token{kind: tNot}},
	{"(", token{kind: tLParen}}, {")", token{kind: tRParen}},
	{"{", token{kind: tLBrace}}, {"}", token{kind: tRBrace}}, {",", token{kind: tComma}},
}

// wordByte reports whether c may stand in a field name or an unquoted
// literal: names with dots, numbers, byte strings (aa:bb, aa-bb),
// addresses ([::1]:9092, 10.0.0.0/8).
func wordByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("_.:-/[]+*", c) >= 0 || c >= utf8.RuneSelf
}

// lex cuts src into tokens.
func lex(src string) ([]token, error) {
	var out []token
	col := func(i int) int { return utf8.RuneCountInString(src[:i]) + 1 }
	i := 0
	for i < len(src) {
		c := src[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		start := i
		switch {
		case c == '"' || c == 'r' && i+1 < len(src) && src[i+1] == '"':
			raw := c == 'r'
			if raw {
				i++
			}
			s, n, err := unquote(src[i:], raw)
			if err != nil {
				return nil, errorf(col(i+n), "%s", err)
			}
			i += n
			k := tString
			if raw {
				k = tRaw
			}
			out = append(out, token{kind: k, text: s, src: src[start:i], col: col(start), end: col(i)})
			continue
		case c == '\'':
			r, n, err := unquoteChar(src[i:])
			if err != nil {
				return nil, errorf(col(i), "%s", err)
			}
			i += n
			out = append(out, token{kind: tChar, num: int64(r), src: src[start:i], col: col(start), end: col(i)})
			continue
		case wordByte(c):
			for i < len(src) && wordByte(src[i]) {
				i++
			}
			w := src[start:i]
			t, ok := words[w]
			if !ok {
				t = token{kind: tWord}
			}
			t.text, t.src, t.col, t.end = w, w, col(start), col(i)
			out = append(out, t)
			continue
		}
		matched := false
		for _, s := range symbols {
			if strings.HasPrefix(src[i:], s.s) {
				t := s.t
				t.text, t.src, t.col = s.s, s.s, col(i)
				i += len(s.s)
				t.end = col(i)
				out = append(out, t)
				matched = true
				break
			}
		}
		if !matched {
			r, _ := utf8.DecodeRuneInString(src[i:])
			what := strconv.QuoteRune(r)
			switch r {
			case '=':
				return nil, errorf(col(i), "%s is not an operator (== compares)", what)
			case '&', '|':
				return nil, errorf(col(i), "%s is not an operator (&& and || join tests)", what)
			case '$', '@', '#':
				return nil, errorf(col(i), "%s (field references, raw values and layers) is not supported", what)
			}
			return nil, errorf(col(i), "unexpected %s", what)
		}
	}
	out = append(out, token{kind: tEOF, col: col(len(src)), end: col(len(src))})
	return out, nil
}

// unquote decodes the double-quoted string at the start of s (raw: r"...",
// whose backslashes stay, as Wireshark's raw strings keep them). It
// returns the value and the bytes it took; on an error, the offset of the
// problem.
func unquote(s string, raw bool) (string, int, error) {
	var b strings.Builder
	i := 1
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i + 1, nil
		case c == '\\' && raw:
			if i+1 < len(s) {
				b.WriteByte('\\')
				b.WriteByte(s[i+1])
				i += 2
				continue
			}
			i++
		case c == '\\':
			r, n, ok := escape(s[i:])
			if !ok {
				return "", i, errorText("invalid escape " + strconv.Quote(s[i:min(len(s), i+2)]))
			}
			if n == 4 {
				b.WriteByte(byte(r)) // \xNN and \NNN are bytes, as in C
			} else {
				b.WriteRune(r)
			}
			i += n
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, errorText("string not closed")
}

// unquoteChar decodes a character constant: 'a', '\n', '\x0a', '\012'.
func unquoteChar(s string) (rune, int, error) {
	if len(s) < 3 {
		return 0, 0, errorText("character constant not closed")
	}
	r, n := rune(s[1]), 1
	if s[1] == '\\' {
		var ok bool
		if r, n, ok = escape(s[1:]); !ok {
			return 0, 0, errorText("invalid escape in character constant")
		}
	} else {
		r, n = utf8.DecodeRuneInString(s[1:])
	}
	if 1+n >= len(s) || s[1+n] != '\'' {
		return 0, 0, errorText("character constant not closed")
	}
	return r, n + 2, nil
}

// escape decodes the backslash escape at the start of s.
func escape(s string) (rune, int, bool) {
	if len(s) < 2 {
		return 0, 0, false
	}
	switch c := s[1]; c {
	case '\'', '"', '\\':
		return rune(c), 2, true
	case 'a':
		return '\a', 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'v':
		return '\v', 2, true
	case 'x':
		return hexRune(s, 2, 2)
	case 'u':
		return hexRune(s, 2, 4)
	case 'U':
		return hexRune(s, 2, 8)
	case '0', '1', '2', '3', '4', '5', '6', '7':
		if len(s) < 4 {
			return 0, 0, false
		}
		v, err := strconv.ParseUint(s[1:4], 8, 8)
		if err != nil {
			return 0, 0, false
		}
		return rune(v), 4, true
	}
	return 0, 0, false
}

func hexRune(s string, at, n int) (rune, int, bool) {
	if len(s) < at+n {
		return 0, 0, false
	}
	v, err := strconv.ParseUint(s[at:at+n], 16, 32)
	if err != nil || v > utf8.MaxRune {
		return 0, 0, false
	}
	return rune(v), at + n, true
}
