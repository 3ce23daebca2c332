package reassembly

import (
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// FuzzPipeline feeds arbitrary bytes as packets of any link type: whatever
// comes in, the pipeline must not panic, its buffer accounting must hold
// after every packet, and Close must leave nothing behind. The link byte's
// high bit turns DetectPorts on. The seeds are a handshake and a request
// (below); testdata/fuzz/FuzzPipeline adds segments on other links, FIN and
// RST, a layered connection, and inputs a short fuzzing run found.
func FuzzPipeline(f *testing.F) {
	v := newConv(cli, srv, 1, 2)
	v.Handshake()
	v.Send(true, kreq(30, 3, 1, "c", 30))
	for _, p := range v.Cap.Packets {
		f.Add(p.Data, uint8(layers.LinkTypeEthernet))
	}
	f.Fuzz(func(t *testing.T, data []byte, link uint8) {
		// Each input runs plain and with a Layer (recLayer, on connections
		// whose client's first byte is odd).
		for _, layered := range []bool{false, true} {
			cfg := Config{BrokerPorts: testConfig().BrokerPorts, DetectPorts: link&0x80 != 0, Framing: testRules{},
				MaxFrame: 1 << 16, MaxConnBuffer: 1 << 12, MaxTotalBuffer: 1 << 14, MaxConns: 2}
			if layered {
				cfg.NewLayer = func(_ Flow, first []byte) Layer {
					if len(first) > 0 && first[0]&1 == 1 {
						return new(recLayer)
					}
					return nil
				}
			}
			p := NewPipeline(cfg, func(Event) {})
			// Feed the input as one packet and as a series of packets cut from
			// it, seconds apart so that the timeouts run too; the buffer
			// accounting must hold throughout and end at zero.
			p.Packet(data, gopacket.CaptureInfo{Timestamp: t0}, layers.LinkType(link&0x7f))
			for i := 0; i+2 < len(data); i += int(data[i]%61) + 1 {
				ts := t0.Add(time.Duration(i) * time.Second)
				p.Packet(data[i:], gopacket.CaptureInfo{Timestamp: ts}, layers.LinkType(data[i+1]))
				checkBuffers(t, p)
			}
			p.Close()
			if p.buffered != 0 {
				t.Fatalf("%d bytes buffered after Close", p.buffered)
			}
			if p.conns.len() != 0 || p.active.n != 0 || p.ended.n != 0 || len(p.waits) != 0 || len(p.layers) != 0 {
				t.Fatalf("after Close: %d connections, lists %d+%d, %d waiting, %d layered", p.conns.len(), p.active.n, p.ended.n, len(p.waits), len(p.layers))
			}
		}
	})
}
