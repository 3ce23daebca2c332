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
// and TLS connections (read without a key log: what a TLS connection costs
// before anything is decrypted):
//
//	tlshello    each connection: a SYN and a 517-byte TLS 1.3 ClientHello;
//	            it never closes
//	tlsrecords  each connection: a handshake, the ClientHello, the
//	            ServerHello with a ChangeCipherSpec and three encrypted
//	            records, and the client's ChangeCipherSpec and three
//	            encrypted records; it never closes
//	tlspending  each connection: a SYN, the ClientHello and 1,000,000 bytes
//	            of encrypted records in 16 KiB records, with no ServerHello,
//	            so that all of it waits for one
//	tlsbighello each connection: a SYN and a ClientHello announcing 256,000
//	            bytes of which 250,000 come, in 16 KiB records: a handshake
//	            message pending
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
	case "tlshello":
		each = tlsHello
	case "tlsrecords":
		each = tlsRecords
	case "tlspending":
		each = tlsPending
	case "tlsbighello":
		each = tlsBigHello
	default:
		return fmt.Errorf("unknown case %q (synflood, churn, holes, tlshello, tlsrecords, tlspending, tlsbighello)", kind)
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

// clientHello is a TLS 1.3 ClientHello record of 517 bytes, as browsers
// and recent Java send (padded), with the connection's own random: SNI,
// supported_versions, a x25519 key share, supported groups and signature
// algorithms.
func clientHello(i int) []byte {
	var body []byte
	body = append(body, 3, 3) // legacy_version
	random := make([]byte, 32)
	binary.BigEndian.PutUint64(random, uint64(i)*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint64(random[24:], uint64(i))
	body = append(body, random...)
	body = append(body, 32)
	body = append(body, random...) // legacy_session_id
	body = append(body, 0, 6, 0x13, 0x01, 0x13, 0x02, 0x13, 0x03)
	body = append(body, 1, 0) // compression
	var ext []byte
	sni := []byte("broker.example")
	ext = appendExt(ext, 0, append(append(binary.BigEndian.AppendUint16(nil, uint16(len(sni)+3)), 0),
		append(binary.BigEndian.AppendUint16(nil, uint16(len(sni))), sni...)...))
	ext = appendExt(ext, 43, []byte{2, 3, 4})                // supported_versions: TLS 1.3
	ext = appendExt(ext, 10, []byte{0, 4, 0, 0x1d, 0, 0x17}) // supported_groups
	ext = appendExt(ext, 13, []byte{0, 6, 4, 3, 8, 4, 4, 1}) // signature_algorithms
	ext = appendExt(ext, 51, append([]byte{0, 36, 0, 0x1d, 0, 32}, random...))
	// Padding to the usual 517-byte record.
	pad := 517 - 5 - 4 - len(body) - 2 - len(ext) - 4
	ext = appendExt(ext, 21, make([]byte, pad))
	body = binary.BigEndian.AppendUint16(body, uint16(len(ext)))
	body = append(body, ext...)
	msg := append([]byte{1, 0, byte(len(body) >> 8), byte(len(body))}, body...)
	return record(22, msg)
}

func appendExt(b []byte, typ uint16, data []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...)
}

// serverHello is a TLS 1.3 ServerHello record choosing TLS_AES_128_GCM_SHA256.
func serverHello(i int) []byte {
	var body []byte
	body = append(body, 3, 3)
	random := make([]byte, 32)
	binary.BigEndian.PutUint64(random, uint64(i)+1)
	body = append(body, random...)
	body = append(body, 0)          // empty session id echo
	body = append(body, 0x13, 0x01) // TLS_AES_128_GCM_SHA256
	body = append(body, 0)
	var ext []byte
	ext = appendExt(ext, 43, []byte{3, 4})
	ext = appendExt(ext, 51, append([]byte{0, 0x1d, 0, 32}, random...))
	body = binary.BigEndian.AppendUint16(body, uint16(len(ext)))
	body = append(body, ext...)
	msg := append([]byte{2, 0, byte(len(body) >> 8), byte(len(body))}, body...)
	return record(22, msg)
}

func record(typ byte, body []byte) []byte {
	r := []byte{typ, 3, 3, byte(len(body) >> 8), byte(len(body))}
	return append(r, body...)
}

// encrypted is an application data record of n bytes of ciphertext.
func encrypted(n int, fill byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = fill + byte(i*7)
	}
	return record(23, b)
}

