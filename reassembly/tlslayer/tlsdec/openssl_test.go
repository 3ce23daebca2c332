package tlsdec

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// The other interop tests record Go's crypto/tls, which is also where
// their keys come from. These record OpenSSL, a second implementation
// and the one librdkafka links: its own key log, its own record sizes,
// session tickets after the TLS 1.3 handshake, encrypt_then_mac (RFC
// 7366) on by default with CBC suites, DHE key exchange and the CCM
// suites, which kdissect does not decrypt and must say so.

// pemFiles writes the RSA test certificate and a self-signed ECDSA one,
// with their keys, for openssl s_server.
func pemFiles(t *testing.T) (dir string) {
	t.Helper()
	testPKI(t)
	dir = t.TempDir()
	write := func(name, typ string, der []byte) {
		b := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rk, err := x509.MarshalPKCS8PrivateKey(serverCert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	write("rsa.crt", "CERTIFICATE", serverCert.Certificate[0])
	write("rsa.key", "PRIVATE KEY", rk)
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "kafka.test"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &ek.PublicKey, ek)
	if err != nil {
		t.Fatal(err)
	}
	ekd, err := x509.MarshalPKCS8PrivateKey(ek)
	if err != nil {
		t.Fatal(err)
	}
	write("ec.crt", "CERTIFICATE", der)
	write("ec.key", "PRIVATE KEY", ekd)
	return dir
}

// chunk is what one side wrote, in the order the relay saw it.
type chunk struct {
	client bool
	b      []byte
}

// relay sits between s_client and s_server and records both directions.
type relay struct {
	mu     sync.Mutex
	chunks []chunk
	seen   [2]int // bytes from the server, from the client
}

func (r *relay) pipe(dst io.Writer, src io.Reader, client bool) {
	buf := make([]byte, 4096)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.mu.Lock()
			r.chunks = append(r.chunks, chunk{client, bytes.Clone(buf[:n])})
			r.seen[boolInt(client)] += n
			r.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if c, ok := dst.(interface{ CloseWrite() error }); ok {
				c.CloseWrite()
			}
			return
		}
	}
}

// waitFor blocks until side has sent at least n bytes, or the deadline.
func (r *relay) waitFor(client bool, n int, deadline time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.seen[boolInt(client)] < n {
		if time.Now().After(deadline) {
			return false
		}
		r.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		r.mu.Lock()
	}
	return true
}

// opensslExchange runs one connection of openssl s_client to s_server
// through a recording relay: the client writes request, the server, once
// the client's bytes could hold it, writes reply and ends the connection.
// It returns what each side wrote, in order, and the server's key log.
func opensslExchange(t *testing.T, bin, dir, cert string, request, reply []byte, serverArgs, clientArgs []string) ([]chunk, string) {
	t.Helper()
	for try := 1; ; try++ {
		chunks, keyLog, err := opensslTry(t, bin, dir, cert, request, reply, serverArgs, clientArgs)
		switch {
		case err == nil:
			return chunks, keyLog
		case errors.Is(err, errBind) && try < 3:
			continue // another program took the port in between
		}
		t.Fatal(err)
	}
}

// errBind: s_server could not listen on the port it was given.
var errBind = errors.New("s_server could not bind its port")

func opensslTry(t *testing.T, bin, dir, cert string, request, reply []byte, serverArgs, clientArgs []string) ([]chunk, string, error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	keyLog := filepath.Join(dir, "keys-"+strings.ReplaceAll(t.Name(), "/", "_"))
	// s_server with -quiet names no port it was given 0 for: a port free a
	// moment ago is asked for, and a failure to bind it is retried.
	// -no_ign_eof: the end of its input ends the connection.
	addr := freePort(t)
	srv := exec.Command(bin, append([]string{"s_server", "-accept", addr, "-naccept", "1", "-quiet", "-no_ign_eof",
		"-cert", filepath.Join(dir, cert+".crt"), "-key", filepath.Join(dir, cert+".key"), "-keylogfile", keyLog}, serverArgs...)...)
	srvIn, err := srv.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	srv.Stdout = io.Discard // the client's plaintext
	var srvErr syncBuf
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := &relay{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		down, err := ln.Accept()
		if err != nil {
			return
		}
		defer down.Close()
		// s_server may not listen yet: its socket refuses until it does.
		var up net.Conn
		for {
			if up, err = net.Dial("tcp", addr); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			return
		}
		defer up.Close()
		var pw sync.WaitGroup
		pw.Add(2)
		go func() { defer pw.Done(); r.pipe(up, down, true) }()
		go func() { defer pw.Done(); r.pipe(down, up, false) }()
		pw.Wait()
	}()

	cli := exec.Command(bin, append([]string{"s_client", "-connect", ln.Addr().String(), "-quiet"}, clientArgs...)...)
	cli.Stdin = bytes.NewReader(request)
	cli.Stdout = io.Discard
	var cliErr syncBuf
	cli.Stderr = &cliErr
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	defer cli.Process.Kill()
	// The reply goes once the client's records could hold the request,
	// and the server's input then ends, which ends the connection.
	if !r.waitFor(true, len(request), deadline) {
		return nil, "", failure("the client sent too little", &cliErr, &srvErr)
	}
	srvIn.Write(reply)
	if !r.waitFor(false, len(reply), deadline) {
		return nil, "", failure("the server sent too little", &cliErr, &srvErr)
	}
	srvIn.Close()
	done := make(chan struct{})
	go func() { cli.Wait(); srv.Wait(); wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Until(deadline)):
		return nil, "", failure("openssl did not end", &cliErr, &srvErr)
	}
	kl, err := os.ReadFile(keyLog)
	if err != nil {
		return nil, "", err
	}
	return r.chunks, string(kl), nil
}

