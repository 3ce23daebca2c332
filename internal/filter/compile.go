package filter

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/netip"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"

	"github.com/kdissect/kdissect/dissect"
)

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

func quote(s string) string { return strconv.Quote(s) }

// pred is a compiled test.
type pred func(e *env) bool

type compiler struct {
	s    *schema
	body bool
	// decoded: a field is read that only the decoded message has (a body
	// field, or a record field made from the body).
	decoded bool
	// problems: a message's problems are read (malformed, problems.*),
	// which may lie inside a batch's records.
	problems bool
}

func (c *compiler) expr(x expr) (pred, error) {
	switch x := x.(type) {
	case logicExpr:
		l, err := c.expr(x.l)
		if err != nil {
			return nil, err
		}
		r, err := c.expr(x.r)
		if err != nil {
			return nil, err
		}
		switch x.op {
		case tAnd:
			return func(e *env) bool { return l(e) && r(e) }, nil
		case tOr:
			return func(e *env) bool { return l(e) || r(e) }, nil
		}
		return func(e *env) bool { return l(e) != r(e) }, nil
	case notExpr:
		p, err := c.expr(x.x)
		if err != nil {
			return nil, err
		}
		return func(e *env) bool { return !p(e) }, nil
	case testExpr:
		return c.test(x)
	}
	panic("filter: unknown expression")
}

// lit is a literal as the field it is compared with reads it: every
// reading of it that one of the field's types allows.
type lit struct {
	tok      token
	hasInt   bool
	i        int64
	name     string // a number's name, compared with the occurrence's
	hasFloat bool
	f        float64
	hasBool  bool
	b        bool
	hasStr   bool
	s        string
	hasBytes bool
	by       []byte
	hasTime  bool
	t        int64
	addr     addrLit
	re       *regexp.Regexp
	hi       *lit // the end of a range lo..hi
}

type addrLit struct {
	kind uint8 // 0 none, 1 address and port, 2 address, 3 prefix
	ap   netip.AddrPort
	ip   netip.Addr
	pfx  netip.Prefix
}

func (c *compiler) test(x testExpr) (pred, error) {
	fl, err := c.s.resolve(x.field)
	if err != nil {
		return nil, err
	}
	if fl.rec == nil {
		c.body = true
	}
	if fl.rec == nil || fromBody(fl.rec.id) {
		c.decoded = true
	}
	if fl.rec != nil && (fl.rec.id == fMalformed || fl.rec.id == fProblemMessage || fl.rec.id == fProblemOffset) {
		c.problems = true
	}
	if x.op == opExists {
		if fl.flag() {
			return func(e *env) bool {
				for _, v := range e.values(fl) {
					if v.Kind == KindBool && v.Int != 0 {
						return true
					}
				}
				return false
			}, nil
		}
		return func(e *env) bool { return len(e.values(fl)) > 0 }, nil
	}
	if err := checkOp(fl, x); err != nil {
		return nil, err
	}
	lits := make([]*lit, 0, len(x.vals))
	for _, m := range x.vals {
		l, err := c.literal(fl, x.op, m.lo)
		if err != nil {
			return nil, err
		}
		if m.hi != nil {
			if l.hi, err = c.literal(fl, opLe, *m.hi); err != nil {
				return nil, err
			}
			if !fl.types.has(tyInt|tyFloat|tyTime|tyString) || l.name != "" || l.hi.name != "" {
				return nil, errorf(m.lo.col, "a range needs numbers, strings or times; %s is %s", fl.name, fl.types.describe())
			}
		}
		lits = append(lits, l)
	}
	if x.quant != nil && !x.all {
		// "any" turns the all-occurrence operators into their any forms.
		switch x.op {
		case opAllNe:
			x.op = opAnyNe
		case opAllEq:
			x.op = opEq
		}
	}
	test := occurrenceTest(x.op, lits)
	all := x.all
	switch x.op {
	case opAllNe, opNotIn:
		// !(a == b): no occurrence equals, also when there is none. "all"
		// says the same.
		return func(e *env) bool {
			for i := range e.values(fl) {
				if test(&e.buf[i]) {
					return false
				}
			}
			return true
		}, nil
	case opAllEq:
		all = true
	case opAnyNe:
		if all {
			// all F ~= x: every occurrence differs.
			return func(e *env) bool {
				n := 0
				for i := range e.values(fl) {
					v := &e.buf[i]
					if comparable(v, lits[0]) {
						if test(v) {
							return false
						}
						n++
					}
				}
				return n > 0
			}, nil
		}
		return func(e *env) bool {
			for i := range e.values(fl) {
				v := &e.buf[i]
				if comparable(v, lits[0]) && !test(v) {
					return true
				}
			}
			return false
		}, nil
	}
	if all {
		return func(e *env) bool {
			n := 0
			for i := range e.values(fl) {
				v := &e.buf[i]
				if v.Kind == KindNull {
					continue
				}
				if !test(v) {
					return false
				}
				n++
			}
			return n > 0
		}, nil
	}
	return func(e *env) bool {
		for i := range e.values(fl) {
			if test(&e.buf[i]) {
				return true
			}
		}
		return false
	}, nil
}

