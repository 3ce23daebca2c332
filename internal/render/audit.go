package render

import (
	"bufio"
	"io"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/dissect/audit"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/reassembly"
)

// AuditOptions shape the change log.
type AuditOptions struct {
	Format string // "table", "csv" or "json"
	Effect bool   // the net change instead of every change
	Who    string // only rows whose principal matches this glob
	Failed bool   // only changes the broker refused
	Width  int    // of the table; 0: unlimited
	RawCSV bool   // leave formula-like csv cells as they are
	// Follow writes json and csv rows as each exchange completes (a live
	// capture) instead of at the end.
	Follow bool
	// Principal, when set, names the principal of a connection instead of
	// the identity the session tracked (tests of captures whose clients'
	// principals are known from elsewhere).
	Principal PrincipalFunc
}

// PrincipalFunc names the principal behind a connection's direction.
type PrincipalFunc = func(reassembly.Flow) *string

// Audit is the change log as a listener: the ACL messages go through one
// audit.Log, and Close writes the rows.
type Audit struct {
	o   AuditOptions
	w   *bufio.Writer
	log *audit.Log
	err error
}

// NewAudit returns a change-log writer to w.
func NewAudit(w io.Writer, o AuditOptions) *Audit {
	a := &Audit{o: o, w: bufio.NewWriterSize(w, 1<<16), log: audit.NewLog()}
	if o.Follow && o.Format != "table" && !o.Effect {
		// Each exchange's rows as its response arrives; the unanswered
		// ones when the capture stops.
		if o.Format == "csv" {
			a.err = audit.WriteCSV(a.w, nil, a.csv())
		}
		a.log.Stream = func(rows []audit.Row) {
			a.write(rows, true)
			if a.err == nil {
				a.err = a.w.Flush()
			}
		}
	}
	return a
}

func (a *Audit) csv() audit.CSVOptions { return audit.CSVOptions{Effect: a.o.Effect, Raw: a.o.RawCSV} }

// Record takes a run's record: the ACL messages feed the log.
func (a *Audit) Record(r *capture.Record) {
	if r.Kind != capture.KindMessage {
		return
	}
	m, x := r.Message, &r.Exchange
	meta := audit.Meta{Index: x.Index, Time: r.Time, Client: r.Flow.Src, Broker: r.Flow.Dst}
	if m.Direction == dissect.Response {
		meta.Client, meta.Broker = r.Flow.Dst, r.Flow.Src
		meta.Latency, meta.HasLatency = x.Latency, x.HasLatency
	}
	if a.o.Principal != nil {
		meta.Principal = a.o.Principal(r.Flow)
	} else {
		meta.Principal = audit.Principal(x.Identity)
	}
	a.log.Add(m, meta, x.Peer)
}

// Close writes what is left (every row, or the unanswered requests' when
// following) and flushes.
func (a *Audit) Close() error {
	rows := a.log.Finish()
	if a.o.Effect {
		rows = audit.Effect(rows)
	}
	a.write(rows, a.log.Stream != nil)
	if err := a.w.Flush(); err != nil && a.err == nil {
		a.err = err
	}
	return a.err
}

// write filters rows and writes them; rows: without the csv header (it
// went out when following began).
func (a *Audit) write(rows []audit.Row, rowsOnly bool) {
	if a.o.Who != "" {
		rows = audit.Who(rows, a.o.Who)
	}
	if a.o.Failed {
		rows = audit.Failed(rows)
	}
	if a.err != nil {
		return
	}
	switch {
	case a.o.Format == "json":
		a.err = audit.WriteJSON(a.w, rows)
	case a.o.Format == "csv" && rowsOnly:
		a.err = audit.WriteCSVRows(a.w, rows, a.csv())
	case a.o.Format == "csv":
		a.err = audit.WriteCSV(a.w, rows, a.csv())
	default:
		a.err = audit.WriteTable(a.w, rows, a.o.Width, a.o.Effect)
	}
}
