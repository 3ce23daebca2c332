package traffic

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"sync"
	"time"
	_ "unsafe" // for the go:linkname below
)

// BrokerSNI is the server name the TLS clients ask for; the broker
// certificate names it (and 127.0.0.1).
const BrokerSNI = "broker.kdissect.test"

// ClientCertDN is the subject of the mTLS client certificate in RFC 2253
// form: the principal Kafka's default principal builder makes of it is
// "User:" + ClientCertDN.
const ClientCertDN = "CN=svc-payments,OU=payments,O=Example Corp,L=Zurich,C=CH"

// Certs holds a throwaway CA with a broker certificate and an mTLS client
// certificate it signed. The keys are derived from fixed labels, so they
// are the same on every run (the signatures are not: ECDSA signing is
// randomized); they protect nothing.
type Certs struct {
	CA     *x509.Certificate
	Pool   *x509.CertPool
	Server tls.Certificate // ECDSA P-256
	// ServerRSA is an RSA-2048 broker certificate for TLS 1.2's RSA key
	// exchange and ECDHE-RSA suites. Its key is random per process (Go
	// generates RSA keys from its own randomness).
	ServerRSA tls.Certificate
	Client    tls.Certificate
}

var (
	certsOnce sync.Once
	certs     *Certs
	certsErr  error
)

// TestCerts returns the process's throwaway certificates, made on first use.
func TestCerts() (*Certs, error) {
	certsOnce.Do(func() { certs, certsErr = makeCerts() })
	return certs, certsErr
}

// fixedKey derives a P-256 key from a label. SHA-256 of a label is below
// the group order except with negligible probability, and never zero.
func fixedKey(label string) (*ecdsa.PrivateKey, error) {
	d := sha256.Sum256([]byte("kdissect throwaway test key: " + label))
	return ecdsa.ParseRawPrivateKey(elliptic.P256(), d[:])
}

func makeCerts() (*Certs, error) {
	caKey, err := fixedKey("ca")
	if err != nil {
		return nil, err
	}
	srvKey, err := fixedKey("broker")
	if err != nil {
		return nil, err
	}
	cliKey, err := fixedKey("svc-payments")
	if err != nil {
		return nil, err
	}
	notBefore := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	notAfter := time.Date(2045, 1, 1, 0, 0, 0, 0, time.UTC)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kdissect throwaway test CA", Organization: []string{"kdissect"}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: BrokerSNI, Organization: []string{"kdissect"}},
		DNSNames:     []string{BrokerSNI},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	// pkix.Name marshals C, L, O, OU, CN in that order, so the RFC 2253
	// string (last RDN first) is ClientCertDN.
	cliTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(3),
		Subject: pkix.Name{CommonName: "svc-payments", OrganizationalUnit: []string{"payments"},
			Organization: []string{"Example Corp"}, Locality: []string{"Zurich"}, Country: []string{"CH"}},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	cliDER, err := x509.CreateCertificate(rand.Reader, cliTmpl, ca, &cliKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	cli, err := x509.ParseCertificate(cliDER)
	if err != nil {
		return nil, err
	}
	if got := cli.Subject.String(); got != ClientCertDN {
		return nil, fmt.Errorf("client certificate subject %q, want %q", got, ClientCertDN)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	rsaTmpl := *srvTmpl
	rsaTmpl.SerialNumber = big.NewInt(4)
	rsaTmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	rsaDER, err := x509.CreateCertificate(rand.Reader, &rsaTmpl, ca, &rsaKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &Certs{
		CA:        ca,
		Pool:      pool,
		Server:    tls.Certificate{Certificate: [][]byte{srvDER, caDER}, PrivateKey: srvKey},
		ServerRSA: tls.Certificate{Certificate: [][]byte{rsaDER, caDER}, PrivateKey: rsaKey},
		Client:    tls.Certificate{Certificate: [][]byte{cliDER, caDER}, PrivateKey: cliKey},
	}, nil
}

// How the TLS 1.3 suite is steered.
//
// crypto/tls has no setting for TLS 1.3 suites (Config.CipherSuites only
// applies to TLS 1.2): a Go client offers them in a fixed order and a Go
// server picks by its own fixed preference, AES-128-GCM first when both
// ends have AES hardware and ChaCha20-Poly1305 first when either lacks it.
// So:
//   - TLS_AES_128_GCM_SHA256 is what Go picks by default on AES hardware;
//   - TLS_CHACHA20_POLY1305_SHA256 is what it picks with GODEBUG=cpu.aes=off
//     (no AES hardware: both ends switch to their no-AES order);
//   - TLS_AES_256_GCM_SHA384 is never picked while both offer AES-128.
//
// The only handle is the list both ends read, crypto/tls's
// defaultCipherSuitesTLS13 (and its no-AES twin), which the standard library
// keeps linkable on purpose (go.dev/issue/67401). While a capture runs we set it to the one
// suite wanted: the client then offers only that suite and the server finds
// only that one mutual. That works for all three suites in-process, with no
// GODEBUG and no helper process. It is a process-wide setting, so captures
// are serialized (steerMu) and no other TLS 1.3 handshake of the process
// should run meanwhile; every scenario sets it before its broker starts and
// restores it after its last connection closed.

//go:linkname tls13Suites crypto/tls.defaultCipherSuitesTLS13
var tls13Suites []uint16

//go:linkname tls13SuitesNoAES crypto/tls.defaultCipherSuitesTLS13NoAES
var tls13SuitesNoAES []uint16

var steerMu sync.Mutex

// SteerTLS13 makes suite the only TLS 1.3 suite crypto/tls offers and
// accepts, in this whole process, until the returned function is called;
// calls wait for each other. Call it before the server and clients start
// and restore after their last handshake. suite 0 leaves Go's choice alone.
func SteerTLS13(suite uint16) (restore func()) {
	steerMu.Lock()
	if suite == 0 {
		return steerMu.Unlock
	}
	saved, savedNoAES := tls13Suites, tls13SuitesNoAES
	tls13Suites, tls13SuitesNoAES = []uint16{suite}, []uint16{suite}
	return func() {
		tls13Suites, tls13SuitesNoAES = saved, savedNoAES
		steerMu.Unlock()
	}
}

// tlsVersionName is the version as the JSON writes it.
func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "1.0"
	case tls.VersionTLS11:
		return "1.1"
	case tls.VersionTLS12:
		return "1.2"
	case tls.VersionTLS13:
		return "1.3"
	}
	return fmt.Sprintf("0x%04x", v)
}
