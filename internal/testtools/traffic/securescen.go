package traffic

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Names of the scenarios whose captures are synthesized from recorded
// bytes (BuildTLSCapture), in the order SecureNames returns them.
const (
	ScenarioTLS13         = "tls13-acls"          // shipped: testdata/pcaps/tls13-acls.*
	ScenarioTLS13AES256   = "tls13-aes256-hrr"    // AES-256-GCM after a HelloRetryRequest
	ScenarioTLS13ChaCha   = "tls13-chacha-resume" // ChaCha20-Poly1305, second connection resumed (PSK)
	ScenarioTLS12GCM      = "tls12-gcm"           // ECDHE-ECDSA AES-128/256-GCM, sarama
	ScenarioTLS12ChaCha   = "tls12-chacha"        // ECDHE-ECDSA ChaCha20-Poly1305
	ScenarioTLS12CBC      = "tls12-cbc"           // ECDHE-ECDSA AES-CBC with HMAC-SHA1 and HMAC-SHA256
	ScenarioTLS12RSA      = "tls12-rsa-resume"    // RSA key exchange and ECDHE-RSA; a resumed TLS 1.2 session
	ScenarioMTLS          = "mtls"                // client certificate, no SASL
	ScenarioInterleaved   = "interleaved"         // two users, same correlation IDs, interleaved
	ScenarioMissingKey    = "tls13-missing-key"   // a partial key log lacks one connection
	ScenarioSASLPlaintext = "sasl-scram-acls"     // shipped: plaintext PLAIN, SCRAM-SHA-256/512, a failed login
	ScenarioSASLv0        = "sasl-v0-acls"        // shipped: SaslHandshake v0 and bare tokens (sarama and raw kmsg)
	ScenarioOAuth         = "tls13-oauth"         // OAUTHBEARER over TLS 1.3
)

// Ports of the synthesized captures: the broker's, and the first client
// connection's (the next ones count up).
const (
	SynthBrokerPort = 9092
	SynthClientPort = 50100
)

// SecureNames lists the synthesized-capture scenarios.
func SecureNames() []string {
	out := make([]string, len(secureScenarios))
	for i, s := range secureScenarios {
		out[i] = s.name
	}
	return out
}

// ShippedSecureNames are the scenarios whose captures testdata/pcaps holds.
func ShippedSecureNames() []string {
	return []string{ScenarioTLS13, ScenarioSASLPlaintext, ScenarioSASLv0}
}

type secureScenario struct {
	name    string
	suite13 uint16 // TLS 1.3 suite to steer to (0: Go's choice)
	server  func(c *Certs) *tls.Config
	sasl    bool
	partial bool // write a partial key log
	v0proxy bool // clients talk to kfake through v0Proxy (which then does the TLS)
	run     func(s *session, c *Certs) error
}

