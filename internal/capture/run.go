package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
	"github.com/kdissect/kdissect/reassembly/tlslayer/tlsdec"
)

// MemoryLimit is the Go runtime's soft memory limit the binary sets: RSS
// stays under 1 GB with a full connection table (a million connections
// hold ~450 MB; without a limit the collector lets the heap grow to twice
// that before collecting).
const MemoryLimit = 900 << 20

// Listener takes a run's records, in capture order.
type Listener interface {
	Record(r *Record)
}

// ListenerFunc is a function as a Listener.
type ListenerFunc func(r *Record)

// Record calls f.
func (f ListenerFunc) Record(r *Record) { f(r) }

// Tee hands every record to each listener in turn: one dissection run,
// many views.
func Tee(ls ...Listener) Listener {
	return ListenerFunc(func(r *Record) {
		for _, l := range ls {
			l.Record(r)
		}
	})
}

// Run is a capture opened for reading: its files (or interface), the
// definitions and key logs it decodes with, checked before anything is
// read, so that a typo in the third file leaves no half output behind.
type Run struct {
	opts    Options
	reg     *dissect.Registry
	ports   reassembly.PortSet
	keys    *tlsdec.KeyLog
	drop    *dropTarget
	sources []source
	// embeddedSkipped counts the key log lines of pcapng files' secrets
	// blocks that were not understood (counted in keys.Skipped too).
	embeddedSkipped int
}

type source struct {
	path string // as given on the command line: NDJSON's "file"
	name string
	src  reassembly.Source
	size int64
}

// Open checks o and opens everything the run will read; the caller closes
// the run. Errors are one sentence; a UsageError is a wrong choice of
// options.
func Open(o Options, files []string, stdin io.Reader) (*Run, error) {
	if err := o.Check(files); err != nil {
		return nil, err
	}
	ports, err := reassembly.ParsePorts(o.Ports)
	if err != nil {
		return nil, usagef("--port: %v", err)
	}
	r := &Run{opts: o, ports: ports}
	// A key log that is a FIFO or a pipe makes Open wait for its writer:
	// Ctrl-C must end that wait, also when SIGINT was ignored on entry (a
	// job a script starts in the background).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	r.keys, err = loadKeyLog(ctx, o.KeyLogs, o.Iface != "")
	stop()
	if err != nil {
		return nil, err
	}
	if r.reg, err = LoadRegistry(o.SchemaDir); err != nil {
		return nil, err
	}
	if o.Iface != "" {
		if r.drop, err = resolveUser(o.User); err != nil {
			return nil, err
		}
	}
	if r.keys == nil {
		// A pcapng file may carry its key log (embedded).
		r.keys = tlsdec.NewKeyLog()
	}
	fo := reassembly.FileOptions{Secrets: r.embedded}
	for _, f := range files {
		var src reassembly.Source
		name := f
		if f == "-" {
			name = "standard input"
			src, err = reassembly.OpenReaderWith(name, stdin, fo)
		} else {
			src, err = reassembly.OpenFileWith(f, fo)
		}
		if err != nil {
			r.Close()
			return nil, err
		}
		r.sources = append(r.sources, source{path: f, name: name, src: src, size: fileSize(f)})
	}
	return r, nil
}

// embedded takes the secrets a pcapng file carries in its Decryption
// Secrets Blocks (editcap --inject-secrets), as Wireshark does: TLS key
// log lines join the --tls-keylog secrets. Lines it does not understand
// are not --tls-keylog's to report.
func (r *Run) embedded(kind uint32, data []byte) {
	if kind != reassembly.SecretsTLSKeyLog {
		return
	}
	k, err := tlsdec.ParseKeyLog(bytes.NewReader(data))
	if err != nil {
		return // a bytes.Reader does not fail
	}
	r.embeddedSkipped += k.Skipped()
	r.keys.Merge(k)
}

func loadKeyLog(ctx context.Context, paths []string, live bool) (*tlsdec.KeyLog, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	// A live capture reads the files again when a client random has no
	// secrets yet: the clients write their key log while kdissect watches.
	k, err := tlsdec.LoadKeyLogs(ctx, tlsdec.KeyLogOptions{Follow: live}, paths...)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("--tls-keylog %s: %v", pe.Path, pe.Err)
		}
		return nil, fmt.Errorf("--tls-keylog: %v", err)
	}
	return k, nil
}

