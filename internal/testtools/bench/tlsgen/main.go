// Command tlsgen writes the TLS version of the benchmark capture: Kafka
// traffic over TLS 1.3 with TLS_AES_128_GCM_SHA256 (-suite names another,
// a TLS 1.2 one too), and the NSS key log that decrypts it, for comparing
// kdissect's decryption with tshark's.
//
//	go run ./internal/testtools/bench/tlsgen -o bench-tls.pcap -size 100000000
//
// A crypto/tls client and server talk over real TCP connections on
// 127.0.0.1: the client writes Kafka-framed requests, each frame 16 KiB
// (Produce v9 headers over random bodies) with a CreateAcls v3 request
// every tenth frame; the server answers each with a small response (a
// real CreateAcls v3 response for the ACL requests). The bytes are
// recorded on the client's sockets and written as the packets of a
// capture on lo (internal/testtools/traffic's Synth: handshake, 1448-byte segments,
// ACKs, FIN), streamed to the file, so memory stays small at any size.
// The broker is shown on port 9092 (-port). The key material is throwaway.
//
// tshark needs to be told that the port carries TLS, since it takes 9092 for
// plaintext Kafka: -o tls.keylog_file:K -d tcp.port==9092,tls
// -d tls.port==9092,kafka.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func main() {
	out := flag.String("o", "bench-tls.pcap", "output capture")
	keylog := flag.String("keylog", "", "output key log (default: the capture's name with .keylog)")
	size := flag.Int64("size", 100_000_000, "approximate capture size in bytes")
	conns := flag.Int("conns", 2, "client connections (each carries an equal share)")
	frameSize := flag.Int("frame", 16<<10, "bytes of each Kafka frame the client writes, size prefix included")
	aclEvery := flag.Int("acl-every", 10, "every Nth frame is a CreateAcls v3 request")
	seed := flag.Uint64("seed", 1, "seed of the random bodies")
	port := flag.Int("port", 9092, "broker port the capture shows")
	suiteName := flag.String("suite", "TLS_AES_128_GCM_SHA256", "the cipher suite, as crypto/tls names it; a TLS 1.2 suite makes the connections TLS 1.2 (the server's certificate is ECDSA)")
	flag.Parse()
	suite := lookupSuite(*suiteName)
	if suite == nil {
		fmt.Fprintf(os.Stderr, "tlsgen: -suite %q is no cipher suite crypto/tls knows\n", *suiteName)
		os.Exit(1)
	}
	if *keylog == "" {
		*keylog = trimExt(*out) + ".keylog"
	}
	if *conns < 1 || *frameSize < 256 || *frameSize > 1<<20 || *aclEvery < 1 || *size < 1 || *port < 1 || *port > 65535 {
		fmt.Fprintln(os.Stderr, "tlsgen: -conns must be >= 1, -frame 256..1048576, -acl-every >= 1, -size > 0, -port 1..65535")
		os.Exit(1)
	}
	st, err := generate(options{out: *out, keylog: *keylog, size: *size, conns: *conns, frameSize: *frameSize,
		aclEvery: *aclEvery, seed: *seed, port: *port, suite: suite})
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlsgen:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d bytes, %d packets, %d connections, %d frames (%d CreateAcls), %s; key log %s\n",
		*out, st.bytes, st.packets, *conns, st.frames, st.acls, st.cipher, *keylog)
}