var secureScenarios = []secureScenario{
	{name: ScenarioTLS13, suite13: tls.TLS_AES_128_GCM_SHA256, server: tlsServer(nil), sasl: true, run: runTLS13},
	{name: ScenarioTLS13AES256, suite13: tls.TLS_AES_256_GCM_SHA384, sasl: true, run: runTLS13AES256,
		server: tlsServer(func(c *tls.Config) {
			// The client sends key shares for its first groups only
			// (X25519MLKEM768, X25519); a server that takes P-256 alone
			// has to ask again.
			c.CurvePreferences = []tls.CurveID{tls.CurveP256}
		})},
	{name: ScenarioTLS13ChaCha, suite13: tls.TLS_CHACHA20_POLY1305_SHA256, server: tlsServer(nil), sasl: true, run: runTLS13ChaCha},
	{name: ScenarioTLS12GCM, server: tlsServer(nil), sasl: true, run: runTLS12GCM},
	{name: ScenarioTLS12ChaCha, server: tlsServer(nil), sasl: true, run: runTLS12ChaCha},
	{name: ScenarioTLS12CBC, sasl: true, run: runTLS12CBC, server: tlsServer(func(c *tls.Config) {
		// HMAC-SHA256 CBC suites are not in Go's default list: the server
		// must name them to accept them.
		c.CipherSuites = []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
		}
	})},
	{name: ScenarioTLS12RSA, sasl: true, run: runTLS12RSA, server: func(c *Certs) *tls.Config {
		// Go serves the first certificate that fits the suite: the ECDSA
		// one for ECDHE-ECDSA, the RSA one for RSA and ECDHE-RSA. The RSA
		// key exchange suites are out of Go's defaults but allowed when
		// named.
		return &tls.Config{Certificates: []tls.Certificate{c.Server, c.ServerRSA}, MinVersion: tls.VersionTLS12,
			CipherSuites: []uint16{
				tls.TLS_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
				tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
			}}
	}},
	{name: ScenarioMTLS, suite13: tls.TLS_AES_128_GCM_SHA256, run: runMTLS, server: tlsServer(func(c *tls.Config) {
		certs, _ := TestCerts()
		c.ClientAuth = tls.RequireAndVerifyClientCert
		c.ClientCAs = certs.Pool
	})},
	{name: ScenarioInterleaved, suite13: tls.TLS_AES_128_GCM_SHA256, server: tlsServer(nil), sasl: true, run: runInterleaved},
	{name: ScenarioMissingKey, suite13: tls.TLS_AES_128_GCM_SHA256, server: tlsServer(nil), sasl: true, partial: true, run: runMissingKey},
	{name: ScenarioSASLPlaintext, sasl: true, run: runSASLPlaintext},
	{name: ScenarioSASLv0, sasl: true, v0proxy: true, run: runSASLv0},
	{name: ScenarioOAuth, suite13: tls.TLS_AES_128_GCM_SHA256, server: tlsServer(nil), sasl: true, v0proxy: true, run: runOAuth},
}

func tlsServer(tweak func(*tls.Config)) func(c *Certs) *tls.Config {
	return func(c *Certs) *tls.Config {
		cfg := &tls.Config{Certificates: []tls.Certificate{c.Server}, MinVersion: tls.VersionTLS12}
		if tweak != nil {
			tweak(cfg)
		}
		return cfg
	}
}

// client13 is a TLS 1.3 client config; client12 a TLS 1.2 one with the
// given suites.
func client13(c *Certs) *tls.Config {
	return &tls.Config{RootCAs: c.Pool, ServerName: BrokerSNI, MinVersion: tls.VersionTLS13}
}

func client12(c *Certs, suites ...uint16) *tls.Config {
	return &tls.Config{RootCAs: c.Pool, ServerName: BrokerSNI, MinVersion: tls.VersionTLS12,
		MaxVersion: tls.VersionTLS12, CipherSuites: suites}
}

////////////////////////////////////////////////////////////////////////////
// ACL traffic shared by the scenarios
////////////////////////////////////////////////////////////////////////////

// kadmACLs: CreateACLs of two bindings naming tag, a DescribeACLs, and a
// DeleteACLs of each, through kadm (CreateAcls/DeleteAcls v3).
func kadmACLs(ctx context.Context, adm *kadm.Client, tag string) error {
	creates := []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").Topics("orders-"+tag).
			ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite, kadm.OpDescribe),
		kadm.NewACLs().Deny("User:Zoë").DenyHosts("192.0.2.7").Groups("consumers-" + tag).
			ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead),
	}
	for i, b := range creates {
		rs, err := adm.CreateACLs(ctx, b)
		if err != nil {
			return fmt.Errorf("kadm create #%d: %w", i, err)
		}
		for _, r := range rs {
			if r.Err != nil {
				return fmt.Errorf("kadm create #%d: %v", i, r.Err)
			}
		}
	}
	if _, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
		Operations().Allow().Deny().AllowHosts().DenyHosts()); err != nil {
		return fmt.Errorf("kadm describe: %w", err)
	}
	dels := []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("orders-" + tag).
			ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite),
		kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
			Operations().Allow().Deny().AllowHosts().DenyHosts(),
	}
	for i, b := range dels {
		rs, err := adm.DeleteACLs(ctx, b)
		if err != nil {
			return fmt.Errorf("kadm delete #%d: %w", i, err)
		}
		for _, r := range rs {
			if r.Err != nil {
				return fmt.Errorf("kadm delete #%d: %v", i, r.Err)
			}
		}
	}
	return nil
}

