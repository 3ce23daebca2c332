package main

import (
	"bufio"
	"flag"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/dissect/audit"
	"github.com/kdissect/kdissect/reassembly"
)

const auditUsage = `Usage: kdissect audit [flags] FILE...
       kdissect audit [flags] --iface NAME

Prints the ACL change log of a capture: one row per binding a CreateAcls
request asked for and per binding a DeleteAcls response reports deleted,
with who asked, when, from where and what the broker answered. A filter
that matched nothing, or that the broker refused, is one row whose binding
is the filter; a request never answered gives rows with result no_response.

Formats: table (fits the terminal; COLUMNS or --width otherwise), csv (one
header line), json (NDJSON; the keys are in README.md). --who takes a glob:
* is any run of characters (/ included), ? one character, \ quotes the
next; rows whose principal is unknown never match it.

Examples:
  kdissect audit capture.pcap
  kdissect audit --format json capture.pcap | jq -c 'select(.result=="error")'
  kdissect audit --failed --who 'User:*' capture.pcap
  kdissect audit --effect --format csv capture.pcap > net-change.csv

Flags:
`

// auditOpts are the capture flags (as for the main command) and the
// audit's own.
type auditOpts struct {
	captureOpts
	format string
	effect bool
	who    string
	failed bool
	width  int
	follow bool // write json/csv rows as they are known (--iface; tests)
	// principal, when set, names the principal of a connection instead
	// of the identity the session tracked (tests).
	principal func(reassembly.Flow) *string
}

func runAudit(args []string, stdin io.Reader, stdout, stderr io.Writer) (bool, error) {
	return runAuditWith(auditOpts{}, args, stdin, stdout, stderr)
}

func runAuditWith(o auditOpts, args []string, stdin io.Reader, stdout, stderr io.Writer) (bool, error) {
	fs := flag.NewFlagSet("kdissect audit", flag.ContinueOnError)
	o.registerInput(fs)
	fs.StringVar(&o.format, "format", "table", "output `FORMAT`: table, csv or json (NDJSON)")
	fs.BoolVar(&o.effect, "effect", false, "print the net change instead: bindings added and removed by accepted changes")
	fs.StringVar(&o.who, "who", "", "only changes made by principals matching the glob `PRINCIPAL`")
	fs.BoolVar(&o.failed, "failed", false, "only changes the broker refused")
	fs.IntVar(&o.width, "width", 0, "table width in `COLUMNS` (default: the terminal's, or COLUMNS; unlimited when neither)")
	files, err := parseInterspersed(fs, auditUsage, args, stdout)
	if err != nil {
		return false, err
	}
	if err := o.checkInput(files); err != nil {
		return false, err
	}
	switch {
	case o.width < 0:
		return false, usageError{"--width takes a positive value"}
	case o.effect && o.failed:
		return false, usageError{"--effect counts accepted changes only: it does not go with --failed"}
	}
	switch o.format {
	case "table", "csv", "json":
	default:
		return false, usageError{"--format takes table, csv or json"}
	}
	in, err := o.openInput(files, stdin)
	if err != nil {
		return false, err
	}
	defer in.close()

	bw := bufio.NewWriterSize(stdout, 1<<16)
	ap := newAuditPrinter(o.principal)
	var werr error
	write := func(rows []audit.Row) {
		if o.who != "" {
			rows = audit.Who(rows, o.who)
		}
		if o.failed {
			rows = audit.Failed(rows)
		}
		if werr != nil {
			return
		}
		switch {
		case o.format == "json":
			werr = audit.WriteJSON(bw, rows)
		case o.format == "csv" && ap.stream != nil:
			werr = audit.WriteCSVRows(bw, rows, audit.CSVOptions{Effect: o.effect})
		case o.format == "csv":
			werr = audit.WriteCSV(bw, rows, audit.CSVOptions{Effect: o.effect})
		default:
			width := o.width
			if width == 0 {
				width = terminalWidth(stdout)
			}
			werr = audit.WriteTable(bw, rows, width, o.effect)
		}
	}
	if o.iface != "" {
		o.follow = true
	}
	if o.follow && o.format != "table" && !o.effect {
		// Live NDJSON and CSV follow the capture: each exchange's rows as
		// its response arrives; the unanswered ones when it stops.
		if o.format == "csv" {
			werr = audit.WriteCSV(bw, nil, audit.CSVOptions{})
		}
		ap.stream = func(rows []audit.Row) {
			write(rows)
			if werr == nil {
				werr = bw.Flush()
			}
		}
	}
	s := newSession(in.reg, selector{}, ap, true) // the ACL APIs; indexes still count every frame
	s.limit = o.count
	s.lib.Hold = o.iface == ""
	seen, err := o.captureOpts.read(s, in, stderr)
	s.flushAll()
	rows := ap.finish()
	if o.effect {
		rows = audit.Effect(rows)
	}
	if ap.stream != nil {
		ap.stream(rows)
	} else {
		write(rows)
	}
	if werr == nil {
		werr = bw.Flush()
	}
	if werr != nil && err == nil && !isBrokenPipe(werr) {
		err = werr
	}
	reportStats(stderr, seen.stats)
	return s.malformed, err
}

