package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/filter"
	"github.com/kdissect/kdissect/internal/render"
	"github.com/kdissect/kdissect/internal/stats"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/tui"
)

const captureUsage = `Usage: kdissect [flags] FILE...
       kdissect [flags] --iface NAME
       kdissect frame [flags] [FILE | - | --hex HEX]   (one frame; kdissect frame --help)
       kdissect audit [flags] FILE...    (the ACL change log; kdissect audit --help)

Decodes Kafka traffic from pcap/pcapng captures, plain or gzip/zstd-
compressed (- reads standard input), or a live interface, and prints each
message as an annotated field tree. It shows the ACL changes (CreateAcls,
DeleteAcls) unless --all or --api asks for others: every API Kafka defines
is decoded, at every version, record batches included. Responses are
matched to their requests by correlation id on the same connection. Each
FILE is a capture of its own: packets are numbered from 1 in each. A live
capture started as root parses packets as nobody (--user) once its socket
and -w file are open.

Examples:
  kdissect testdata/pcaps/kadm-acls.pcap            field trees of every ACL message
  kdissect --summary capture.pcapng                 one line per message
  kdissect --json capture.pcap | jq -c 'select(.direction=="response") | .summary'
  kdissect --all --api Metadata,ApiVersions capture.pcap
  kdissect --port 9092,9093,19090-19099 capture.pcap
  sudo kdissect --iface eth0 -c 10 -w acls.pcap     live: stop after 10 messages, keep the packets
  kdissect --tui capture.pcap                       interactive hex explorer
  kdissect -Y 'api == "DeleteAcls" && principal == "User:bob"' capture.pcap
  kdissect -q -z latency -z errors capture.pcap     statistics only (-z, as tshark's)
  kdissect -T fields -e api -e Principal capture.pcap   tshark's columns
  kdissect frame -x --hex 00000015001e0003...       one frame, with its byte layout

Exit status: 0 success, 1 bad input or usage, 2 the input held malformed
Kafka data (still printed).

Flags:
`

// inputFlags are the flags of every command that reads a capture (the main
// command and audit), so that they stay the same.
type inputFlags struct {
	o                capture.Options
	keyLogs, reads   fileList
	decodeAs         fileList // -d's ports
	progress, filter string
	bar              *render.Progress
}

// fileList is a repeatable flag.
type fileList []string

