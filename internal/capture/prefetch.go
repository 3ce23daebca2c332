package capture

import (
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/kdissect/kdissect/reassembly"
)

// prefetch reads a file's packets on a goroutine of its own, ahead of the
// pipeline that takes them from Next in the same order, with the same
// capture info and the same end: the pipeline sees exactly the calls it
// would see reading the file itself.
//
// It pays when the pipeline is the slower side. When the reader is (a TLS
// capture without its keys: nothing behind the reader but record
// lengths), the pipeline waits for nearly every batch, and copying the
// packets only lengthens the path that bounds the run: after a first
// window of batches that mostly found Next waiting, the reader stops and
// Next reads the source itself.
type prefetch struct {
	src      reassembly.Source
	consumed interface{ Consumed() int64 }
	full     chan *pktBatch // closed by the reader once halted
	free     chan *pktBatch
	quit     chan struct{} // stop: the caller is done
	halt     chan struct{} // stop reading ahead, the source to be read by Next
	done     chan struct{}
	cur      *pktBatch
	i        int
	last     int64 // Consumed as of the packet Next returned last
	got      int   // batches taken, up to the end of the window
	waited   int   // of them, those Next had to wait for
	direct   bool  // the reader has halted: Next reads the source
}

// The window that decides whether reading ahead pays: its batches after
// the first (which Next always waits for), and how many of them may have
// kept Next waiting. On the benchmark captures Next waited for 10-30% of
// the batches where the read-ahead was faster, and for 80-98% on the TLS
// capture without keys, where it was slower.
const (
	prefetchWindow = 16
	prefetchWaits  = 12
)

// A pktBatch is a run of packets copied out of the reader's buffer, which
// the next read reuses, and the error that ended the file after them.
type pktBatch struct {
	buf  []byte
	pkts []fetched
	err  error
	pan  any // the reader's panic, raised again by Next
}

type fetched struct {
	end      int // data is buf[previous end:end]
	ci       gopacket.CaptureInfo
	link     layers.LinkType
	consumed int64
}

// Batches of up to a mebibyte: each hand-over wakes the other side, and
// smaller ones measured slower (64 KiB ones by a third on the TLS
// benchmark); four of them bound the memory in flight.
const (
	prefetchPkts    = 2048
	prefetchBytes   = 1 << 20
	prefetchBatches = 4
)

func newPrefetch(src reassembly.Source) *prefetch {
	p := &prefetch{src: src, full: make(chan *pktBatch, prefetchBatches), free: make(chan *pktBatch, prefetchBatches),
		quit: make(chan struct{}), halt: make(chan struct{}), done: make(chan struct{})}
	p.consumed, _ = src.(interface{ Consumed() int64 })
	go p.read()
	return p
}

func (p *prefetch) read() {
	defer close(p.done)
	made := 0
	for {
		select {
		case <-p.halt:
			close(p.full)
			return
		default:
		}
		var b *pktBatch
		select {
		case b = <-p.free:
		default:
			if made < prefetchBatches {
				made++
				b = &pktBatch{buf: make([]byte, 0, prefetchBytes+64<<10), pkts: make([]fetched, 0, prefetchPkts)}
			} else {
				select {
				case b = <-p.free:
				case <-p.quit:
					return
				}
			}
		}
		p.fill(b)
		select {
		case p.full <- b:
		case <-p.quit:
			return
		}
		if b.err != nil || b.pan != nil {
			return
		}
	}
}

// fill reads packets into b until it is full or the file ends; a panic
// of the reader is kept for Next, to be raised where the loop reading the
// file itself would have raised it.
func (p *prefetch) fill(b *pktBatch) {
	defer func() {
		if v := recover(); v != nil {
			b.pan = v
		}
	}()
	for len(b.pkts) < prefetchPkts && len(b.buf) < prefetchBytes {
		data, ci, link, err := p.src.Next()
		if err != nil {
			b.err = err
			return
		}
		b.buf = append(b.buf, data...)
		f := fetched{end: len(b.buf), ci: ci, link: link}
		if p.consumed != nil {
			f.consumed = p.consumed.Consumed()
		}
		b.pkts = append(b.pkts, f)
	}
}

// Next is the source's Next, from the batches read ahead.
func (p *prefetch) Next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if p.direct {
		data, ci, link, err := p.src.Next()
		if p.consumed != nil {
			p.last = p.consumed.Consumed()
		}
		return data, ci, link, err
	}
	for p.cur == nil || p.i == len(p.cur.pkts) {
		if p.cur != nil {
			if p.cur.pan != nil {
				panic(p.cur.pan)
			}
			if p.cur.err != nil {
				return nil, gopacket.CaptureInfo{}, 0, p.cur.err
			}
			p.cur.buf, p.cur.pkts = p.cur.buf[:0], p.cur.pkts[:0]
			p.free <- p.cur // never blocks: it holds every batch there is
		}
		if !p.take() {
			p.cur, p.direct = nil, true // halted, every batch read ahead handed out
			return p.Next()
		}
	}
	f := &p.cur.pkts[p.i]
	start := 0
	if p.i > 0 {
		start = p.cur.pkts[p.i-1].end
	}
	p.i++
	p.last = f.consumed
	return p.cur.buf[start:f.end:f.end], f.ci, f.link, nil
}

// take makes the next batch cur, false when there is none: the reader
// has halted. It counts the batches it waited for in the window, and
// halts the reader at its end if they were most.
func (p *prefetch) take() bool {
	var ok bool
	select {
	case p.cur, ok = <-p.full:
	default:
		if p.got > 0 && p.got <= prefetchWindow {
			p.waited++
		}
		p.cur, ok = <-p.full
	}
	p.i = 0
	if p.got++; p.got == prefetchWindow+1 && p.waited >= prefetchWaits {
		close(p.halt)
	}
	return ok
}

// Consumed is the file's Consumed when the packet Next returned last was read.
func (p *prefetch) Consumed() int64 { return p.last }

// stop ends the reading goroutine; the source is the caller's again.
func (p *prefetch) stop() {
	close(p.quit)
	<-p.done
}
