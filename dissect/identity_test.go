package dissect

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// step is one message of a connection, decoded with the tracker's
// mechanism as a capture would.
type step struct {
	request bool
	raw     bool
	key     int16
	ver     int16
	frame   []byte
}

func hs(v int16, mech string) step { return step{true, false, 17, v, saslHandshakeReq(v, 1, mech)} }
func hsOK(v int16) step {
	return step{false, false, 17, v, saslHandshakeResp(v, 1, 0, "PLAIN", "SCRAM-SHA-256", "OAUTHBEARER", "GSSAPI")}
}
func hsBad(v int16) step   { return step{false, false, 17, v, saslHandshakeResp(v, 1, 33, "PLAIN")} }
func auth(tok string) step { return step{true, false, 36, 2, saslAuthReq(2, 2, tok)} }
func authOK(tok string) step {
	return step{false, false, 36, 2, saslAuthResp(2, 2, 0, nil, tok)}
}
func authFail() step {
	return step{false, false, 36, 2, saslAuthResp(2, 2, 58, testkit.Ptr("Authentication failed"), "")}
}
func rawReq(tok string) step  { return step{true, true, -1, 0, rawToken(tok)} }
func rawResp(tok string) step { return step{false, true, -1, 0, rawToken(tok)} }

func apiVersions() step {
	r := kmsg.NewPtrApiVersionsRequest()
	r.SetVersion(3)
	r.ClientSoftwareName, r.ClientSoftwareVersion = "kgo", "1"
	return step{true, false, 18, 3, testkit.KmsgRequest(r, 0, testkit.Ptr("c"))}
}

func createAcls() step {
	return step{true, false, 30, 3, testkit.KmsgRequest(sampleCreateReq(3, 0), 9, testkit.Ptr("c"))}
}