func (l *fileList) String() string { return strings.Join(*l, ",") }
func (l *fileList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// prefFlag is tshark's -o for the one preference kdissect has: the TLS
// key log (also under its old name, ssl.keylog_file).
type prefFlag struct{ keyLogs *fileList }

func (p prefFlag) String() string { return "" }
func (p prefFlag) Set(v string) error {
	name, file, ok := strings.Cut(v, ":")
	if !ok || file == "" || name != "tls.keylog_file" && name != "ssl.keylog_file" {
		return errors.New("kdissect takes only tls.keylog_file:FILE (the same as --tls-keylog FILE)")
	}
	return p.keyLogs.Set(file)
}

// decodeAsFlag is tshark's -d for Kafka: tcp.port==PORTS,kafka, or ,tls
// (which tshark needs to decrypt before it decodes Kafka, and kdissect
// recognises by itself on any --port), and tls.port==PORTS,kafka.
type decodeAsFlag struct{ ports *fileList }

func (d decodeAsFlag) String() string { return "" }
func (d decodeAsFlag) Set(v string) error {
	sel, proto, ok := strings.Cut(v, ",")
	field, ports, ok2 := strings.Cut(sel, "==")
	field, ports = strings.TrimSpace(field), strings.TrimSpace(ports)
	if !ok || !ok2 || ports == "" || (field != "tcp.port" && field != "tls.port") || (proto != "kafka" && proto != "tls") {
		return errors.New("kdissect takes tcp.port==PORTS,kafka (or ,tls) and tls.port==PORTS,kafka")
	}
	if _, err := reassembly.ParsePorts(ports); err != nil {
		return err
	}
	return d.ports.Set(ports)
}

func (f *inputFlags) register(fs *flag.FlagSet) {
	f.o = capture.DefaultOptions()
	o := &f.o
	fs.StringVar(&o.Ports, "port", o.Ports, "broker `PORTS`: a list and ranges, e.g. 9092,9093,19090-19099")
	fs.BoolVar(&o.Detect, "detect", o.Detect, "also find Kafka on other ports (the side sending plausible request headers is the client)")
	fs.StringVar(&o.Iface, "iface", "", "capture live on interface `NAME` (needs root or CAP_NET_RAW)")
	fs.IntVar(&o.Count, "c", 0, "stop after `N` messages")
	fs.DurationVar(&o.Duration, "duration", 0, "stop a live capture after this long (e.g. 30s)")
	fs.StringVar(&o.Write, "w", "", "live capture: also write the raw packets to `FILE` as pcap")
	fs.IntVar(&o.MaxFrame, "max-frame", o.MaxFrame, "largest plausible frame in `BYTES`: a size prefix above it is corruption")
	fs.IntVar(&o.MaxDecompressed, "max-decompressed", o.MaxDecompressed, "most `BYTES` one compressed record batch may decompress to: beyond it the batch is a problem, not an allocation")
	fs.IntVar(&o.MaxNodes, "max-nodes", o.MaxNodes, "most `N` nodes of one message's tree: past them the rest of the message is one bytes field and a problem")
	fs.IntVar(&o.MaxConns, "max-conns", o.MaxConns, "follow at most `N` connections at once: beyond it the least recently active one is evicted")
	fs.IntVar(&o.Workers, "workers", o.Workers, "read and reassemble on one goroutine, dissect and print on another when `N` > 1 (0, the default: the usable cores; 1: one goroutine); the output is the same")
	fs.StringVar(&o.SchemaDir, "schema-dir", "", "load more message definitions (Kafka's JSON format) from `DIR`")
	fs.StringVar(&f.progress, "progress", "auto", "progress bar on stderr: auto (when stderr is a terminal), always, never")
	fs.Var(&f.keyLogs, "tls-keylog", "decrypt TLS with the secrets of the NSS key log `FILE` (SSLKEYLOGFILE); repeatable")
	fs.StringVar(&o.User, "user", "", "live capture: once the socket and -w file are open, parse as user `NAME` (default nobody when run as root)")
	fs.StringVar(&f.filter, "Y", "", "display filter `EXPR` (Wireshark's syntax, see README.md): only the messages and events it matches (audit: the rows)")
	fs.StringVar(&f.filter, "filter", "", "the same as -Y")
	fs.Var(&f.reads, "r", "read the capture `FILE` (tshark's spelling of a FILE argument; repeatable)")
	fs.StringVar(&o.Iface, "i", "", "the same as --iface `NAME` (tshark's spelling)")
	fs.Var(prefFlag{&f.keyLogs}, "o", "tshark's `tls.keylog_file:FILE`: the same as --tls-keylog FILE (the only preference kdissect takes)")
	fs.Var(decodeAsFlag{&f.decodeAs}, "d", "tshark's `tcp.port==PORTS,kafka` (or ,tls; tls.port== too): Kafka, in TLS or not, on PORTS too (as --port adds them)")
	fs.BoolVar(&o.Guess, "guess", false, "decode a response whose request was not captured as the first CreateAcls/DeleteAcls response definition (v0-3) that fits it exactly, marked inferred")
}

// open checks the input flags and opens the run: nothing is printed
// before every file, key log and definition is known to be readable.
func (f *inputFlags) open(files []string, stdin io.Reader, stderr io.Writer) (*capture.Run, error) {
	switch f.progress {
	case "auto", "always", "never":
	default:
		return nil, capture.UsageError{Msg: "--progress takes auto, always or never"}
	}
	f.o.KeyLogs = f.keyLogs
	if len(f.decodeAs) > 0 {
		f.o.Ports = strings.Join(append([]string{f.o.Ports}, f.decodeAs...), ",")
	}
	f.o.Warn = func(msg string) { fmt.Fprintf(stderr, "kdissect: %s\n", msg) }
	if f.o.Iface == "" {
		f.bar = render.NewProgress(stderr, f.progress)
		f.o.Progress = f.bar.Update
		warn := f.o.Warn
		f.o.Warn = func(msg string) { f.bar.Done(); warn(msg) }
	}
	return capture.Open(f.o, append(f.reads, files...), stdin)
}

// read runs r into l, the progress bar cleared when it ends.
func (f *inputFlags) read(r *capture.Run, l capture.Listener) (capture.Result, error) {
	res, err := r.Read(context.Background(), l)
	if f.bar != nil {
		f.bar.Done()
	}
	return res, err
}

func runCapture(args []string, stdin io.Reader, stdout, stderr io.Writer) (bool, error) {
	var in inputFlags
	fs := flag.NewFlagSet("kdissect", flag.ContinueOnError)
	in.register(fs)
	asJSON := fs.Bool("json", false, "print NDJSON: one message or event a line (the contract in README.md)")
	summary := fs.Bool("summary", false, "print one line per message")
	fs.BoolVar(&in.o.All, "all", false, "also show every other API, decoded the same way (--schema-dir adds or replaces definitions)")
	apis := fs.String("api", "", "only these `APIS`: names or numbers, comma separated (CreateAcls,31)")
	explore := fs.Bool("tui", false, "open the interactive hex explorer")
	hexDump := fs.Bool("x", false, "add each message's byte layout to the tree output")
	fs.BoolVar(&in.o.ShowSecrets, "show-secrets", false, "show SASL passwords, SCRAM proofs and tokens as they are on the wire (default: <redacted, N bytes>, masked in hex)")
	version := fs.Bool("version", false, "print kdissect's version and the VCS revision it was built from")
	var st stats.Set
	fs.Var(&st, "z", "after the messages, print the statistic `NAME`: apis, latency, errors, principals, conns, expert or io,stat[,SECONDS] (repeatable)")
	quiet := fs.Bool("q", false, "print the statistics (-z) only, not the messages")
	fs.Bool("V", false, "print field trees (the default; tshark's spelling)")
	fs.Bool("n", false, "no name resolution (tshark's; kdissect never resolves names)")
	lineBuffered := fs.Bool("l", false, "write each message out as soon as it is printed (tshark's; a live capture always does)")
	format := fs.String("T", "text", "tshark's output `FORMAT`: text (the field trees) or fields (a line of the -e columns per message and event)")
	glossary := fs.String("G", "", "tshark's glossary `REPORT`: fields, every name -Y, -e and the explorer take, with its type (and --schema-dir's)")
	var columns, fieldOpts fileList
	fs.Var(&columns, "e", "with -T fields: a column of the `FIELD` (named as in -Y: api_key, Principal, kafka.api_key, ...); repeatable")
	fs.Var(&fieldOpts, "E", "with -T fields: tshark's `OPTION` header=y|n, separator=/t|/s|C, aggregator=/s|C, occurrence=a|f|l|N, quote=d|s|n; repeatable")
	files, err := parseInterspersed(fs, captureUsage, args, stdout)
	if err != nil {
		return false, err
	}
	if *version {
		printVersion(stdout)
		return false, errHelp
	}
	if *glossary != "" {
		return false, printGlossary(stdout, *glossary, in.o.SchemaDir)
	}
	var fo render.FieldsOptions
	switch *format {
	case "text":
		if len(columns) > 0 || len(fieldOpts) > 0 {
			return false, capture.UsageError{Msg: "-e and -E are for -T fields"}
		}
	case "fields":
		if len(columns) == 0 {
			return false, capture.UsageError{Msg: "-T fields needs at least one -e FIELD"}
		}
		if *asJSON || *summary || *explore || *hexDump {
			return false, capture.UsageError{Msg: "-T fields is an output form of its own: not with --json, --summary, --tui or -x"}
		}
		for _, opt := range fieldOpts {
			if err := render.ParseFieldsOption(&fo, opt); err != nil {
				return false, capture.UsageError{Msg: err.Error()}
			}
		}
	default:
		return false, capture.UsageError{Msg: fmt.Sprintf("-T %q: kdissect writes text (the field trees) and fields (-e); for JSON, --json writes NDJSON (kdissect's own contract, see README)", *format)}
	}
	if *asJSON && *summary || *asJSON && *explore || *summary && *explore || *explore && (st.Len() > 0 || *quiet) {
		return false, capture.UsageError{Msg: "choose one of --json, --summary and --tui (the explorer has no statistics: -z and -q are not for it)"}
	}
	if in.o.APIs, err = capture.ParseAPIs(*apis); err != nil {
		return false, err
	}
	tui.SelectAPIs(&in.o, *explore)
	r, err := in.open(files, stdin, stderr)
	if err != nil {
		return false, err
	}
	defer r.Close()
	flt, err := filter.CompileWith(in.filter, r.Registry())
	if err != nil {
		return false, fmt.Errorf("-Y: %w", err)
	}
	if *explore {
		return tui.Explore(r, in.filter) // in its filter bar, where it can be changed
	}
	form := render.Tree
	switch {
	case *asJSON:
		form = render.JSON
	case *summary:
		form = render.Summary
	}
	// One line a message, or statistics alone, show no record: batches are
	// not decompressed for them (their CRCs still are checked), unless the
	// filter or a statistic reads what records may hold: body fields, or
	// the problems of a damaged record.
	r.BatchHeadersOnly((*summary || *quiet) && !flt.NeedsRecords() && !st.NeedsRecords())
	var p interface {
		capture.Listener
		Flush() error
	} = render.NewPrinter(stdout, form, *hexDump, r.Live() || *lineBuffered)
	if *format == "fields" {
		cols, err := filter.CompileColumns(columns, r.Registry())
		if err != nil {
			return false, capture.UsageError{Msg: err.Error()}
		}
		p = render.NewFieldsPrinter(stdout, cols, fo, r.Live() || *lineBuffered)
	}
	res, err := in.read(r, filter.Listener(flt, st.Listener(p, *quiet)))
	if ferr := errors.Join(p.Flush(), st.Write(stdout, *asJSON)); ferr != nil && err == nil && !isBrokenPipe(ferr) {
		err = ferr
	}
	if err == nil {
		if why := res.NoKafka(in.o.Ports); why != "" {
			in.o.Warn(why)
		}
	}
	return res.Malformed, err
}

func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// printGlossary writes -G fields (filter.AppendGlossary) for the built-in
// definitions and --schema-dir's.
func printGlossary(w io.Writer, report, schemaDir string) error {
	if report != "fields" {
		return capture.UsageError{Msg: fmt.Sprintf("-G %q: kdissect's glossary is fields", report)}
	}
	reg, err := capture.LoadRegistry(schemaDir)
	if err != nil {
		return err
	}
	if _, err := w.Write(filter.AppendGlossary(nil, reg)); err != nil {
		return err
	}
	return errHelp
}