func fileSize(name string) int64 {
	if st, err := os.Stat(name); err == nil && st.Mode().IsRegular() {
		return st.Size()
	}
	return 0
}

// Close closes the files.
func (r *Run) Close() {
	for _, s := range r.sources {
		s.src.Close()
	}
	r.sources = nil
}

// Registry is the definitions the run decodes with: a listener that keeps
// a message's bytes decodes it again with Registry().Decode(raw,
// Exchange.Options).
func (r *Run) Registry() *dissect.Registry { return r.reg }

// OnProgress sets Options.Progress: a view that starts after Open hears
// how far the reading got.
func (r *Run) OnProgress(f func(done, total int64)) { r.opts.Progress = f }

// BatchHeadersOnly sets Options.BatchHeaders: a view that learns only
// after Open (its filter needs the registry) that it shows no record.
func (r *Run) BatchHeadersOnly(on bool) { r.opts.BatchHeaders = on }

// Live says whether the run captures from an interface.
func (r *Run) Live() bool { return r.opts.Iface != "" }

// Title names what the run reads: the interface, or the files' base names.
func (r *Run) Title() string {
	if r.opts.Iface != "" {
		return r.opts.Iface
	}
	names := make([]string, len(r.sources))
	for i, s := range r.sources {
		names[i] = filepath.Base(s.name)
	}
	return strings.Join(names, ", ")
}

// Read feeds the whole capture to l: the files in order, each a capture of
// its own (packets numbered from 1, no connection running on into the
// next, message indexes running on over the run), or the live interface
// until ctx ends, SIGINT or SIGTERM, --duration or -c. It returns what the
// pipelines saw; the error names the file or interface.
func (r *Run) Read(ctx context.Context, l Listener) (Result, error) {
	s := newSession(r, l)
	var res Result
	if r.keys != nil {
		if n := r.keys.Skipped() - r.embeddedSkipped; n > 0 {
			r.warn("--tls-keylog: skipped %s kdissect does not understand", plural(int64(n), "line"))
		}
	}
	var err error
	if r.workers() > 1 {
		err = r.pipelined(ctx, s, &res)
	} else if r.opts.Iface != "" {
		pipe := r.newPipeline(s)
		err = r.live(ctx, s, pipe)
		pipe.Close()
		s.flush()
		res.add(pipe)
	} else {
		err = r.files(ctx, s, &res)
	}
	res.Malformed = s.malformed
	res.refused = s.refused
	res.undecrypted, res.tlsReason, res.keyLogs = s.undecrypted, s.tlsReason, len(r.opts.KeyLogs) > 0
	if err != nil {
		return res, err // the error is the one sentence a failed run says
	}
	if res.Stats.UnknownLink > 0 {
		r.warn("skipped %s of a link type kdissect does not decode", plural(res.Stats.UnknownLink, "packet"))
	}
	if n := res.Stats.Snapped; n > 0 {
		r.warn("%s of Kafka connections cut short by the capture's snap length: the bytes cut are gaps (capture with tcpdump -s 0 to keep them)", plural(n, "packet"))
	}
	return res, err
}

func (r *Run) warn(format string, a ...any) {
	if r.opts.Warn != nil {
		r.opts.Warn(fmt.Sprintf(format, a...))
	}
}

// pipelineConfig is the one place the reassembly pipeline is configured.
func (r *Run) pipelineConfig(s *session) reassembly.Config {
	return reassembly.Config{
		BrokerPorts: r.ports,
		DetectPorts: r.opts.Detect,
		MaxFrame:    r.opts.MaxFrame,
		MaxConns:    r.opts.MaxConns,
		Framing:     s.lib.Framing(r.opts.MaxFrame),
		NewLayer:    tlslayer.NewFactory(r.keys),
		LeadingTLS:  func() reassembly.Sniffer { return new(tlsdec.RecordScan) },
	}
}

func (r *Run) newPipeline(s *session) *reassembly.Pipeline {
	return reassembly.NewPipeline(r.pipelineConfig(s), s.event)
}

