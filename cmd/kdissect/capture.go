package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly/tlslayer/tlsdec"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
	"github.com/kdissect/kdissect/reassembly"
)

const captureUsage = `Usage: kdissect [flags] FILE...
       kdissect [flags] --iface NAME
       kdissect frame [flags] [FILE | - | --hex HEX]
       kdissect audit [flags] FILE...    (the ACL change log; kdissect audit --help)

Decodes Kafka's ACL admin traffic (CreateAcls, DeleteAcls; every version
0-3) from pcap/pcapng captures, plain or gzip/zstd-compressed (- reads
standard input), or a live interface, and prints each message as an
annotated field tree. Responses are matched to their requests by
correlation id on the same connection. Each FILE is a capture of its own:
packets are numbered from 1 in each. A live capture started as root parses
packets as nobody (--user) once its socket and -w file are open.

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
	version   bool
	user      string
	drop      *dropTarget // who to become once the capture is open; nil: stay
	guess     bool
	// showSecrets: passwords, SCRAM proofs and tokens as on the wire.
	showSecrets bool
	tlsKeylogs  fileList
	keys        *tlsdec.KeyLog // of tlsKeylogs; nil: none
}

// registerInput adds the flags of every command that reads a capture
// (the main command and audit), so that they stay the same.
func (o *captureOpts) registerInput(fs *flag.FlagSet) {
	fs.StringVar(&o.ports, "port", "9092", "broker `PORTS`: a list and ranges, e.g. 9092,9093,19090-19099")
	fs.BoolVar(&o.detect, "detect", true, "also find Kafka on other ports (the side sending plausible request headers is the client)")
	fs.StringVar(&o.iface, "iface", "", "capture live on interface `NAME` (needs root or CAP_NET_RAW)")
	fs.IntVar(&o.count, "c", 0, "stop after `N` messages")
	fs.DurationVar(&o.duration, "duration", 0, "stop a live capture after this long (e.g. 30s)")
	fs.StringVar(&o.write, "w", "", "live capture: also write the raw packets to `FILE` as pcap")
	fs.IntVar(&o.maxFrame, "max-frame", reassembly.DefaultMaxFrame, "largest plausible frame in `BYTES`: a size prefix above it is corruption")
	fs.IntVar(&o.maxConns, "max-conns", reassembly.DefaultMaxConns, "follow at most `N` connections at once: beyond it the least recently active one is evicted")
	fs.StringVar(&o.schemaDir, "schema-dir", "", "load more message definitions (Kafka's JSON format) from `DIR`")
	fs.StringVar(&o.progress, "progress", "auto", "progress bar on stderr: auto (when stderr is a terminal), always, never")
	fs.Var(&o.tlsKeylogs, "tls-keylog", "decrypt TLS with the secrets of the NSS key log `FILE` (SSLKEYLOGFILE); repeatable")
	fs.StringVar(&o.user, "user", "", "live capture: once the socket and -w file are open, parse as user `NAME` (default nobody when run as root)")
}

// checkInput refuses input flags that do not go together.
func (o *captureOpts) checkInput(files []string) error {
	switch {
	case o.iface == "" && len(files) == 0:
		return usageError{"no capture: give pcap/pcapng FILEs, - for standard input, or --iface NAME"}
	case o.iface != "" && len(files) > 0:
		return usageError{"give either FILEs or --iface, not both"}
	case o.iface == "" && (o.write != "" || o.duration != 0):
		return usageError{"-w and --duration go with a live capture (--iface)"}
	case o.iface == "" && o.user != "":
		return usageError{"--user goes with a live capture (--iface)"}
	case o.count < 0, o.duration < 0:
		return usageError{"-c and --duration take positive values"}
	case o.maxFrame < 16:
		return usageError{"--max-frame must be at least 16 bytes"}
	case o.maxConns < 1:
		return usageError{"--max-conns must be at least 1"}
	}
	switch o.progress {
	case "auto", "always", "never":
	default:
		return usageError{"--progress takes auto, always or never"}
	}
	return nil
}

// input is what the input flags resolve to before anything is read.
type input struct {
	ports   reassembly.PortSet
	reg     *dissect.Registry
	sources []namedSource
}

// openInput checks every file (and the --user to become) before anything
// is printed, so that a typo in the third file does not leave half an
// output behind. The caller closes the input.
func (o *captureOpts) openInput(files []string, stdin io.Reader) (*input, error) {
	ports, err := reassembly.ParsePorts(o.ports)
	if err != nil {
		return nil, usageError{"--port: " + err.Error()}
	}
	in := &input{ports: ports}
	if err := o.loadKeyLog(); err != nil {
		return nil, err
	}
	if in.reg, err = loadSchemaDir(o.schemaDir); err != nil {
		return nil, err
	}
	if o.iface != "" {
		if o.drop, err = resolveUser(o.user); err != nil {
			return nil, err
		}
	}
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
			in.close()
			return nil, err
		}
		in.sources = append(in.sources, namedSource{path: f, name: name, src: src, size: fileSize(f)})
	}
	return in, nil
}

func (in *input) close() {
	for _, s := range in.sources {
		s.src.Close()
	}
}

// read feeds the whole input to s: the live interface, or the files with a
// progress bar on stderr. It returns what the pipelines saw.
func (o *captureOpts) read(s *session, in *input, stderr io.Writer) (tally, error) {
	newPipe := func() *reassembly.Pipeline { return reassembly.NewPipeline(pipelineConfig(*o, in.ports, s), s.event) }
	var seen tally
	var err error
	o.warnKeyLog(stderr)
	if o.iface != "" {
		pipe := newPipe()
		err = s.live(pipe, *o, stderr)
		pipe.Close()
		s.flushAll()
		seen.add(pipe)
		return seen, err
	}
	var total int64
	for _, src := range in.sources {
		total += src.size
	}
	bar := newProgress(stderr, o.progress, total)
	err = s.files(newPipe, in.sources, func(done, _ int64) { bar.update(done) }, &seen)
	bar.done()
	return seen, err
}

func runCapture(args []string, stdin io.Reader, stdout, stderr io.Writer) (bool, error) {
	var o captureOpts
	fs := flag.NewFlagSet("kdissect", flag.ContinueOnError)
	o.registerInput(fs)
	fs.BoolVar(&o.asJSON, "json", false, "print NDJSON: one message or event a line (the contract in README.md)")
	fs.BoolVar(&o.summary, "summary", false, "print one line per message")
	fs.BoolVar(&o.all, "all", false, "also show every other API (header decoded, body opaque unless --schema-dir defines it)")
	fs.StringVar(&o.apis, "api", "", "only these `APIS`: names or numbers, comma separated (CreateAcls,31)")
	fs.BoolVar(&o.tui, "tui", false, "open the interactive hex explorer")
	fs.BoolVar(&o.hexDump, "x", false, "add each message's byte layout to the tree output")
	fs.BoolVar(&o.guess, "guess", false, "decode a response whose request was not captured as the first CreateAcls/DeleteAcls response definition (v0-3) that fits it exactly, marked inferred")
	fs.BoolVar(&o.showSecrets, "show-secrets", false, "show SASL passwords, SCRAM proofs and tokens as they are on the wire (default: <redacted, N bytes>, masked in hex)")
	fs.BoolVar(&o.version, "version", false, "print kdissect's version and the VCS revision it was built from")
	files, err := parseInterspersed(fs, captureUsage, args, stdout)
	if err != nil {
		return false, err
	}
	if o.version {
		printVersion(stdout)
		return false, errHelp
	}
	if o.asJSON && o.summary || o.asJSON && o.tui || o.summary && o.tui {
		return false, usageError{"choose one of --json, --summary and --tui"}
	}
	if err := o.checkInput(files); err != nil {
		return false, err
	}
	filter, err := parseAPIFilter(o.apis)
	if err != nil {
		return false, err
	}
	in, err := o.openInput(files, stdin)
	if err != nil {
		return false, err
	}
	defer in.close()

	sel := selector{filter: filter, all: o.all}
	// A full table of --max-conns connections (a million by default) holds
	// ~450 MB; without a limit the collector would let the heap grow to
	// twice that before collecting. GOMEMLIMIT overrides.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	if o.tui {
		return runCaptureTUI(o, in.reg, sel, in.ports, in.sources)
	}
	bw := bufio.NewWriterSize(stdout, 1<<20)
	var p printer
	switch {
	case o.asJSON:
		p = &jsonPrinter{w: bw}
	case o.summary:
		p = &summaryPrinter{textLines{w: bw}}
	default:
		p = &treePrinter{textLines: textLines{w: bw}, hexDump: o.hexDump}
	}
	s := newSession(in.reg, sel, p, !o.asJSON)
	s.limit = o.count
	s.lib.Guess = o.guess
	s.lib.ShowSecrets = o.showSecrets
	s.lib.Hold = o.iface == "" // a live capture prints each message at once
	if o.iface != "" {
		s.afterPrint = func() { bw.Flush() }
	}
	seen, err := o.read(s, in, stderr)
	if ferr := bw.Flush(); ferr != nil && err == nil && !isBrokenPipe(ferr) {
		err = ferr
	}
	reportStats(stderr, seen.stats)
	if err == nil {
		reportNoKafka(stderr, o.ports, &seen)
	}
	return s.malformed, err
}

// reportNoKafka explains an empty output: a capture without one Kafka frame
// on the given ports says what it held instead and which --port to try.
func reportNoKafka(w io.Writer, portFlag string, t *tally) {
	st := t.stats
	if st.Frames > 0 {
		return
	}
	on := "port " + portFlag
	if strings.ContainsAny(portFlag, ",-") {
		on = "ports " + portFlag
	}
	if st.Connections > 0 {
		fmt.Fprintf(w, "kdissect: no Kafka frames in the %s on %s: encrypted (TLS), or not Kafka?\n", plural(st.Connections, "TCP connection"), on)
		return
	}
	var list []reassembly.PortCount
	var conns int64
	for port, n := range t.other {
		list = append(list, reassembly.PortCount{Port: port, Conns: n})
		conns += n
	}
	if conns == 0 {
		// Packets of an unknown link type were reported above already.
		if n := st.Packets - st.UnknownLink; n > 0 || st.Packets == 0 {
			fmt.Fprintf(w, "kdissect: no Kafka traffic found: no TCP connection in %s\n", plural(n, "packet"))
		}
		return
	}
	slices.SortFunc(list, func(a, b reassembly.PortCount) int {
		if a.Conns != b.Conns {
			return cmp.Compare(b.Conns, a.Conns)
		}
		return cmp.Compare(a.Port, b.Port)
	})
	const shown, suggested = 5, 3
	var seen, try []string
	for i, pc := range list {
		if i == shown {
			more := plural(int64(len(list)-shown), "port")
			seen = append(seen, "and "+strings.Replace(more, " ", " more ", 1))
			break
		}
		seen = append(seen, fmt.Sprintf("%d (%d)", pc.Port, pc.Conns))
		if i < suggested {
			try = append(try, strconv.Itoa(int(pc.Port)))
		}
	}
	count := plural(conns, "TCP connection")
	if t.more {
		count = "more than " + count
	}
	where := "on port " + seen[0]
	if len(list) > 1 {
		where = "on ports " + strings.Join(seen, ", ")
	}
	fmt.Fprintf(w, "kdissect: no Kafka traffic found on %s; saw %s %s: if Kafka is there, try --port %s\n",
		on, count, where, strings.Join(try, ","))
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

type namedSource struct {
	path string // as given on the command line: NDJSON's "file"
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
		BrokerPorts: ports,
		DetectPorts: o.detect,
		MaxFrame:    o.maxFrame,
		MaxConns:    o.maxConns,
		Framing:     dissect.KafkaFraming{MaxFrame: o.maxFrame},
		WantBody:    s.wantBody,
		NewLayer:    tlslayer.NewFactory(o.keys),
	}
}

// files reads each source as a capture of its own, in order, each with a
// new pipeline: packet numbers start at 1 in every file, as in tshark and
// Wireshark, and a connection does not run on from one file into the next
// (a frame cut at a file's end is reported incomplete there). Message
// indexes run on over the whole run. Everything a file produced is printed
// before the next is opened, so a printer knows which file a line is from.
// report hears how many bytes of the total have been read; seen, when not
// nil, adds up what each file's pipeline saw.
func (s *session) files(newPipe func() *reassembly.Pipeline, sources []namedSource, report func(done, total int64), seen *tally) error {
	var total int64
	for _, src := range sources {
		total += src.size
	}
	var doneBytes, before int64
	for _, src := range sources {
		if s.stopped() {
			break
		}
		consumed, _ := src.src.(interface{ Consumed() int64 })
		if f, ok := s.p.(interface{ setFile(string) }); ok {
			f.setFile(src.path)
		}
		pipe := newPipe()
		var err error
		for !s.stopped() {
			data, ci, link, rerr := src.src.Next()
			if rerr != nil {
				err = rerr
				break
			}
			if consumed != nil {
				doneBytes = before + consumed.Consumed()
			} else {
				doneBytes += int64(len(data)) + 16
			}
			report(doneBytes, total)
			pipe.Packet(data, ci, link)
		}
		before += src.size
		pipe.Close()
		s.flushAll()
		if seen != nil {
			seen.add(pipe)
		}
		if err != nil && err != io.EOF {
			return err // it names the file
		}
	}
	return nil
}

// tally adds up the counters of the pipelines of one run.
type tally struct {
	stats reassembly.Stats
	other map[uint16]int64 // connections on other ports, by server port
	more  bool             // more than the pipelines told apart
}

func (t *tally) add(p *reassembly.Pipeline) {
	list, more := p.OtherPorts()
	if t.other == nil {
		t.other = map[uint16]int64{}
	}
	for _, pc := range list {
		t.other[pc.Port] += pc.Conns
	}
	t.more = t.more || more
	t.stats.Add(p.Stats())
}

// live captures until Ctrl-C, --duration or -c. Everything that needs
// privileges (the -w file, the socket and its filter) is opened first; then
// the process becomes o.drop before the first packet is parsed.
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
	if err := o.drop.drop(); err != nil {
		src.Close()
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