// kadmSession runs kadmACLs as spec.
func (s *session) kadmSession(spec clientSpec, tag string) error {
	cl, err := s.kgo(spec)
	if err != nil {
		return err
	}
	defer cl.Close()
	return kadmACLs(s.ctx, kadm.NewClient(cl), tag)
}

func rawCreate(v int16, cs ...kmsg.CreateACLsRequestCreation) *kmsg.CreateACLsRequest {
	r := kmsg.NewPtrCreateACLsRequest()
	r.SetVersion(v)
	r.Creations = cs
	return r
}

func rawDelete(v int16, fs ...kmsg.DeleteACLsRequestFilter) *kmsg.DeleteACLsRequest {
	r := kmsg.NewPtrDeleteACLsRequest()
	r.SetVersion(v)
	r.Filters = fs
	return r
}

// aclCodes lists the error codes of a CreateAcls/DeleteAcls response.
func aclCodes(r kmsg.Response) []int16 {
	var out []int16
	switch r := r.(type) {
	case *kmsg.CreateACLsResponse:
		for _, x := range r.Results {
			out = append(out, x.ErrorCode)
		}
	case *kmsg.DeleteACLsResponse:
		for _, x := range r.Results {
			out = append(out, x.ErrorCode)
		}
	}
	return out
}

func wantCodes(what string, r kmsg.Response, want int16) error {
	codes := aclCodes(r)
	if len(codes) == 0 {
		return fmt.Errorf("%s: no results", what)
	}
	for _, c := range codes {
		if c != want {
			return fmt.Errorf("%s: error code %d, want %d", what, c, want)
		}
	}
	return nil
}

// rawACLs writes, at each version, a CreateAcls of two bindings naming tag
// and the principal, and a DeleteAcls of both, all expected to succeed.
func rawACLs(rc *rawConn, tag, principal string, versions ...int16) error {
	for _, v := range versions {
		name := fmt.Sprintf("%s-v%d", tag, v)
		cr := rawCreate(v,
			creation(rtTopic, name, ptLiteral, principal, "*", opRead, permAllow),
			creation(rtGroup, name+"-", ptLiteral, principal, "10.0.0.5", opDescribe, permDeny),
		)
		r, err := rc.request(cr)
		if err != nil {
			return fmt.Errorf("CreateAcls v%d: %w", v, err)
		}
		if err := wantCodes(fmt.Sprintf("CreateAcls v%d", v), r, 0); err != nil {
			return err
		}
		dr := rawDelete(v,
			filter(rtTopic, sp(name), ptLiteral, sp(principal), nil, opAny, permAny),
			filter(rtGroup, sp(name+"-"), ptLiteral, nil, sp("10.0.0.5"), opDescribe, permDeny),
		)
		r, err = rc.request(dr)
		if err != nil {
			return fmt.Errorf("DeleteAcls v%d: %w", v, err)
		}
		if err := wantCodes(fmt.Sprintf("DeleteAcls v%d", v), r, 0); err != nil {
			return err
		}
		if n := len(r.(*kmsg.DeleteACLsResponse).Results[0].MatchingACLs); n != 1 {
			return fmt.Errorf("DeleteAcls v%d: %d ACLs matched the topic filter, want 1", v, n)
		}
	}
	return nil
}

// deniedACLs: a CreateAcls and a DeleteAcls at version v that the broker
// refuses with CLUSTER_AUTHORIZATION_FAILED.
func deniedACLs(rc *rawConn, v int16) error {
	r, err := rc.request(rawCreate(v, creation(rtTopic, "orders", ptLiteral, "User:mallory", "*", opAll, permAllow)))
	if err != nil {
		return err
	}
	if err := wantCodes("denied CreateAcls", r, kerr.ClusterAuthorizationFailed.Code); err != nil {
		return err
	}
	r, err = rc.request(rawDelete(v, filter(rtAny, nil, ptAny, nil, nil, opAny, permAny)))
	if err != nil {
		return err
	}
	return wantCodes("denied DeleteAcls", r, kerr.ClusterAuthorizationFailed.Code)
}

// rawSession opens a raw connection as spec and runs fn on it.
func (s *session) rawSession(spec clientSpec, fn func(rc *rawConn) error) error {
	rc, err := s.raw(spec)
	if err != nil {
		return fmt.Errorf("%s: %w", spec.clientID, err)
	}
	defer rc.Close()
	if err := fn(rc); err != nil {
		return fmt.Errorf("%s: %w", spec.clientID, err)
	}
	return nil
}

