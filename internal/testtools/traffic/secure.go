package traffic

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASL mechanisms, as Kafka names them.
const (
	MechPlain     = "PLAIN"
	MechScram256  = "SCRAM-SHA-256"
	MechScram512  = "SCRAM-SHA-512"
	MechOAuth     = "OAUTHBEARER"
	mechNone      = ""
	principalAnon = "User:ANONYMOUS"
)

// Users of the secure broker besides AdminUser and MalloryUser (PLAIN).
const (
	AliceUser = "alice" // SCRAM-SHA-256 superuser
	AlicePass = "alice-secret"
	// OpsUser is a SCRAM-SHA-512 superuser whose name needs SCRAM's
	// escaping: the client-first message says n=ops=2Ceu=3D1.
	OpsUser = "ops,eu=1"
	OpsPass = "ops-secret"
	BobUser = "bob" // SCRAM-SHA-256 user; the scenarios log in with a wrong password
	BobPass = "bob-secret"
	// BobWrongPass is the password bob tries in ScenarioSASLPlaintext.
	BobWrongPass = "not-" + BobPass
)

// OAuthSubject is the sub claim of OAuthToken: Kafka's principal for it is
// "User:svc-oauth".
const OAuthSubject = "svc-oauth"

// OAuthToken is an unsigned JWT (alg none) for OAUTHBEARER: kdissect reads
// its sub claim, nobody verifies it.
var OAuthToken = func() string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		enc([]byte(`{"sub":"`+OAuthSubject+`","iss":"kdissect-test","aud":"kafka","iat":1767225600,"exp":2082758400}`)) + "."
}()

// PlainPasswords are the passwords that cross the wire in the clear inside
// SASL PLAIN tokens (in plaintext captures, or once TLS is decrypted):
// what a redaction test must never find in kdissect's output. SCRAM sends
// no password, only a salted proof (the p= attribute of client-final).
func PlainPasswords() []string { return []string{AdminPass, MalloryPass} }

// startSecureBroker starts a one-node kfake cluster on 127.0.0.1:0 with an
// optional TLS listener. With sasl, SASL and ACL checks are on: AdminUser
// (PLAIN), AliceUser (SCRAM-SHA-256) and OpsUser (SCRAM-SHA-512) are
// superusers, MalloryUser (PLAIN) and BobUser (SCRAM-SHA-256) ordinary
// users. Without sasl (mTLS), kfake authorizes nothing: it knows no
// certificate principals, so ACL checks stay off.
func startSecureBroker(tc *tls.Config, withSASL bool) (*Broker, error) {
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(0),
		kfake.ClusterID(BrokerCluster),
		kfake.SeedTopics(1, "orders"),
	}
	if tc != nil {
		opts = append(opts, kfake.TLS(tc))
	}
	if withSASL {
		opts = append(opts,
			kfake.EnableSASL(),
			kfake.EnableACLs(),
			kfake.Superuser(MechPlain, AdminUser, AdminPass),
			kfake.Superuser(MechScram256, AliceUser, AlicePass),
			kfake.Superuser(MechScram512, OpsUser, OpsPass),
			kfake.User(MechPlain, MalloryUser, MalloryPass),
			kfake.User(MechScram256, BobUser, BobPass),
		)
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, err
	}
	addrs := c.ListenAddrs()
	if len(addrs) != 1 {
		c.Close()
		return nil, fmt.Errorf("kfake listens on %d addresses, want 1", len(addrs))
	}
	addr, err := net.ResolveTCPAddr("tcp", addrs[0])
	if err != nil || !addr.IP.Equal(net.IPv4(127, 0, 0, 1)) {
		c.Close()
		return nil, fmt.Errorf("kfake listens on %q, want 127.0.0.1", addrs[0])
	}
	return &Broker{Cluster: c, Addr: addrs[0], Port: addr.Port}, nil
}

