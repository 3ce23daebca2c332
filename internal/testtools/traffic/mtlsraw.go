package traffic

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// RawTLS is one recorded TLS connection: the bytes each side wrote, in the
// order the client saw them, and the client's NSS key log.
type RawTLS struct {
	Chunks        []Chunk
	KeyLog        []byte
	ClientCertDER []byte // the client certificate as it crossed the wire
}

// Chunk is bytes one side sent.
type Chunk struct {
	FromClient bool
	Data       []byte
}

// RecordMTLS12 runs one TLS 1.2 connection (ECDHE-ECDSA, AES-128-GCM)
// between crypto/tls peers on loopback, the client presenting a certificate
// with the given raw subject (a DER Name) signed by the test CA. For each
// exchange the client writes [0] and the server, having read it, writes
// [1]; then both close.
//
// Go's server parses the client certificate to accept it. To capture one
// whose subject Go refuses, record a parsable one and swap in the hostile
// bytes with ReplaceClientCert: TLS 1.2 sends the client's Certificate in
// the clear, and a capture reader checks no Finished.
func RecordMTLS12(subject []byte, exchanges [][2][]byte) (*RawTLS, error) {
	certs, err := TestCerts()
	if err != nil {
		return nil, err
	}
	key, err := fixedKey("hostile client")
	if err != nil {
		return nil, err
	}
	caKey, err := fixedKey("ca") // the key TestCerts' CA was made with
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(99), RawSubject: subject,
		NotBefore: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2045, 1, 1, 0, 0, 0, 0, time.UTC),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, certs.CA, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	srvErr, rec, err := serveOnce(&tls.Config{Certificates: []tls.Certificate{certs.Server}, ClientAuth: tls.RequireAnyClientCert,
		MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12}, func(tc *tls.Conn) error {
		for _, ex := range exchanges {
			if _, err := io.ReadFull(tc, make([]byte, len(ex[0]))); err != nil {
				return fmt.Errorf("server read: %w", err)
			}
			if _, err := tc.Write(ex[1]); err != nil {
				return fmt.Errorf("server write: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var keyLog bytes.Buffer
	tc := tls.Client(rec, &tls.Config{RootCAs: certs.Pool, ServerName: BrokerSNI, KeyLogWriter: &keyLog,
		MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	for _, ex := range exchanges {
		if _, err := tc.Write(ex[0]); err != nil {
			tc.Close()
			return nil, fmt.Errorf("client write: %w", err)
		}
		if _, err := io.ReadFull(tc, make([]byte, len(ex[1]))); err != nil {
			tc.Close()
			return nil, fmt.Errorf("client read: %w", err)
		}
	}
	if err := <-srvErr; err != nil {
		tc.Close()
		return nil, err
	}
	tc.Close()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return &RawTLS{Chunks: rec.chunks, KeyLog: keyLog.Bytes(), ClientCertDER: der}, nil
}

// serveOnce has a crypto/tls server with cfg accept one loopback connection
// and serve it; it returns the client's side of it, recording, and what
// serve returned, once it has.
func serveOnce(cfg *tls.Config, serve func(*tls.Conn) error) (<-chan error, *recordingConn, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close() // the one connection is accepted by then, or never
	srvErr := make(chan error, 1)
	accepted := make(chan struct{})
	go func() {
		conn, err := ln.Accept()
		close(accepted)
		if err != nil {
			srvErr <- err
			return
		}
		tc := tls.Server(conn, cfg)
		defer tc.Close()
		srvErr <- serve(tc)
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, nil, err
	}
	<-accepted
	return srvErr, &recordingConn{Conn: raw}, nil
}

// refused closes the client and returns what was recorded, once both sides
// failed as a refusal of what makes them.
func (c *recordingConn) refused(what string, tc *tls.Conn, cerr error, srvErr <-chan error, keyLog []byte) (*RawTLS, error) {
	tc.Close()
	if serr := <-srvErr; cerr == nil || serr == nil {
		return nil, fmt.Errorf("%s was not refused: client %v, server %v", what, cerr, serr)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return &RawTLS{Chunks: c.chunks, KeyLog: keyLog}, nil
}

// recordingConn keeps what the client wrote and read, in order.
type recordingConn struct {
	net.Conn
	mu     sync.Mutex
	chunks []Chunk
}

func (c *recordingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.add(true, p[:n])
	return n, err
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.add(false, p[:n])
	return n, err
}

func (c *recordingConn) add(fromClient bool, p []byte) {
	if len(p) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chunks = append(c.chunks, Chunk{fromClient, bytes.Clone(p)})
}

// ReplaceClientCert puts der where the client certificate crossed the wire.
// It must have the same length: every length around it, and every TCP
// sequence number after it, stay as they were.
func (r *RawTLS) ReplaceClientCert(der []byte) error {
	if len(der) != len(r.ClientCertDER) {
		return fmt.Errorf("the new certificate has %d bytes, the old %d", len(der), len(r.ClientCertDER))
	}
	for _, c := range r.Chunks {
		if i := bytes.Index(c.Data, r.ClientCertDER); c.FromClient && i >= 0 {
			copy(c.Data[i:], der)
			r.ClientCertDER = bytes.Clone(der)
			return nil
		}
	}
	return errors.New("the client certificate is not in one piece in what the client wrote")
}

// Pcap is the connection as a capture, SYN to FIN, from 192.0.2.10:clientPort
// to 192.0.2.1:serverPort, segments of at most 1448 bytes a millisecond
// apart.
func (r *RawTLS) Pcap(clientPort, serverPort uint16) []byte {
	c := testkit.NewCapture(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	conn := c.NewConn(netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, 10}), clientPort),
		netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, 1}), serverPort), 1000, 5000)
	conn.Acking, conn.Push = true, true
	conn.Handshake()
	for _, ch := range r.Chunks {
		for p := ch.Data; len(p) > 0; {
			n := min(len(p), 1448)
			conn.Send(ch.FromClient, p[:n])
			p = p[n:]
		}
	}
	conn.Fin(true)
	conn.Fin(false)
	return c.Bytes()
}

// RecordRefusedTLS12 runs a TLS 1.2 handshake between crypto/tls peers on
// loopback that share no cipher suite: the server answers the ClientHello
// with a fatal handshake_failure alert in the clear, and both close. The
// key log is empty: no secret was ever made.
func RecordRefusedTLS12() (*RawTLS, error) {
	certs, err := TestCerts()
	if err != nil {
		return nil, err
	}
	srvErr, rec, err := serveOnce(&tls.Config{Certificates: []tls.Certificate{certs.Server}, MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}, (*tls.Conn).Handshake)
	if err != nil {
		return nil, err
	}
	var keyLog bytes.Buffer
	tc := tls.Client(rec, &tls.Config{RootCAs: certs.Pool, ServerName: BrokerSNI, KeyLogWriter: &keyLog,
		MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}})
	cerr := tc.Handshake()
	return rec.refused("the handshake", tc, cerr, srvErr, keyLog.Bytes())
}

// RecordRefusedClientCert runs a handshake between crypto/tls peers on
// loopback at version (tls.VersionTLS12 or 13) in which the server
// requires a client certificate signed by a CA it trusts and refuses the
// client's: none when withCert is false, else the test client certificate,
// whose CA the server does not trust. Go's server sends a fatal alert
// (certificate_required or bad_certificate) and closes. A TLS 1.3 client
// has finished its handshake before the verdict and writes request first,
// as a Kafka client sends ApiVersions; a TLS 1.2 one waits for the server's
// Finished, which never comes.
func RecordRefusedClientCert(version uint16, withCert bool, request []byte) (*RawTLS, error) {
	certs, err := TestCerts()
	if err != nil {
		return nil, err
	}
	srvErr, rec, err := serveOnce(&tls.Config{Certificates: []tls.Certificate{certs.Server},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: x509.NewCertPool(),
		MinVersion: version, MaxVersion: version}, (*tls.Conn).Handshake)
	if err != nil {
		return nil, err
	}
	var keyLog bytes.Buffer
	cfg := &tls.Config{RootCAs: certs.Pool, ServerName: BrokerSNI, KeyLogWriter: &keyLog,
		MinVersion: version, MaxVersion: version}
	if withCert {
		cfg.Certificates = []tls.Certificate{certs.Client}
	}
	tc := tls.Client(rec, cfg)
	cerr := tc.Handshake()
	if cerr == nil {
		_, cerr = tc.Write(request)
	}
	if cerr == nil {
		_, cerr = tc.Read(make([]byte, 1)) // the server's verdict
	}
	return rec.refused("the client certificate", tc, cerr, srvErr, keyLog.Bytes())
}
