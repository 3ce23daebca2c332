package reassembly

import (
	"cmp"
	"slices"
)

// maxTallied bounds how many connections on other ports are told apart
// (about 100 bytes each): beyond it they are no longer counted.
const maxTallied = 1 << 14

// PortCount is how many TCP connections a server port had.
type PortCount struct {
	Port  uint16
	Conns int64
}

// portTally counts the TCP connections on ports that are not broker ports,
// by server port, so that a capture without Kafka on the given ports can
// say what it held instead.
type portTally struct {
	seen  map[tuple]struct{}
	ports map[uint16]int64
	more  bool
}

// add counts t's connection once, whichever way its packets go. The
// server port is the SYN's destination, the SYN-ACK's source, or else (a
// connection whose start was not captured) the lower port: ephemeral ports
// are high.
func (pt *portTally) add(t tuple, flags uint8) {
	key := t
	if key.dst.Compare(key.src) < 0 {
		key.src, key.dst = key.dst, key.src
	}
	if _, ok := pt.seen[key]; ok {
		return
	}
	if len(pt.seen) >= maxTallied {
		pt.more = true
		return
	}
	if pt.seen == nil {
		pt.seen, pt.ports = map[tuple]struct{}{}, map[uint16]int64{}
	}
	pt.seen[key] = struct{}{}
	server := min(t.src.Port(), t.dst.Port())
	switch flags & (flagSYN | flagACK) {
	case flagSYN:
		server = t.dst.Port()
	case flagSYN | flagACK:
		server = t.src.Port()
	}
	pt.ports[server]++
}

// OtherPorts returns the TCP connections seen on ports that are not broker
// ports, by server port, most connections first (then lower port first), and
// whether there were more connections than it tells apart.
func (p *Pipeline) OtherPorts() ([]PortCount, bool) {
	var list []PortCount
	for port, n := range p.other.ports {
		list = append(list, PortCount{port, n})
	}
	slices.SortFunc(list, func(a, b PortCount) int {
		if c := cmp.Compare(b.Conns, a.Conns); c != 0 {
			return c
		}
		return cmp.Compare(a.Port, b.Port)
	})
	return list, p.other.more
}
