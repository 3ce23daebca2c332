package reassembly

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// Test helpers: Kafka-looking frames, TCP packets on various links, and an
// event recorder that renders events as one line each for exact comparison.

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// kreq builds a request frame: size, api key, version, correlation ID,
// client ID, then body bytes counting up.
func kreq(apiKey, version int16, corr int32, clientID string, body int) []byte {
	b := binary.BigEndian.AppendUint16(make([]byte, 4, 64), uint16(apiKey))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len(clientID)))
	b = append(b, clientID...)
	for i := 0; i < body; i++ {
		b = append(b, byte(i))
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// kresp builds a response frame: size, correlation ID, body bytes.
func kresp(corr int32, body int) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 4, 64), uint32(corr))
	for i := 0; i < body; i++ {
		b = append(b, byte(0xa0+i))
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
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
// responses of at least 4 (correlation ID), heads judged by plausible once
// 14 bytes are there.
type testRules struct{}

func (testRules) PrefixLen() int                 { return 4 }
func (testRules) Size(b []byte) int64            { return int64(int32(binary.BigEndian.Uint32(b))) }
func (testRules) MinHead() int                   { return 14 }
func (testRules) PlausibleRequest(f []byte) bool { return plausible(f) }

func (testRules) MinSize(fromClient bool) int64 {
	if fromClient {
		return 8
	}
	return 4
}

// MinSyncedSize is Kafka's: a broker may send an empty frame (a raw SASL
// token after SaslHandshake v0).
func (testRules) MinSyncedSize(fromClient bool) int64 {
	if fromClient {
		return 4
	}
	return 0
}

func (testRules) RequestKey(f []byte) (uint32, bool) {
	if len(f) < 12 {
		return 0, false
	}
	return binary.BigEndian.Uint32(f[8:]), true
}

func (testRules) ResponseKey(f []byte) (uint32, bool) {
	if len(f) < 8 {
		return 0, false
	}
	return binary.BigEndian.Uint32(f[4:]), true
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

var (
	cli = netip.MustParseAddrPort("10.0.0.1:40000")
	srv = netip.MustParseAddrPort("10.0.0.2:9092")
)

// pkt is one captured packet.
type pkt struct {
	data []byte
	ci   gopacket.CaptureInfo
	link layers.LinkType
}

// tcpSpec describes one TCP segment.
type tcpSpec struct {
	src, dst   netip.AddrPort
	seq, ack   uint32
	flags      string // any of "SAFR"
	payload    []byte
	v6ext      bool // IPv6 with a destination options header
	snap       int  // captured bytes of the payload, when cut
	link       layers.LinkType
	vlans      int // 802.1Q tags, for Ethernet
	nullBigEnd bool
}

// ipBytes serialises the IP+TCP part of a segment.
func ipBytes(t *testing.T, s tcpSpec) (ip []byte, etherType uint16) {
	t.Helper()
	tcp := &layers.TCP{
		SrcPort: layers.TCPPort(s.src.Port()), DstPort: layers.TCPPort(s.dst.Port()),
		Seq: s.seq, Ack: s.ack, Window: 65535,
		SYN: strings.Contains(s.flags, "S"), ACK: strings.Contains(s.flags, "A"),
		FIN: strings.Contains(s.flags, "F"), RST: strings.Contains(s.flags, "R"),
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	var ls []gopacket.SerializableLayer
	if s.src.Addr().Is4() {
		ip4 := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP,
			SrcIP: net.IP(s.src.Addr().AsSlice()), DstIP: net.IP(s.dst.Addr().AsSlice())}
		tcp.SetNetworkLayerForChecksum(ip4)
		ls = append(ls, ip4)
		etherType = 0x0800
	} else {
		ip6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP,
			SrcIP: net.IP(s.src.Addr().AsSlice()), DstIP: net.IP(s.dst.Addr().AsSlice())}
		tcp.SetNetworkLayerForChecksum(ip6)
		ls = append(ls, ip6)
		if s.v6ext {
			// Destination options header (8 bytes, one PadN option) before TCP.
			ip6.NextHeader = layers.IPProtocolIPv6Destination
			ls = append(ls, gopacket.Payload{byte(layers.IPProtocolTCP), 0, 1, 4, 0, 0, 0, 0})
		}
		etherType = 0x86dd
	}
	ls = append(ls, tcp, gopacket.Payload(s.payload))
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), etherType
}

// frameBytes wraps the IP packet in the requested link header.
func frameBytes(t *testing.T, s tcpSpec) []byte {
	t.Helper()
	ip, et := ipBytes(t, s)
	var hdr []byte
	switch s.link {
	case layers.LinkTypeEthernet:
		hdr = make([]byte, 12, 32)
		tpids := []uint16{0x88a8, 0x8100}
		for i := 0; i < s.vlans; i++ {
			hdr = binary.BigEndian.AppendUint16(hdr, tpids[(i+len(tpids)-s.vlans%2)%2])
			hdr = binary.BigEndian.AppendUint16(hdr, uint16(100+i))
		}
		hdr = binary.BigEndian.AppendUint16(hdr, et)
	case layers.LinkTypeLinuxSLL:
		hdr = make([]byte, 14, 16)
		hdr = binary.BigEndian.AppendUint16(hdr, et)
	case LinkTypeLinuxSLL2:
		hdr = binary.BigEndian.AppendUint16(nil, et)
		hdr = append(hdr, make([]byte, 18)...)
	case layers.LinkTypeNull:
		fam := uint32(2)
		if et == 0x86dd {
			fam = 30
		}
		if s.nullBigEnd {
			hdr = binary.BigEndian.AppendUint32(nil, fam)
		} else {
			hdr = binary.LittleEndian.AppendUint32(nil, fam)
		}
	case layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6:
	default:
		t.Fatalf("no link header for %v", s.link)
	}
	return cat(hdr, ip)
}

