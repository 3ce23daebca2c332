// Command gencapture writes a large synthetic Kafka capture for the
// end-to-end benchmark (bench/run.sh): many client connections to one
// broker, mostly Produce-like requests of 1-16 KiB with small responses,
// and about one exchange in ten a CreateAcls or DeleteAcls v3 pair encoded
// by franz-go's kmsg. A few segments are reordered or retransmitted so the
// reassembler does real work.
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

func main() {
	out := flag.String("o", "bench.pcap", "output file")
	size := flag.Int64("size", 1<<30, "approximate capture size in bytes")
	conns := flag.Int("conns", 200, "client connections")
	mss := flag.Int("mss", 1448, "largest TCP payload per packet")
	seed := flag.Uint64("seed", 1, "random seed")
	records := flag.String("records", "", "instead of random Produce bodies: Produce v9 requests and Fetch v11 responses of real record batches, in equal numbers, with codecs none or mixed (half none, the rest gzip, snappy, lz4, zstd); still ~10% ACL pairs")
	flag.Parse()
	if err := generate(*out, *size, *conns, *mss, *seed, *records); err != nil {
		fmt.Fprintln(os.Stderr, "gencapture:", err)
		os.Exit(1)
	}
}

type conn struct {
	client, server netip.AddrPort
	cseq, sseq     uint32
	corr           int32
}

type gen struct {
	w       *pcapgo.Writer
	rng     *rand.Rand
	t       time.Time
	written int64
	mss     int
	pkt     []byte
	held    []byte // one segment held back to reorder
	heldCI  time.Time
}

func generate(path string, size int64, nconns, mss int, seed uint64, records string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	g := &gen{w: pcapgo.NewWriter(bw), rng: rand.New(rand.NewPCG(seed, seed)), t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), mss: mss}
	if err := g.w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		return err
	}
	server := netip.MustParseAddrPort("10.0.0.1:9092")
	cs := make([]*conn, nconns)
	for i := range cs {
		c := &conn{
			client: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(1 + i/250), byte(2 + i%250)}), uint16(40000+i)),
			server: server, cseq: g.rng.Uint32(), sseq: g.rng.Uint32(),
		}
		cs[i] = c
		g.segment(c.client, c.server, c.cseq, 0, flagSYN, nil)
		g.segment(c.server, c.client, c.sseq, c.cseq+1, flagSYN|flagACK, nil)
		c.cseq++
		c.sseq++
	}
	body := make([]byte, 16<<10)
	for i := range body {
		body[i] = byte(g.rng.IntN(256))
	}
	var rb *recordBodies
	if records != "" {
		if rb, err = newRecordBodies(g.rng, records); err != nil {
			return err
		}
	}
	for g.written < size {
		c := cs[g.rng.IntN(len(cs))]
		c.corr++
		var req, resp []byte
		if g.rng.IntN(10) == 0 {
			req, resp = aclPair(g.rng, c.corr)
		} else if rb != nil {
			req, resp = rb.exchange(g.rng, c.corr)
		} else {
			n := 1024 + g.rng.IntN(15<<10)
			req = testkit.Request(0, 9, c.corr, &producerID, true, body[:n])
			resp = testkit.Response(c.corr, true, body[:40])
		}
		g.stream(c, true, req)
		g.stream(c, false, resp)
	}
	if err := g.flushHeld(); err != nil {
		return err
	}
	for _, c := range cs {
		g.fin(c)
	}
	return bw.Flush()
}

// stream sends b in MSS-sized segments; about one segment in 200 is
// delivered after its successor and one in 500 is sent twice.
func (g *gen) stream(c *conn, fromClient bool, b []byte) {
	for len(b) > 0 {
		n := min(len(b), g.mss)
		if fromClient {
			g.data(c.client, c.server, c.cseq, c.sseq, b[:n])
			c.cseq += uint32(n)
		} else {
			g.data(c.server, c.client, c.sseq, c.cseq, b[:n])
			c.sseq += uint32(n)
		}
		b = b[n:]
	}
	g.flushHeld() // reorder within a direction only: a response never overtakes its request
}

func (g *gen) data(src, dst netip.AddrPort, seq, ack uint32, payload []byte) {
	switch r := g.rng.IntN(1000); {
	case r < 5 && g.held == nil:
		g.held = g.build(src, dst, seq, ack, flagPSH|flagACK, payload)
		g.heldCI = g.tick()
		return
	case r < 7:
		g.segment(src, dst, seq, ack, flagPSH|flagACK, payload)
	}
	g.segment(src, dst, seq, ack, flagPSH|flagACK, payload)
	g.flushHeld()
}

func (g *gen) flushHeld() error {
	if g.held == nil {
		return nil
	}
	err := g.write(g.held, g.heldCI)
	g.held = nil
	return err
}

