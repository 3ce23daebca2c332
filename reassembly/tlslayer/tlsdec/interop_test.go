package tlsdec

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
	_ "unsafe" // go:linkname, to steer Go's TLS 1.3 suite choice
)

// Go picks the TLS 1.3 suite itself and ignores Config.CipherSuites for TLS 1.3
// (handshake_server_tls13.go walks defaultCipherSuitesTLS13, or defaultCipherSuitesTLS13NoAES when
// either side lacks AES-GCM hardware, and takes the first suite the client offered; the client offers
// the same list). Both lists are published for go:linkname by crypto/tls itself (quic-go relies on
// that), so a test can narrow them to the one suite it wants and restore them afterwards. The
// alternatives do not reach every suite: GODEBUG=cpu.aes=off (in a re-executed test binary) only
// makes ChaCha20 win, and FIPS mode only allows the AES-GCM suites, AES-128 first.
//
//go:linkname tls13Suites crypto/tls.defaultCipherSuitesTLS13
var tls13Suites []uint16

//go:linkname tls13SuitesNoAES crypto/tls.defaultCipherSuitesTLS13NoAES
var tls13SuitesNoAES []uint16

// forceTLS13Suite makes both peers of this process offer and pick only id, until the test ends.
// Tests using it must not run in parallel.
func forceTLS13Suite(t testing.TB, id uint16) {
	a, b := tls13Suites, tls13SuitesNoAES
	tls13Suites, tls13SuitesNoAES = []uint16{id}, []uint16{id}
	t.Cleanup(func() { tls13Suites, tls13SuitesNoAES = a, b })
}

// Test PKI: one RSA server certificate (RSA key exchange needs one) and an ECDSA client certificate
// with the subject Kafka would turn into User:CN=svc-payments,OU=payments,O=Example Corp,L=Zurich,C=CH.
var (
	pkiOnce    sync.Once
	serverCert tls.Certificate
	clientCert tls.Certificate
	rootPool   *x509.CertPool
)

func testPKI(t testing.TB) {
	pkiOnce.Do(func() {
		rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(1),
			Subject:               pkix.Name{CommonName: "kafka.test"},
			DNSNames:              []string{"kafka.test"},
			NotBefore:             time.Unix(0, 0),
			NotAfter:              time.Unix(1<<33, 0),
			IsCA:                  true,
			BasicConstraintsValid: true,
			KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &rsaKey.PublicKey, rsaKey)
		if err != nil {
			panic(err)
		}
		serverCert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: rsaKey}
		leaf, _ := x509.ParseCertificate(der)
		rootPool = x509.NewCertPool()
		rootPool.AddCert(leaf)

		ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		ctmpl := &x509.Certificate{
			SerialNumber: big.NewInt(2),
			Subject: pkix.Name{CommonName: "svc-payments", OrganizationalUnit: []string{"payments"},
				Organization: []string{"Example Corp"}, Locality: []string{"Zurich"}, Country: []string{"CH"}},
			NotBefore:   time.Unix(0, 0),
			NotAfter:    time.Unix(1<<33, 0),
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		cder, err := x509.CreateCertificate(rand.Reader, ctmpl, leaf, &ecKey.PublicKey, rsaKey)
		if err != nil {
			panic(err)
		}
		clientCert = tls.Certificate{Certificate: [][]byte{cder}, PrivateKey: ecKey}
	})
}

// recConn keeps a copy of every byte written: one direction of the connection as on the wire.
type recConn struct {
	net.Conn
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recConn) Write(p []byte) (int, error) {
	n, err := r.Conn.Write(p)
	r.mu.Lock()
	r.buf.Write(p[:n])
	r.mu.Unlock()
	return n, err
}

func (r *recConn) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes())
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// capture is one connection made by crypto/tls peers over loopback.
type capture struct {
	client, server []byte // the bytes each side wrote
	sent, replied  []byte // the application data each side wrote
	keyLog         string
	state          tls.ConnectionState // the client's view
}