// conv builds packets of one connection; times advance 1 ms a packet.
type conv struct {
	t        *testing.T
	c, s     netip.AddrPort
	cseq     uint32 // next client sequence number
	sseq     uint32
	pkts     []pkt
	link     layers.LinkType
	template tcpSpec
	skew     time.Duration // added to the timestamps; see wait
	// acking makes each segment acknowledge everything the other side has
	// sent so far, as a peer that received it all would; otherwise every
	// segment acknowledges the other side's initial sequence number, which
	// proves nothing lost.
	acking     bool
	cisn, sisn uint32
}

func newConv(t *testing.T, c, s netip.AddrPort, cisn, sisn uint32) *conv {
	return &conv{t: t, c: c, s: s, cseq: cisn, sseq: sisn, cisn: cisn, sisn: sisn, link: layers.LinkTypeEthernet}
}

// raw appends a segment with explicit fields.
func (v *conv) raw(fromClient bool, seq uint32, flags string, payload []byte, snap int) {
	sp := v.template
	sp.src, sp.dst, sp.seq, sp.flags, sp.payload, sp.link = v.c, v.s, seq, flags, payload, v.link
	sp.ack = v.sisn
	if v.acking {
		sp.ack = v.sseq
	}
	if !fromClient {
		sp.src, sp.dst, sp.ack = v.s, v.c, v.cisn
		if v.acking {
			sp.ack = v.cseq
		}
	}
	data := frameBytes(v.t, sp)
	ci := gopacket.CaptureInfo{Timestamp: t0.Add(v.skew + time.Duration(len(v.pkts))*time.Millisecond), Length: len(data), CaptureLength: len(data)}
	if snap >= 0 && snap < len(payload) {
		data = data[:len(data)-len(payload)+snap]
		ci.CaptureLength = len(data)
	}
	v.pkts = append(v.pkts, pkt{data, ci, v.link})
}

// send appends an in-order segment and advances that side's sequence.
func (v *conv) send(fromClient bool, payload []byte) {
	seq := &v.sseq
	if fromClient {
		seq = &v.cseq
	}
	v.raw(fromClient, *seq, "A", payload, -1)
	*seq += uint32(len(payload))
}

// handshake appends SYN, SYN-ACK, ACK.
func (v *conv) handshake() {
	v.raw(true, v.cseq, "S", nil, -1)
	v.raw(false, v.sseq, "SA", nil, -1)
	v.cseq++
	v.sseq++
	v.raw(true, v.cseq, "A", nil, -1)
}

// wait shifts the timestamps of the packets appended after it by d.
func (v *conv) wait(d time.Duration) { v.skew += d }

// fin appends a FIN from one side; the FIN takes one sequence number.
func (v *conv) fin(fromClient bool) {
	seq := &v.sseq
	if fromClient {
		seq = &v.cseq
	}
	v.raw(fromClient, *seq, "FA", nil, -1)
	*seq++
}

// opened returns the usual test conversation cli→srv (ISNs 1000 and 5000)
// after its three-way handshake: packets 1-3.
func opened(t *testing.T) *conv {
	v := newConv(t, cli, srv, 1000, 5000)
	v.handshake()
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
func run(t *testing.T, cfg Config, pkts []pkt, order []int) *recorder {
	t.Helper()
	r, _ := runWith(t, cfg, pkts, order, false)
	return r
}

// runAt is run with each line prefixed by the packet number it came at.
func runAt(t *testing.T, cfg Config, pkts []pkt) *recorder {
	t.Helper()
	r, _ := runWith(t, cfg, pkts, nil, true)
	return r
}

func runWith(t *testing.T, cfg Config, pkts []pkt, order []int, withPkt bool) (*recorder, *Pipeline) {
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
		p.Packet(pkts[i].data, pkts[i].ci, pkts[i].link)
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
			for _, s := range h.ooo {
				n += len(s.data)
			}
			if n != h.oooBytes || h.reserved < 0 {
				t.Fatalf("conn %d half %d: oooBytes %d, held %d, reserved %d", c.key.ID, i, h.oooBytes, n, h.reserved)
			}
			sum += h.oooBytes + h.reserved
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
func expect(t *testing.T, v *conv, want ...string) *recorder {
	t.Helper()
	r := run(t, testConfig(), v.pkts, nil)
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

// pcapFile writes packets as a classic pcap file in the given byte order:
// pcapgo.Writer only writes little-endian files.
func pcapFile(order binary.AppendByteOrder, nano bool, link uint32, pkts []pkt) []byte {
	magic := uint32(0xa1b2c3d4)
	if nano {
		magic = 0xa1b23c4d
	}
	b := order.AppendUint32(nil, magic)
	b = order.AppendUint16(b, 2)
	b = order.AppendUint16(b, 4)
	b = order.AppendUint32(b, 0) // thiszone
	b = order.AppendUint32(b, 0) // sigfigs
	b = order.AppendUint32(b, 65535)
	b = order.AppendUint32(b, link)
	for _, p := range pkts {
		frac := uint32(p.ci.Timestamp.Nanosecond())
		if !nano {
			frac /= 1000
		}
		b = order.AppendUint32(b, uint32(p.ci.Timestamp.Unix()))
		b = order.AppendUint32(b, frac)
		b = order.AppendUint32(b, uint32(len(p.data)))
		b = order.AppendUint32(b, uint32(p.ci.Length))
		b = append(b, p.data...)
	}
	return b
}
