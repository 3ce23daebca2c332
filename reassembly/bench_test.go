package reassembly

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"runtime"
	"testing"

	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// benchCapture builds an in-memory pcap: conns connections each sending
// Produce-like frames of 1-16 KiB in 1448-byte segments, every tenth frame a
// CreateAcls request, answered by small responses.
func benchCapture(b *testing.B, conns, frames int) []byte {
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	w.WriteFileHeader(262144, layers.LinkTypeEthernet)
	vs := make([]*testkit.Conn, conns)
	for i := range vs {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), uint16(30000+i))
		vs[i] = newConv(c, srv, uint32(i)*7919, 1)
		vs[i].Handshake()
	}
	for f := 0; f < frames; f++ {
		v := vs[f%conns]
		key := int16(0)
		if f%10 == 0 {
			key = 30
		}
		req := kreq(key, 9, int32(f), "bench", 1024+(f*7919)%(15*1024))
		for len(req) > 0 {
			n := min(1448, len(req))
			v.Send(true, req[:n])
			req = req[n:]
		}
		v.Send(false, kresp(int32(f), 40))
	}
	for _, v := range vs {
		for _, p := range v.Cap.Packets {
			w.WritePacket(p.CI, p.Data)
		}
	}
	return buf.Bytes()
}

func BenchmarkPipeline(b *testing.B) {
	capture := benchCapture(b, 200, 4000)
	cfg := testConfig()
	cfg.Framing = testRules{keep: func(key int16) bool { return key == 30 || key == 31 }}
	b.SetBytes(int64(len(capture)))
	b.ReportAllocs()
	b.ResetTimer()
	var frames int
	for i := 0; i < b.N; i++ {
		fs := &fileSource{name: "bench"}
		if err := fs.open(bufio.NewReaderSize(bytes.NewReader(capture), readBufferSize)); err != nil {
			b.Fatal(err)
		}
		frames = 0
		p := NewPipeline(cfg, func(e Event) {
			if _, ok := e.(*Frame); ok {
				frames++
			}
		})
		for {
			data, ci, link, err := fs.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			p.Packet(data, ci, link)
		}
		p.Close()
	}
	if frames != 8000 {
		b.Fatal(fmt.Sprint("frames ", frames))
	}
}

// Reading allocates nothing per frame once a connection's state is made:
// the Frame event itself is reused (a fresh one per frame was most of what
// a plaintext run allocated).
func TestPipelineFrameAllocs(t *testing.T) {
	const warm, frames = 200, 2000
	v := opened()
	for f := 0; f < warm+frames; f++ {
		v.Send(true, kreq(0, 9, int32(f), "alloc", 100+f%700))
		v.Send(false, kresp(int32(f), 40))
	}
	pkts := v.Cap.Packets
	cut := 3 + 2*warm // the handshake, then two packets a frame pair
	n := 0
	p := NewPipeline(testConfig(), func(e Event) {
		if _, ok := e.(*Frame); ok {
			n++
		}
	})
	for _, k := range pkts[:cut] {
		p.Packet(k.Data, k.CI, k.Link)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, k := range pkts[cut:] {
		p.Packet(k.Data, k.CI, k.Link)
	}
	runtime.ReadMemStats(&after)
	p.Close()
	if n != 2*(warm+frames) {
		t.Fatalf("%d frames, want %d", n, 2*(warm+frames))
	}
	if allocs := after.Mallocs - before.Mallocs; allocs > frames/20 {
		t.Errorf("%d allocations for %d frame pairs, want at most %d", allocs, frames, frames/20)
	}
}