// clientSpec says how one client connects.
type clientSpec struct {
	user, pass string
	mech       string      // MechPlain, MechScram256, MechScram512 or "" (no SASL)
	tls        *tls.Config // client TLS config; nil: plaintext
	clientID   string
	omitKey    bool // leave this connection's secrets out of the partial key log
	// handshakeV0: SaslHandshake v0, then bare tokens (needs the v0 proxy).
	handshakeV0 bool
}

func (c clientSpec) mechanism() sasl.Mechanism {
	switch c.mech {
	case MechPlain:
		return plain.Auth{User: c.user, Pass: c.pass}.AsMechanism()
	case MechScram256:
		return scram.Auth{User: c.user, Pass: c.pass}.AsSha256Mechanism()
	case MechScram512:
		return scram.Auth{User: c.user, Pass: c.pass}.AsSha512Mechanism()
	case MechOAuth: // user is the token's subject, pass the token
		return oauth.Auth{Token: c.pass}.AsMechanism()
	}
	return nil
}

// connMeta is what the session knows of one client connection.
type connMeta struct {
	wireID     int
	clientPort int
	spec       clientSpec
	state      *tls.ConnectionState
	keylog     []string // this connection's key log lines
}

// session is one scenario run: the broker, the recorders, the key log.
type session struct {
	ctx  context.Context
	addr string
	wire *Wire
	rec  *Recorder

	mu     sync.Mutex
	conns  []*connMeta
	keylog []string // every key log line, in the order written
}

type keyLogLines struct {
	s *session
	m *connMeta
}

// Write gets one NSS key log line per call from crypto/tls.
func (k keyLogLines) Write(p []byte) (int, error) {
	line := string(p)
	k.s.mu.Lock()
	k.s.keylog = append(k.s.keylog, line)
	k.m.keylog = append(k.m.keylog, line)
	k.s.mu.Unlock()
	return len(p), nil
}

// dial opens a connection as spec says: TCP (recorded on the wire), TLS if
// asked (handshake done here, secrets to the key log), and Kafka frames
// recorded above TLS. The client libraries get a connection that looks
// like plaintext to them; SASL is theirs to do.
func (s *session) dial(ctx context.Context, spec clientSpec) (net.Conn, error) {
	if err := checkLoopback(s.addr); err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	raw, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return nil, err
	}
	wc := s.wire.Wrap(raw)
	m := &connMeta{wireID: wc.ID(), clientPort: raw.LocalAddr().(*net.TCPAddr).Port, spec: spec}
	s.mu.Lock()
	s.conns = append(s.conns, m)
	s.mu.Unlock()
	var conn net.Conn = wc
	if spec.tls != nil {
		cfg := spec.tls.Clone()
		cfg.KeyLogWriter = keyLogLines{s: s, m: m}
		tc := tls.Client(wc, cfg)
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			wc.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		st := tc.ConnectionState()
		s.mu.Lock()
		m.state = &st
		s.mu.Unlock()
		conn = tc
	}
	return s.rec.Wrap(conn, spec.user), nil
}

// kgo returns a franz-go client connecting as spec says.
func (s *session) kgo(spec clientSpec) (*kgo.Client, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.addr),
		kgo.ClientID(spec.clientID),
		kgo.Dialer(func(ctx context.Context, _, _ string) (net.Conn, error) { return s.dial(ctx, spec) }),
		kgo.RequestRetries(1),
		kgo.RetryTimeout(5 * time.Second),
		kgo.MetadataMinAge(time.Second),
	}
	if m := spec.mechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return kgo.NewClient(opts...)
}

// errAuthFailed is returned by raw when the broker refused the login.
var errAuthFailed = errors.New("SASL authentication failed")

