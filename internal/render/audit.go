package render

import (
	"bufio"
	"fmt"
	"io"
	"slices"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/dissect/audit"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/filter"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

// AuditOptions shape the change log.
type AuditOptions struct {
	Format string // "table", "csv", "json" or "ocsf"
	Effect bool   // the net change instead of every change
	Who    string // only rows whose principal matches this glob
	Failed bool   // only changes the broker refused
	Width  int    // of the table; 0: unlimited
	RawCSV bool   // leave formula-like csv cells as they are
	// Filter keeps the rows it matches (kdissect audit -Y).
	Filter *filter.Filter
	// Follow writes json and csv rows as each exchange completes (a live
	// capture) instead of at the end.
	Follow bool
	// Principal, when set, names the principal of a connection instead of
	// the identity the session tracked (tests of captures whose clients'
	// principals are known from elsewhere).
	Principal PrincipalFunc
	// Kinds selects the kinds of change; nil: all.
	Kinds []audit.Kind
	// Reads adds the describes as rows.
	Reads bool
	// ShowSecrets shows sensitive config values as they were sent.
	ShowSecrets bool
	// Stderr takes the summary of the blind spots (nil: not written).
	Stderr io.Writer
}

// PrincipalFunc names the principal behind a connection's direction.
type PrincipalFunc = func(reassembly.Flow) *string

// Audit is the change log as a listener: the ACL messages go through one
// audit.Log, and Close writes the rows.
type Audit struct {
	o     AuditOptions
	w     *bufio.Writer
	log   *audit.Log
	err   error
	blind []audit.BlindSpot
}

// NewAudit returns a change-log writer to w.
func NewAudit(w io.Writer, o AuditOptions) *Audit {
	a := &Audit{o: o, w: bufio.NewWriterSize(w, 1<<16), log: audit.NewLog()}
	a.log.Reads, a.log.Kinds = o.Reads, o.Kinds
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

// Record takes a run's record: the messages of the audited APIs feed the
// log, and whatever kept it from seeing a connection is a blind spot.
func (a *Audit) Record(r *capture.Record) {
	if r.Kind != capture.KindMessage {
		if s, ok := a.blindSpot(r); ok {
			a.blind = append(a.blind, s)
		}
		return
	}
	m, x := r.Message, &r.Exchange
	meta := audit.Meta{Index: x.Index, Time: r.Time, Client: r.Flow.Src, Broker: r.Flow.Dst,
		Inferred: x.Inferred, ShowSecrets: a.o.ShowSecrets, Software: x.Software}
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
// following), then the blind spots (json lines; a summary on Stderr and
// in the table's footer), and flushes.
func (a *Audit) Close() error {
	rows := a.log.Finish()
	audit.CountInferred(a.blind, rows)
	if a.o.Effect {
		rows = audit.Effect(rows)
	}
	a.write(rows, a.log.Stream != nil)
	if a.o.Format == "json" && a.err == nil {
		a.err = audit.WriteBlindSpotsJSON(a.w, a.blind)
	}
	if err := a.w.Flush(); err != nil && a.err == nil {
		a.err = err
	}
	if a.o.Stderr != nil {
		for _, l := range audit.BlindSummary(a.blind) {
			fmt.Fprintf(a.o.Stderr, "kdissect: %s\n", l)
		}
	}
	return a.err
}

// Incomplete reports whether the log may miss changes: a blind spot on a
// broker connection (exit status 3).
func (a *Audit) Incomplete() bool { return len(a.blind) > 0 }

// BlindSpots are what the log could not see, in capture order.
func (a *Audit) BlindSpots() []audit.BlindSpot { return a.blind }

// audited says whether the log reads an API's messages.
func (a *Audit) audited(key int16) bool {
	k := audit.KindOfAPI(key)
	if key == 58 {
		return true // an Envelope may forward a change of any kind
	}
	if k == "" || audit.IsRead(key) && !a.o.Reads {
		return false
	}
	return a.o.Kinds == nil || slices.Contains(a.o.Kinds, k)
}

// blindSpot is the blind spot a record reports, if it is one: bytes lost
// or skipped, a frame cut short (of an API the log reads, or whose API is
// unknown), a response without its request, a connection evicted or not
// decrypted. Bytes before a connection's first frame boundary are not:
// they are the rest of what was sent before the capture began, and a
// response to a request among them is reported unmatched.
func (a *Audit) blindSpot(r *capture.Record) (audit.BlindSpot, bool) {
	s := audit.BlindSpot{Time: r.Time, File: r.File, Client: r.Flow.Conn.Client, Broker: r.Flow.Conn.Server}
	if !s.Client.IsValid() {
		s.Client, s.Broker = r.Flow.Src, r.Flow.Dst
		if !r.Flow.FromClient {
			s.Client, s.Broker = r.Flow.Dst, r.Flow.Src
		}
	}
	dir := func() {
		from, off := r.Flow.FromClient, r.Offset
		s.FromClient, s.StreamOffset = &from, &off
	}
	switch r.Kind {
	case capture.KindUnmatched:
		u := &r.Unmatched
		s.Reason = audit.BlindUnmatched
		idx, corr, size := u.Index, u.CorrelationID, u.Size
		s.Index, s.CorrelationID, s.Size = &idx, &corr, &size
		s.Principal = audit.Principal(u.Identity)
		dir()
		return s, true
	case capture.KindIncomplete:
		e, _ := r.Event.(*reassembly.Incomplete)
		c := r.Cut
		if c.HasAPI && !a.audited(c.APIKey) {
			return s, false
		}
		s.Reason = audit.BlindIncomplete
		dir()
		if e != nil {
			have, want := e.Have, e.Want
			s.Have, s.Want, s.Cause = &have, &want, e.Reason
		}
		if c.Index > 0 {
			idx, corr := c.Index, c.CorrelationID
			s.Index, s.CorrelationID = &idx, &corr
		}
		if c.HasAPI {
			key, ver := c.APIKey, c.APIVersion
			s.APIKey, s.APIVersion = &key, &ver
		}
		return s, true
	}
	switch e := r.Event.(type) {
	case *reassembly.Gap:
		s.Reason = audit.BlindGap
		dir()
		n := e.Length
		s.Length = &n
	case *reassembly.Unparseable:
		if e.Leading && !e.Unframed {
			return s, false // the tail of a frame sent before the capture began
		}
		s.Reason, s.Midstream = audit.BlindUnparseable, e.TLS
		dir()
		n := e.Length
		s.Length = &n
	case *reassembly.BufferLimit:
		// A frame not kept whole, or data held out of order given up on
		// (the hole is then a gap of its own).
		s.Reason, s.Cause = audit.BlindIncomplete, "buffer_limit"
		dir()
		n := e.Length
		s.Length = &n
	case *reassembly.Evicted:
		s.Reason = audit.BlindEvicted
		s.Client, s.Broker = e.Conn.Client, e.Conn.Server
		last, mc := e.LastSeen, e.MaxConns
		s.LastSeen, s.MaxConns = &last, &mc
	case *reassembly.LayerEvent:
		switch v := e.Value.(type) {
		case *tlslayer.Session:
			if v.Decrypted || v.Refused {
				return s, false // a refused handshake carried no Kafka bytes
			}
			s.Reason = audit.BlindTLSNoKeys
			s.Version, s.Cipher, s.SNI, s.Why, s.Midstream = v.Version, v.Cipher, v.SNI, v.Reason, v.Midstream
		case *tlslayer.Problem:
			if v.Kind == tlslayer.ProblemUnreadableCert {
				return s, false // decoding goes on; only the principal is unknown
			}
			// Nothing more is read from that direction until it
			// re-synchronises: the records not decoded are bytes skipped.
			s.Reason = audit.BlindUnparseable
			dir()
			off := v.StreamOffset
			s.StreamOffset = &off
			s.TLSProblem, s.Message = v.Kind, v.Message
		default:
			return s, false
		}
	default:
		return s, false
	}
	return s, true
}

// write filters rows and writes them; rows: without the csv header (it
// went out when following began).
func (a *Audit) write(rows []audit.Row, rowsOnly bool) {
	if a.o.Kinds != nil {
		rows = audit.OfKinds(rows, a.o.Kinds)
	}
	if a.o.Who != "" {
		rows = audit.Who(rows, a.o.Who)
	}
	if a.o.Failed {
		rows = audit.Failed(rows)
	}
	if a.o.Filter != nil {
		var kept []audit.Row
		for i := range rows {
			if a.o.Filter.Row(&rows[i]) {
				kept = append(kept, rows[i])
			}
		}
		rows = kept
	}
	if a.err != nil {
		return
	}
	switch {
	case a.o.Format == "json":
		a.err = audit.WriteJSON(a.w, rows)
	case a.o.Format == "ocsf":
		a.err = audit.WriteOCSF(a.w, rows)
	case a.o.Format == "csv" && rowsOnly:
		a.err = audit.WriteCSVRows(a.w, rows, a.csv())
	case a.o.Format == "csv":
		a.err = audit.WriteCSV(a.w, rows, a.csv())
	default:
		a.err = audit.WriteTableWith(a.w, rows, audit.TableOptions{Width: a.o.Width, Effect: a.o.Effect, Blind: audit.BlindSummary(a.blind)})
	}
}
