package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/dissect/audit"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/filter"
	"github.com/kdissect/kdissect/internal/render"
)

const auditUsage = `Usage: kdissect audit [flags] FILE...
       kdissect audit [flags] --iface NAME

Prints the security change log of a capture: one row per ACL binding a
CreateAcls request asked for and per binding a DeleteAcls response reports
deleted, and per SCRAM credential, delegation token, client quota and
config key changed, with who asked, when, from where and what the broker
answered. A filter that matched nothing, or that the broker refused, is one
row whose binding is the filter; a request never answered gives rows with
result no_response. Sensitive config values are redacted (--show-secrets).

What the log could not see (TLS without keys, bytes not captured or not
read, cut frames, responses without their request, evicted connections) is
summed up on stderr and in the table's footer, and is a blind_spot line in
json. Exit status: 0 complete, 1 bad input or usage, 2 malformed Kafka data,
3 the log may be incomplete (blind spots); 1 wins over 2, 2 over 3.

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

// auditHooks are what tests change of an audit run.
type auditHooks struct {
	follow bool // write json/csv rows as they are known (as --iface does)
	// principal, when set, names the principal of a connection instead
	// of the identity the session tracked.
	principal render.PrincipalFunc
}

func runAudit(args []string, stdin io.Reader, stdout, stderr io.Writer) (bool, error) {
	return runAuditWith(auditHooks{}, args, stdin, stdout, stderr)
}

func runAuditWith(h auditHooks, args []string, stdin io.Reader, stdout, stderr io.Writer) (bool, error) {
	var in inputFlags
	var o render.AuditOptions
	fs := flag.NewFlagSet("kdissect audit", flag.ContinueOnError)
	in.register(fs)
	fs.StringVar(&o.Format, "format", "table", "output `FORMAT`: table, csv, json (NDJSON) or ocsf (OCSF API Activity, NDJSON)")
	fs.BoolVar(&o.Effect, "effect", false, "print the net change instead: bindings added and removed by accepted changes")
	fs.StringVar(&o.Who, "who", "", "only changes made by principals matching the glob `PRINCIPAL`")
	fs.BoolVar(&o.Failed, "failed", false, "only changes the broker refused")
	fs.IntVar(&o.Width, "width", 0, "table width in `COLUMNS` (default: the terminal's, or COLUMNS; else each cell is cut at 80 columns)")
	fs.BoolVar(&o.RawCSV, "csv-raw", false, "csv: leave cells that start like a spreadsheet formula (= + - @ tab CR) as they are (default: a leading ' neutralises them)")
	kinds := fs.String("kind", "", "only these kinds of change, comma separated: acl, scram, token, quota, config (default: all)")
	fs.BoolVar(&o.Reads, "reads", false, "also the reads a reviewer may want to see (describe rows): DescribeAcls, DescribeUserScramCredentials, DescribeDelegationToken, DescribeClientQuotas, DescribeConfigs of brokers")
	fs.BoolVar(&o.ShowSecrets, "show-secrets", false, "show sensitive config values as they were sent (default: <redacted, N bytes>)")
	files, err := parseInterspersed(fs, auditUsage, args, stdout)
	if err != nil {
		return false, err
	}
	if o.Kinds, err = audit.ParseKinds(*kinds); err != nil {
		return false, capture.UsageError{Msg: err.Error()}
	}
	// The run hands out the audited APIs only; responses without their
	// request are guessed, so that what they prove is inferred.
	in.o.APIs, in.o.Guess, in.o.ShowSecrets = audit.APIs(o.Kinds, o.Reads), true, o.ShowSecrets
	switch {
	case o.Width < 0:
		return false, capture.UsageError{Msg: "--width takes a positive value"}
	case o.Effect && o.Failed:
		return false, capture.UsageError{Msg: "--effect counts accepted changes only: it does not go with --failed"}
	}
	switch o.Format {
	case "table", "csv", "json", "ocsf":
	default:
		return false, capture.UsageError{Msg: "--format takes table, csv, json or ocsf"}
	}
	if o.Filter, err = filter.CompileRows(in.filter); err != nil {
		return false, fmt.Errorf("-Y: %w", err)
	}
	r, err := in.open(files, stdin, stderr)
	if err != nil {
		return false, err
	}
	defer r.Close()
	if o.Width == 0 {
		o.Width = terminalWidth(stdout)
	}
	o.Follow = h.follow || r.Live()
	o.Principal = h.principal
	o.Stderr = stderr
	a := render.NewAudit(stdout, o)
	res, err := in.read(r, a)
	if werr := a.Close(); werr != nil && err == nil && !isBrokenPipe(werr) {
		err = werr
	}
	if err == nil && a.Incomplete() {
		err = errIncomplete
	}
	return res.Malformed, err
}

// terminalWidth is the width of the terminal w writes to, else $COLUMNS,
// else 0 (a file or pipe).
func terminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && render.IsTerminal(f) {
		if n := ttyWidth(f); n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return 0
}
