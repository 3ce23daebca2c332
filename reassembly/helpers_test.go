package reassembly

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// Test helpers of this package: the Kafka-like framing the tests inject, the
// shorthands for its frames, and an event recorder that renders events as
// one line each for exact comparison. Frames, TCP segments and pcap files are
// built by internal/testtools/testkit, as in the other packages' tests.

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// kreq is the tests' request: a v1 header with a non-null client id and
// a body of bytes counting up from 0, which say where they are.
func kreq(apiKey, version int16, corr int32, clientID string, body int) []byte {
	return testkit.Request(apiKey, version, corr, &clientID, false, testkit.Counting(body, 0))
}

// kresp is the tests' response: a v0 header and a body of bytes counting
// up from 0xa0.
func kresp(corr int32, body int) []byte {
	return testkit.Response(corr, false, testkit.Counting(body, 0xa0))
}

// plausible is the test's request-header check: api key 0..100, version
// 0..20, client ID length -1..255 with printable bytes as far as present.
func plausible(f []byte) bool {
	if len(f) < 14 {
		return false
	}
	key := int16(binary.BigEndian.Uint16(f[4:]))
	ver := int16(binary.BigEndian.Uint16(f[6:]))
	cid := int(int16(binary.BigEndian.Uint16(f[12:])))
	if key < 0 || key > 100 || ver < 0 || ver > 20 || cid < -1 || cid > 255 {
		return false
	}
	for _, c := range f[14:min(len(f), 14+max(cid, 0))] {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// testRules is the tests' Kafka-like framing: an int32 size prefix,
// requests of at least 8 bytes (api key, version, correlation ID),
// responses of at least 4 (correlation ID), heads judged by plausible.
// keep, when set, says which API keys keep their bodies and their
// responses' (nil: every one); keepAll which keep every frame after them.
type testRules struct {
	keep, keepAll func(apiKey int16) bool
}

func (testRules) PrefixLen() int                 { return 4 }
func (testRules) Size(b []byte) int64            { return int64(int32(binary.BigEndian.Uint32(b))) }
func (testRules) PlausibleRequest(f []byte) bool { return plausible(f) }

// MinSize is Kafka's: in sync, a broker may send an empty frame (a raw SASL
// token after SaslHandshake v0).
func (testRules) MinSize(fromClient, inSync bool) int64 {
	switch {
	case fromClient && inSync:
		return 4
	case fromClient:
		return 8
	case inSync:
		return 0
	}
	return 4
}

func (testRules) Key(fromClient bool, f []byte) (uint32, bool) {
	at := 4 // a response's correlation ID
	if fromClient {
		at = 8
	}
	if len(f) < at+4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(f[at:]), true
}

func (r testRules) Keep(f []byte) (body, response, all bool) {
	if len(f) < 6 {
		return true, true, false
	}
	key := int16(binary.BigEndian.Uint16(f[4:]))
	keep := r.keep == nil || r.keep(key)
	return keep, keep, r.keepAll != nil && r.keepAll(key)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

var (
	cli = netip.MustParseAddrPort("10.0.0.1:40000")
	srv = netip.MustParseAddrPort("10.0.0.2:9092")
)

// newConv is a connection from c to s in a capture of its own, stamped
// from t0 one packet a millisecond; tests that need several connections
// interleave their packets (merge) or restamp them.
func newConv(c, s netip.AddrPort, cisn, sisn uint32) *testkit.Conn {
	return testkit.NewCapture(t0).NewConn(c, s, cisn, sisn)
}

// opened returns the usual test conversation cli→srv (ISNs 1000 and 5000)
// after its three-way handshake: packets 1-3.
func opened() *testkit.Conn {
	v := newConv(cli, srv, 1000, 5000)
	v.Handshake()
	return v
}

// endLine is the recorder's line for the ConnEnd of connection id.
func endLine(id int, c, s netip.AddrPort, reset bool) string {
	return fmt.Sprintf("end c%d %s>%s reset=%v", id, c, s, reset)
}

// endC1 ends the conversation opened returns.
var endC1 = endLine(1, cli, srv, false)

// recorder collects events as lines, frame bytes and the events themselves
// (frames copied: the Pipeline reuses their slices).
type recorder struct {
	lines  []string
	frames [][]byte
	events []Event
	// withPkt prefixes each line with the number of the packet being fed
	// when the event came ("close" during Pipeline.Close).
	withPkt bool
	pkt     int
	// held is Pipeline.buffered after each packet (run and runAt).
	held []int
}

func (r *recorder) emit(e Event) {
	dir := func(f Flow) string {
		if f.FromClient {
			return fmt.Sprintf("c%d>", f.ConnID)
		}
		return fmt.Sprintf("c%d<", f.ConnID)
	}
	var s string
	switch e := e.(type) {
	case *Frame:
		s = fmt.Sprintf("frame %s off=%d size=%d pk=%v", dir(e.Flow), e.StreamOffset, e.Size, e.Packets)
		if e.Truncated {
			s += fmt.Sprintf(" truncated(%d)", len(e.Data))
		}
		r.frames = append(r.frames, bytes.Clone(e.Data))
		f := *e
		f.Data, f.Packets = bytes.Clone(e.Data), append([]int(nil), e.Packets...)
		r.events = append(r.events, &f)
	case *Gap:
		s = fmt.Sprintf("gap %s off=%d len=%d", dir(e.Flow), e.StreamOffset, e.Length)
	case *Unparseable:
		s = fmt.Sprintf("unparseable %s off=%d len=%d", dir(e.Flow), e.StreamOffset, e.Length)
		if e.Leading {
			s += " leading"
		}
		if e.Unframed {
			s += " unframed"
		}
		if e.TLS {
			s += " tls"
		}
	case *Incomplete:
		s = fmt.Sprintf("incomplete %s off=%d have=%d want=%d %s", dir(e.Flow), e.StreamOffset, e.Have, e.Want, e.Reason)
	case *Retransmission:
		s = fmt.Sprintf("retrans %s off=%d len=%d", dir(e.Flow), e.StreamOffset, e.Length)
	case *BufferLimit:
		s = fmt.Sprintf("limit %s off=%d len=%d", dir(e.Flow), e.StreamOffset, e.Length)
	case *PortDetected:
		s = fmt.Sprintf("port %s", e.Server)
	case *LayerEvent:
		s = fmt.Sprintf("layer %s %s>%s %v", dir(e.Flow), e.Src, e.Dst, e.Value)
	case *ConnEnd:
		s = fmt.Sprintf("end c%d %s>%s reset=%v", e.ConnID, e.Conn.Client, e.Conn.Server, e.Reset)
	case *Evicted:
		s = fmt.Sprintf("evicted c%d %s>%s last=%s max=%d", e.ConnID, e.Conn.Client, e.Conn.Server, e.LastSeen.Sub(t0), e.MaxConns)
	}
	if _, ok := e.(*Frame); !ok {
		r.events = append(r.events, e)
	}
	if r.withPkt {
		at := "close"
		if r.pkt > 0 {
			at = itoa(r.pkt)
		}
		s = at + ": " + s
	}
	r.lines = append(r.lines, s)
}

func testConfig() Config {
	ports, _ := ParsePorts("9092")
	return Config{BrokerPorts: ports, Framing: testRules{}}
}

// run feeds packets in the given order (indexes into pkts; nil = all),
// checking the buffer accounting after every packet and that nothing is
// held after Close.
func run(t *testing.T, cfg Config, pkts []testkit.Packet, order []int) *recorder {
	t.Helper()
	r, _ := runWith(t, cfg, pkts, order, false)
	return r
}

// runAt is run with each line prefixed by the packet number it came at.
func runAt(t *testing.T, cfg Config, pkts []testkit.Packet) *recorder {
	t.Helper()
	r, _ := runWith(t, cfg, pkts, nil, true)
	return r
}

func runWith(t *testing.T, cfg Config, pkts []testkit.Packet, order []int, withPkt bool) (*recorder, *Pipeline) {
	t.Helper()
	r := &recorder{withPkt: withPkt}
	p := NewPipeline(cfg, r.emit)
	if order == nil {
		order = make([]int, len(pkts))
		for i := range order {
			order[i] = i
		}
	}
	for n, i := range order {
		r.pkt = n + 1
		p.Packet(pkts[i].Data, pkts[i].CI, pkts[i].Link)
		checkBuffers(t, p)
		r.held = append(r.held, p.buffered)
	}
	r.pkt = 0
	p.Close()
	checkBuffers(t, p)
	if p.buffered != 0 || p.conns.len() != 0 {
		t.Fatalf("after Close: %d bytes buffered, %d flows", p.buffered, p.conns.len())
	}
	return r, p
}

// checkBuffers verifies the memory accounting: the pipeline's total is the
// sum of what every live direction holds, and each direction's count is
// the bytes of its held segments.
func checkBuffers(t *testing.T, p *Pipeline) {
	t.Helper()
	sum := 0
	seen := map[*conn]bool{}
	for c := range p.conns.all() {
		if seen[c] {
			continue
		}
		seen[c] = true
		for i, h := range c.h {
			if h == nil {
				continue
			}
			n := 0
			for _, s := range h.ord.ooo {
				n += len(s.data)
			}
			if n != h.ord.oooBytes || h.fr.reserving && h.fr.size <= 0 {
				t.Fatalf("conn %d half %d: oooBytes %d, held %d, reserved %d", c.key.ID, i, h.ord.oooBytes, n, h.fr.reservedBytes())
			}
			sum += h.buffered()
		}
		if cl := p.layers[c]; cl != nil {
			if cl.held[0] < 0 || cl.held[1] < 0 {
				t.Fatalf("conn %d: its layer holds %v bytes", c.key.ID, cl.held)
			}
			sum += cl.bytes()
		}
	}
	if sum != p.buffered {
		t.Fatalf("pipeline counts %d bytes buffered, connections hold %d", p.buffered, sum)
	}
	if n := p.active.n + p.ended.n; n != p.conns.len() {
		t.Fatalf("%d connections in the table, %d in the lists", p.conns.len(), n)
	}
}

// expect runs v's packets with testConfig and checks the event lines.
func expect(t *testing.T, v *testkit.Conn, want ...string) *recorder {
	t.Helper()
	r := run(t, testConfig(), v.Cap.Packets, nil)
	wantLines(t, r, want...)
	return r
}

func wantLines(t *testing.T, r *recorder, want ...string) {
	t.Helper()
	got := strings.Join(r.lines, "\n")
	if exp := strings.Join(want, "\n"); got != exp {
		t.Errorf("events:\n%s\nwant:\n%s", got, exp)
	}
}

func wantFrames(t *testing.T, r *recorder, want ...[]byte) {
	t.Helper()
	if len(r.frames) != len(want) {
		t.Fatalf("%d frames, want %d", len(r.frames), len(want))
	}
	for i := range want {
		if !bytes.Equal(r.frames[i], want[i]) {
			t.Errorf("frame %d:\n% x\nwant\n% x", i, r.frames[i], want[i])
		}
	}
}

// eventsOf returns the recorded events of type E.
func eventsOf[E Event](r *recorder) []E {
	var out []E
	for _, e := range r.events {
		if x, ok := e.(E); ok {
			out = append(out, x)
		}
	}
	return out
}

func itoa(i int) string { return fmt.Sprint(i) }

func fmtInts(v []int) string { return fmt.Sprint(v) }

func netipMust(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll runs a file through OpenFile and a Pipeline.
func readAll(t *testing.T, path string) (*recorder, error) {
	t.Helper()
	return readAllWith(t, path, testConfig())
}

func readAllWith(t *testing.T, path string, cfg Config) (*recorder, error) {
	t.Helper()
	src, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r := &recorder{}
	p := NewPipeline(cfg, r.emit)
	for {
		data, ci, link, err := src.Next()
		if err != nil {
			p.Close()
			checkBuffers(t, p)
			if err == io.EOF {
				err = nil
			}
			return r, err
		}
		p.Packet(data, ci, link)
	}
}