// raw opens a connection for hand-written kmsg requests: ApiVersions v3,
// then SaslHandshake v1 and SaslAuthenticate v1 rounds if spec has a
// mechanism.
func (s *session) raw(spec clientSpec) (*rawConn, error) {
	c, err := s.dial(s.ctx, spec)
	if err != nil {
		return nil, err
	}
	if dl, ok := s.ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	rc := &rawConn{conn: c, fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID(spec.clientID))}
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(3)
	av.ClientSoftwareName = "kdissect-traffic"
	av.ClientSoftwareVersion = "1.0.0"
	if _, err := rc.request(av); err != nil {
		c.Close()
		return nil, fmt.Errorf("ApiVersions: %w", err)
	}
	mech := spec.mechanism()
	if mech == nil {
		return rc, nil
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	if spec.handshakeV0 {
		hs.SetVersion(0)
	}
	hs.Mechanism = mech.Name()
	r, err := rc.request(hs)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("SaslHandshake: %w", err)
	}
	if ec := r.(*kmsg.SASLHandshakeResponse).ErrorCode; ec != 0 {
		c.Close()
		return nil, fmt.Errorf("SaslHandshake: error code %d", ec)
	}
	sess, msg, err := mech.Authenticate(s.ctx, s.addr)
	if err != nil {
		c.Close()
		return nil, err
	}
	if spec.handshakeV0 {
		if err := bareSASL(s.ctx, c, sess, msg); err != nil {
			c.Close()
			return nil, err
		}
		return rc, nil
	}
	for {
		au := kmsg.NewPtrSASLAuthenticateRequest()
		au.SetVersion(1)
		au.SASLAuthBytes = msg
		r, err := rc.request(au)
		if err != nil {
			// kfake answers a bad login by closing the connection.
			c.Close()
			return nil, fmt.Errorf("%w: %v", errAuthFailed, err)
		}
		resp := r.(*kmsg.SASLAuthenticateResponse)
		if resp.ErrorCode != 0 {
			c.Close()
			return nil, fmt.Errorf("%w: error code %d", errAuthFailed, resp.ErrorCode)
		}
		done, next, err := sess.Challenge(resp.SASLAuthBytes)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("%w: %v", errAuthFailed, err)
		}
		if done {
			return rc, nil
		}
		msg = next
	}
}

// send writes req with the given correlation ID and does not wait.
func (rc *rawConn) send(req kmsg.Request, corr int32) error {
	_, err := rc.conn.Write(rc.fmtr.AppendRequest(nil, req, corr))
	return err
}

