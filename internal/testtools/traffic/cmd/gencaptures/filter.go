package main

import (
	"bytes"
	"os"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

type filterStats struct{ kept, dropped int }

// onPort reports whether an Ethernet frame carries TCP to or from port.
func onPort(data []byte, port int) bool {
	p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.DecodeOptions{Lazy: true, NoCopy: true})
	tcp, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	return ok && (int(tcp.SrcPort) == port || int(tcp.DstPort) == port)
}

// filterPcap counts the packets of path that are TCP to or from port and,
// if drop is set and there are others, rewrites path without them (the kept
// packets are copied unchanged, timestamps included).
func filterPcap(path string, port int, drop bool) (filterStats, error) {
	var st filterStats
	raw, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	r, err := pcapgo.NewReader(bytes.NewReader(raw))
	if err != nil {
		return st, err
	}
	var out bytes.Buffer
	w := pcapgo.NewWriter(&out)
	if err := w.WriteFileHeader(r.Snaplen(), r.LinkType()); err != nil {
		return st, err
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break // io.EOF, or a final packet cut short by the stop
		}
		if r.LinkType() == layers.LinkTypeEthernet && !onPort(data, port) {
			st.dropped++
			continue
		}
		st.kept++
		if err := w.WritePacket(ci, data); err != nil {
			return st, err
		}
	}
	if drop && st.dropped > 0 {
		return st, os.WriteFile(path, out.Bytes(), 0o644)
	}
	return st, nil
}