func (g *gen) fin(c *conn) {
	g.segment(c.client, c.server, c.cseq, c.sseq, flagFIN|flagACK, nil)
	g.segment(c.server, c.client, c.sseq, c.cseq+1, flagFIN|flagACK, nil)
}

func (g *gen) tick() time.Time {
	g.t = g.t.Add(time.Duration(1+g.rng.IntN(20)) * time.Microsecond)
	return g.t
}

const (
	flagFIN = 0x01
	flagSYN = 0x02
	flagPSH = 0x08
	flagACK = 0x10
)

func (g *gen) segment(src, dst netip.AddrPort, seq, ack uint32, flags byte, payload []byte) {
	g.write(g.build(src, dst, seq, ack, flags, payload), g.tick())
}

func (g *gen) build(src, dst netip.AddrPort, seq, ack uint32, flags byte, payload []byte) []byte {
	p := make([]byte, 14+20+20+len(payload))
	copy(p[0:6], []byte{2, 0, 0, 0, 0, 1})
	copy(p[6:12], []byte{2, 0, 0, 0, 0, 2})
	binary.BigEndian.PutUint16(p[12:], 0x0800)
	ip := p[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(40+len(payload)))
	ip[8] = 64
	ip[9] = 6
	s, d := src.Addr().As4(), dst.Addr().As4()
	copy(ip[12:], s[:])
	copy(ip[16:], d[:])
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip[:20]))
	tcp := ip[20:]
	binary.BigEndian.PutUint16(tcp[0:], src.Port())
	binary.BigEndian.PutUint16(tcp[2:], dst.Port())
	binary.BigEndian.PutUint32(tcp[4:], seq)
	binary.BigEndian.PutUint32(tcp[8:], ack)
	tcp[12] = 5 << 4
	tcp[13] = flags
	binary.BigEndian.PutUint16(tcp[14:], 65535)
	copy(tcp[20:], payload)
	return p
}

func (g *gen) write(p []byte, t time.Time) error {
	g.written += int64(len(p)) + 16
	return g.w.WritePacket(gopacket.CaptureInfo{Timestamp: t, CaptureLength: len(p), Length: len(p)}, p)
}

func ipChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

var (
	producerID, adminID = "bench-producer", "kadm"
	principals          = []string{"User:alice", "User:bob", "User:svc-orders", "User:Zoë"}
	topics              = []string{"orders", "payments", "audit-log", "clicks"}
)

// aclPair is a CreateAcls or DeleteAcls v3 request and its response.
func aclPair(rng *rand.Rand, corr int32) ([]byte, []byte) {
	if rng.IntN(2) == 0 {
		req := kmsg.NewCreateACLsRequest()
		req.Version = 3
		resp := kmsg.NewCreateACLsResponse()
		resp.Version = 3
		for i := 0; i <= rng.IntN(3); i++ {
			c := kmsg.NewCreateACLsRequestCreation()
			c.ResourceType = kmsg.ACLResourceTypeTopic
			c.ResourceName = topics[rng.IntN(len(topics))]
			c.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
			c.Principal = principals[rng.IntN(len(principals))]
			c.Host = "*"
			c.Operation = kmsg.ACLOperationWrite
			c.PermissionType = kmsg.ACLPermissionTypeAllow
			req.Creations = append(req.Creations, c)
			resp.Results = append(resp.Results, kmsg.NewCreateACLsResponseResult())
		}
		return testkit.KmsgRequest(&req, corr, &adminID),
			testkit.KmsgResponse(&resp, corr)
	}
	req := kmsg.NewDeleteACLsRequest()
	req.Version = 3
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType = kmsg.ACLResourceTypeTopic
	name := topics[rng.IntN(len(topics))]
	f.ResourceName = &name
	f.ResourcePatternType = kmsg.ACLResourcePatternTypeMatch
	f.Operation = kmsg.ACLOperationAny
	f.PermissionType = kmsg.ACLPermissionTypeAny
	req.Filters = append(req.Filters, f)
	resp := kmsg.NewDeleteACLsResponse()
	resp.Version = 3
	r := kmsg.NewDeleteACLsResponseResult()
	m := kmsg.NewDeleteACLsResponseResultMatchingACL()
	m.ResourceType = kmsg.ACLResourceTypeTopic
	m.ResourceName = name
	m.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
	m.Principal = principals[rng.IntN(len(principals))]
	m.Host = "*"
	m.Operation = kmsg.ACLOperationWrite
	m.PermissionType = kmsg.ACLPermissionTypeAllow
	r.MatchingACLs = append(r.MatchingACLs, m)
	resp.Results = append(resp.Results, r)
	return testkit.KmsgRequest(&req, corr, &adminID),
		testkit.KmsgResponse(&resp, corr)
}