func TestIdentityTracker(t *testing.T) {
	plain := "\x00alice\x00" + samplePassword
	scramFirst := "n,,n=bob=2Cthe=3Dbuilder,r=abc"
	scramServerFirst := "r=abcdef,s=c2FsdA==,i=4096"
	scramFinal := "c=biws,r=abcdef,p=" + sampleProof
	oauth := "n,,\x01auth=Bearer " + sampleJWT + "\x01\x01"
	for _, c := range []struct {
		name     string
		sawStart bool
		tls      string
		steps    []step
		want     Identity
	}{
		{"PLAIN", true, "", []step{apiVersions(), hs(1, "PLAIN"), hsOK(1), auth(plain), authOK(""), createAcls()},
			Identity{Principal: "User:alice", Mechanism: "PLAIN", Source: "sasl", Authenticated: true}},
		{"PLAIN before the final response", true, "", []step{hs(1, "PLAIN"), hsOK(1), auth(plain)},
			Identity{}},
		{"PLAIN refused", true, "", []step{hs(1, "PLAIN"), hsOK(1), auth(plain), authFail()},
			Identity{Principal: "User:alice", Mechanism: "PLAIN", Source: "sasl", Failed: true}},
		{"mechanism refused", true, "", []step{hs(1, "SCRAM-SHA-1"), hsBad(1)},
			Identity{Mechanism: "SCRAM-SHA-1", Source: "sasl", Failed: true}},
		{"SCRAM-SHA-256", true, "", []step{hs(1, "SCRAM-SHA-256"), hsOK(1), auth(scramFirst), authOK(scramServerFirst), auth(scramFinal), authOK("v=c2lnbmF0dXJl")},
			Identity{Principal: "User:bob,the=builder", Mechanism: "SCRAM-SHA-256", Source: "sasl", Authenticated: true}},
		{"SCRAM-SHA-512 after server-first only", true, "", []step{hs(1, "scram-sha-512"), hsOK(1), auth(scramFirst), authOK(scramServerFirst)},
			Identity{}},
		{"SCRAM delegation token", true, "", []step{hs(1, "SCRAM-SHA-256"), hsOK(1), auth("n,,n=tok42,r=abc,tokenauth=true"), authOK(scramServerFirst), auth(scramFinal), authOK("v=c2lnbmF0dXJl")},
			Identity{Mechanism: "SCRAM-SHA-256", Source: "sasl", Authenticated: true, Detail: "delegation token tok42: the principal is its owner, which the wire does not show"}},
		{"OAUTHBEARER", true, "", []step{hs(1, "OAUTHBEARER"), hsOK(1), auth(oauth), authOK("")},
			Identity{Principal: "User:alice", Mechanism: "OAUTHBEARER", Source: "sasl", Authenticated: true}},
		{"OAUTHBEARER refused", true, "", []step{hs(1, "OAUTHBEARER"), hsOK(1), auth(oauth), authOK(`{"status":"invalid_token"}`), auth("\x01"), authFail()},
			Identity{Principal: "User:alice", Mechanism: "OAUTHBEARER", Source: "sasl", Failed: true}},
		{"GSSAPI", true, "", []step{hs(1, "GSSAPI"), hsOK(1), auth("\x60\x82opaque"), authOK("\x60\x81more"), auth("\x05\x04wrap"), authOK("\x05\x04wrap"), createAcls()},
			Identity{Mechanism: "GSSAPI", Source: "sasl", Authenticated: true}},
		{"raw PLAIN after SaslHandshake v0", true, "", []step{hs(0, "PLAIN"), hsOK(0), rawReq(plain), rawResp("")},
			Identity{Principal: "User:alice", Mechanism: "PLAIN", Source: "sasl", Authenticated: true}},
		{"raw SCRAM refused", true, "", []step{hs(0, "SCRAM-SHA-256"), hsOK(0), rawReq(scramFirst), rawResp(scramServerFirst), rawReq(scramFinal), rawResp("e=invalid-proof")},
			Identity{Principal: "User:bob,the=builder", Mechanism: "SCRAM-SHA-256", Source: "sasl", Failed: true}},
		{"no authentication", true, "", []step{apiVersions(), createAcls()},
			anonymousIdentity()},
		{"picked up midway", false, "", []step{createAcls()},
			Identity{}},
		{"handshake not captured", false, "", []step{auth(plain), authOK(""), createAcls()},
			Identity{Principal: "User:alice", Mechanism: "PLAIN", Source: "sasl", Authenticated: true}},
		{"handshake not captured, opaque token", false, "", []step{auth("\x60\x82\x01\x00"), authOK(""), createAcls()},
			Identity{Source: "sasl", Authenticated: true}},
		{"mTLS", true, "CN=svc-payments,OU=payments,O=Example Corp,L=Zurich,C=CH", []step{apiVersions(), createAcls()},
			Identity{Principal: "User:CN=svc-payments,OU=payments,O=Example Corp,L=Zurich,C=CH", Source: "tls", Authenticated: true}},
		{"SASL over mTLS", true, "CN=client", []step{hs(1, "PLAIN"), hsOK(1), auth(plain), authOK("")},
			Identity{Principal: "User:alice", Mechanism: "PLAIN", Source: "sasl", Authenticated: true}},
		{"re-authentication", true, "", []step{hs(1, "PLAIN"), hsOK(1), auth(plain), authOK(""), hs(1, "PLAIN"), hsOK(1), auth("\x00carol\x00pw")},
			Identity{Principal: "User:alice", Mechanism: "PLAIN", Source: "sasl", Authenticated: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := newIdentityTracker(c.sawStart)
			if c.tls != "" {
				tr.SetTLS(c.tls)
			}
			for i, s := range c.steps {
				o := Options{Mechanism: tr.Mechanism()}
				if s.raw != tr.RawTokens() {
					t.Fatalf("step %d: RawTokens() = %v before a raw=%v frame", i, tr.RawTokens(), s.raw)
				}
				var m *Message
				switch {
				case s.raw:
					dir := Response
					if s.request {
						dir = Request
					}
					m = saslReg.Decode(s.frame, withOpts(o, Options{Direction: dir, RawToken: true}))
				case s.request:
					m = saslReg.Decode(s.frame, o)
				default:
					m = saslReg.Decode(s.frame, withOpts(o, Options{Direction: Response, APIKey: s.key, APIVersion: s.ver}))
				}
				if len(m.Problems) > 0 {
					t.Fatalf("step %d: %v", i, m.Problems)
				}
				tr.Observe(m)
			}
			if got := tr.Identity(); got != c.want {
				t.Errorf("identity\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestIdentityPending: the claim under way is visible as pending, not as
// the identity, until the broker accepts it.
func TestIdentityPending(t *testing.T) {
	tr := newIdentityTracker(true)
	for _, f := range [][]byte{saslHandshakeReq(1, 1, "PLAIN"), saslAuthReq(2, 2, "\x00alice\x00pw")} {
		tr.Observe(saslReg.Decode(f, Options{Mechanism: tr.Mechanism()}))
	}
	want := Identity{Principal: "User:alice", Mechanism: "PLAIN", Source: "sasl"}
	if got := tr.Pending(); got != want {
		t.Errorf("pending %+v, want %+v", got, want)
	}
	if tr.Identity().Known() {
		t.Errorf("identity %+v before the broker answered", tr.Identity())
	}
}

// TestIdentityClose: a connection closed while the broker had not
// answered the client's token failed; one closed after success did not.
func TestIdentityClose(t *testing.T) {
	obs := func(tr *identityTracker, frames ...[]byte) {
		for i, f := range frames {
			if i%2 == 0 {
				tr.Observe(saslReg.Decode(f, Options{Mechanism: tr.Mechanism()}))
			} else {
				tr.Observe(saslReg.Decode(f, Options{Direction: Response, APIKey: int16(binary.BigEndian.Uint16(frames[i-1][4:])), APIVersion: int16(binary.BigEndian.Uint16(frames[i-1][6:])), Mechanism: tr.Mechanism()}))
			}
		}
	}
	refused := newIdentityTracker(true)
	obs(refused, saslHandshakeReq(1, 1, "PLAIN"), saslHandshakeResp(1, 1, 0, "PLAIN"), saslAuthReq(2, 2, "\x00carol\x00bad"))
	refused.Close()
	if got, want := refused.Identity(), (Identity{Principal: "User:carol", Mechanism: "PLAIN", Source: "sasl", Failed: true}); got != want {
		t.Errorf("refused: %+v", got)
	}
	ok := newIdentityTracker(true)
	obs(ok, saslHandshakeReq(1, 1, "PLAIN"), saslHandshakeResp(1, 1, 0, "PLAIN"), saslAuthReq(2, 2, "\x00carol\x00good"), saslAuthResp(2, 2, 0, nil, ""))
	ok.Close()
	if got := ok.Identity(); !got.Authenticated || got.Failed || got.Principal != "User:carol" {
		t.Errorf("accepted: %+v", got)
	}
	// A handshake alone, closed, sent no credentials: nothing failed.
	idle := newIdentityTracker(true)
	obs(idle, saslHandshakeReq(1, 1, "PLAIN"), saslHandshakeResp(1, 1, 0, "PLAIN"))
	idle.Close()
	if idle.Identity().Known() {
		t.Errorf("idle: %+v", idle.Identity())
	}
}

func TestIdentityConstructors(t *testing.T) {
	if got, want := identityFromTLS("CN=a\\,b,O=X"), (Identity{Principal: "User:CN=a\\,b,O=X", Source: "tls", Authenticated: true}); got != want {
		t.Errorf("IdentityFromTLS %+v", got)
	}
	if got, want := anonymousIdentity(), (Identity{Principal: "User:ANONYMOUS", Source: "none", Authenticated: true}); got != want {
		t.Errorf("AnonymousIdentity %+v", got)
	}
}

func TestIdentityRendering(t *testing.T) {
	for _, c := range []struct {
		id         Identity
		text, json string
	}{
		{Identity{}, "", `"principal":null,"auth":null`},
		{Identity{Principal: "User:alice", Mechanism: "SCRAM-SHA-256", Source: "sasl", Authenticated: true}, "User:alice",
			`"principal":"User:alice","auth":{"mechanism":"SCRAM-SHA-256","source":"sasl","authenticated":true,"failed":false}`},
		{Identity{Principal: "User:mallory", Mechanism: "PLAIN", Source: "sasl", Failed: true}, "User:mallory (failed)",
			`"principal":"User:mallory","auth":{"mechanism":"PLAIN","source":"sasl","authenticated":false,"failed":true}`},
		{Identity{Mechanism: "GSSAPI", Source: "sasl", Authenticated: true}, "a GSSAPI user",
			`"principal":null,"auth":{"mechanism":"GSSAPI","source":"sasl","authenticated":true,"failed":false}`},
		{Identity{Principal: "User:bob", Mechanism: "PLAIN", Source: "sasl"}, "User:bob (not yet accepted)",
			`"principal":"User:bob","auth":{"mechanism":"PLAIN","source":"sasl","authenticated":false,"failed":false}`},
		{anonymousIdentity(), "User:ANONYMOUS",
			`"principal":"User:ANONYMOUS","auth":{"mechanism":null,"source":"none","authenticated":true,"failed":false}`},
		{identityFromTLS("CN=evil\x1b[2J\"x"), `User:CN=evil\x1b[2J"x`,
			`"principal":"User:CN=evil\u001b[2J\"x","auth":{"mechanism":null,"source":"tls","authenticated":true,"failed":false}`},
	} {
		if got := c.id.String(); got != c.text {
			t.Errorf("String %q, want %q", got, c.text)
		}
		js := AppendIdentityJSON(nil, c.id)
		if string(js) != c.json {
			t.Errorf("JSON\n got %s\nwant %s", js, c.json)
		}
		if !json.Valid(append(append([]byte{'{'}, js...), '}')) {
			t.Errorf("invalid JSON: %s", js)
		}
	}
}

// A client certificate whose subject cannot be read leaves the principal
// unknown: a connection that then sends ApiVersions at its first byte is
// not anonymous, and SASL over it still names its user.
func TestTLSIdentityUnknownIsNeverAnonymous(t *testing.T) {
	r := &sessionLog{}
	s := NewSession[string](NewRegistry(), r)
	s.SetTLSIdentityUnknown(1)
	s.Frame("av", client(1, 0, apiVersions().frame))
	s.Frame("acl", client(1, 1, createAcls().frame))
	s.SetTLSIdentityUnknown(2)
	s.Frame("hs", client(2, 2, saslHandshakeReq(1, 1, "PLAIN")))
	s.Frame("hs", broker(2, 3, saslHandshakeResp(1, 1, 0, "PLAIN")))
	s.Frame("auth", client(2, 4, saslAuthReq(2, 2, "\x00alice\x00pw")))
	s.Frame("auth", broker(2, 5, saslAuthResp(2, 2, 0, nil, "")))
	s.Frame("acl2", client(2, 6, createAcls().frame))
	s.Flush()
	for _, l := range r.lines {
		if bytes.Contains([]byte(l), []byte("ANONYMOUS")) {
			t.Errorf("anonymous: %s", l)
		}
	}
	if got := r.lines[1]; got != "acl #2 CreateAcls request peer=0 by an unreadable client certificate" {
		t.Errorf("mTLS line %q", got)
	}
	if got := r.lines[len(r.lines)-1]; got != "acl2 #7 CreateAcls request peer=0 by User:alice" {
		t.Errorf("SASL line %q", got)
	}

	tr := newIdentityTracker(true)
	tr.SetTLSUnknown()
	tr.Observe(saslReg.Decode(apiVersions().frame, Options{}))
	tr.Observe(saslReg.Decode(createAcls().frame, Options{}))
	id := tr.Identity()
	if id != unknownTLSIdentity() || id.Principal != "" || !id.Known() {
		t.Errorf("identity %+v", id)
	}
	if got, want := string(AppendIdentityJSON(nil, id)), `"principal":null,"auth":{"mechanism":null,"source":"tls","authenticated":true,"failed":false}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
}
