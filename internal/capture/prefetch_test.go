package capture

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// fakeSource hands out n packets from one reused buffer, as the pcap
// readers do, then fails with err or panics with pan.
type fakeSource struct {
	n, i     int
	buf      []byte
	err      error
	pan      any
	consumed int64
	slow     time.Duration // a pause every 128 packets: in every batch
}

// packetOf is packet i: small ones first, whose batches end by their
// count, then up to 9 KB, whose batches end by their bytes.
func packetOf(i int) []byte {
	n := 1 + i%13
	if i >= 3000 {
		n = 1 + i*7919%9000
	}
	return bytes.Repeat([]byte{byte(i)}, n)
}

func (s *fakeSource) Next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if s.i == s.n {
		if s.pan != nil {
			panic(s.pan)
		}
		return nil, gopacket.CaptureInfo{}, 0, s.err
	}
	if s.slow > 0 && s.i%128 == 0 {
		time.Sleep(s.slow)
	}
	p := packetOf(s.i)
	s.buf = append(s.buf[:0], p...)
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(int64(s.i), 0), CaptureLength: len(p), Length: len(p) + s.i%3}
	s.consumed += int64(len(p)) + 16
	s.i++
	return s.buf, ci, layers.LinkType(s.i % 2), nil
}

func (s *fakeSource) Close() error    { return nil }
func (s *fakeSource) Consumed() int64 { return s.consumed }

func TestPrefetchHandsOutWhatTheSourceRead(t *testing.T) {
	p, want := newPrefetch(&fakeSource{n: 3*prefetchPkts + 17, err: errors.New("capture.pcap: file ends inside a packet")}), 3*prefetchPkts+17
	defer p.stop()
	checkPackets(t, p, want, 0)
}

// checkPackets reads n packets from p, each after pause, and the source's
// error after them.
func checkPackets(t *testing.T, p *prefetch, n int, pause time.Duration) {
	t.Helper()
	want := p.src.(*fakeSource).err
	var consumed int64
	for i := range n {
		if pause > 0 && i%prefetchPkts == 0 {
			time.Sleep(pause)
		}
		data, ci, link, err := p.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		w := packetOf(i)
		consumed += int64(len(w)) + 16
		switch {
		case !bytes.Equal(data, w):
			t.Fatalf("packet %d: %d bytes, want %d bytes of %d", i, len(data), len(w), i)
		case !ci.Timestamp.Equal(time.Unix(int64(i), 0)) || ci.CaptureLength != len(w) || ci.Length != len(w)+i%3:
			t.Fatalf("packet %d: capture info %+v", i, ci)
		case link != layers.LinkType((i+1)%2):
			t.Fatalf("packet %d: link type %d", i, link)
		case p.Consumed() != consumed:
			t.Fatalf("packet %d: Consumed %d, want %d (as the source counted after reading it)", i, p.Consumed(), consumed)
		}
	}
	for range 2 {
		if _, _, _, err := p.Next(); err != want {
			t.Fatalf("after the last packet: %v, want the source's error", err)
		}
	}
}

// A reader slower than the pipeline halts after the window, and Next goes
// on from the source itself where the batches end; a faster one stays.
func TestPrefetchHaltsWhenTheReaderIsTheBound(t *testing.T) {
	n := (prefetchWindow + 8) * prefetchPkts
	slow := &fakeSource{n: n, err: io.EOF, slow: time.Millisecond}
	p := newPrefetch(slow)
	defer p.stop()
	checkPackets(t, p, n, 0)
	if !p.direct {
		t.Errorf("Next waited for %d of the window's %d batches and the reader went on", p.waited, prefetchWindow)
	}

	fast := &fakeSource{n: n, err: io.EOF}
	p = newPrefetch(fast)
	defer p.stop()
	checkPackets(t, p, n, 2*time.Millisecond)
	if p.direct {
		t.Errorf("the pipeline was the bound (Next waited for %d of %d batches) and the reader halted", p.waited, prefetchWindow)
	}
}

func TestPrefetchRaisesTheReadersPanicInNext(t *testing.T) {
	p := newPrefetch(&fakeSource{n: 5, pan: "pcapgo: index out of range"})
	defer p.stop()
	for range 5 {
		if _, _, _, err := p.Next(); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		if v := recover(); v != "pcapgo: index out of range" {
			t.Fatalf("recovered %v, want the reader's panic", v)
		}
	}()
	p.Next()
	t.Fatal("Next returned after the reader panicked")
}

func TestPrefetchStopsAReaderThatIsAhead(t *testing.T) {
	src := &fakeSource{n: 1 << 30}
	p := newPrefetch(src)
	if _, _, _, err := p.Next(); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		p.stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(time.Minute):
		t.Fatal("stop waited for a reader that had filled every batch")
	}
	if read := src.i; read > (prefetchBatches+1)*prefetchPkts {
		t.Fatalf("the reader read %d packets ahead; at most %d batches may be in flight", read, prefetchBatches+1)
	}
}
