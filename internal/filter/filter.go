// Package filter is kdissect's display filter language: Wireshark 4's
// syntax and semantics over kdissect's records (messages and events) and
// the audit's rows. A filter is compiled once into closures that read the
// decoded message; nothing is decoded again.
//
// Semantics, as Wireshark 4 has them: a field may occur many times in a
// message (Principal in each ACL binding), and a comparison holds when
// some occurrence satisfies it; a != b is !(a == b) (no occurrence
// equals b, also when there is none), a ~= b that some occurrence differs.
// A bare field tests its presence; a flag of kdissect's own (malformed,
// tls, inferred, ...) its truth. matches is case-insensitive unless the
// expression says (?-i), as in Wireshark.
package filter

import (
	"errors"
	"net/netip"
	"strconv"
	"sync"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/dissect/audit"
	"github.com/kdissect/kdissect/internal/capture"
)

// Error is a filter that cannot be compiled: what is wrong, the column
// (1-based, in characters) where it is, and a hint.
type Error struct {
	Col  int
	Msg  string
	Hint string
}

func (e *Error) Error() string {
	s := e.Msg + " at " + strconv.Itoa(e.Col)
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

func errorf(col int, format string, a ...any) *Error {
	return &Error{Col: col, Msg: sprintf(format, a...)}
}

func errorText(s string) error { return errors.New(s) }

// Filter is a compiled filter. Its methods may be called from several
// goroutines at once; a nil Filter matches everything.
type Filter struct {
	src  string
	pred pred
	body bool
	// problems: a message's problems are read (see NeedsRecords).
	problems bool
	// head is the conjunction of the filter's top-level && terms that a
	// message's header decides (see RejectsHead); nil when none does.
	head pred
	envs sync.Pool
}

// Fields is a message or event held in another form than a run's
// Record (the explorer's list entries): its record fields by their NDJSON
// names, and the decoded message for its body fields.
type Fields interface {
	// Field calls yield with each occurrence of the record field name
	// (api, principal, src, ...), until yield returns false.
	Field(name string, yield func(Value) bool)
	// Message is the decoded message; nil for an event, or when the
	// caller has not decoded it (see NeedsBody).
	Message() *dissect.Message
}

// Compile compiles a filter over messages decoded with the built-in
// definitions. An empty (or blank) expression is no filter: nil, nil.
func Compile(expr string) (*Filter, error) { return CompileWith(expr, dissect.Builtin()) }

// CompileWith compiles a filter over messages decoded with reg (the run's
// registry, which holds the --schema-dir definitions too).
func CompileWith(expr string, reg *dissect.Registry) (*Filter, error) {
	if blank(expr) {
		return nil, nil // and no schema: building it parses every definition
	}
	return compile(expr, messageSchema(reg))
}

// CompileRows compiles a filter over the audit's rows, named by their
// NDJSON keys (kind, action, principal, result, binding.resource_name,
// target.*).
func CompileRows(expr string) (*Filter, error) { return compile(expr, rowSchema()) }

func compile(expr string, s *schema) (*Filter, error) {
	if blank(expr) {
		return nil, nil
	}
	tree, err := parse(expr)
	if err != nil {
		return nil, err
	}
	c := &compiler{s: s}
	p, err := c.expr(tree)
	if err != nil {
		return nil, err
	}
	return &Filter{src: expr, pred: p, body: c.body, problems: c.problems, head: headPred(tree, s)}, nil
}

// headPred is the conjunction of the top-level && terms of tree that read
// no field only the decoded message has: when it is false, so is the
// filter, whatever the body holds. nil when every term needs the body.
func headPred(tree expr, s *schema) pred {
	var terms []pred
	for _, x := range conjuncts(tree, nil) {
		c := &compiler{s: s}
		if p, err := c.expr(x); err == nil && !c.decoded {
			terms = append(terms, p)
		}
	}
	switch len(terms) {
	case 0:
		return nil
	case 1:
		return terms[0]
	}
	return func(e *env) bool {
		for _, p := range terms {
			if !p(e) {
				return false
			}
		}
		return true
	}
}

// conjuncts are the terms of x's top-level && chain (x itself when it is
// none), appended to out.
func conjuncts(x expr, out []expr) []expr {
	if l, ok := x.(logicExpr); ok && l.op == tAnd {
		return conjuncts(l.r, conjuncts(l.l, out))
	}
	return append(out, x)
}

// fromBody says whether a record field is made from the decoded message
// rather than its header and exchange: such a term cannot be decided
// before the body is decoded.
func fromBody(id fieldID) bool {
	switch id {
	case fSummary, fMalformed, fProblemMessage, fProblemOffset, fForwarded, fForwardedPrincipal, fForwardedClient:
		return true
	}
	return false
}

func blank(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// String is the filter as written.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return f.src
}

// NeedsBody reports whether the filter reads body fields: a caller that
// keeps bytes, not trees, decodes a message for Match only then.
func (f *Filter) NeedsBody() bool { return f != nil && f.body }

// NeedsRecords reports whether the filter may read what a batch's records
// hold: a body field, or a message's problems (malformed, problems.*),
// which a damaged record puts there. A view that shows no record decodes
// them for Match only then.
func (f *Filter) NeedsRecords() bool { return f != nil && (f.body || f.problems) }

// env is one evaluation's subject and scratch space.
type env struct {
	rec *capture.Record
	acc Fields
	row map[string][]Value
	buf []Value
}

func (f *Filter) env() *env {
	if e, ok := f.envs.Get().(*env); ok {
		return e
	}
	return &env{buf: make([]Value, 0, 16)}
}

func (f *Filter) done(e *env) {
	e.rec, e.acc, e.row = nil, nil, nil
	if cap(e.buf) <= 1<<12 {
		f.envs.Put(e)
	}
}

// Record reports whether a run's record matches. It reads the record
// during the call only, as a listener must.
func (f *Filter) Record(r *capture.Record) bool {
	if f == nil {
		return true
	}
	e := f.env()
	e.rec = r
	ok := f.pred(e)
	f.done(e)
	return ok
}

// RejectsHead reports whether a message known by its header alone (the
// record a capture.Needer is asked about) fails the filter whatever its
// body holds: a top-level && term that reads neither a body field nor a
// record field made from the body (summary, malformed, problem.*) is
// false. False when it cannot tell.
func (f *Filter) RejectsHead(r *capture.Record) bool {
	if f == nil || f.head == nil {
		return false
	}
	e := f.env()
	e.rec = r
	ok := f.head(e)
	f.done(e)
	return !ok
}

// Match reports whether an item held as Fields matches.
func (f *Filter) Match(a Fields) bool {
	if f == nil {
		return true
	}
	e := f.env()
	e.acc = a
	ok := f.pred(e)
	f.done(e)
	return ok
}

// Row reports whether an audit row matches a filter from CompileRows.
func (f *Filter) Row(r *audit.Row) bool {
	if f == nil {
		return true
	}
	e := f.env()
	e.row = rowValues(r)
	ok := f.pred(e)
	f.done(e)
	return ok
}

// values are the occurrences of fl in the subject, in e.buf.
func (e *env) values(fl *field) []Value {
	if fl.rec != nil && fl.rec.of != nil {
		return e.derived(fl.rec)
	}
	dst := e.buf[:0]
	switch {
	case e.rec != nil:
		switch {
		case fl.rec != nil:
			dst = recordValues(e.rec, fl.rec.id, dst)
		case e.rec.Kind != capture.KindMessage:
		case fl.alias != nil:
			dst = aliasValues(e.rec.Message, fl.alias, dst)
		default:
			dst = bodyValues(e.rec.Message, fl.path, dst)
		}
	case e.acc != nil:
		switch {
		case fl.rec != nil:
			dst = accValues(e.acc, fl.rec.name, dst)
		case fl.alias != nil:
			dst = aliasValues(e.acc.Message(), fl.alias, dst)
		default:
			dst = bodyValues(e.acc.Message(), fl.path, dst)
		}
	case e.row != nil:
		dst = append(dst, e.row[fl.name]...)
	}
	e.buf = dst
	return dst
}

// derived are the occurrences of a field kdissect derives from others.
func (e *env) derived(rf *recordField) []Value {
	dst := e.buf[:0]
	if rf.dir != "" && !e.isDirection(rf.dir) {
		e.buf = dst
		return dst
	}
	for _, b := range rf.of {
		switch {
		case e.rec != nil:
			dst = recordValues(e.rec, b.id, dst)
		case e.acc != nil:
			dst = accValues(e.acc, b.name, dst)
		}
	}
	for i := range dst {
		switch {
		case rf.prefixed && dst[i].Kind == KindInt:
			dst[i].Int -= 4
		case dst[i].Kind != KindAddr:
		case rf.port:
			dst[i] = Int(int64(dst[i].Addr.Port()), "")
		case rf.addrOnly:
			dst[i].Addr = netip.AddrPortFrom(dst[i].Addr.Addr(), 0)
		}
	}
	e.buf = dst
	return dst
}

// isDirection reports whether the subject is a message of direction dir.
func (e *env) isDirection(dir string) bool {
	switch {
	case e.rec != nil:
		return e.rec.Kind == capture.KindMessage && e.rec.Message.Direction.String() == dir
	case e.acc != nil:
		found := false
		e.acc.Field("direction", func(v Value) bool {
			found = v.Kind == KindString && v.Str == dir
			return !found
		})
		return found
	}
	return false
}

// accValues is apart from values so that the closure's capture of dst
// moves to the heap only for accessors, not for every record.
func accValues(a Fields, name string, dst []Value) []Value {
	a.Field(name, func(v Value) bool {
		dst = append(dst, v)
		return true
	})
	return dst
}

// Listener passes to next the records f matches; with no filter, next
// itself. It is a capture.Needer: a message f rejects by its header is
// not decoded; the others are as next needs them.
func Listener(f *Filter, next capture.Listener) capture.Listener {
	if f == nil {
		return next
	}
	l := &listener{f: f, next: next}
	l.need, _ = next.(capture.Needer)
	return l
}

type listener struct {
	f    *Filter
	next capture.Listener
	need capture.Needer
}

func (l *listener) Record(r *capture.Record) {
	if l.f.Record(r) {
		l.next.Record(r)
	}
}

func (l *listener) Need(r *capture.Record) capture.Need {
	switch {
	case l.f.RejectsHead(r):
		return capture.NeedNothing
	case l.need != nil:
		return l.need.Need(r)
	}
	return capture.NeedBody
}
