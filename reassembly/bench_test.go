package reassembly

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/netip"
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
