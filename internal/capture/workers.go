package capture

import (
	"context"
	"fmt"
	"runtime"

	"github.com/kdissect/kdissect/reassembly"
)

// workers is how many goroutines the run reads with. One is the
// single-threaded loop of files and live. More run the reading, TCP
// reassembly, TLS and framing on one goroutine and the dissection and the
// listeners on the caller's (see pipelined); -c keeps the single loop,
// whose stopping point is the packet during which the N-th message was
// handed out: a reader running ahead would have read (and, live, written
// with -w) packets beyond it.
func (r *Run) workers() int {
	n := r.opts.Workers
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if r.opts.Count > 0 {
		return 1
	}
	return n
}

// Batches of events cross from the reader to the dissector. Their size
// keeps a channel operation rare against the work of the events in it, and
// the memory in flight small: feedBatches of at most about batchBytes of
// copied frames each.
const (
	batchItems  = 256
	batchBytes  = 256 << 10
	feedBatches = 4
	batchHeads  = 32 << 10
)

type itemKind uint8

const (
	itemFile     itemKind = iota // the next events are of file path
	itemProgress                 // report done of total
	itemFlush                    // a pipeline closed: the session hands out what it holds
)

// item is an event, or else a note: the notes are few, and an item small
// (the reader writes one per event into memory the dissector read last).
type item struct {
	ev   reassembly.Event
	note *note
}

type note struct {
	kind        itemKind
	path        string
	done, total int64
}

// batch owns the copies of the memory the pipeline reuses after an emit
// call (Frame.Data, Frame.Packets, Incomplete.Head): they stay valid until
// the dissector gives the batch back. Growing buf or ints leaves the
// slices already taken pointing into the old arrays, which stay valid.
type batch struct {
	items  []item
	frames [batchItems]reassembly.Frame // the pipeline reuses its Frame: the copies sent
	nf     int                          // frames used
	buf    []byte
	ints   []int
}

func (b *batch) keepBytes(p []byte) []byte {
	n := len(b.buf)
	b.buf = append(b.buf, p...)
	return b.buf[n:len(b.buf):len(b.buf)]
}

func (b *batch) keepInts(p []int) []int {
	n := len(b.ints)
	b.ints = append(b.ints, p...)
	return b.ints[n:len(b.ints):len(b.ints)]
}

func (b *batch) reset() {
	clear(b.items)         // the other events are the dissector's now
	clear(b.frames[:b.nf]) // the dissector is done with these (a big b.buf must go)
	b.nf = 0
	b.items, b.buf, b.ints = b.items[:0], b.buf[:0], b.ints[:0]
	if cap(b.buf) > 4*batchBytes {
		b.buf = nil // one huge frame should not stay allocated four times over
	}
}

// feed is the reader's side of the hand-over.
type feed struct {
	full, free chan *batch
	quit       chan struct{} // closed when the dissector gives up
	cur        *batch
	made       int  // batches made so far
	live       bool // hand every event over at once: a live capture shows it as it comes
}

// quitting unwinds the reader from inside the pipeline's emit when the
// dissector is gone.
type quitting struct{}

func newFeed(live bool) *feed {
	return &feed{full: make(chan *batch, feedBatches), free: make(chan *batch, feedBatches), quit: make(chan struct{}), live: live}
}

// next is the batch to fill: one given back, else a new one while fewer
// than feedBatches exist, else the first given back. A dissector that
// keeps up makes two batches take turns: the others' memory (70 KiB of
// frame slots each) is never touched, and a first touch costs a page
// fault per 4 KiB.
func (f *feed) next() *batch {
	select {
	case b := <-f.free:
		return b
	default:
	}
	if f.made < feedBatches {
		f.made++
		// Room for the heads of a batch of frames whose bodies are not
		// kept: growing by append would leave each smaller array behind,
		// fresh memory never used again while there is no collection.
		return &batch{items: make([]item, 0, batchItems), buf: make([]byte, 0, batchHeads), ints: make([]int, 0, batchHeads/8)}
	}
	select {
	case b := <-f.free:
		return b
	case <-f.quit:
		panic(quitting{})
	}
}

