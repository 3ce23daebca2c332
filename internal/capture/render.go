package capture

import "github.com/kdissect/kdissect/dissect"

// Renderer is a Listener whose output for a record is bytes that depend on
// that record alone, written in capture order: a printer. A run that reads
// with more than one worker, into a Renderer alone, decodes and renders
// its messages on a goroutine per worker and hands the bytes back in
// order, for --all --json and trees spend most of their time there and
// one goroutine would leave the other cores idle. Record(r) must write
// what Emit(Render(nil, r)) writes.
type Renderer interface {
	Listener
	// Render appends r's output to b. It is called on any goroutine, on
	// several at once; r is valid during the call only.
	Render(b []byte, r *Record) []byte
	// Emit writes output Render made, on the run's goroutine, in order.
	Emit(b []byte)
	// Immediate says each record is to be written as it comes (live or
	// line-buffered output): the run then renders on its own goroutine,
	// for a record held for a renderer would wait for the next.
	Immediate() bool
}

// What the renderers hold at most: jobs in flight per renderer, and bytes
// of frames in flight (always at least one job): a run of 1 MiB Produce
// frames keeps a few in flight, not hundreds, and their output (ten times
// the frame in NDJSON) with them.
const (
	renderAhead      = 4
	renderAheadBytes = 4 << 20
	// renderKeep is the largest buffer a finished job keeps for the next,
	// and renderKeepBig what the jobs keep at most of larger ones: a 1 MiB
	// Produce frame of 10,000 records renders 20 MB of NDJSON, and growing
	// a new buffer to that for each job by append (a quarter at a time)
	// copied it several times over. The frames in flight are bounded, so
	// is their output: up to about twenty times renderAheadBytes.
	renderKeep    = 4 << 20
	renderKeepBig = 32 * renderAheadBytes
)

// renderJob is a record on its way through a renderer: a message to
// decode (frame) and render, or a record rendered already (done at once).
type renderJob struct {
	rec   Record
	frame []byte
	out   []byte
	big   int // cap(out) as counted in renderPool.big, when over renderKeep
	fault any // a renderer's panic, raised again on the run's goroutine
	done  chan struct{}
}

// renderPool decodes and renders messages on its goroutines and emits
// every record's output in the order the run handed them in.
type renderPool struct {
	l     Renderer
	reg   *dissect.Registry
	jobs  chan *renderJob
	queue []*renderJob // in capture order, oldest first
	free  []*renderJob
	held  int // bytes of the frames in queue
	most  int // jobs in queue at most
	big   int // bytes of the output buffers over renderKeep the jobs keep
	// malformed: a message a renderer decoded was malformed.
	malformed bool
}

func newRenderPool(l Renderer, reg *dissect.Registry, workers int) *renderPool {
	p := &renderPool{l: l, reg: reg, most: renderAhead * workers}
	p.jobs = make(chan *renderJob, p.most)
	for range workers {
		go p.work()
	}
	return p
}

func (p *renderPool) work() {
	d := p.reg.NewDecoder()
	for j := range p.jobs {
		p.render(d, j)
		j.done <- struct{}{}
	}
}

func (p *renderPool) render(d *dissect.Decoder, j *renderJob) {
	defer func() {
		if v := recover(); v != nil {
			j.fault = v
		}
	}()
	r := &j.rec
	r.Message = d.Decode(j.frame, r.Exchange.Options)
	r.Malformed = Malformed(r)
	j.out = p.l.Render(j.out[:0], r)
	r.Message = nil
}

func (p *renderPool) job() *renderJob {
	if n := len(p.free); n > 0 {
		j := p.free[n-1]
		p.free = p.free[:n-1]
		return j
	}
	return &renderJob{done: make(chan struct{}, 1)}
}

// message queues a message the session would have decoded: r without
// its Message, frame and options as the session had them (both copied).
func (p *renderPool) message(r *Record, frame []byte) {
	j := p.job()
	j.rec = *r
	j.frame = append(j.frame[:0], frame...)
	p.held += len(j.frame)
	p.queue = append(p.queue, j)
	p.jobs <- j // never blocks: the queue holds at most what the channel does
	p.emit(false)
}

// record takes a record the session decoded itself (an event, an
// unmatched response, a guess): straight out when nothing waits before
// it, else rendered now and queued behind what does.
func (p *renderPool) record(r *Record) {
	if len(p.queue) == 0 {
		p.l.Record(r)
		return
	}
	j := p.job()
	j.rec, j.frame = Record{Malformed: r.Malformed}, j.frame[:0]
	j.out = p.l.Render(j.out[:0], r)
	j.done <- struct{}{}
	p.queue = append(p.queue, j)
	p.emit(false)
}

// emit writes out the finished jobs at the head of the queue; it waits for
// them while the queue is over its bounds, or, with all, until it is
// empty.
func (p *renderPool) emit(all bool) {
	for len(p.queue) > 0 {
		j := p.queue[0]
		if all || len(p.queue) >= p.most || p.held > renderAheadBytes {
			<-j.done
		} else {
			select {
			case <-j.done:
			default:
				return
			}
		}
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.held -= len(j.frame)
		if j.fault != nil {
			panic(j.fault)
		}
		p.malformed = p.malformed || j.rec.Malformed
		p.l.Emit(j.out)
		j.rec = Record{}
		p.keepOut(j)
		if cap(j.frame) > renderKeep {
			j.frame = nil
		}
		p.free = append(p.free, j)
	}
}

// keepOut decides whether j's output buffer stays for its next job: one
// of up to renderKeep always, a larger one while those kept add up to no
// more than renderKeepBig.
func (p *renderPool) keepOut(j *renderJob) {
	p.big -= j.big
	j.big = 0
	switch c := cap(j.out); {
	case c <= renderKeep:
	case p.big+c <= renderKeepBig:
		p.big += c
		j.big = c
	default:
		j.out = nil
	}
}

// stop ends the renderers once they have done what they hold.
func (p *renderPool) stop() { close(p.jobs) }