// lookupSuite finds a cipher suite by name (nil: crypto/tls has none).
func lookupSuite(name string) *tls.CipherSuite {
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// isTLS12 reports whether s is one of TLS 1.2's suites, not TLS 1.3's.
func isTLS12(s *tls.CipherSuite) bool { return !slices.Contains(s.SupportedVersions, tls.VersionTLS13) }

func trimExt(p string) string {
	for i := len(p) - 1; i >= 0 && p[i] != '/'; i-- {
		if p[i] == '.' {
			return p[:i]
		}
	}
	return p
}

type stats struct {
	bytes, packets int64
	frames, acls   int
	cipher         string
}

// countingWriter counts the bytes of the capture.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// lockedKeyLog serializes crypto/tls's key log writes.
type lockedKeyLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedKeyLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type options struct {
	out, keylog                      string
	size                             int64
	conns, frameSize, aclEvery, port int
	seed                             uint64
	suite                            *tls.CipherSuite
}

func generate(o options) (st stats, err error) {
	out, keylogPath, size, nconns, frameSize, aclEvery, seed := o.out, o.keylog, o.size, o.conns, o.frameSize, o.aclEvery, o.seed
	certs, err := traffic.TestCerts()
	if err != nil {
		return st, err
	}
	tls12 := isTLS12(o.suite)
	if !tls12 {
		defer traffic.SteerTLS13(o.suite.ID)()
	}

	f, err := os.Create(out)
	if err != nil {
		return st, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	cw := &countingWriter{w: bw}
	kf, err := os.Create(keylogPath)
	if err != nil {
		return st, err
	}
	defer kf.Close()
	kbw := bufio.NewWriter(kf)
	fmt.Fprintln(kbw, "# kdissect benchmark: throwaway TLS test keys (crypto/tls KeyLogWriter)")
	keyLog := &lockedKeyLog{w: kbw}

	synth, err := traffic.NewSynth(cw)
	if err != nil {
		return st, err
	}
	wire := traffic.NewStreamingWire(&renumber{sink: synth, port: o.port})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return st, err
	}
	defer ln.Close()
	srvCfg := &tls.Config{Certificates: []tls.Certificate{certs.Server}, MinVersion: tls.VersionTLS13}
	if tls12 {
		srvCfg.MinVersion, srvCfg.MaxVersion, srvCfg.CipherSuites = tls.VersionTLS12, tls.VersionTLS12, []uint16{o.suite.ID}
	}
	srvErr := make(chan error, nconns)
	go func() {
		for i := 0; i < nconns; i++ {
			c, err := ln.Accept()
			if err != nil {
				srvErr <- err
				return
			}
			go func() { srvErr <- serve(tls.Server(c, srvCfg)) }()
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	body := make([]byte, frameSize)
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	cliCfg := &tls.Config{RootCAs: certs.Pool, ServerName: traffic.BrokerSNI, MinVersion: tls.VersionTLS13, KeyLogWriter: keyLog}
	if tls12 {
		cliCfg.MinVersion, cliCfg.MaxVersion, cliCfg.CipherSuites = tls.VersionTLS12, tls.VersionTLS12, []uint16{o.suite.ID}
	}
	clients := make([]*client, nconns)
	for i := range clients {
		var d net.Dialer
		raw, err := d.DialContext(ctx, "tcp", ln.Addr().String())
		if err != nil {
			return st, err
		}
		tc := tls.Client(wire.Wrap(raw), cliCfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return st, err
		}
		cs := tc.ConnectionState()
		st.cipher = tls.CipherSuiteName(cs.CipherSuite)
		if cs.CipherSuite != o.suite.ID {
			return st, fmt.Errorf("negotiated %s, want %s", st.cipher, o.suite.Name)
		}
		clients[i] = &client{conn: tc, fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench-tls"))}
	}
	for n := 0; cw.n < size; n++ {
		c := clients[n%nconns]
		c.corr++
		var frame []byte
		if n%aclEvery == aclEvery-1 {
			frame = aclRequest(c.fmtr, c.corr, n)
			st.acls++
		} else {
			frame = produceFrame(c.corr, body)
		}
		if _, err := c.conn.Write(frame); err != nil {
			return st, err
		}
		if err := c.readResponse(); err != nil {
			return st, err
		}
		st.frames++
		if err := wire.Err(); err != nil {
			return st, err
		}
	}
	for _, c := range clients {
		c.conn.Close()
	}
	for range nconns {
		if err := <-srvErr; err != nil {
			return st, fmt.Errorf("server: %w", err)
		}
	}
	if err := wire.Err(); err != nil {
		return st, err
	}
	if err := bw.Flush(); err != nil {
		return st, err
	}
	if err := kbw.Flush(); err != nil {
		return st, err
	}
	st.bytes, st.packets = cw.n, int64(synth.Packets)
	return st, nil
}

// renumber shows the server on the chosen port whatever port it listened
// on.
type renumber struct {
	sink traffic.WireSink
	port int
}

func (r *renumber) WireEvent(info traffic.WireConnInfo, ev traffic.WireEvent) error {
	sv := *info.Server
	sv.Port = r.port
	info.Server = &sv
	return r.sink.WireEvent(info, ev)
}

type client struct {
	conn *tls.Conn
	fmtr *kmsg.RequestFormatter
	corr int32
	buf  []byte
}

// produceFrame is a Produce v9 request header (flexible, so request header
// v2 with an empty tag section) followed by random bytes, len(body) bytes
// in all with the size prefix.
func produceFrame(corr int32, body []byte) []byte {
	const clientID = "bench-tls"
	f := make([]byte, 0, len(body))
	f = binary.BigEndian.AppendUint32(f, uint32(len(body)-4))
	f = binary.BigEndian.AppendUint16(f, 0) // Produce
	f = binary.BigEndian.AppendUint16(f, 9)
	f = binary.BigEndian.AppendUint32(f, uint32(corr))
	f = binary.BigEndian.AppendUint16(f, uint16(len(clientID)))
	f = append(f, clientID...)
	f = append(f, 0) // no tagged fields
	return append(f, body[len(f):]...)
}

// aclRequest is a CreateAcls v3 request with two creations.
func aclRequest(fmtr *kmsg.RequestFormatter, corr int32, n int) []byte {
	req := kmsg.NewPtrCreateACLsRequest()
	req.SetVersion(3)
	for i, p := range []string{"User:alice", "User:bob"} {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType = kmsg.ACLResourceTypeTopic
		c.ResourceName = fmt.Sprintf("bench-topic-%d-%d", n, i)
		c.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
		c.Principal = p
		c.Host = "*"
		c.Operation = kmsg.ACLOperationWrite
		c.PermissionType = kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, c)
	}
	return fmtr.AppendRequest(nil, req, corr)
}

func (c *client) readResponse() error {
	var size [4]byte
	if _, err := io.ReadFull(c.conn, size[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 1<<20 {
		return fmt.Errorf("response size %d", n)
	}
	if cap(c.buf) < int(n) {
		c.buf = make([]byte, n)
	}
	b := c.buf[:n]
	if _, err := io.ReadFull(c.conn, b); err != nil {
		return err
	}
	if got := int32(binary.BigEndian.Uint32(b)); got != c.corr {
		return fmt.Errorf("response correlation ID %d, want %d", got, c.corr)
	}
	return nil
}

// serve answers each request frame: a CreateAcls v3 response with one
// success per creation, or a 40-byte Produce v9 response.
func serve(c *tls.Conn) error {
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	var buf, out []byte
	for {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		n := binary.BigEndian.Uint32(size[:])
		if n < 8 || n > 1<<20 {
			return fmt.Errorf("request size %d", n)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		b := buf[:n]
		if _, err := io.ReadFull(r, b); err != nil {
			return err
		}
		api := int16(binary.BigEndian.Uint16(b))
		corr := binary.BigEndian.Uint32(b[4:])
		out = out[:0]
		out = append(out, 0, 0, 0, 0)
		out = binary.BigEndian.AppendUint32(out, corr)
		out = append(out, 0) // response header v1: no tagged fields
		switch api {
		case 30:
			req := kmsg.NewPtrCreateACLsRequest()
			req.SetVersion(3)
			hdr := 8 + 2 + int(binary.BigEndian.Uint16(b[8:])) + 1
			if hdr > len(b) {
				return errors.New("short CreateAcls header")
			}
			if err := req.ReadFrom(b[hdr:]); err != nil {
				return err
			}
			resp := kmsg.NewPtrCreateACLsResponse()
			resp.SetVersion(3)
			for range req.Creations {
				resp.Results = append(resp.Results, kmsg.NewCreateACLsResponseResult())
			}
			out = resp.AppendTo(out)
		default:
			out = append(out, make([]byte, 40-len(out))...) // a 40-byte frame
		}
		binary.BigEndian.PutUint32(out, uint32(len(out)-4))
		if _, err := c.Write(out); err != nil {
			return err
		}
	}
}
