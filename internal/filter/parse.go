package filter

import (
	"strconv"
	"strings"
)

// The syntax tree. Precedence, highest first, as Wireshark 4 has it: not,
// and, xor, or; all left-associative.
type expr interface{ isExpr() }

type logicExpr struct {
	op   tokKind // tAnd, tOr, tXor
	l, r expr
}

type notExpr struct{ x expr }

// testExpr is one test of a field: its presence, or a comparison.
type testExpr struct {
	all   bool // "all F op v": every occurrence, not any
	quant *token
	field token
	op    op
	opTok token
	vals  []member
	set   *token // the "{" of a set, for messages
}

// member is a value, or a range lo..hi of a set.
type member struct {
	lo token
	hi *token
}

func (logicExpr) isExpr() {}
func (notExpr) isExpr()   {}
func (testExpr) isExpr()  {}

type parser struct {
	toks []token
	i    int
}

func parse(src string) (expr, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		if t.kind == tRParen {
			return nil, errorf(t.col, "%q closes no \"(\"", ")")
		}
		return nil, errorf(t.col, "unexpected %s; tests are joined with && or ||", show(t))
	}
	return e, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) or() (expr, error)  { return p.binary(tOr, p.xor) }
func (p *parser) xor() (expr, error) { return p.binary(tXor, p.and) }
func (p *parser) and() (expr, error) { return p.binary(tAnd, p.not) }

func (p *parser) binary(k tokKind, sub func() (expr, error)) (expr, error) {
	l, err := sub()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == k {
		p.next()
		r, err := sub()
		if err != nil {
			return nil, err
		}
		l = logicExpr{op: k, l: l, r: r}
	}
	return l, nil
}

func (p *parser) not() (expr, error) {
	if p.peek().kind == tNot {
		p.next()
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return notExpr{x}, nil
	}
	return p.primary()
}

func (p *parser) primary() (expr, error) {
	t := p.peek()
	switch t.kind {
	case tLParen:
		p.next()
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if c := p.peek(); c.kind != tRParen {
			if c.kind == tEOF {
				return nil, errorf(t.col, "%q is never closed", "(")
			}
			return nil, errorf(c.col, "unexpected %s; expected \")\"", show(c))
		}
		p.next()
		return e, nil
	case tQuant, tWord:
		return p.test()
	case tEOF:
		return nil, errorf(t.col, "the filter ends where a test should follow")
	}
	return nil, errorf(t.col, "unexpected %s; a test starts with a field name", show(t))
}

func (p *parser) test() (expr, error) {
	var x testExpr
	if t := p.peek(); t.kind == tQuant {
		p.next()
		x.quant, x.all = &t, t.all
	}
	f := p.next()
	if f.kind != tWord {
		return nil, errorf(f.col, "unexpected %s; a field name follows %q", show(f), x.quant.text)
	}
	if p.peek().kind == tLParen {
		return nil, errorf(f.col, "%s(): functions are not supported", f.text)
	}
	if i := strings.IndexByte(f.text, '['); i > 0 {
		return nil, errorf(f.col+i, "slices ([...]) are not supported")
	}
	x.field = f
	t := p.peek()
	switch t.kind {
	case tCmp:
		p.next()
		x.op, x.opTok = t.op, t
		v, err := p.value(t)
		if err != nil {
			return nil, err
		}
		x.vals = []member{{lo: v}}
	case tIn:
		p.next()
		x.op, x.opTok = opIn, t
		if err := p.set(&x); err != nil {
			return nil, err
		}
	case tNot:
		if p.toks[p.i+1].kind != tIn {
			return nil, errorf(t.col, "unexpected %s after %s; \"not\" goes before a test, or in \"not in\"", show(t), f.text)
		}
		p.next()
		x.opTok = p.next()
		x.op = opNotIn
		if err := p.set(&x); err != nil {
			return nil, err
		}
	default:
		if x.quant != nil {
			return nil, errorf(t.col, "%q needs a comparison after %s", x.quant.text, f.text)
		}
		x.op = opExists
	}
	return x, nil
}

// value reads the value after an operator.
func (p *parser) value(after token) (token, error) {
	v := p.next()
	switch v.kind {
	case tString, tRaw, tChar, tWord:
		return v, nil
	case tEOF:
		return v, errorf(v.col, "%q needs a value after it", after.text)
	}
	return v, errorf(v.col, "unexpected %s; %q needs a value after it", show(v), after.text)
}

// set reads "{a b c}" or "{a, b, 1..5}".
func (p *parser) set(x *testExpr) error {
	open := p.next()
	if open.kind != tLBrace {
		return errorf(open.col, "%q takes a set of values in braces, {a b c}", x.opTok.text)
	}
	x.set = &open
	for {
		t := p.peek()
		switch t.kind {
		case tRBrace:
			p.next()
			if len(x.vals) == 0 {
				return errorf(open.col, "the set is empty")
			}
			return nil
		case tComma:
			p.next()
			continue
		case tEOF:
			return errorf(open.col, "%q is never closed", "{")
		}
		m, err := p.member(x.opTok)
		if err != nil {
			return err
		}
		x.vals = append(x.vals, m)
	}
}

// member reads a value of a set, or a range: 1..5, 1 .. 5, "a" .. "c".
func (p *parser) member(after token) (member, error) {
	lo, err := p.value(after)
	if err != nil {
		return member{}, err
	}
	m := member{lo: lo}
	dots := false // a ".." was read and its upper end was not
	if lo.kind == tWord {
		if i := strings.Index(lo.text, ".."); i >= 0 {
			m.lo = subWord(lo, 0, i)
			if m.lo.text == "" {
				return m, errorf(lo.col, "a range needs a value before \"..\"")
			}
			if i+2 < len(lo.text) {
				hi := subWord(lo, i+2, len(lo.text))
				m.hi = &hi
			} else {
				dots = true
			}
		}
	}
	if n := p.peek(); m.hi == nil && !dots && n.kind == tWord && strings.HasPrefix(n.text, "..") {
		p.next()
		if len(n.text) > 2 {
			hi := subWord(n, 2, len(n.text))
			m.hi = &hi
		} else {
			dots = true
		}
	}
	if dots {
		hi, err := p.value(token{text: ".."})
		if err != nil {
			return m, err
		}
		m.hi = &hi
	}
	return m, nil
}

// subWord is the part [i:j] of a word token, with its column.
func subWord(t token, i, j int) token {
	s := t.text[i:j]
	return token{kind: tWord, text: s, src: s, col: t.col + len([]rune(t.text[:i])), end: t.col + len([]rune(t.text[:j]))}
}

// show names a token in a message.
func show(t token) string {
	switch t.kind {
	case tEOF:
		return "end of filter"
	case tString, tRaw, tChar:
		return escapeText(t.src)
	}
	return strconv.Quote(t.src)
}