// failure says what went wrong with what each openssl printed; errBind
// when the server's port was taken.
func failure(what string, cli, srv *syncBuf) error {
	err := fmt.Errorf("%s; s_client: %s; s_server: %s", what, cli.String(), srv.String())
	if strings.Contains(srv.String(), "unable to bind") {
		return fmt.Errorf("%w: %w", errBind, err)
	}
	return err
}

// freePort is a loopback address whose port was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestOpenSSLSuites(t *testing.T) {
	bin := testkit.NeedCommand(t, "openssl")
	dir := pemFiles(t)
	request := bytes.Join(testSends(), nil)
	reply := payload(9, 30000)
	for _, c := range []struct {
		name, cert, cipher string // cipher: the suite kdissect names, or for one it does not decrypt, the start of its Reason
		server, client     []string
	}{
		{"TLS 1.3 AES-128-GCM", "rsa", "TLS_AES_128_GCM_SHA256", []string{"-ciphersuites", "TLS_AES_128_GCM_SHA256"}, []string{"-tls1_3"}},
		{"TLS 1.3 AES-256-GCM", "ec", "TLS_AES_256_GCM_SHA384", []string{"-ciphersuites", "TLS_AES_256_GCM_SHA384"}, []string{"-tls1_3"}},
		{"TLS 1.3 ChaCha20 small records", "rsa", "TLS_CHACHA20_POLY1305_SHA256", []string{"-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"}, []string{"-tls1_3", "-max_send_frag", "512"}},
		{"TLS 1.2 ECDHE-RSA AES-128-GCM", "rsa", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", nil, []string{"-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"}},
		{"TLS 1.2 ECDHE-RSA ChaCha20", "rsa", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", nil, []string{"-tls1_2", "-cipher", "ECDHE-RSA-CHACHA20-POLY1305"}},
		{"TLS 1.2 ECDHE-RSA AES-128-CBC encrypt-then-MAC", "rsa", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", nil, []string{"-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA"}},
		{"TLS 1.2 ECDHE-RSA AES-128-CBC MAC-then-encrypt", "rsa", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", nil, []string{"-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA", "-no_etm"}},
		{"TLS 1.2 ECDHE-ECDSA AES-256-CBC-SHA384", "ec", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", nil, []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES256-SHA384"}},
		{"TLS 1.2 RSA AES-256-CBC-SHA256 small records", "rsa", "TLS_RSA_WITH_AES_256_CBC_SHA256", nil, []string{"-tls1_2", "-cipher", "AES256-SHA256", "-max_send_frag", "512"}},
		{"TLS 1.2 DHE-RSA AES-256-GCM", "rsa", "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", nil, []string{"-tls1_2", "-cipher", "DHE-RSA-AES256-GCM-SHA384"}},
		{"TLS 1.3 AES-128-CCM", "rsa", "!cipher suite TLS_AES_128_CCM_SHA256 is not one kdissect decrypts", []string{"-ciphersuites", "TLS_AES_128_CCM_SHA256"}, []string{"-tls1_3", "-ciphersuites", "TLS_AES_128_CCM_SHA256"}},
		{"TLS 1.2 ECDHE-ECDSA AES-128-CCM", "ec", "!cipher suite TLS_ECDHE_ECDSA_WITH_AES_128_CCM is not one kdissect decrypts", []string{"-cipher", "ECDHE-ECDSA-AES128-CCM"}, []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-CCM"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			chunks, keyLog := opensslExchange(t, bin, dir, c.cert, request, reply, c.server, c.client)
			kl, err := ParseKeyLog(strings.NewReader(keyLog))
			if err != nil {
				t.Fatal(err)
			}
			conn := NewConn(kl)
			var col collector
			for _, ch := range chunks {
				conn.Feed(ch.client, ch.b, col.out)
			}
			conn.End(col.out)
			info := conn.Info()
			if reason, ok := strings.CutPrefix(c.cipher, "!"); ok {
				// Passed over, with the reason, never read as garbage.
				if info.Decrypted || !strings.HasPrefix(info.Reason, reason) || len(col.data[true])+len(col.data[false]) != 0 {
					t.Errorf("info %+v, %d+%d bytes of plaintext: want it not decrypted, reason %q",
						info, len(col.data[true]), len(col.data[false]), reason)
				}
				return
			}
			if !info.Decrypted || info.Cipher != c.cipher || info.Reason != "" {
				t.Errorf("info = %+v, want %s decrypted", info, c.cipher)
			}
			if !bytes.Equal(col.data[true], request) {
				t.Errorf("client plaintext: %d bytes, want the %d s_client sent", len(col.data[true]), len(request))
			}
			if !bytes.Equal(col.data[false], reply) {
				t.Errorf("server plaintext: %d bytes, want the %d s_server sent", len(col.data[false]), len(reply))
			}
			if len(col.problems) != 0 {
				t.Errorf("problems: %+v", col.problems)
			}
		})
	}
}
