// Command scalegen writes the captures of the connection-scale benchmark
// (bench/scale.sh): many connections with little traffic each, which is
// where per-connection state and any pass over all connections show.
//
//	synflood  each connection: a SYN and a 40-byte request head claiming a
//	          1 MiB frame; it never closes
//	churn     each connection: a SYN, one CreateAcls v3 request, a client FIN
//	holes     each connection: a SYN and 84 KiB of Produce requests whose
//	          first byte was never captured, so all of it waits out of order
//
// Ethernet/IPv4, broker 10.0.0.1:9092, packets 10 µs apart.
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func main() {
	out := flag.String("o", "scale.pcap", "output file")
	kind := flag.String("case", "synflood", "synflood, churn or holes")
	conns := flag.Int("conns", 100000, "connections")
	flag.Parse()
	if err := generate(*out, *kind, *conns); err != nil {
		fmt.Fprintln(os.Stderr, "scalegen:", err)
		os.Exit(1)
	}
}

const (
	flagFIN = 0x01
	flagSYN = 0x02
	flagPSH = 0x08
	flagACK = 0x10
)

// holeBytes is what each connection of the holes case holds out of order.
const holeBytes = 84 << 10

type gen struct {
	w   *pcapgo.Writer
	t   time.Time
	pkt []byte
}

func generate(path, kind string, n int) error {
	var each func(g *gen, client [4]byte, port uint16, i int) error
	switch kind {
	case "synflood":
		each = synflood
	case "churn":
		each = churn
	case "holes":
		each = holes
	default:
		return fmt.Errorf("unknown case %q (synflood, churn, holes)", kind)
	}
	if n <= 0 || n > 1<<26 {
		return fmt.Errorf("-conns %d out of range", n)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	g := &gen{w: pcapgo.NewWriter(bw), t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := g.w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		return err
	}
	for i := range n {
		// 40,000 ports on each of as many client addresses as needed: every
		// connection has its own 4-tuple.
		a := 0x0b000000 + uint32(i/40000)
		client := [4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}
		if err := each(g, client, uint16(20000+i%40000), i); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

var server = [4]byte{10, 0, 0, 1}

const serverPort = 9092

func synflood(g *gen, client [4]byte, port uint16, i int) error {
	isn := uint32(i) * 7919
	if err := g.segment(client, port, isn, 0, flagSYN, nil); err != nil {
		return err
	}
	head := binary.BigEndian.AppendUint32(nil, 1<<20) // claims a 1 MiB frame
	head = append(head, requestHeader(0, 9, int32(i), "flood-client")...)
	for len(head) < 40 {
		head = append(head, 0)
	}
	return g.segment(client, port, isn+1, 1, flagPSH|flagACK, head)
}

func churn(g *gen, client [4]byte, port uint16, i int) error {
	isn := uint32(i) * 7919
	if err := g.segment(client, port, isn, 0, flagSYN, nil); err != nil {
		return err
	}
	req := kmsg.NewCreateACLsRequest()
	req.Version = 3
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType = kmsg.ACLResourceTypeTopic
	c.ResourceName = "orders"
	c.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
	c.Principal = "User:alice"
	c.Host = "*"
	c.Operation = kmsg.ACLOperationWrite
	c.PermissionType = kmsg.ACLPermissionTypeAllow
	req.Creations = append(req.Creations, c)
	body := append(requestHeader(30, 3, 1, "kadm"), req.AppendTo(nil)...)
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	frame = append(frame, body...)
	if err := g.segment(client, port, isn+1, 1, flagPSH|flagACK, frame); err != nil {
		return err
	}
	return g.segment(client, port, isn+1+uint32(len(frame)), 1, flagFIN|flagACK, nil)
}

// holeStream is the same for every connection of the holes case: Produce
// v9 requests of 1-16 KiB back to back.
var holeStream = func() []byte {
	var b []byte
	body := make([]byte, 16<<10)
	for i := range body {
		body[i] = byte(i * 31)
	}
	for corr := int32(1); len(b) < holeBytes+1; corr++ {
		n := 1024 + int(corr*5171)%(15<<10)
		head := requestHeader(0, 9, corr, "bench-producer")
		b = binary.BigEndian.AppendUint32(b, uint32(len(head)+n))
		b = append(b, head...)
		b = append(b, body[:n]...)
	}
	return b[:holeBytes+1]
}()

func holes(g *gen, client [4]byte, port uint16, i int) error {
	isn := uint32(i) * 7919
	if err := g.segment(client, port, isn, 0, flagSYN, nil); err != nil {
		return err
	}
	// Byte 0 of the stream is never captured; the rest arrives in order.
	for off := 1; off < len(holeStream); off += 1448 {
		end := min(off+1448, len(holeStream))
		if err := g.segment(client, port, isn+1+uint32(off), 1, flagPSH|flagACK, holeStream[off:end]); err != nil {
			return err
		}
	}
	return nil
}

func requestHeader(key, ver int16, corr int32, client string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(ver))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len(client)))
	b = append(b, client...)
	if key == 30 {
		b = append(b, 0) // header v2 for the flexible CreateAcls v3
	}
	return b
}

// segment writes one client→broker packet.
func (g *gen) segment(client [4]byte, port uint16, seq, ack uint32, flags byte, payload []byte) error {
	p := g.pkt[:0]
	p = append(p, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00)
	ip := len(p)
	p = append(p, 0x45, 0)
	p = binary.BigEndian.AppendUint16(p, uint16(40+len(payload)))
	p = append(p, 0, 0, 0, 0, 64, 6, 0, 0)
	p = append(p, client[:]...)
	p = append(p, server[:]...)
	binary.BigEndian.PutUint16(p[ip+10:], ipChecksum(p[ip:ip+20]))
	p = binary.BigEndian.AppendUint16(p, port)
	p = binary.BigEndian.AppendUint16(p, serverPort)
	p = binary.BigEndian.AppendUint32(p, seq)
	p = binary.BigEndian.AppendUint32(p, ack)
	p = append(p, 5<<4, flags, 0xff, 0xff, 0, 0, 0, 0)
	p = append(p, payload...)
	g.pkt = p
	g.t = g.t.Add(10 * time.Microsecond)
	return g.w.WritePacket(gopacket.CaptureInfo{Timestamp: g.t, CaptureLength: len(p), Length: len(p)}, p)
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