func admin(cfg *tls.Config, id string) clientSpec {
	return clientSpec{user: AdminUser, pass: AdminPass, mech: MechPlain, tls: cfg, clientID: id}
}

func mallory(cfg *tls.Config, id string) clientSpec {
	return clientSpec{user: MalloryUser, pass: MalloryPass, mech: MechPlain, tls: cfg, clientID: id}
}

func alice(cfg *tls.Config, id string) clientSpec {
	return clientSpec{user: AliceUser, pass: AlicePass, mech: MechScram256, tls: cfg, clientID: id}
}

func ops(cfg *tls.Config, id string) clientSpec {
	return clientSpec{user: OpsUser, pass: OpsPass, mech: MechScram512, tls: cfg, clientID: id}
}

////////////////////////////////////////////////////////////////////////////
// The scenarios
////////////////////////////////////////////////////////////////////////////

// runTLS13 (TLS 1.3, TLS_AES_128_GCM_SHA256): admin over kadm (SASL
// PLAIN); alice over raw kmsg (SCRAM-SHA-256) at CreateAcls/DeleteAcls
// v0-v3; mallory (PLAIN) refused at v3.
func runTLS13(s *session, c *Certs) error {
	cfg := client13(c)
	if err := s.kadmSession(admin(cfg, "kdissect-tls13-kadm"), "tls13"); err != nil {
		return err
	}
	if err := s.rawSession(alice(cfg, "kdissect-tls13-alice"), func(rc *rawConn) error {
		return rawACLs(rc, "tls13-alice", "User:bob", 0, 1, 2, 3)
	}); err != nil {
		return err
	}
	return s.rawSession(mallory(cfg, "kdissect-tls13-mallory"), func(rc *rawConn) error { return deniedACLs(rc, 3) })
}

// runTLS13AES256 (TLS 1.3, TLS_AES_256_GCM_SHA384 after a
// HelloRetryRequest): ops (SCRAM-SHA-512, a user name SCRAM escapes) over
// raw kmsg at v2 and v3, admin over kadm.
func runTLS13AES256(s *session, c *Certs) error {
	cfg := client13(c)
	if err := s.rawSession(ops(cfg, "kdissect-aes256-ops"), func(rc *rawConn) error {
		return rawACLs(rc, "aes256-ops", "User:carol", 2, 3)
	}); err != nil {
		return err
	}
	return s.kadmSession(admin(cfg, "kdissect-aes256-kadm"), "aes256")
}

// runTLS13ChaCha (TLS 1.3, TLS_CHACHA20_POLY1305_SHA256): admin (PLAIN)
// over raw kmsg at v3, then again on a second connection that resumes the
// first one's session (PSK) at v1; mallory refused at v2.
func runTLS13ChaCha(s *session, c *Certs) error {
	cfg := client13(c)
	cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	if err := s.rawSession(admin(cfg, "kdissect-chacha-admin"), func(rc *rawConn) error {
		return rawACLs(rc, "chacha-first", "User:alice", 3)
	}); err != nil {
		return err
	}
	if err := s.rawSession(admin(cfg, "kdissect-chacha-admin-resumed"), func(rc *rawConn) error {
		return rawACLs(rc, "chacha-resumed", "User:alice", 1)
	}); err != nil {
		return err
	}
	return s.rawSession(mallory(client13(c), "kdissect-chacha-mallory"), func(rc *rawConn) error { return deniedACLs(rc, 2) })
}

// runTLS12GCM (TLS 1.2, ECDHE-ECDSA with AES-128-GCM and AES-256-GCM):
// IBM/sarama's ClusterAdmin as admin (PLAIN) on AES-128-GCM (CreateAcls v1
// and v2, DeleteAcls v2), raw kmsg mallory refused at v0 on AES-256-GCM.
func runTLS12GCM(s *session, c *Certs) error {
	if err := s.saramaACLs(admin(client12(c, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256), "kdissect-tls12-sarama")); err != nil {
		return err
	}
	return s.rawSession(mallory(client12(c, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384), "kdissect-tls12-mallory"),
		func(rc *rawConn) error { return deniedACLs(rc, 0) })
}

