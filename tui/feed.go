package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/dissect/audit"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/render"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

// Feed is the explorer's listener on a capture run: an entry for each
// message, and the message's bytes, not its tree; the explorer decodes the
// selected one again on demand (Load).
type Feed struct {
	reg     *dissect.Registry
	entries chan Entry
	stop    <-chan struct{} // the explorer quit: nobody reads entries
	mu      sync.Mutex
	recs    map[int]stored
	// malformed mirrors the run's answer where the explorer can read it
	// while the reader still runs (the user may quit first).
	malformed atomic.Bool
	// undecrypted are the TLS connections whose session could not be
	// decrypted (no key log, or no key for them): the progress reports
	// carry their count to the explorer, whose empty list says why.
	undecrypted  map[reassembly.ConnKey]bool
	nUndecrypted atomic.Int64
	// blind finds the audit's blind spots in the records that are not
	// messages, as `kdissect audit` does (under mu).
	blind *render.Audit
}

// stored is a listed message's frame and how it was decoded.
type stored struct {
	frame []byte
	opts  dissect.Options
}

// NewFeed returns a feed whose messages decode again with reg.
func NewFeed(reg *dissect.Registry) *Feed {
	return &Feed{reg: reg, entries: make(chan Entry, 1024), recs: map[int]stored{}}
}

// Record lists a message; other records only count toward malformed (the
// explorer lists messages).
func (f *Feed) Record(r *capture.Record) {
	if r.Malformed {
		f.malformed.Store(true)
	}
	if r.Kind == capture.KindEvent {
		f.countTLS(r)
	}
	if r.Kind != capture.KindMessage {
		f.mu.Lock()
		if f.blind == nil {
			f.blind = render.NewAudit(io.Discard, render.AuditOptions{Format: "json"})
		}
		f.blind.Record(r)
		f.mu.Unlock()
		return
	}
	m, x := r.Message, &r.Exchange
	f.mu.Lock()
	f.recs[x.Index] = stored{frame: bytes.Clone(m.Raw), opts: x.Options} // the run reuses m.Raw after this call
	f.mu.Unlock()
	e := EntryOf(m)
	e.HasProblems = r.Malformed
	e.Index, e.Time, e.Src, e.Dst, e.Peer = x.Index, r.Time, r.Flow.Src.String(), r.Flow.Dst.String(), x.Peer
	e.Who, e.Identity = x.Identity.String(), x.Identity
	if cs := x.Software; cs != nil {
		e.Software = cs.Name + " " + cs.Version
		e.SoftwareName, e.SoftwareVersion, e.HasSoftware = cs.Name, cs.Version, true
	}
	if r.TLS != nil {
		e.TLS = "TLS " + r.TLS.Version + " " + r.TLS.Cipher
		e.TLSVersion, e.TLSCipher, e.TLSSNI = r.TLS.Version, r.TLS.Cipher, r.TLS.SNI
	}
	e.Latency, e.HasLatency, e.Inferred = x.Latency, x.HasLatency, x.Inferred
	e.StreamOffset, e.File = r.Offset, r.File
	e.Packets = make([]int32, len(r.Packets)) // the run reuses r.Packets
	for i, n := range r.Packets {
		e.Packets[i] = int32(n)
	}
	if e.Peer == 0 || x.PeerCut {
		e.Peer = -1
	}
	select {
	case f.entries <- e:
	case <-f.stop:
	}
}

// countTLS counts a connection whose TLS session was not decrypted, once.
func (f *Feed) countTLS(r *capture.Record) {
	le, ok := r.Event.(*reassembly.LayerEvent)
	if !ok {
		return
	}
	s, ok := le.Value.(*tlslayer.Session)
	if !ok || s.Decrypted {
		return
	}
	k := le.Flow.Conn
	f.mu.Lock()
	if f.undecrypted == nil {
		f.undecrypted = map[reassembly.ConnKey]bool{}
	}
	if !f.undecrypted[k] {
		f.undecrypted[k] = true
		f.nUndecrypted.Add(1)
	}
	f.mu.Unlock()
}

// BlindSpots are what the audit could not see so far (TLS without keys,
// gaps, cut frames, responses without their request, ...), in capture
// order: the audit view's header names them.
func (f *Feed) BlindSpots() []audit.BlindSpot {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.blind == nil {
		return nil
	}
	return slices.Clone(f.blind.BlindSpots())
}

// Undecrypted is how many TLS connections could not be decrypted so far.
func (f *Feed) Undecrypted() int { return int(f.nUndecrypted.Load()) }

// Load decodes a listed message again from its stored bytes.
func (f *Feed) Load(index int) (*dissect.Message, error) {
	f.mu.Lock()
	r, ok := f.recs[index]
	f.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("message #%d is not in the capture", index)
	}
	return f.reg.Decode(r.frame, r.opts), nil
}

// Reader is a capture being read in the background into the explorer's
// channels.
type Reader struct {
	Load     Loader
	Entries  <-chan Entry
	Progress <-chan ProgressMsg
	feed     *Feed
	done     chan struct{}
	err      error
}

// StartReader starts reading run: an entry for each message, progress
// reports, and a last report with Finished set before both channels close.
func StartReader(ctx context.Context, run *capture.Run) *Reader {
	feed := NewFeed(run.Registry())
	feed.stop = ctx.Done()
	pch := make(chan ProgressMsg, 16)
	rd := &Reader{Load: feed.Load, Entries: feed.entries, Progress: pch, feed: feed, done: make(chan struct{})}
	var last int64
	run.OnProgress(func(done, total int64) {
		if done-last < 1<<20 {
			return
		}
		last = done
		select {
		case pch <- ProgressMsg{Done: done, Total: total, Undecrypted: feed.Undecrypted()}:
		default: // the explorer is busy: it gets the next report
		}
	})
	go func() {
		_, err := run.Read(ctx, feed)
		pch <- ProgressMsg{Finished: true, Err: err, Undecrypted: feed.Undecrypted()}
		close(feed.entries)
		close(pch)
		rd.err = err
		close(rd.done)
	}()
	return rd
}

// Result says whether a malformed record was met and how the reading
// ended; with wait false it does not wait for the reader, and the error is
// nil while it runs.
func (rd *Reader) Result(wait bool) (malformed bool, err error) {
	if wait {
		<-rd.done
	}
	select {
	case <-rd.done:
		return rd.feed.malformed.Load(), rd.err
	default:
		return rd.feed.malformed.Load(), nil
	}
}

// SelectAPIs widens the command line's default selection (the ACL APIs)
// to every API the audit view reads, Envelopes included: the explorer's
// audit view shows every kind of change, as kdissect audit does, and it
// can only show what the run hands out. --api and --all stay as given, and
// nothing changes unless the run is for the explorer.
func SelectAPIs(o *capture.Options, explorer bool) {
	if explorer && o.APIs == nil && !o.All {
		o.APIs = audit.APIs(nil, false)
	}
}

// Explore shows the explorer over run while it is read in the background,
// with the display filter filter (-Y; "" none) in its filter bar. The
// explorer may quit before the reader finishes: the reading's error no
// longer matters then, and what was read so far says whether it was
// malformed.
func Explore(run *capture.Run, filter string) (malformed bool, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rd := StartReader(ctx, run)
	o := Options{Title: run.Title(), Live: run.Live(), Registry: run.Registry(), Filter: filter, BlindSpots: rd.feed.BlindSpots}
	if err := Run(rd.Load, rd.Entries, rd.Progress, o); err != nil {
		return false, err
	}
	return rd.Result(false)
}
