package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly"
)

const captureUsage = `Usage: kdissect [flags] FILE...
       kdissect [flags] --iface NAME
       kdissect frame [flags] [FILE | - | --hex HEX]

Decodes Kafka's ACL admin traffic (CreateAcls, DeleteAcls; every version
0-3) from pcap/pcapng captures (- reads standard input) or a live interface,
and prints each message as an annotated field tree. Responses are matched
to their requests by correlation id on the same connection.

Examples:
  kdissect testdata/pcaps/kadm-acls.pcap            field trees of every ACL message
  kdissect --summary capture.pcapng                 one line per message
  kdissect --json capture.pcap | jq -c 'select(.direction=="response") | .summary'
  kdissect --all --api Metadata,ApiVersions capture.pcap
  kdissect --port 9092,9093,19090-19099 capture.pcap
  sudo kdissect --iface eth0 -c 10 -w acls.pcap     live: stop after 10 messages, keep the packets
  kdissect --tui capture.pcap                       interactive hex explorer
  kdissect frame -x --hex 00000015001e0003...       one frame, with its byte layout

Exit status: 0 success, 1 bad input or usage, 2 the input held malformed
Kafka data (still printed).

Flags:
`

type captureOpts struct {
	ports     string
	detect    bool
	asJSON    bool
	summary   bool
	all       bool
	apis      string
	iface     string
	count     int
	duration  time.Duration
	write     string
	maxFrame  int
	maxConns  int
	schemaDir string
	tui       bool
	hexDump   bool
	progress  string
}

func runCapture(args []string, stdin io.Reader, stdout, stderr io.Writer) (bool, error) {
	var o captureOpts
	fs := flag.NewFlagSet("kdissect", flag.ContinueOnError)
	fs.StringVar(&o.ports, "port", "9092", "broker `PORTS`: a list and ranges, e.g. 9092,9093,19090-19099")
	fs.BoolVar(&o.detect, "detect", true, "also find Kafka on other ports (the side sending plausible request headers is the client)")
	fs.BoolVar(&o.asJSON, "json", false, "print NDJSON: one message or event a line (the contract in README.md)")
	fs.BoolVar(&o.summary, "summary", false, "print one line per message")
	fs.BoolVar(&o.all, "all", false, "also show every other API (header decoded, body opaque unless --schema-dir defines it)")
	fs.StringVar(&o.apis, "api", "", "only these `APIS`: names or numbers, comma separated (CreateAcls,31)")
	fs.StringVar(&o.iface, "iface", "", "capture live on interface `NAME` (needs root or CAP_NET_RAW)")
	fs.IntVar(&o.count, "c", 0, "stop after `N` messages")
	fs.DurationVar(&o.duration, "duration", 0, "stop a live capture after this long (e.g. 30s)")
	fs.StringVar(&o.write, "w", "", "live capture: also write the raw packets to `FILE` as pcap")
	fs.IntVar(&o.maxFrame, "max-frame", reassembly.DefaultMaxFrame, "largest plausible frame in `BYTES`: a size prefix above it is corruption")
	fs.IntVar(&o.maxConns, "max-conns", reassembly.DefaultMaxConns, "follow at most `N` connections at once: beyond it the least recently active one is evicted")
	fs.StringVar(&o.schemaDir, "schema-dir", "", "load more message definitions (Kafka's JSON format) from `DIR`")
	fs.BoolVar(&o.tui, "tui", false, "open the interactive hex explorer")
	fs.BoolVar(&o.hexDump, "x", false, "add each message's byte layout to the tree output")
	fs.StringVar(&o.progress, "progress", "auto", "progress bar on stderr: auto (when stderr is a terminal), always, never")
	positional, err := parseInterspersed(fs, captureUsage, args, stdout)
	if err != nil {
		return false, err
	}
	files := positional
	switch {
	case o.iface == "" && len(files) == 0:
		return false, usageError{"no capture: give pcap/pcapng FILEs, - for standard input, or --iface NAME"}
	case o.iface != "" && len(files) > 0:
		return false, usageError{"give either FILEs or --iface, not both"}
	case o.iface == "" && (o.write != "" || o.duration != 0):
		return false, usageError{"-w and --duration go with a live capture (--iface)"}
	case o.asJSON && o.summary, o.asJSON && o.tui, o.summary && o.tui:
		return false, usageError{"choose one of --json, --summary and --tui"}
	case o.count < 0, o.duration < 0:
		return false, usageError{"-c and --duration take positive values"}
	case o.maxFrame < 16:
		return false, usageError{"--max-frame must be at least 16 bytes"}
	case o.maxConns < 1:
		return false, usageError{"--max-conns must be at least 1"}
	}
	switch o.progress {
	case "auto", "always", "never":
	default:
		return false, usageError{"--progress takes auto, always or never"}
	}
	ports, err := reassembly.ParsePorts(o.ports)
	if err != nil {
		return false, usageError{"--port: " + err.Error()}
	}
	filter, err := parseAPIFilter(o.apis)
	if err != nil {
		return false, err
	}
	reg, err := loadSchemaDir(o.schemaDir)
	if err != nil {
		return false, err
	}
	// Check every file before printing anything, so a typo in the third
	// file does not leave half an output behind.
	var sources []namedSource
	defer func() {
		for _, s := range sources {
			s.src.Close()
		}
	}()
	for _, f := range files {
		var src reassembly.Source
		name := f
		if f == "-" {
			name = "standard input"
			src, err = reassembly.OpenReader(name, stdin)
		} else {
			src, err = reassembly.OpenFile(f)
		}
		if err != nil {
			return false, err
		}
		sources = append(sources, namedSource{name: name, src: src, size: fileSize(f)})
	}

	sel := selector{filter: filter, all: o.all}
	// A full table of --max-conns connections (a million by default) holds
	// ~450 MB; without a limit the collector would let the heap grow to
	// twice that before collecting. GOMEMLIMIT overrides.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	if o.tui {
		return runCaptureTUI(o, reg, sel, ports, sources)
	}
	bw := bufio.NewWriterSize(stdout, 1<<20)
	var p printer
	switch {
	case o.asJSON:
		p = &jsonPrinter{w: bw}
	case o.summary:
		p = &summaryPrinter{w: bw}
	default:
		p = &treePrinter{w: bw, hexDump: o.hexDump}
	}
	s := newSession(reg, sel, p, !o.asJSON)
	s.limit = o.count
	s.hold = o.iface == "" // a live capture prints each message at once
	pipe := reassembly.NewPipeline(pipelineConfig(o, ports, s), s.event)
	if o.iface != "" {
		s.afterPrint = func() { bw.Flush() }
		err = s.live(pipe, o, stderr)
	} else {
		var total int64
		for _, src := range sources {
			total += src.size
		}
		bar := newProgress(stderr, o.progress, total)
		err = s.files(pipe, sources, func(done, _ int64) { bar.update(done) })
		bar.done()
	}
	pipe.Close()
	s.flushAll()
	if ferr := bw.Flush(); ferr != nil && err == nil && !isBrokenPipe(ferr) {
		err = ferr
	}
	reportStats(stderr, pipe.Stats())
	return s.malformed, err
}