// occurrenceTest is what one occurrence must satisfy: equal one of the
// literals (==, !=, ===, ~=, in, not in), be in its order, contain it,
// match it.
func occurrenceTest(o op, lits []*lit) func(v *Value) bool {
	l := lits[0]
	switch o {
	case opEq, opAllNe, opAllEq, opAnyNe:
		return func(v *Value) bool { return equal(v, l) }
	case opIn, opNotIn:
		return func(v *Value) bool {
			for _, l := range lits {
				if l.hi != nil {
					if a, ok := order(v, l); ok && a >= 0 {
						if b, ok := order(v, l.hi); ok && b <= 0 {
							return true
						}
					}
				} else if equal(v, l) {
					return true
				}
			}
			return false
		}
	case opLt:
		return func(v *Value) bool { c, ok := order(v, l); return ok && c < 0 }
	case opLe:
		return func(v *Value) bool { c, ok := order(v, l); return ok && c <= 0 }
	case opGt:
		return func(v *Value) bool { c, ok := order(v, l); return ok && c > 0 }
	case opGe:
		return func(v *Value) bool { c, ok := order(v, l); return ok && c >= 0 }
	case opContains:
		return func(v *Value) bool { return contains(v, l) }
	case opMatches:
		return func(v *Value) bool {
			if v.Kind == KindNull || v.Kind == KindInt && v.Str == "" {
				return false // a number is matched by its name
			}
			if v.Kind == KindBytes {
				return l.re.Match(v.Bytes)
			}
			return l.re.MatchString(v.text())
		}
	}
	panic("filter: unknown operator")
}

// comparable reports whether an occurrence has a value the literal can
// be compared with: a null, or a string where the literal is only a
// number, neither equals nor differs.
func comparable(v *Value, l *lit) bool {
	switch v.Kind {
	case KindInt:
		return l.hasInt || l.hasFloat || l.name != ""
	case KindFloat:
		return l.hasFloat
	case KindBool:
		return l.hasBool
	case KindString:
		return l.hasStr
	case KindBytes:
		return l.hasBytes
	case KindTime:
		return l.hasTime
	case KindAddr:
		return l.addr.kind != 0
	}
	return false
}

func equal(v *Value, l *lit) bool {
	switch v.Kind {
	case KindInt:
		switch {
		case l.hasInt:
			return v.Int == l.i
		case l.hasFloat:
			return float64(v.Int) == l.f
		case l.name != "":
			return v.Str == l.name
		}
	case KindFloat:
		return l.hasFloat && v.Float == l.f
	case KindBool:
		return l.hasBool && (v.Int != 0) == l.b
	case KindString:
		return l.hasStr && v.Str == l.s
	case KindBytes:
		return l.hasBytes && bytes.Equal(v.Bytes, l.by)
	case KindTime:
		return l.hasTime && v.Int == l.t
	case KindAddr:
		switch l.addr.kind {
		case 1:
			return v.Addr.Addr().Unmap() == l.addr.ap.Addr().Unmap() && v.Addr.Port() == l.addr.ap.Port()
		case 2:
			return v.Addr.Addr().Unmap() == l.addr.ip.Unmap()
		case 3:
			return l.addr.pfx.Contains(v.Addr.Addr().Unmap())
		}
	}
	return false
}

// order compares an occurrence with a literal: -1, 0 or 1, and whether
// they have an order at all.
func order(v *Value, l *lit) (int, bool) {
	switch v.Kind {
	case KindInt:
		switch {
		case l.hasInt:
			return cmp3(v.Int, l.i), true
		case l.hasFloat:
			return cmp3(float64(v.Int), l.f), true
		}
	case KindFloat:
		if l.hasFloat {
			return cmp3(v.Float, l.f), true
		}
	case KindString:
		if l.hasStr {
			return strings.Compare(v.Str, l.s), true
		}
	case KindBytes:
		if l.hasBytes {
			return bytes.Compare(v.Bytes, l.by), true
		}
	case KindTime:
		if l.hasTime {
			return cmp3(v.Int, l.t), true
		}
	}
	return 0, false
}

func cmp3[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func contains(v *Value, l *lit) bool {
	switch v.Kind {
	case KindNull:
		return false
	case KindBytes:
		return l.hasBytes && bytes.Contains(v.Bytes, l.by)
	case KindString:
		return strings.Contains(v.Str, l.s)
	case KindInt:
		return v.Str != "" && strings.Contains(v.Str, l.s) // the value's name
	}
	return strings.Contains(v.text(), l.s)
}

// checkOp refuses an operator the field's types cannot take.
func checkOp(fl *field, x testExpr) error {
	t := fl.types
	at := x.opTok.col
	switch {
	case t == tyStruct:
		return errorf(x.field.col, "%s is a structure: test its presence, or compare its fields (%s.Name)", fl.name, fl.name)
	case x.op.ordered() && !t.has(tyInt|tyFloat|tyString|tyBytes|tyTime):
		return errorf(at, "%q compares numbers, strings, bytes and times; %s is %s", x.opTok.text, fl.name, t.describe())
	case (x.op == opContains || x.op == opMatches) && !t.has(tyInt|tyString|tyBytes|tyAddr|tyTime),
		(x.op == opContains || x.op == opMatches) && t == tyInt && fl.rec != nil && fl.rec.names == nil:
		return errorf(at, "%q reads text, bytes and the names of numbers; %s is %s", x.opTok.text, fl.name, t.describe())
	}
	return nil
}

// literal reads a value for a comparison of fl.
func (c *compiler) literal(fl *field, o op, t token) (*lit, error) {
	l := &lit{tok: t}
	if t.kind == tWord && c.s.isField(t.text) {
		return nil, errorf(t.col, "%s names a field: comparing two fields is not supported (quote it to compare with the text %s)", t.text, quote(t.text))
	}
	quoted := t.kind == tString || t.kind == tRaw
	switch o {
	case opMatches:
		if !quoted {
			return nil, errorf(t.col, "matches takes a regular expression in double quotes")
		}
		re, err := regexp.Compile("(?i)" + t.text)
		if err != nil {
			msg := err.Error()
			if e, ok := err.(*syntax.Error); ok {
				msg = string(e.Code)
			}
			return nil, errorf(t.col, "invalid regular expression %s: %s", t.src, msg)
		}
		l.re = re
		return l, nil
	case opContains:
		if t.kind == tChar {
			return nil, errorf(t.col, "contains takes a string or bytes")
		}
		l.hasStr, l.s = true, t.text
		l.hasBytes, l.by = true, []byte(t.text)
		if !quoted {
			if b, ok := parseBytes(t.text); ok {
				l.by = b
			}
		}
		return l, nil
	}
	ty := fl.types
	if ty.has(tyInt) {
		c.intLit(fl, o, t, l)
	}
	if ty.has(tyFloat) && !quoted {
		if t.kind == tChar {
			l.hasFloat, l.f = true, float64(t.num)
		} else if f, err := strconv.ParseFloat(t.text, 64); err == nil {
			l.hasFloat, l.f = true, f
		}
	}
	if ty.has(tyBool) && t.kind == tWord {
		switch strings.ToLower(t.text) {
		case "true":
			l.hasBool, l.b = true, true
		case "false":
			l.hasBool = true
		default:
			if n, err := strconv.ParseInt(t.text, 0, 64); err == nil {
				l.hasBool, l.b = true, n != 0
			}
		}
	}
	if ty.has(tyString) && t.kind != tChar {
		if rf := fl.rec; rf != nil && rf.closed != nil && !rf.closed(t.text) {
			e := errorf(t.col, "%s is not a value of %s", show(t), fl.name)
			if best := closest(t.text, rf.suggest()); best != "" {
				e.Hint = "did you mean " + quote(best) + "?"
			}
			return nil, e
		}
		l.hasStr, l.s = true, t.text
	}
	if ty.has(tyBytes) && t.kind != tChar {
		if quoted {
			l.hasBytes, l.by = true, []byte(t.text)
		} else if b, ok := parseBytes(t.text); ok {
			l.hasBytes, l.by = true, b
		}
	}
	if ty.has(tyTime) && t.kind != tChar {
		if tm, ok := parseTime(t.text); ok {
			l.hasTime, l.t = true, tm.UnixNano()
		}
	}
	if ty.has(tyAddr) && t.kind != tChar && !o.ordered() {
		l.addr = parseAddr(t.text)
		if l.addr.kind == 1 && fl.rec != nil && fl.rec.addrOnly {
			return nil, errorf(t.col, "%s is an address without its port (tcp.port and tcp.srcport, tcp.dstport are the ports): %s", fl.name, show(t))
		}
	}
	if l.hasInt || l.hasFloat || l.hasBool || l.hasStr || l.hasBytes || l.hasTime || l.addr.kind != 0 {
		return l, nil
	}
	if l.name != "" {
		if o.ordered() {
			return nil, errorf(t.col, "%q orders numbers: %s is a name, give its number", o.String(), show(t))
		}
		return l, nil
	}
	e := errorf(t.col, "cannot compare %s (%s) with %s", fl.name, describeWithNames(fl), show(t))
	if ty.has(tyInt) && t.kind != tChar {
		names := enumNames()
		if fl.rec != nil && fl.rec.suggest != nil {
			names = fl.rec.suggest()
		}
		if best := closest(t.text, append([]string(nil), names...)); best != "" {
			e.Hint = "did you mean " + quote(best) + "?"
		}
	}
	return nil, e
}

func describeWithNames(fl *field) string {
	if fl.types.has(tyInt) && (fl.rec == nil || fl.rec.names != nil) {
		return fl.types.describe() + " or a name of one"
	}
	return fl.types.describe()
}

// intLit reads an integer: digits (decimal, 0x hex, 0 octal, 0b binary), a
// character constant, or a name: an API's for api_key, an enum value's
// for a body field (checked against every table, compared with the
// occurrence's own name).
func (c *compiler) intLit(fl *field, o op, t token, l *lit) {
	if t.kind == tChar {
		l.hasInt, l.i = true, t.num
		return
	}
	if t.kind == tWord {
		if n, err := strconv.ParseInt(t.text, 0, 64); err == nil {
			l.hasInt, l.i = true, n
			return
		}
	}
	if rf := fl.rec; rf != nil {
		if rf.names != nil {
			if n, ok := rf.names(t.text); ok {
				l.hasInt, l.i = true, n
			}
		}
		return
	}
	if isEnumName(t.text) {
		l.name = t.text
	}
}

// parseBytes reads hex bytes: aa:bb:cc, aa-bb-cc, aa.bb.cc, aabbcc, or
// one byte as 0xaa.
func parseBytes(s string) ([]byte, bool) {
	if len(s) == 4 && (s[:2] == "0x" || s[:2] == "0X") {
		b, err := hex.DecodeString(s[2:])
		return b, err == nil
	}
	for _, sep := range []string{":", "-", "."} {
		if strings.Contains(s, sep) {
			parts := strings.Split(s, sep)
			out := make([]byte, 0, len(parts))
			for _, p := range parts {
				if len(p) != 2 && len(p) != 1 {
					return nil, false
				}
				v, err := strconv.ParseUint(p, 16, 8)
				if err != nil {
					return nil, false
				}
				out = append(out, byte(v))
			}
			return out, true
		}
	}
	if len(s)%2 != 0 || s == "" {
		return nil, false
	}
	b, err := hex.DecodeString(s)
	return b, err == nil
}

// timeLayouts are ISO 8601 as Wireshark takes it: the T may be a space,
// the zone Z, an offset, or absent (UTC, as kdissect prints every time).
var timeLayouts = []string{
	time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05", "2006-01-02 15:04:05",
	"2006-01-02T15:04Z07:00", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02",
}

func parseTime(s string) (time.Time, bool) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseAddr reads 192.0.2.10:50500, [2001:db8::1]:9092 (that address and
// port), 192.0.2.10 (any port) or 10.0.0.0/8 (any address in it).
func parseAddr(s string) addrLit {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return addrLit{kind: 1, ap: ap}
	}
	if ip, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return addrLit{kind: 2, ip: ip}
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return addrLit{kind: 3, pfx: p.Masked()}
	}
	return addrLit{}
}

// escapeText makes filter text safe to print.
func escapeText(s string) string { return dissect.Escape(s) }