// progressEvery is how many packets pass between progress reports:
// reading the clock for every packet would cost more than a bar is worth.
const progressEvery = 1024

// files reads each source with a pipeline of its own. Everything a file
// produced is handed out before the next is opened, so that a record
// knows which file it is from.
func (r *Run) files(ctx context.Context, s *session, res *Result) error {
	return r.readFiles(ctx, fileHooks{
		stopped: s.stopped,
		open: func(path string) *reassembly.Pipeline {
			s.file = path
			return r.newPipeline(s)
		},
		closed:   s.flush,
		progress: r.opts.Progress,
	}, res)
}

// fileHooks are what the file loop tells its side of the run: the single
// path calls the session; the workers' reader puts items in the feed.
type fileHooks struct {
	stopped  func() bool
	open     func(path string) *reassembly.Pipeline // a file's pipeline
	closed   func()                                 // after its pipeline is flushed
	progress func(done, total int64)                // nil: no bar
	prefetch bool                                   // the packets are read ahead on a goroutine of their own
}

// readFiles is the one loop over the files, whichever side it feeds.
func (r *Run) readFiles(ctx context.Context, h fileHooks, res *Result) error {
	var total int64
	for _, src := range r.sources {
		total += src.size
	}
	l := fileLoop{h: h, total: total}
	for _, src := range r.sources {
		if h.stopped() || ctx.Err() != nil {
			break
		}
		err := l.file(ctx, src)
		l.before += src.size
		res.add(l.pipe)
		if err != nil && err != io.EOF {
			return err // it names the file
		}
	}
	if h.progress != nil {
		h.progress(l.before, total)
	}
	return nil
}

// fileLoop is readFiles' count of the bytes and packets read so far.
type fileLoop struct {
	h                   fileHooks
	total, before, done int64
	n                   int
	pipe                *reassembly.Pipeline
}

// file reads one source into a pipeline of its own, flushed at its end.
// The read-ahead is stopped by a defer, so that it does not outlive a
// pipeline that panics.
func (l *fileLoop) file(ctx context.Context, src source) error {
	h := l.h
	consumed, _ := src.src.(interface{ Consumed() int64 })
	next := src.src.Next
	if h.prefetch {
		ahead := newPrefetch(src.src)
		defer ahead.stop()
		next = ahead.Next
		if consumed != nil {
			consumed = ahead
		}
	}
	l.pipe = h.open(src.path)
	var err error
	for !h.stopped() {
		data, ci, link, rerr := next()
		if rerr != nil {
			err = rerr
			break
		}
		if consumed != nil {
			l.done = l.before + consumed.Consumed()
		} else {
			l.done += int64(len(data)) + 16
		}
		if l.n++; l.n%progressEvery == 0 {
			if ctx.Err() != nil {
				break
			}
			if h.progress != nil {
				h.progress(l.done, l.total)
			}
		}
		l.pipe.Packet(data, ci, link)
	}
	l.pipe.Close()
	h.closed()
	return err
}

// live captures until ctx ends, a signal, --duration or -c. Everything that
// needs privileges (the -w file, the socket and its filter) is opened
// first; then the process becomes the --user before the first packet is
// parsed.
func (r *Run) live(ctx context.Context, s *session, pipe *reassembly.Pipeline) error {
	o := &r.opts
	var w io.Writer
	var wf *os.File
	if o.Write != "" {
		f, err := os.Create(o.Write)
		if err != nil {
			return fmt.Errorf("-w: %v", PlainErr(err))
		}
		wf, w = f, f
	}
	discard := func() {
		if wf != nil {
			wf.Close()
			os.Remove(o.Write)
		}
	}
	src, err := reassembly.OpenLive(o.Iface, reassembly.LiveOptions{WriteTo: w})
	if err != nil {
		discard()
		return err
	}
	if err := r.drop.drop(); err != nil {
		src.Close()
		discard()
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	go func() {
		<-ctx.Done()
		src.Close()
	}()
	r.warn("capturing on %s (Ctrl-C to stop)", o.Iface)
	for !s.stopped() {
		data, ci, link, err := src.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				break
			}
			src.Close()
			return fmt.Errorf("capture on %s: %v", o.Iface, err)
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