// runTLS12ChaCha (TLS 1.2, ECDHE-ECDSA-CHACHA20-POLY1305): alice
// (SCRAM-SHA-256) over kadm, ops (SCRAM-SHA-512) over raw kmsg at v1.
func runTLS12ChaCha(s *session, c *Certs) error {
	cfg := client12(c, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256)
	if err := s.kadmSession(alice(cfg, "kdissect-tls12chacha-kadm"), "tls12chacha"); err != nil {
		return err
	}
	return s.rawSession(ops(cfg, "kdissect-tls12chacha-ops"), func(rc *rawConn) error {
		return rawACLs(rc, "tls12chacha-ops", "User:dave", 1)
	})
}

// runTLS12CBC (TLS 1.2, the CBC suites older Java brokers negotiate):
// admin (PLAIN) on ECDHE-ECDSA-AES128-SHA (HMAC-SHA1) at v0-v3, alice
// (SCRAM-SHA-256) on ECDHE-ECDSA-AES128-SHA256 at v2, mallory on
// ECDHE-ECDSA-AES256-SHA refused at v1.
func runTLS12CBC(s *session, c *Certs) error {
	if err := s.rawSession(admin(client12(c, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA), "kdissect-cbc-admin"), func(rc *rawConn) error {
		return rawACLs(rc, "cbc-admin", "User:alice", 0, 1, 2, 3)
	}); err != nil {
		return err
	}
	if err := s.rawSession(alice(client12(c, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256), "kdissect-cbc-alice"), func(rc *rawConn) error {
		return rawACLs(rc, "cbc-alice", "User:bob", 2)
	}); err != nil {
		return err
	}
	return s.rawSession(mallory(client12(c, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA), "kdissect-cbc-mallory"),
		func(rc *rawConn) error { return deniedACLs(rc, 1) })
}

// runTLS12RSA (TLS 1.2 with the RSA broker certificate): admin (PLAIN) on
// TLS_RSA_WITH_AES_128_GCM_SHA256 (RSA key exchange) at v3, then on a
// second connection that resumes that session from its ticket at v1 (Go
// writes no key log line for a resumed TLS 1.2 session: the first
// connection's master secret decrypts it); alice (SCRAM-SHA-256) on
// ECDHE-RSA-AES256-GCM-SHA384 at v2; mallory on RSA-AES128-SHA256 (CBC,
// HMAC-SHA256) refused at v3.
func runTLS12RSA(s *session, c *Certs) error {
	cfg := client12(c, tls.TLS_RSA_WITH_AES_128_GCM_SHA256)
	cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	if err := s.rawSession(admin(cfg, "kdissect-rsa-admin"), func(rc *rawConn) error {
		return rawACLs(rc, "rsa-first", "User:alice", 3)
	}); err != nil {
		return err
	}
	if err := s.rawSession(admin(cfg, "kdissect-rsa-admin-resumed"), func(rc *rawConn) error {
		return rawACLs(rc, "rsa-resumed", "User:alice", 1)
	}); err != nil {
		return err
	}
	if err := s.rawSession(alice(client12(c, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384), "kdissect-rsa-alice"), func(rc *rawConn) error {
		return rawACLs(rc, "rsa-alice", "User:bob", 2)
	}); err != nil {
		return err
	}
	return s.rawSession(mallory(client12(c, tls.TLS_RSA_WITH_AES_128_CBC_SHA256), "kdissect-rsa-mallory"),
		func(rc *rawConn) error { return deniedACLs(rc, 3) })
}

// runMTLS (TLS 1.3, client certificate ClientCertDN, no SASL): kadm and raw
// kmsg at v0-v3. The broker runs without SASL and ACL checks (kfake does
// not map certificates to principals); Kafka would name the principal
// "User:" + ClientCertDN.
func runMTLS(s *session, c *Certs) error {
	cfg := client13(c)
	cfg.Certificates = []tls.Certificate{c.Client}
	spec := clientSpec{tls: cfg, clientID: "kdissect-mtls-kadm"}
	if err := s.kadmSession(spec, "mtls"); err != nil {
		return err
	}
	spec.clientID = "kdissect-mtls-raw"
	return s.rawSession(spec, func(rc *rawConn) error {
		return rawACLs(rc, "mtls", "User:CN=svc-payments,OU=payments,O=Example Corp,L=Zurich,C=CH", 0, 1, 2, 3)
	})
}