type namedSource struct {
	name string
	src  reassembly.Source
	size int64
}

func fileSize(name string) int64 {
	if st, err := os.Stat(name); err == nil && st.Mode().IsRegular() {
		return st.Size()
	}
	return 0
}

// memoryLimit is the Go runtime's soft memory limit: RSS stays under 1 GB
// with a full connection table.
const memoryLimit = 900 << 20

func pipelineConfig(o captureOpts, ports reassembly.PortSet, s *session) reassembly.Config {
	return reassembly.Config{
		BrokerPorts:      ports,
		DetectPorts:      o.detect,
		MaxFrame:         o.maxFrame,
		MaxConns:         o.maxConns,
		PlausibleRequest: func(b []byte) bool { return dissect.PlausibleRequest(b, o.maxFrame) },
		WantBody:         s.wantBody,
	}
}

// files feeds every source to the pipeline in order; packet numbers run on
// across files. report hears how many bytes of the total have been read.
func (s *session) files(pipe *reassembly.Pipeline, sources []namedSource, report func(done, total int64)) error {
	var total int64
	for _, src := range sources {
		total += src.size
	}
	var doneBytes int64
	for _, src := range sources {
		for !s.stopped() {
			data, ci, link, err := src.src.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err // it names the file
			}
			doneBytes += int64(len(data)) + 16
			report(doneBytes, total)
			pipe.Packet(data, ci, link)
		}
	}
	return nil
}

// live captures until Ctrl-C, --duration or -c.
func (s *session) live(pipe *reassembly.Pipeline, o captureOpts, stderr io.Writer) error {
	var w io.Writer
	var wf *os.File
	if o.write != "" {
		f, err := os.Create(o.write)
		if err != nil {
			return fmt.Errorf("-w: %v", plainErr(err))
		}
		wf = f
		w = f
	}
	src, err := reassembly.OpenLive(o.iface, reassembly.LiveOptions{WriteTo: w})
	if err != nil {
		if wf != nil {
			wf.Close()
			os.Remove(o.write)
		}
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	go func() {
		<-ctx.Done()
		src.Close()
	}()
	fmt.Fprintf(stderr, "kdissect: capturing on %s (Ctrl-C to stop)\n", o.iface)
	for !s.stopped() {
		data, ci, link, err := src.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				break
			}
			src.Close()
			return fmt.Errorf("capture on %s: %v", o.iface, err)
		}
		pipe.Packet(data, ci, link)
	}
	src.Close()
	if wf != nil {
		if err := wf.Close(); err != nil {
			return fmt.Errorf("-w: %v", err)
		}
	}
	return nil
}

func parseAPIFilter(s string) (map[int16]bool, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	m := map[int16]bool{}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, err := parseAPI(part)
		if err != nil {
			return nil, usageError{"--api: " + err.(usageError).msg}
		}
		m[k] = true
	}
	return m, nil
}

func reportStats(w io.Writer, st reassembly.Stats) {
	if st.UnknownLink > 0 {
		noun := "packets"
		if st.UnknownLink == 1 {
			noun = "packet"
		}
		fmt.Fprintf(w, "kdissect: skipped %d %s of a link type kdissect does not decode\n", st.UnknownLink, noun)
	}
}

func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }
