package tlslayer

import (
	"encoding/binary"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
	"github.com/kdissect/kdissect/reassembly"
)

// What TLS connections cost the Pipeline: memory per connection that only
// sent its hello, and what many connections may hold before their keys are
// known, which the buffer caps bound as they bound plaintext.

var (
	t0     = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	broker = netip.MustParseAddrPort("10.0.0.1:9092")
)

func tlsRecord(typ byte, body []byte) []byte {
	return append([]byte{typ, 3, 3, byte(len(body) >> 8), byte(len(body))}, body...)
}

// clientHello is a TLS 1.3 ClientHello record of about 500 bytes, random i.
func clientHello(i int) []byte {
	body := []byte{3, 3}
	random := make([]byte, 32)
	binary.BigEndian.PutUint64(random[24:], uint64(i))
	body = append(body, random...)
	body = append(body, 32)
	body = append(body, random...)
	body = append(body, 0, 2, 0x13, 0x01, 1, 0)
	ext := []byte{0, 43, 0, 3, 2, 3, 4}     // supported_versions
	ext = append(ext, 0, 21, 0x01, 0x90)    // padding, 400 bytes
	ext = append(ext, make([]byte, 400)...) //
	body = binary.BigEndian.AppendUint16(body, uint16(len(ext)))
	body = append(body, ext...)
	return tlsRecord(22, append([]byte{1, 0, byte(len(body) >> 8), byte(len(body))}, body...))
}

// appData is an encrypted record of n bytes.
func appData(n int) []byte { return tlsRecord(23, make([]byte, n)) }

// clientOnly is a capture of n connections whose clients send a SYN and
// then what each returns, in segments of at most 1448 bytes; their broker
// never answers.
func clientOnly(n int, send func(i int) []byte) []testkit.Packet {
	c := testkit.NewCapture(t0)
	c.Step = 10 * time.Microsecond
	for i := range n {
		client := netip.AddrPortFrom(netip.AddrFrom4([4]byte{11, 0, byte(i >> 8), byte(i)}), uint16(20000+i%40000))
		v := c.NewConn(client, broker, uint32(i)*7919, 1)
		v.Syn()
		b := send(i)
		for len(b) > 0 {
			k := min(1448, len(b))
			v.Send(true, b[:k])
			b = b[k:]
		}
	}
	return c.Packets
}

func config(caps ...int) reassembly.Config {
	ports, _ := reassembly.ParsePorts("9092")
	cfg := reassembly.Config{BrokerPorts: ports, Framing: plainRules{}, NewLayer: NewFactory(nil)}
	if len(caps) == 2 {
		cfg.MaxConnBuffer, cfg.MaxTotalBuffer = caps[0], caps[1]
	}
	return cfg
}

// plainRules frames with an int32 size prefix and keeps every body: these
// tests never get as far as plaintext.
type plainRules struct{}

func (plainRules) PrefixLen() int                  { return 4 }
func (plainRules) Size(b []byte) int64             { return int64(int32(binary.BigEndian.Uint32(b))) }
func (plainRules) MinSize(bool, bool) int64        { return 4 }
func (plainRules) PlausibleRequest([]byte) bool    { return false }
func (plainRules) Key(bool, []byte) (uint32, bool) { return 0, false }
func (plainRules) Keep([]byte) (bool, bool, bool)  { return true, true, false }

// events runs pkts and checks after every packet that the Pipeline holds
// no more than the total cap; it returns the events, and what was held at
// the most.
func events(t *testing.T, cfg reassembly.Config, pkts []testkit.Packet) (evs []reassembly.Event, peak int) {
	t.Helper()
	p := reassembly.NewPipeline(cfg, func(e reassembly.Event) {
		if le, ok := e.(*reassembly.LayerEvent); ok {
			le2 := *le
			e = &le2
		}
		evs = append(evs, e)
	})
	for _, k := range pkts {
		p.Packet(k.Data, k.CI, k.Link)
		peak = max(peak, p.Buffered())
		if cfg.MaxTotalBuffer > 0 && p.Buffered() > cfg.MaxTotalBuffer {
			t.Fatalf("%d bytes held, above the cap of %d", p.Buffered(), cfg.MaxTotalBuffer)
		}
	}
	p.Close()
	if p.Buffered() != 0 {
		t.Fatalf("after Close: %d bytes held", p.Buffered())
	}
	return evs, peak
}

func count[E any](evs []reassembly.Event) (n int) {
	for _, e := range evs {
		if _, ok := e.(E); ok {
			n++
		}
	}
	return n
}

// Records waiting for a ServerHello that never comes are held against the
// caps: past them, a direction gives up with a BufferLimit event instead
// of holding up to 1 MiB each.
func TestRecordsWaitingForTheServerAreCapped(t *testing.T) {
	const conns, each = 12, 300_000
	pkts := clientOnly(conns, func(i int) []byte {
		b := clientHello(i)
		for len(b) < each {
			b = append(b, appData(16000)...)
		}
		return b
	})
	cfg := config(512<<10, 2<<20)
	evs, peak := events(t, cfg, pkts)
	// Six connections fit under the total cap; the others each hit it.
	if n := count[*reassembly.BufferLimit](evs); n < conns-2*cfg.MaxTotalBuffer/each {
		t.Errorf("%d BufferLimit events, want one for each of the %d connections that did not fit", n, conns-cfg.MaxTotalBuffer/each)
	}
	if peak < cfg.MaxTotalBuffer/2 {
		t.Errorf("at most %d bytes held: the records were not held at all", peak)
	}
	// One connection alone is capped by MaxConnBuffer.
	cfg = config(100<<10, 64<<20)
	evs, peak = events(t, cfg, pkts[:len(pkts)/conns])
	if n := count[*reassembly.BufferLimit](evs); n != 1 || peak > cfg.MaxConnBuffer {
		t.Errorf("one connection over MaxConnBuffer: %d BufferLimit events, %d bytes held at most", n, peak)
	}
}

// A ClientHello that spans records is collected within the caps; one that
// does not fit is given up with the reason, and the connection's other
// direction holds nothing for it.
func TestLargeClientHelloIsCapped(t *testing.T) {
	const conns = 10
	size := 200_000
	pkts := clientOnly(conns, func(i int) []byte {
		msg := []byte{1, byte((size + 6) >> 16), byte((size + 6) >> 8), byte(size + 6), 3, 3}
		msg = append(msg, make([]byte, size)...) // 6 bytes short: it never completes
		var b []byte
		for len(msg) > 0 {
			k := min(16384, len(msg))
			b = append(b, tlsRecord(22, msg[:k])...)
			msg = msg[k:]
		}
		return b
	})
	cfg := config(8<<20, 1<<20)
	evs, _ := events(t, cfg, pkts)
	kept := 0
	for _, e := range evs {
		if le, ok := e.(*reassembly.LayerEvent); ok {
			if s, ok := le.Value.(*Session); ok && strings.Contains(s.Reason, "memory cap") {
				kept++
			}
		}
	}
	if limits := count[*reassembly.BufferLimit](evs); limits < conns-4 || kept != limits {
		t.Errorf("%d BufferLimit events, %d sessions saying a memory cap stopped their ClientHello; want as many, at least %d", limits, kept, conns-4)
	}
}

// heapPerConn is the heap each of n connections holds once their packets
// are fed, the Pipeline still open.
func heapPerConn(tb testing.TB, n int, pkts []testkit.Packet) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := reassembly.NewPipeline(config(), func(reassembly.Event) {})
	for _, k := range pkts {
		p.Packet(k.Data, k.CI, k.Link)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if p.Buffered() != 0 {
		tb.Fatalf("%d bytes held after whole hellos", p.Buffered())
	}
	runtime.KeepAlive(p)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// A connection that sent its ClientHello keeps no buffer for it: the heap
// it takes is that of its state (about 1.5 KB), not of a record (16 KB).
func TestHelloConnMemory(t *testing.T) {
	const n = 20000
	pkts := clientOnly(n, clientHello)
	if b := heapPerConn(t, n, pkts); b > 2000 {
		t.Errorf("%.0f heap bytes per connection that sent a ClientHello, want under 2000", b)
	}
}

// BenchmarkHelloConnMemory reports the heap held per connection that sent
// a ClientHello and waits, the TLS counterpart of reassembly's
// BenchmarkIdleConnMemory.
func BenchmarkHelloConnMemory(b *testing.B) {
	const n = 100000
	pkts := clientOnly(n, clientHello)
	b.ResetTimer()
	for range b.N {
		b.ReportMetric(heapPerConn(b, n, pkts), "heap-B/conn")
	}
}