// terminalWidth is the width of the terminal w writes to, else $COLUMNS,
// else 0 (no limit: a file or pipe gets whole lines).
func terminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		if n := ttyWidth(f); n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return 0
}

// auditPrinter collects change-log rows from the session's messages. The
// session decodes each message into reused storage, so a request is copied
// out (audit.ReadRequest) at once and kept until its response, which the
// session always hands over after it.
type auditPrinter struct {
	principal func(reassembly.Flow) *string
	reqs      map[int]*audit.Request // by message index, awaiting a response
	rows      []audit.Row
	// stream, when set, takes each exchange's rows at once instead of rows
	// collecting them; finish then returns only the unanswered ones.
	stream func([]audit.Row)
}

func newAuditPrinter(principal func(reassembly.Flow) *string) *auditPrinter {
	return &auditPrinter{principal: principal, reqs: map[int]*audit.Request{}}
}

func (p *auditPrinter) message(w *origin, x dissect.Exchange, m *dissect.Message) {
	meta := audit.Meta{Index: x.Index, Time: w.time}
	if m.Direction == dissect.Request {
		meta.Client, meta.Broker = w.flow.Src, w.flow.Dst
		meta.Principal = p.principalOf(w.flow, x.Identity)
		if r := audit.ReadRequest(m, meta); r != nil {
			p.reqs[x.Index] = r
		}
		return
	}
	meta.Client, meta.Broker = w.flow.Dst, w.flow.Src
	meta.Principal = p.principalOf(w.flow, x.Identity)
	meta.Latency, meta.HasLatency = x.Latency, x.HasLatency
	resp := audit.ReadResponse(m, meta)
	if resp == nil {
		return
	}
	req := p.reqs[x.Peer]
	delete(p.reqs, x.Peer)
	if req == nil {
		// Its request was not read whole (a frame cut after its header):
		// the response's own bindings are what is known.
		resp.RequestIndex = x.Peer
	}
	if p.stream != nil {
		p.stream(audit.Rows(req, resp))
		return
	}
	p.rows = append(p.rows, audit.Rows(req, resp)...)
}

func (p *auditPrinter) unmatched(*origin, dissect.Unmatched)                  {}
func (p *auditPrinter) incomplete(*reassembly.Incomplete, dissect.Incomplete) {}
func (p *auditPrinter) event(reassembly.Event)                                {}

// principalOf names who made a change: the principal the connection
// authenticated as, marked when the broker refused it or had not accepted
// it yet; nil when the wire does not say (a GSSAPI user, a capture begun
// mid-connection).
func (p *auditPrinter) principalOf(f reassembly.Flow, id dissect.Identity) *string {
	if p.principal != nil {
		return p.principal(f)
	}
	if id.Principal == "" {
		return nil
	}
	s := id.Principal
	switch {
	case id.Failed:
		s += " (failed)"
	case !id.Authenticated:
		s += " (not yet accepted)"
	}
	return &s
}

// finish adds the requests no response answered and returns every row in
// capture order.
func (p *auditPrinter) finish() []audit.Row {
	idx := make([]int, 0, len(p.reqs))
	for i := range p.reqs {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		p.rows = append(p.rows, audit.Rows(p.reqs[i], nil)...)
	}
	clear(p.reqs)
	audit.Sort(p.rows)
	return p.rows
}