// runInterleaved (TLS 1.3): alice (SCRAM-SHA-256) and mallory (PLAIN) on
// two raw connections, both numbering their ACL requests from correlation
// ID 100: each request is written on both connections before either
// response is read, and the second pair is read in the opposite order.
func runInterleaved(s *session, c *Certs) error {
	cfg := client13(c)
	a, err := s.raw(alice(cfg, "kdissect-interleaved-alice"))
	if err != nil {
		return err
	}
	defer a.Close()
	m, err := s.raw(mallory(cfg, "kdissect-interleaved-mallory"))
	if err != nil {
		return err
	}
	defer m.Close()
	type step struct {
		areq, mreq kmsg.Request
		mFirst     bool // read mallory's response first
	}
	steps := []step{
		{areq: rawCreate(3, creation(rtTopic, "shared", ptLiteral, "User:alice", "*", opWrite, permAllow)),
			mreq: rawCreate(3, creation(rtTopic, "shared", ptLiteral, "User:mallory", "*", opWrite, permAllow))},
		{areq: rawDelete(2, filter(rtTopic, sp("shared"), ptLiteral, sp("User:alice"), nil, opAny, permAny)),
			mreq: rawDelete(2, filter(rtTopic, sp("shared"), ptLiteral, nil, nil, opAny, permAny)), mFirst: true},
	}
	for i, st := range steps {
		corr := int32(100 + i)
		if err := a.send(st.areq, corr); err != nil {
			return err
		}
		if err := m.send(st.mreq, corr); err != nil {
			return err
		}
		readA := func() error {
			r, err := a.recv(st.areq, corr)
			if err != nil {
				return fmt.Errorf("alice corr %d: %w", corr, err)
			}
			return wantCodes(fmt.Sprintf("alice corr %d", corr), r, 0)
		}
		readM := func() error {
			r, err := m.recv(st.mreq, corr)
			if err != nil {
				return fmt.Errorf("mallory corr %d: %w", corr, err)
			}
			return wantCodes(fmt.Sprintf("mallory corr %d", corr), r, kerr.ClusterAuthorizationFailed.Code)
		}
		first, second := readA, readM
		if st.mFirst {
			first, second = readM, readA
		}
		if err := first(); err != nil {
			return err
		}
		if err := second(); err != nil {
			return err
		}
	}
	return nil
}

// runMissingKey (TLS 1.3): admin (PLAIN) at v3 and alice (SCRAM-SHA-256) at
// v2 over raw kmsg, and mallory refused at v3, whose secrets the partial
// key log lacks.
func runMissingKey(s *session, c *Certs) error {
	cfg := client13(c)
	if err := s.rawSession(admin(cfg, "kdissect-missing-admin"), func(rc *rawConn) error {
		return rawACLs(rc, "missing-admin", "User:alice", 3)
	}); err != nil {
		return err
	}
	spec := mallory(cfg, "kdissect-missing-mallory")
	spec.omitKey = true
	if err := s.rawSession(spec, func(rc *rawConn) error { return deniedACLs(rc, 3) }); err != nil {
		return err
	}
	return s.rawSession(alice(cfg, "kdissect-missing-alice"), func(rc *rawConn) error {
		return rawACLs(rc, "missing-alice", "User:bob", 2)
	})
}

// runSASLPlaintext (no TLS): alice (SCRAM-SHA-256) over raw kmsg at v0-v3;
// ops (SCRAM-SHA-512) over kadm; admin (PLAIN) at v1; mallory (PLAIN)
// refused at v3; bob (SCRAM-SHA-256) with a wrong password, which the broker
// answers by closing the connection.
func runSASLPlaintext(s *session, c *Certs) error {
	if err := s.rawSession(alice(nil, "kdissect-sasl-alice"), func(rc *rawConn) error {
		return rawACLs(rc, "sasl-alice", "User:bob", 0, 1, 2, 3)
	}); err != nil {
		return err
	}
	if err := s.kadmSession(ops(nil, "kdissect-sasl-ops"), "sasl"); err != nil {
		return err
	}
	if err := s.rawSession(admin(nil, "kdissect-sasl-admin"), func(rc *rawConn) error {
		return rawACLs(rc, "sasl-admin", "User:carol", 1)
	}); err != nil {
		return err
	}
	if err := s.rawSession(mallory(nil, "kdissect-sasl-mallory"), func(rc *rawConn) error { return deniedACLs(rc, 3) }); err != nil {
		return err
	}
	bad := clientSpec{user: BobUser, pass: BobWrongPass, mech: MechScram256, clientID: "kdissect-sasl-bob"}
	if _, err := s.raw(bad); !errors.Is(err, errAuthFailed) {
		return fmt.Errorf("bob with a wrong password: got %v, want a refused login", err)
	}
	return nil
}

