package render

import (
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/filter"
)

// FieldsOptions are tshark's -E options of -T fields.
type FieldsOptions struct {
	Header     bool   // a first line of the columns' names
	Separator  string // between columns: "\t" by default
	Aggregator string // between a column's occurrences: "," by default
	Occurrence int    // which occurrence: 0 all, N the N-th, -1 the last
	Quote      byte   // around each value: 0 (none), '"' or '\''
}

// ParseFieldsOption reads one -E NAME=VALUE into o, in tshark's terms:
// header=y|n, separator=/t|/s|C, aggregator=/s|C, occurrence=a|f|l|N,
// quote=d|s|n.
func ParseFieldsOption(o *FieldsOptions, opt string) error {
	name, val, _ := strings.Cut(opt, "=")
	char := func() (string, bool) {
		switch val {
		case "/t":
			return "\t", true
		case "/s":
			return " ", true
		}
		return val, len(val) == 1 && val[0] >= ' ' && val[0] < 0x7f
	}
	ok := true
	switch name {
	case "header":
		o.Header, ok = val == "y", val == "y" || val == "n"
	case "separator":
		o.Separator, ok = char()
	case "aggregator":
		o.Aggregator, ok = char()
	case "occurrence":
		switch val {
		case "a":
			o.Occurrence = 0
		case "f":
			o.Occurrence = 1
		case "l":
			o.Occurrence = -1
		default:
			n, err := strconv.Atoi(val)
			o.Occurrence, ok = n, err == nil && n > 0
		}
	case "quote":
		switch val {
		case "d":
			o.Quote = '"'
		case "s":
			o.Quote = '\''
		case "n":
			o.Quote = 0
		default:
			ok = false
		}
	default:
		return fmt.Errorf("-E %s: kdissect takes header=y|n, separator=/t|/s|C, aggregator=/s|C, occurrence=a|f|l|N and quote=d|s|n", opt)
	}
	if !ok {
		return fmt.Errorf("-E %s: not a value %s takes", opt, name)
	}
	return nil
}

// FieldsPrinter writes a line of columns per record, as tshark's -T fields
// writes one per packet: every message and event the other forms show, a
// column empty where the record has no such field.
type FieldsPrinter struct {
	out
	cols     *filter.Columns
	o        FieldsOptions
	follow   bool
	headered bool
}

// NewFieldsPrinter returns a printer of cols to w; follow writes each line
// at once (live).
func NewFieldsPrinter(w io.Writer, cols *filter.Columns, o FieldsOptions, follow bool) *FieldsPrinter {
	if o.Separator == "" {
		o.Separator = "\t"
	}
	if o.Aggregator == "" {
		o.Aggregator = ","
	}
	return &FieldsPrinter{out: out{w: w}, cols: cols, o: o, follow: follow}
}

func (p *FieldsPrinter) header() {
	if p.headered || !p.o.Header {
		return
	}
	p.headered = true
	for i, n := range p.cols.Names() {
		if i > 0 {
			p.buf = append(p.buf, p.o.Separator...)
		}
		p.buf = p.quoted(p.buf, n)
	}
	p.buf = append(p.buf, '\n')
}

// Record writes r's line.
func (p *FieldsPrinter) Record(r *capture.Record) {
	p.header()
	b := p.buf
	for i := range p.cols.Names() {
		if i > 0 {
			b = append(b, p.o.Separator...)
		}
		vs := p.cols.Values(r, i)
		switch n := p.o.Occurrence; {
		case n > 0 && n <= len(vs):
			vs = vs[n-1 : n]
		case n > 0:
			vs = nil
		case n < 0 && len(vs) > 0:
			vs = vs[len(vs)-1:]
		}
		for j := range vs {
			if j > 0 {
				b = append(b, p.o.Aggregator...)
			}
			b = p.quoted(b, valueText(&vs[j]))
		}
	}
	p.buf = append(b, '\n')
	if len(p.buf) >= flushAt || p.follow {
		p.Flush()
	}
}

// quoted appends s, wire text escaped (and a quote in it when values are
// quoted), between the quotes -E quote asks for.
func (p *FieldsPrinter) quoted(b []byte, s string) []byte {
	s = dissect.Escape(s)
	if p.o.Quote == 0 {
		return append(b, s...)
	}
	b = append(b, p.o.Quote)
	for i := 0; i < len(s); i++ {
		if s[i] == p.o.Quote || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, p.o.Quote)
}

// valueText is an occurrence as tshark's columns write one: a number (not
// its name), 1 or 0, text, bytes in hex; kdissect's times and addresses as
// its NDJSON writes them.
func valueText(v *filter.Value) string {
	switch v.Kind {
	case filter.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case filter.KindFloat:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case filter.KindBool:
		if v.Int != 0 {
			return "1"
		}
		return "0"
	case filter.KindString:
		return v.Str
	case filter.KindBytes:
		return hex.EncodeToString(v.Bytes)
	case filter.KindTime:
		return time.Unix(0, v.Int).UTC().Format(time.RFC3339Nano)
	case filter.KindAddr:
		if v.Addr.Port() == 0 {
			return v.Addr.Addr().String()
		}
		return v.Addr.String()
	}
	return ""
}

// Flush writes what is buffered (the header when nothing came) and returns
// the first write error.
func (p *FieldsPrinter) Flush() error {
	p.header()
	return p.flush()
}