func (f *feed) add(it item) {
	if f.cur == nil {
		f.cur = f.next()
	}
	b := f.cur
	if it.note == nil {
		switch e := it.ev.(type) {
		case *reassembly.Frame:
			// A batch is sent when it holds batchItems, so the frame has a
			// slot of its own.
			c := &b.frames[b.nf]
			b.nf++
			*c = *e
			c.Data = b.keepBytes(e.Data)
			c.Packets = b.keepInts(e.Packets)
			it.ev = c
		case *reassembly.Incomplete:
			e.Head = b.keepBytes(e.Head)
		}
	}
	b.items = append(b.items, it)
	if f.live || len(b.items) >= batchItems || len(b.buf) >= batchBytes {
		f.send()
	}
}

func (f *feed) emit(e reassembly.Event) { f.add(item{ev: e}) }

func (f *feed) note(n note) { f.add(item{note: &n}) }

func (f *feed) send() {
	if f.cur == nil {
		return
	}
	select {
	case f.full <- f.cur:
	case <-f.quit:
		panic(quitting{})
	}
	f.cur = nil
}

// pipelined reads the capture on a goroutine of its own and dissects what
// it finds on this one, in the order the single loop would: the reader
// runs the very pipelines of the single loop, with every global state and
// limit of theirs (connection numbering, --max-conns and its evictions,
// the buffer caps, capture-time ticks, ports found by --detect), and hands
// their events over in emit order with the points where a file begins and
// ends, so that the session sees exactly the calls it would see.
func (r *Run) pipelined(ctx context.Context, s *session, res *Result) error {
	f := newFeed(r.opts.Iface != "")
	var rerr error
	go func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(quitting); ok {
					return // the dissector is gone and waits for nothing
				}
				rerr = fmt.Errorf("internal error reading %s: %v", r.Title(), p)
			}
			func() {
				defer func() { recover() }() // quit closed meanwhile: nobody to tell
				f.send()
			}()
			close(f.full)
		}()
		if r.opts.Iface != "" {
			pipe := reassembly.NewPipeline(r.pipelineConfig(s), f.emit)
			rerr = r.live(ctx, s, pipe)
			pipe.Close()
			f.note(note{kind: itemFlush})
			res.add(pipe)
			return
		}
		rerr = r.feedFiles(ctx, f, s, res)
	}()
	// A listener that panics leaves through here: the reader must not
	// wait for it forever.
	defer close(f.quit)
	if l, ok := s.l.(Renderer); ok && r.opts.Iface == "" && !l.Immediate() {
		p := newRenderPool(l, r.reg, r.workers())
		s.pool = p
		defer p.stop()
	}
	for b := range f.full {
		for i := range b.items {
			it := &b.items[i]
			if it.note == nil {
				s.event(it.ev)
				continue
			}
			switch n := it.note; n.kind {
			case itemFile:
				s.file = n.path
			case itemProgress:
				r.opts.Progress(n.done, n.total)
			case itemFlush:
				s.flush()
			}
		}
		b.reset()
		f.free <- b // never blocks: it holds every batch there is
	}
	if p := s.pool; p != nil {
		p.emit(true)
		s.malformed = s.malformed || p.malformed
		s.pool = nil // anything after the capture goes straight to the listener
	}
	return rerr
}

// feedFiles is files on the reader's side: the same loop, what it told the
// session put in the feed instead. -c never stops it (see workers).
//
// With the default selection (the ACL messages) the packets are read
// ahead on a third goroutine (prefetch): the dissector has little to do,
// so the reading goroutine is the bound and the other core mostly idle.
// On the 1 GB benchmark capture --summary took 0.24-0.28 s with it
// against 0.29-0.33 s without. With --all or --api the dissection is the
// bound, and the read-ahead's copy took time from it (--all --summary
// 10% slower), so it is not used.
func (r *Run) feedFiles(ctx context.Context, f *feed, s *session, res *Result) error {
	var progress func(done, total int64)
	if r.opts.Progress != nil {
		progress = func(done, total int64) { f.note(note{kind: itemProgress, done: done, total: total}) }
	}
	return r.readFiles(ctx, fileHooks{
		stopped: func() bool { return false },
		open: func(path string) *reassembly.Pipeline {
			f.note(note{kind: itemFile, path: path})
			return reassembly.NewPipeline(r.pipelineConfig(s), f.emit)
		},
		closed:   func() { f.note(note{kind: itemFlush}) },
		progress: progress,
		prefetch: r.opts.APIs == nil && !r.opts.All,
	}, res)
}