// runSASLv0 (no TLS; SaslHandshake v0, tokens bare): IBM/sarama as admin
// (PLAIN) and as ops (SCRAM-SHA-512), each CreateACL (v2), CreateACLs
// (v1) and DeleteACL (v2); alice (SCRAM-SHA-256) over raw kmsg at v3;
// mallory (PLAIN) refused at v3; bob (SCRAM-SHA-256) with a wrong password,
// which ends the connection after his client-final token.
func runSASLv0(s *session, c *Certs) error {
	v0 := func(spec clientSpec) clientSpec { spec.handshakeV0 = true; return spec }
	if err := s.saramaACLs(v0(admin(nil, "kdissect-v0-sarama-admin"))); err != nil {
		return err
	}
	if err := s.saramaACLs(v0(ops(nil, "kdissect-v0-sarama-ops"))); err != nil {
		return err
	}
	if err := s.rawSession(v0(alice(nil, "kdissect-v0-alice")), func(rc *rawConn) error {
		return rawACLs(rc, "v0-alice", "User:bob", 3)
	}); err != nil {
		return err
	}
	if err := s.rawSession(v0(mallory(nil, "kdissect-v0-mallory")), func(rc *rawConn) error { return deniedACLs(rc, 3) }); err != nil {
		return err
	}
	bad := v0(clientSpec{user: BobUser, pass: BobWrongPass, mech: MechScram256, clientID: "kdissect-v0-bob"})
	if _, err := s.raw(bad); !errors.Is(err, errAuthFailed) {
		return fmt.Errorf("bob with a wrong password: got %v, want a refused login", err)
	}
	return nil
}

// runOAuth (TLS 1.3, OAUTHBEARER with OAuthToken, answered by the proxy):
// kadm, and raw kmsg at v2.
func runOAuth(s *session, c *Certs) error {
	cfg := client13(c)
	spec := clientSpec{user: OAuthSubject, pass: OAuthToken, mech: MechOAuth, tls: cfg, clientID: "kdissect-oauth-kadm"}
	if err := s.kadmSession(spec, "oauth"); err != nil {
		return err
	}
	spec.clientID = "kdissect-oauth-raw"
	return s.rawSession(spec, func(rc *rawConn) error { return rawACLs(rc, "oauth", "User:svc-oauth", 2) })
}

////////////////////////////////////////////////////////////////////////////
// Building the capture
////////////////////////////////////////////////////////////////////////////