// recv reads the response to req, which must carry corr.
func (rc *rawConn) recv(req kmsg.Request, corr int32) (kmsg.Response, error) {
	var size [4]byte
	if _, err := io.ReadFull(rc.conn, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > 16<<20 {
		return nil, fmt.Errorf("response size %d", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(rc.conn, body); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		return nil, fmt.Errorf("response correlation ID %d, want %d", got, corr)
	}
	return parseResponse(req.Key(), req.GetVersion(), body[4:])
}

// helloFacts reads the client random off the first ClientHello a client
// wrote; hrr says whether the server's first handshake message was a
// HelloRetryRequest (a ServerHello with RFC 8446's fixed random).
func helloFacts(toServer, toClient []byte) (clientRandom []byte, hrr bool) {
	// record header 5, handshake header 4, legacy_version 2, random 32
	if len(toServer) >= 43 && toServer[0] == 22 && toServer[5] == 1 {
		clientRandom = toServer[11:43]
	}
	hrrRandom, _ := hex.DecodeString("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c")
	if len(toClient) >= 43 && toClient[0] == 22 && toClient[5] == 2 {
		hrr = bytes.Equal(toClient[11:43], hrrRandom)
	}
	return clientRandom, hrr
}

// connections describes every connection of the run for the sidecar.
// Authentication is read off the recorded Kafka frames, not assumed: a
// SASL connection counts as authenticated once its last SaslAuthenticate
// response said error 0.
func (s *session) connections(frames []*Frame, tokens []RawToken, partial bool) ([]ConnectionJSON, error) {
	toServer, toClient := s.wire.Streams()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ConnectionJSON
	for _, m := range s.conns {
		c := ConnectionJSON{ClientPort: m.clientPort, User: m.spec.user, Mechanism: m.spec.mech}
		var lastAuth *Frame
		var mechOnWire string
		for _, f := range frames {
			if f.ClientPort != m.clientPort {
				continue
			}
			switch r := f.Request.(type) {
			case *kmsg.SASLAuthenticateRequest:
				lastAuth = f
			case *kmsg.SASLHandshakeRequest:
				mechOnWire = r.Mechanism
			}
		}
		answers := 0
		for _, tk := range tokens {
			if tk.ClientPort == m.clientPort {
				c.BareTokens = append(c.BareTokens, BareTokenJSON{FromClient: tk.FromClient, Length: len(tk.Data)})
				if !tk.FromClient {
					answers++
				}
			}
		}
		switch {
		case m.spec.mech != mechNone:
			if mechOnWire != m.spec.mech {
				return nil, fmt.Errorf("connection %d: mechanism %q on the wire, want %q", m.clientPort, mechOnWire, m.spec.mech)
			}
			c.AuthSource = "sasl"
			if m.spec.handshakeV0 {
				// Bare tokens carry no error code: the login succeeded
				// when the broker answered every round instead of
				// closing the connection.
				if lastAuth == nil && answers == saslRounds(m.spec.mech) {
					c.Authenticated = true
					c.Principal = "User:" + m.spec.user
				}
			} else if lastAuth != nil && lastAuth.Response != nil {
				if r, ok := lastAuth.Response.(*kmsg.SASLAuthenticateResponse); ok && r.ErrorCode == 0 {
					c.Authenticated = true
					c.Principal = "User:" + m.spec.user
				}
			}
		case m.state != nil && len(m.spec.tls.Certificates) > 0:
			c.AuthSource = "tls"
			c.Authenticated = true
			c.Principal = "User:" + ClientCertDN
		default:
			c.AuthSource = "none"
			c.Authenticated = true
			c.Principal = principalAnon
		}
		if m.state != nil {
			cr, hrr := helloFacts(toServer[m.wireID], toClient[m.wireID])
			t := &TLSJSON{
				Version:      tlsVersionName(m.state.Version),
				Cipher:       tls.CipherSuiteName(m.state.CipherSuite),
				SNI:          m.spec.tls.ServerName,
				ClientRandom: hex.EncodeToString(cr),
				Resumed:      m.state.DidResume,
				HelloRetry:   hrr,
			}
			if len(m.spec.tls.Certificates) > 0 {
				t.ClientCertSubject = ClientCertDN
			}
			if len(cr) != 32 {
				return nil, fmt.Errorf("connection %d: no ClientHello at the start of the stream", m.clientPort)
			}
			// Every key log line of the connection names its client random.
			for _, l := range m.keylog {
				if f := strings.Fields(l); len(f) != 3 || f[1] != t.ClientRandom {
					return nil, fmt.Errorf("connection %d: key log line %q does not name client random %s", m.clientPort, l, t.ClientRandom)
				}
			}
			// A resumed TLS 1.2 session is the one case Go logs nothing for.
			t.KeylogLines = len(m.keylog)
			if len(m.keylog) == 0 && !(m.state.Version == tls.VersionTLS12 && m.state.DidResume) {
				return nil, fmt.Errorf("connection %d: no key log lines", m.clientPort)
			}
			if partial {
				in := !m.spec.omitKey
				t.InPartialKeylog = &in
			}
			c.TLS = t
		}
		out = append(out, c)
	}
	return out, nil
}

// keylogs returns the whole key log and the one without the secrets of the
// connections marked omitKey.
func (s *session) keylogs() (full, partial []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	omit := map[string]bool{}
	for _, m := range s.conns {
		if m.spec.omitKey {
			for _, l := range m.keylog {
				omit[l] = true
			}
		}
	}
	var f, p bytes.Buffer
	f.WriteString("# kdissect throwaway test keys: NSS key log written by crypto/tls KeyLogWriter\n")
	p.WriteString("# kdissect throwaway test keys, with one connection's secrets left out\n")
	for _, l := range s.keylog {
		f.WriteString(l)
		if !omit[l] {
			p.WriteString(l)
		}
	}
	return f.Bytes(), p.Bytes()
}
