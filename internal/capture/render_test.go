package capture

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// lineRenderer renders a record as one line naming it, slowly and by
// chance, so that renderers finish out of order; Emit checks the pool's
// bounds each time it is called.
type lineRenderer struct {
	pool    *renderPool
	out     strings.Builder
	records int // Record calls: records written straight out
	panicAt int // Render panics on this message index
	t       *testing.T
}

func (l *lineRenderer) Render(b []byte, r *Record) []byte {
	if r.Kind != KindMessage {
		return fmt.Appendf(b, "event %d\n", r.Offset)
	}
	if r.Exchange.Index == l.panicAt {
		panic("renderer fault")
	}
	time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
	return fmt.Appendf(b, "message %d %s malformed=%v\n", r.Exchange.Index, r.Message.APIName, r.Malformed)
}

func (l *lineRenderer) Emit(b []byte) {
	if p := l.pool; len(p.queue) > p.most || p.held > renderAheadBytes+64<<10 {
		l.t.Errorf("%d jobs and %d frame bytes in flight, bounds %d and %d", len(p.queue), p.held, p.most, renderAheadBytes)
	}
	l.out.Write(b)
}

func (l *lineRenderer) Immediate() bool { return false }

func (l *lineRenderer) Record(r *Record) {
	l.records++
	l.Emit(l.Render(nil, r))
}

// feedPool hands the pool n messages, a record decoded already every
// seventh (every tenth of those after the queue emptied), and a frame that is not CreateAcls at message 13: what it
// emits must be every one in the order handed, whichever renderer
// finished first.
func feedPool(t *testing.T, l *lineRenderer, workers, n int) (got, want string) {
	reg := dissect.NewRegistry()
	p := newRenderPool(l, reg, workers)
	defer p.stop()
	l.pool = p
	r := kmsg.NewCreateACLsRequest()
	r.Version = 3
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceName, c.Principal, c.Host = "orders", "User:alice", "*"
	r.Creations = append(r.Creations, c)
	frame := testkit.KmsgRequest(&r, 1, testkit.Ptr("test"))
	var w strings.Builder
	for i := 1; i <= n; i++ {
		f := frame
		if i == 13 {
			f = append(frame[:len(frame):len(frame)], 0xff) // a byte past the message: a problem
		}
		p.message(&Record{Kind: KindMessage, Exchange: dissect.Exchange{Index: i,
			Options: dissect.Options{Direction: dissect.Request}}}, f)
		fmt.Fprintf(&w, "message %d CreateAcls malformed=%v\n", i, i == 13)
		if i%70 == 0 {
			p.emit(true) // the queue empties: the event goes straight out
		}
		if i%7 == 0 {
			p.record(&Record{Kind: KindEvent, Offset: int64(i)})
			fmt.Fprintf(&w, "event %d\n", i)
		}
	}
	p.emit(true)
	if !p.malformed {
		t.Error("the malformed message did not make the pool's run malformed")
	}
	return l.out.String(), w.String()
}

func TestRenderPoolKeepsCaptureOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		l := &lineRenderer{t: t}
		got, want := feedPool(t, l, workers, 2000)
		if got != want {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Fatalf("%d renderers: output differs at byte %d: got %q, want %q", workers, i,
				got[max(0, i-40):min(len(got), i+40)], want[max(0, i-40):min(len(want), i+40)])
		}
		if l.records == 0 {
			t.Errorf("%d renderers: no record went straight out although the queue emptied", workers)
		}
	}
}

// A renderer's panic is raised again on the run's goroutine, as a
// listener's would be, instead of ending the process from another.
func TestRenderPoolRaisesRendererFault(t *testing.T) {
	l := &lineRenderer{t: t, panicAt: 100}
	defer func() {
		if v := recover(); v != "renderer fault" {
			t.Errorf("recovered %v, want the renderer's panic", v)
		}
		if !strings.Contains(l.out.String(), "message 99 ") || strings.Contains(l.out.String(), "message 100 ") {
			t.Errorf("output before the fault: want messages up to 99, got %d bytes ending %q",
				l.out.Len(), l.out.String()[max(0, l.out.Len()-60):])
		}
	}()
	feedPool(t, l, 2, 300)
	t.Error("no panic")
}

// callCounter is a Renderer that counts how its records reach it.
type callCounter struct {
	immediate      bool
	records, emits int
	out            []byte
}

func (c *callCounter) Render(b []byte, r *Record) []byte {
	s := ""
	if r.Message != nil {
		s = r.Message.Summary
	}
	return fmt.Appendf(b, "%d %d %d %s\n", r.Kind, r.Exchange.Index, r.Offset, s)
}
func (c *callCounter) Emit(b []byte)    { c.emits++; c.out = append(c.out, b...) }
func (c *callCounter) Record(r *Record) { c.records++; c.Emit(c.Render(nil, r)) }
func (c *callCounter) Immediate() bool  { return c.immediate }

// A run of more than one worker renders in the pool unless the renderer
// wants each record at once (-l, live), and writes the same either way.
func TestRenderPoolOnlyWhenNotImmediate(t *testing.T) {
	var outs [2][]byte
	for i, immediate := range []bool{false, true} {
		o := DefaultOptions()
		o.All, o.Workers = true, 2
		r, err := Open(o, []string{"../../testdata/pcaps/records-codecs.pcap"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &callCounter{immediate: immediate}
		if _, err := r.Read(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		r.Close()
		switch {
		case immediate && c.emits != c.records:
			t.Errorf("immediate: %d emits for %d records: some went through the pool", c.emits, c.records)
		case !immediate && c.emits <= c.records:
			t.Errorf("not immediate: %d emits for %d records: nothing went through the pool", c.emits, c.records)
		}
		outs[i] = c.out
	}
	if !bytes.Equal(outs[0], outs[1]) || len(outs[0]) == 0 {
		t.Errorf("the pool wrote %d bytes, the run's goroutine %d, not the same", len(outs[0]), len(outs[1]))
	}
}

// A finished job keeps a small output buffer always, and big ones only up
// to renderKeepBig across the pool; giving one up frees its share.
func TestRenderPoolKeepsBigBuffersBounded(t *testing.T) {
	p := &renderPool{}
	small := &renderJob{out: make([]byte, 0, renderKeep)}
	p.keepOut(small)
	if cap(small.out) != renderKeep || p.big != 0 {
		t.Fatalf("small buffer: cap %d, big %d", cap(small.out), p.big)
	}
	size := renderKeepBig/2 - 1
	a, b, c := &renderJob{out: make([]byte, 0, size)}, &renderJob{out: make([]byte, 0, size)}, &renderJob{out: make([]byte, 0, size)}
	p.keepOut(a)
	p.keepOut(b)
	p.keepOut(c)
	if a.out == nil || b.out == nil || c.out != nil || p.big != 2*size {
		t.Fatalf("kept %v %v %v, big %d", a.out != nil, b.out != nil, c.out != nil, p.big)
	}
	a.out = make([]byte, 0, 16) // its next job's output was small: a's share is free again
	p.keepOut(a)
	c.out = make([]byte, 0, size)
	p.keepOut(c)
	if c.out == nil || p.big != 2*size {
		t.Fatalf("after a shrank: c kept %v, big %d", c.out != nil, p.big)
	}
}