// payload is deterministic application data of n bytes.
func payload(seed uint64, n int) []byte {
	r := mrand.New(mrand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// exchange runs one connection: the client writes each of sends (one Write each), the server reads
// them all and answers with reply, the client reads it and closes. extra, if set, runs on the client
// after the answer, with the raw recording connection, before the close.
func exchange(t testing.TB, ccfg, scfg *tls.Config, sends [][]byte, reply []byte,
	extra func(raw *recConn, tc *tls.Conn, keyLog *syncBuf, srv chan<- []byte, srvGot <-chan []byte)) *capture {
	t.Helper()
	testPKI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var keyLog syncBuf
	ccfg = ccfg.Clone()
	ccfg.KeyLogWriter = &keyLog
	if ccfg.RootCAs == nil {
		ccfg.RootCAs = rootPool
	}
	if ccfg.ServerName == "" {
		ccfg.ServerName = "kafka.test"
	}
	scfg = scfg.Clone()
	scfg.Certificates = []tls.Certificate{serverCert}

	total := 0
	for _, s := range sends {
		total += len(s)
	}
	type result struct {
		raw *recConn
		err error
	}
	srvDone := make(chan result, 1)
	srvCmd := make(chan []byte)    // extra: bytes for the server to write
	srvGot := make(chan []byte, 1) // extra: what the server read in answer
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			srvDone <- result{nil, err}
			return
		}
		raw := &recConn{Conn: conn}
		tc := tls.Server(raw, scfg)
		defer tc.Close()
		got := make([]byte, total)
		if _, err := io.ReadFull(tc, got); err != nil {
			srvDone <- result{raw, fmt.Errorf("server read: %w", err)}
			return
		}
		if _, err := tc.Write(reply); err != nil {
			srvDone <- result{raw, fmt.Errorf("server write: %w", err)}
			return
		}
		if extra != nil {
			// The extra step asks the server to read n bytes and write an answer.
			for want := range srvCmd {
				buf := make([]byte, int(binary.BigEndian.Uint32(want)))
				if _, err := io.ReadFull(tc, buf); err != nil {
					srvDone <- result{raw, fmt.Errorf("server extra read: %w", err)}
					return
				}
				srvGot <- buf
				if _, err := tc.Write(want[4:]); err != nil {
					srvDone <- result{raw, fmt.Errorf("server extra write: %w", err)}
					return
				}
			}
		}
		io.Copy(io.Discard, tc) // until the client's close_notify
		// The server's close_notify is written before the capture is taken: the client only closed
		// its writing side, so the write succeeds and is recorded every time.
		tc.Close()
		srvDone <- result{raw, nil}
	}()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw := &recConn{Conn: conn}
	tc := tls.Client(raw, ccfg)
	for _, s := range sends {
		if _, err := tc.Write(s); err != nil {
			t.Fatalf("client write: %v", err)
		}
	}
	got := make([]byte, len(reply))
	if _, err := io.ReadFull(tc, got); err != nil {
		t.Fatalf("client read: %v", err)
	}
	if !bytes.Equal(got, reply) {
		t.Fatal("client read something else than the server wrote")
	}
	if extra != nil {
		extra(raw, tc, &keyLog, srvCmd, srvGot)
		close(srvCmd)
		raw.Conn.(*net.TCPConn).CloseWrite()
	} else if err := tc.CloseWrite(); err != nil {
		t.Fatalf("client close_notify: %v", err)
	}
	res := <-srvDone
	if res.err != nil {
		t.Fatal(res.err)
	}
	raw.Conn.Close()
	return &capture{client: raw.bytes(), server: res.raw.bytes(), sent: bytes.Join(sends, nil),
		replied: reply, keyLog: keyLog.String(), state: tc.ConnectionState()}
}

// feed gives a capture's two directions to c in one of several orders and chunkings; both
// directions always go in order.
func feed(c *Conn, client, server []byte, mode string, seed uint64, out func(Output)) {
	r := mrand.New(mrand.NewPCG(seed, 1))
	switch mode {
	case "client first":
		c.Feed(true, client, out)
		c.Feed(false, server, out)
	case "server first":
		c.Feed(false, server, out)
		c.Feed(true, client, out)
	default:
		var size func() int
		switch mode {
		case "1 byte":
			size = func() int { return 1 }
		case "random":
			size = func() int { return 1 + r.IntN(3000) }
		case "many records":
			size = func() int { return 20000 + r.IntN(50000) }
		default:
			panic(mode)
		}
		for len(client) > 0 || len(server) > 0 {
			fromClient := len(server) == 0 || len(client) > 0 && r.IntN(2) == 0
			if mode == "1 byte" {
				fromClient = len(server) == 0 || len(client) > 0 && len(client) >= len(server)
			}
			src := &server
			if fromClient {
				src = &client
			}
			n := min(size(), len(*src))
			c.Feed(fromClient, (*src)[:n], out)
			*src = (*src)[n:]
		}
	}
}