// RunSecure runs a synthesized-capture scenario against a broker of its
// own on 127.0.0.1:0 and returns what the clients did and the recorded
// wire. The key logs are the full one and, for ScenarioMissingKey, the
// one without the omitted connection (nil otherwise).
func RunSecure(ctx context.Context, name string) (res *Result, wire *Wire, keylog, partial []byte, err error) {
	var sc *secureScenario
	for i := range secureScenarios {
		if secureScenarios[i].name == name {
			sc = &secureScenarios[i]
		}
	}
	if sc == nil {
		return nil, nil, nil, nil, fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(SecureNames(), ", "))
	}
	certs, err := TestCerts()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	// Steered before the broker starts and restored after it stopped.
	restore := SteerTLS13(sc.suite13)
	defer restore()
	var srv *tls.Config
	if sc.server != nil {
		srv = sc.server(certs)
	}
	brokerTLS := srv
	if sc.v0proxy {
		brokerTLS = nil
	}
	b, err := startSecureBroker(brokerTLS, sc.sasl)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	s := &session{ctx: ctx, addr: b.Addr, wire: NewWire(), rec: new(Recorder)}
	var proxy *v0Proxy
	if sc.v0proxy {
		if proxy, err = startV0Proxy(b.Addr, srv); err != nil {
			b.Close()
			return nil, nil, nil, nil, err
		}
		s.addr = proxy.Addr()
	}
	runErr := sc.run(s, certs)
	if proxy != nil {
		proxy.Close()
	}
	b.Close()
	if runErr != nil {
		return nil, nil, nil, nil, fmt.Errorf("scenario %s: %w", name, runErr)
	}
	ex, err := s.rec.Exchanges()
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	frames := s.rec.Frames()
	tokens := s.rec.RawTokens()
	conns, err := s.connections(frames, tokens, sc.partial)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	// The capture shows the broker on Kafka's default port and the clients
	// on fixed ports, so a regenerated capture differs from the last one
	// only in timestamps and key material, and kdissect needs no --port.
	ports := s.wire.Renumber(SynthBrokerPort, func(i int) int { return SynthClientPort + i })
	for i := range ex {
		ex[i].ClientPort = ports[ex[i].ClientPort]
	}
	for _, f := range frames {
		f.ClientPort = ports[f.ClientPort]
	}
	for i := range conns {
		conns[i].ClientPort = ports[conns[i].ClientPort]
	}
	res = &Result{Scenario: name, Addr: fmt.Sprintf("127.0.0.1:%d", SynthBrokerPort), Exchanges: ex, Frames: frames, Connections: conns}
	if sc.server != nil {
		keylog, partial = s.keylogs()
		if !sc.partial {
			partial = nil
		}
	}
	return res, s.wire, keylog, partial, nil
}

// BuildTLSCapture runs the named scenario (SecureNames) in-process against
// its own kfake broker and writes into dir:
//
//   - NAME.pcap: the recorded bytes of every client connection as an
//     Ethernet/IPv4/TCP capture (see Synth);
//   - NAME.keylog: the NSS key log of every TLS connection (TLS scenarios);
//   - NAME.partial.keylog: the key log without one connection's secrets
//     (ScenarioMissingKey only);
//   - NAME.expect.json: the sidecar, with the connections' principals and
//     TLS parameters.
//
// keylogPath is "" for plaintext scenarios. The returned sidecar is the
// file read back with ParseExpect.
func BuildTLSCapture(dir, name string) (pcapPath, keylogPath string, sidecar *ExpectFile, err error) {
	res, wire, keylog, partial, err := RunSecure(context.Background(), name)
	if err != nil {
		return "", "", nil, err
	}
	return WriteSecureCapture(dir, res, wire, keylog, partial)
}

// WriteSecureCapture writes the files BuildTLSCapture describes from a
// RunSecure result.
func WriteSecureCapture(dir string, res *Result, wire *Wire, keylog, partial []byte) (pcapPath, keylogPath string, sidecar *ExpectFile, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", nil, err
	}
	base := filepath.Join(dir, res.Scenario)
	pcapPath = base + ".pcap"
	f, err := os.Create(pcapPath)
	if err != nil {
		return "", "", nil, err
	}
	if _, err := WritePcap(f, wire); err != nil {
		f.Close()
		return "", "", nil, err
	}
	if err := f.Close(); err != nil {
		return "", "", nil, err
	}
	if keylog != nil {
		keylogPath = base + ".keylog"
		if err := os.WriteFile(keylogPath, keylog, 0o644); err != nil {
			return "", "", nil, err
		}
		res.Keylog = filepath.Base(keylogPath)
	}
	if partial != nil {
		p := base + ".partial.keylog"
		if err := os.WriteFile(p, partial, 0o644); err != nil {
			return "", "", nil, err
		}
		res.PartialKeylog = filepath.Base(p)
	}
	port := 0
	if conns := wire.Conns(); len(conns) > 0 {
		port = conns[0].Server.Port
	}
	js, err := res.ExpectJSON(port)
	if err != nil {
		return "", "", nil, err
	}
	if err := os.WriteFile(base+".expect.json", js, 0o644); err != nil {
		return "", "", nil, err
	}
	sidecar, err = ParseExpect(js)
	if err != nil {
		return "", "", nil, err
	}
	return pcapPath, keylogPath, sidecar, nil
}