// send writes b as segments of at most 1448 bytes from seq on, returning
// the next sequence number.
func (g *gen) send(fromClient bool, client [4]byte, port uint16, seq, ack uint32, b []byte) (uint32, error) {
	for len(b) > 0 {
		n := min(1448, len(b))
		if err := g.packet(fromClient, client, port, seq, ack, flagPSH|flagACK, b[:n]); err != nil {
			return 0, err
		}
		seq += uint32(n)
		b = b[n:]
	}
	return seq, nil
}

func tlsHello(g *gen, client [4]byte, port uint16, i int) error {
	isn := uint32(i) * 7919
	if err := g.segment(client, port, isn, 0, flagSYN, nil); err != nil {
		return err
	}
	return g.segment(client, port, isn+1, 1, flagPSH|flagACK, clientHello(i))
}

func tlsRecords(g *gen, client [4]byte, port uint16, i int) error {
	cisn, sisn := uint32(i)*7919, uint32(i)*104729
	if err := g.packet(true, client, port, cisn, 0, flagSYN, nil); err != nil {
		return err
	}
	if err := g.packet(false, client, port, sisn, cisn+1, flagSYN|flagACK, nil); err != nil {
		return err
	}
	cseq, sseq := cisn+1, sisn+1
	var err error
	if cseq, err = g.send(true, client, port, cseq, sseq, clientHello(i)); err != nil {
		return err
	}
	flight := serverHello(i)
	flight = append(flight, record(20, []byte{1})...)
	flight = append(flight, encrypted(1100, 1)...) // EncryptedExtensions, Certificate, ...
	flight = append(flight, encrypted(280, 2)...)
	flight = append(flight, encrypted(69, 3)...)
	if sseq, err = g.send(false, client, port, sseq, cseq, flight); err != nil {
		return err
	}
	reply := record(20, []byte{1})
	reply = append(reply, encrypted(69, 4)...)  // Finished
	reply = append(reply, encrypted(60, 5)...)  // ApiVersions
	reply = append(reply, encrypted(120, 6)...) // SaslHandshake
	_, err = g.send(true, client, port, cseq, sseq, reply)
	return err
}

func tlsPending(g *gen, client [4]byte, port uint16, i int) error {
	isn := uint32(i) * 7919
	if err := g.segment(client, port, isn, 0, flagSYN, nil); err != nil {
		return err
	}
	b := clientHello(i)
	for sent := 0; sent < 1_000_000; {
		n := min(16384+17, 1_000_000-sent)
		b = append(b, encrypted(n, byte(sent))...)
		sent += n
	}
	_, err := g.send(true, client, port, isn+1, 1, b)
	return err
}

func tlsBigHello(g *gen, client [4]byte, port uint16, i int) error {
	isn := uint32(i) * 7919
	if err := g.segment(client, port, isn, 0, flagSYN, nil); err != nil {
		return err
	}
	announced, sent := 256_000, 250_000
	msg := make([]byte, 4, 4+sent)
	msg[0], msg[1], msg[2], msg[3] = 1, byte(announced>>16), byte(announced>>8), byte(announced)
	msg = append(msg, 3, 3)
	for len(msg) < 4+sent {
		msg = append(msg, byte(len(msg)*31+i))
	}
	var b []byte
	for len(msg) > 0 {
		n := min(16384, len(msg))
		b = append(b, record(22, msg[:n])...)
		msg = msg[n:]
	}
	_, err := g.send(true, client, port, isn+1, 1, b)
	return err
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
	return g.packet(true, client, port, seq, ack, flags, payload)
}

// packet writes one packet of the connection from client:port to the
// broker, in the direction given.
func (g *gen) packet(fromClient bool, client [4]byte, port uint16, seq, ack uint32, flags byte, payload []byte) error {
	src, dst, sport, dport := client, server, port, uint16(serverPort)
	if !fromClient {
		src, dst, sport, dport = server, client, serverPort, port
	}
	p := g.pkt[:0]
	p = append(p, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00)
	ip := len(p)
	p = append(p, 0x45, 0)
	p = binary.BigEndian.AppendUint16(p, uint16(40+len(payload)))
	p = append(p, 0, 0, 0, 0, 64, 6, 0, 0)
	p = append(p, src[:]...)
	p = append(p, dst[:]...)
	binary.BigEndian.PutUint16(p[ip+10:], ipChecksum(p[ip:ip+20]))
	p = binary.BigEndian.AppendUint16(p, sport)
	p = binary.BigEndian.AppendUint16(p, dport)
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