var feedModes = []string{"client first", "server first", "1 byte", "random", "many records"}

// decryptAll runs a capture through a Conn in every feeding mode and checks the plaintext both
// peers wrote comes out, with no problem reported. It returns the last Conn's Info.
func decryptAll(t *testing.T, cp *capture, keyLog string) Info {
	t.Helper()
	kl, err := ParseKeyLog(bytes.NewReader([]byte(keyLog)))
	if err != nil {
		t.Fatal(err)
	}
	var info Info
	for i, mode := range feedModes {
		c := NewConn(kl)
		var col collector
		client, server := bytes.Clone(cp.client), bytes.Clone(cp.server)
		feed(c, client, server, mode, uint64(i), col.out)
		if !bytes.Equal(client, cp.client) || !bytes.Equal(server, cp.server) {
			t.Errorf("%s: Conn changed the bytes it was fed", mode)
		}
		if !bytes.Equal(col.data[true], cp.sent) {
			t.Errorf("%s: client plaintext: got %d bytes, want the %d the client wrote", mode, len(col.data[true]), len(cp.sent))
		}
		if !bytes.Equal(col.data[false], cp.replied) {
			t.Errorf("%s: server plaintext: got %d bytes, want the %d the server wrote", mode, len(col.data[false]), len(cp.replied))
		}
		if len(col.problems) != 0 {
			t.Errorf("%s: problems: %+v", mode, col.problems)
		}
		if col.sessions != 1 {
			t.Errorf("%s: %d session events, want 1", mode, col.sessions)
		}
		if n := countRecords(cp.client) + countRecords(cp.server); c.Info().Records != n {
			t.Errorf("%s: Info.Records = %d, want %d", mode, c.Info().Records, n)
		}
		info = c.Info()
	}
	return info
}

func countRecords(b []byte) int {
	n := 0
	for len(b) >= 5 {
		b = b[5+int(binary.BigEndian.Uint16(b[3:])):]
		n++
	}
	return n
}

// Sends of several sizes: small, a frame that spans records, and several small ones in a row.
func testSends() [][]byte {
	return [][]byte{payload(1, 100), payload(2, 40000), payload(3, 7), payload(4, 16384), payload(5, 1)}
}

func TestTLS13Suites(t *testing.T) {
	for _, c := range []struct {
		id   uint16
		name string
	}{
		{tls.TLS_AES_128_GCM_SHA256, "TLS_AES_128_GCM_SHA256"},
		{tls.TLS_AES_256_GCM_SHA384, "TLS_AES_256_GCM_SHA384"},
		{tls.TLS_CHACHA20_POLY1305_SHA256, "TLS_CHACHA20_POLY1305_SHA256"},
	} {
		t.Run(c.name, func(t *testing.T) {
			forceTLS13Suite(t, c.id)
			cp := exchange(t, &tls.Config{MinVersion: tls.VersionTLS13}, &tls.Config{}, testSends(), payload(9, 30000), nil)
			if cp.state.CipherSuite != c.id {
				t.Fatalf("negotiated %s, want %s", tls.CipherSuiteName(cp.state.CipherSuite), c.name)
			}
			info := decryptAll(t, cp, cp.keyLog)
			if info.Version != "1.3" || info.Cipher != c.name || info.SNI != "kafka.test" || !info.Decrypted ||
				info.Reason != "" || info.Resumed || info.HelloRetry {
				t.Errorf("info = %+v", info)
			}
		})
	}
}

func TestTLS12Suites(t *testing.T) {
	for _, id := range []uint16{
		tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
		tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
		tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
		tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_RSA_WITH_AES_128_CBC_SHA,
		tls.TLS_RSA_WITH_AES_256_CBC_SHA,
		tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
	} {
		name := tls.CipherSuiteName(id)
		t.Run(name, func(t *testing.T) {
			cfg := &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{id}}
			cp := exchange(t, cfg, cfg, testSends(), payload(9, 30000), nil)
			if cp.state.CipherSuite != id {
				t.Fatalf("negotiated %s", tls.CipherSuiteName(cp.state.CipherSuite))
			}
			info := decryptAll(t, cp, cp.keyLog)
			if info.Version != "1.2" || info.Cipher != name || !info.Decrypted || info.Resumed {
				t.Errorf("info = %+v", info)
			}
		})
	}
}
