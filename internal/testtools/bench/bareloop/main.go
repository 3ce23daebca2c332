// Command bareloop is the baseline of the end-to-end benchmark
// (bench/run.sh): gopacket's own read + decode + TCP reassembly loop with
// Kafka size-prefix framing and nothing else, written the fast way: a
// buffered pcapgo reader with zero-copy reads and a DecodingLayerParser.
// kdissect --summary is measured against it.
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/google/gopacket/reassembly"
)

type ctx struct{ ci gopacket.CaptureInfo }

func (c *ctx) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

type factory struct{ frames *int }

func (f factory) New(_, _ gopacket.Flow, _ *layers.TCP, _ reassembly.AssemblerContext) reassembly.Stream {
	return &stream{frames: f.frames}
}

// stream counts Kafka frames per direction by skipping size prefixes.
type stream struct {
	frames *int
	need   [2]int // bytes still to skip in the current frame
	hdr    [2][]byte
}

func (s *stream) Accept(*layers.TCP, gopacket.CaptureInfo, reassembly.TCPFlowDirection, reassembly.Sequence, *bool, reassembly.AssemblerContext) bool {
	return true
}

func (s *stream) ReassembledSG(sg reassembly.ScatterGather, _ reassembly.AssemblerContext) {
	dir, _, _, skip := sg.Info()
	d := 0
	if dir == reassembly.TCPDirServerToClient {
		d = 1
	}
	if skip != 0 {
		s.need[d], s.hdr[d] = 0, s.hdr[d][:0]
	}
	n, _ := sg.Lengths()
	b := sg.Fetch(n)
	for len(b) > 0 {
		if s.need[d] > 0 {
			k := min(s.need[d], len(b))
			s.need[d] -= k
			b = b[k:]
			continue
		}
		k := min(4-len(s.hdr[d]), len(b))
		s.hdr[d] = append(s.hdr[d], b[:k]...)
		b = b[k:]
		if len(s.hdr[d]) == 4 {
			s.need[d] = int(binary.BigEndian.Uint32(s.hdr[d]))
			s.hdr[d] = s.hdr[d][:0]
			*s.frames++
		}
	}
}

func (s *stream) ReassemblyComplete(reassembly.AssemblerContext) bool { return true }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bareloop FILE.pcap")
		os.Exit(1)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r, err := pcapgo.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var eth layers.Ethernet
	var ip4 layers.IPv4
	var ip6 layers.IPv6
	var tcp layers.TCP
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &ip6, &tcp)
	parser.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 4)
	frames := 0
	asm := reassembly.NewAssembler(reassembly.NewStreamPool(factory{frames: &frames}))
	var c ctx
	start := time.Now()
	var bytes int64
	var last time.Time
	for {
		data, ci, err := r.ZeroCopyReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		bytes += int64(len(data))
		if err := parser.DecodeLayers(data, &decoded); err != nil {
			continue
		}
		for _, t := range decoded {
			if t != layers.LayerTypeTCP {
				continue
			}
			var flow gopacket.Flow
			if ip4.SrcIP != nil && len(decoded) > 1 && decoded[1] == layers.LayerTypeIPv4 {
				flow = ip4.NetworkFlow()
			} else {
				flow = ip6.NetworkFlow()
			}
			c.ci = ci
			asm.AssembleWithContext(flow, &tcp, &c)
		}
		if ci.Timestamp.Sub(last) > time.Second {
			asm.FlushWithOptions(reassembly.FlushOptions{T: ci.Timestamp.Add(-3 * time.Second), TC: ci.Timestamp.Add(-5 * time.Minute)})
			last = ci.Timestamp
		}
	}
	asm.FlushAll()
	el := time.Since(start)
	fmt.Printf("%d frames, %d bytes in %v: %.0f MB/s\n", frames, bytes, el, float64(bytes)/1e6/el.Seconds())
}
