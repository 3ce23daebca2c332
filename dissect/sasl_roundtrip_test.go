package dissect

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// saslReg is a registry with the SASL definitions, as the CLI uses it.
var saslReg = NewRegistry().AddSASL()

// showAll decodes without redaction and without a mechanism, so that the
// round trip compares AuthBytes with kmsg's bytes.
var showAll = Options{ShowSecrets: true}

func (e expect) bytes(name string, b []byte) want {
	if e.flex {
		return want{name, hex.EncodeToString(b), uvarintLen(uint32(len(b)+1)) + len(b), nil}
	}
	return want{name, hex.EncodeToString(b), 4 + len(b), nil}
}

func (e expect) strArray(name string, ss []string) want {
	var elems []want
	for i, s := range ss {
		w := e.str(name+"["+itoa(int64(i))+"]", s)
		elems = append(elems, w)
	}
	return e.array(name, elems)
}

func TestRoundTripSaslHandshakeRequest(t *testing.T) {
	for v := int16(0); v <= 1; v++ {
		t.Run(vname(v), func(t *testing.T) {
			req := kmsg.NewPtrSASLHandshakeRequest()
			req.SetVersion(v)
			req.Mechanism = "SCRAM-SHA-512"
			frame := testkit.KmsgRequest(req, 2, testkit.Ptr("adminclient-1"))
			e := expect{}
			w := frameWant("SaslHandshakeRequest", frame, requestHeaderWant(req, 2, testkit.Ptr("adminclient-1")),
				e.body("SaslHandshakeRequest", nil, e.str("Mechanism", "SCRAM-SHA-512")))
			m := saslReg.Decode(frame, Options{})
			checkDecoded(t, m, frame, w)
			checkMessage(t, m, 17, v, 2)
			if m.Summary != "SaslHandshake v"+itoa(int64(v))+" request corr=2: mechanism SCRAM-SHA-512" {
				t.Errorf("summary %q", m.Summary)
			}
		})
	}
}

func TestRoundTripSaslHandshakeResponse(t *testing.T) {
	for v := int16(0); v <= 1; v++ {
		t.Run(vname(v), func(t *testing.T) {
			resp := kmsg.NewPtrSASLHandshakeResponse()
			resp.SetVersion(v)
			resp.ErrorCode = 33 // UNSUPPORTED_SASL_MECHANISM
			resp.SupportedMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "OAUTHBEARER"}
			for i := 0; i < roundTripExtra; i++ {
				resp.SupportedMechanisms = append(resp.SupportedMechanisms, "X-"+itoa(int64(i)))
			}
			frame := testkit.KmsgResponse(resp, 2)
			e := expect{}
			w := frameWant("SaslHandshakeResponse", frame, responseHeaderWant(resp, 2),
				e.body("SaslHandshakeResponse", nil,
					e.int("ErrorCode", 33, 2),
					e.strArray("Mechanisms", resp.SupportedMechanisms)))
			m := saslReg.Decode(frame, Options{Direction: Response, APIKey: 17, APIVersion: v})
			checkDecoded(t, m, frame, w)
			checkMessage(t, m, 17, v, 2)
			if got := m.Tree.Find("SaslHandshakeResponse", "ErrorCode").Display(); got != "33 (UNSUPPORTED_SASL_MECHANISM)" {
				t.Errorf("ErrorCode %q", got)
			}
		})
	}
}

func TestRoundTripSaslAuthenticateRequest(t *testing.T) {
	for v := int16(0); v <= 2; v++ {
		t.Run(vname(v), func(t *testing.T) {
			req := kmsg.NewPtrSASLAuthenticateRequest()
			req.SetVersion(v)
			// Over 127 bytes (a two-byte compact length at v2), and binary,
			// so that no mechanism is recognised in it.
			req.SASLAuthBytes = opaqueToken(338)
			frame := testkit.KmsgRequest(req, 3, nil)
			e := expect{flex: req.IsFlexible()}
			w := frameWant("SaslAuthenticateRequest", frame, requestHeaderWant(req, 3, nil),
				e.body("SaslAuthenticateRequest", &req.UnknownTags, e.bytes("AuthBytes", req.SASLAuthBytes)))
			m := saslReg.Decode(frame, showAll)
			checkDecoded(t, m, frame, w)
			checkMessage(t, m, 36, v, 3)
			// Without the options, a token of an unknown mechanism is hidden whole.
			m = saslReg.Decode(frame, Options{})
			ab := m.Tree.Find("SaslAuthenticateRequest", "AuthBytes")
			if got := ab.Value(); got != "<redacted, 338 bytes>" {
				t.Errorf("AuthBytes without ShowSecrets: %v", got)
			}
			want := []ByteRange{{ab.Offset + ab.Size - 338, 338}}
			if got := m.SecretRanges(); len(got) != 1 || got[0] != want[0] {
				t.Errorf("SecretRanges %v, want %v", got, want)
			}
		})
	}
}

func TestRoundTripSaslAuthenticateResponse(t *testing.T) {
	for v := int16(0); v <= 2; v++ {
		t.Run(vname(v), func(t *testing.T) {
			resp := kmsg.NewPtrSASLAuthenticateResponse()
			resp.SetVersion(v)
			resp.ErrorCode = 58
			resp.ErrorMessage = testkit.Ptr("Authentication failed: Invalid username or password")
			resp.SASLAuthBytes = opaqueToken(30)
			resp.SessionLifetimeMillis = 3600000
			frame := testkit.KmsgResponse(resp, -9)
			e := expect{flex: resp.IsFlexible()}
			fields := []want{
				e.int("ErrorCode", 58, 2),
				e.nstr("ErrorMessage", resp.ErrorMessage),
				e.bytes("AuthBytes", resp.SASLAuthBytes),
			}
			if v >= 1 {
				fields = append(fields, e.int("SessionLifetimeMs", 3600000, 8))
			}
			w := frameWant("SaslAuthenticateResponse", frame, responseHeaderWant(resp, -9),
				e.body("SaslAuthenticateResponse", &resp.UnknownTags, fields...))
			m := saslReg.Decode(frame, withOpts(showAll, Options{Direction: Response, APIKey: 36, APIVersion: v}))
			checkDecoded(t, m, frame, w)
			checkMessage(t, m, 36, v, -9)
			if got := m.Tree.Find("SaslAuthenticateResponse", "ErrorCode").Display(); got != "58 (SASL_AUTHENTICATION_FAILED)" {
				t.Errorf("ErrorCode %q", got)
			}
		})
	}
}

// TestRoundTripSaslKmsgReads: kmsg reads back the bodies dissect found.
func TestRoundTripSaslKmsgReads(t *testing.T) {
	for _, s := range saslSampleFrames() {
		if s.raw {
			continue // not a Kafka message
		}
		m := s.decodeSASL()
		var body interface{ ReadFrom([]byte) error }
		if s.request {
			r := kmsg.RequestForKey(s.key)
			r.SetVersion(s.ver)
			body = r
		} else {
			r := kmsg.ResponseForKey(s.key)
			r.SetVersion(s.ver)
			body = r
		}
		bodyOff := 0
		for _, c := range m.Tree.Children {
			if c.Category == CatRequestBody || c.Category == CatResponseBody {
				bodyOff = c.Offset
			}
		}
		if bodyOff == 0 {
			t.Errorf("%s: no body node", s.name)
			continue
		}
		if err := body.ReadFrom(s.frame[bodyOff:]); err != nil {
			t.Errorf("%s: kmsg cannot read the body dissect found at %d: %v", s.name, bodyOff, err)
		}
		if len(m.Problems) > 0 && !strings.HasSuffix(s.name, "malformed") {
			t.Errorf("%s: problems %v", s.name, m.Problems)
		}
	}
}

// saslSample is a SASL frame of the goldens, with the mechanism its
// connection negotiated.
type saslSample struct {
	seedFrame
	mech string
	raw  bool // a raw token after SaslHandshake v0
}

func (s saslSample) decodeSASL() *Message { return s.decodeWith(Options{Mechanism: s.mech}) }

func (s saslSample) decodeWith(o Options) *Message {
	o.Mechanism = s.mech
	dir := Response
	if s.request {
		dir = Request
	}
	switch {
	case s.raw:
		return saslReg.Decode(s.frame, withOpts(o, Options{Direction: dir, RawToken: true}))
	case s.request:
		return saslReg.Decode(s.frame, o)
	}
	return saslReg.Decode(s.frame, withOpts(o, Options{Direction: Response, APIKey: s.key, APIVersion: s.ver}))
}

// Credentials of the samples: tests assert that none of them is ever shown.
const (
	samplePassword = "hunter2-Pa55w0rd"
	sampleProof    = "rmF9pqV8S7suAoZWja4dJRkFsKQ="
	sampleJWT      = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSIsImV4cCI6NH0.c2lnbmF0dXJl" // {"sub":"alice","exp":4}
)

// opaqueToken is n binary bytes with one NUL, like a Kerberos token: no
// mechanism is recognised in it.
func opaqueToken(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 0x60)
	}
	return b
}

func saslAuthReq(v int16, corr int32, tok string) []byte {
	r := kmsg.NewPtrSASLAuthenticateRequest()
	r.SetVersion(v)
	r.SASLAuthBytes = []byte(tok)
	return testkit.KmsgRequest(r, corr, testkit.Ptr("kdissect-test"))
}

func saslAuthResp(v int16, corr int32, ec int16, msg *string, tok string) []byte {
	r := kmsg.NewPtrSASLAuthenticateResponse()
	r.SetVersion(v)
	r.ErrorCode, r.ErrorMessage, r.SASLAuthBytes = ec, msg, []byte(tok)
	if v >= 1 && ec == 0 {
		r.SessionLifetimeMillis = 86400000
	}
	return testkit.KmsgResponse(r, corr)
}

func saslHandshakeReq(v int16, corr int32, mech string) []byte {
	r := kmsg.NewPtrSASLHandshakeRequest()
	r.SetVersion(v)
	r.Mechanism = mech
	return testkit.KmsgRequest(r, corr, testkit.Ptr("kdissect-test"))
}

func saslHandshakeResp(v int16, corr int32, ec int16, mechs ...string) []byte {
	r := kmsg.NewPtrSASLHandshakeResponse()
	r.SetVersion(v)
	r.ErrorCode, r.SupportedMechanisms = ec, mechs
	return testkit.KmsgResponse(r, corr)
}

func rawToken(tok string) []byte { return testkit.SetSize(append(make([]byte, 4), tok...)) }

// saslSampleFrames covers every version of both APIs and every token kind.
func saslSampleFrames() []saslSample {
	mk := func(name string, req bool, key, ver int16, mech string, frame []byte) saslSample {
		return saslSample{seedFrame: seedFrame{name, req, key, ver, frame}, mech: mech}
	}
	plain := "\x00alice\x00" + samplePassword
	out := []saslSample{
		mk("SaslHandshakeRequest v0", true, 17, 0, "", saslHandshakeReq(0, 1, "PLAIN")),
		mk("SaslHandshakeRequest v1", true, 17, 1, "", saslHandshakeReq(1, 1, "SCRAM-SHA-256")),
		mk("SaslHandshakeResponse v0", false, 17, 0, "", saslHandshakeResp(0, 1, 0, "PLAIN")),
		mk("SaslHandshakeResponse v1", false, 17, 1, "", saslHandshakeResp(1, 1, 33, "PLAIN", "SCRAM-SHA-512")),
		mk("SaslAuthenticateRequest v0 PLAIN", true, 36, 0, "PLAIN", saslAuthReq(0, 2, plain)),
		mk("SaslAuthenticateRequest v1 PLAIN authzid", true, 36, 1, "PLAIN", saslAuthReq(1, 2, "admin\x00alice\x00"+samplePassword)),
		mk("SaslAuthenticateRequest v2 PLAIN", true, 36, 2, "PLAIN", saslAuthReq(2, 2, plain)),
		mk("SaslAuthenticateRequest v2 unknown mechanism", true, 36, 2, "", saslAuthReq(2, 2, string(opaqueToken(40)))),
		mk("SaslAuthenticateRequest v2 PLAIN recognised", true, 36, 2, "", saslAuthReq(2, 2, plain)),
		mk("SaslAuthenticateRequest v2 SCRAM client-final recognised", true, 36, 2, "", saslAuthReq(2, 3, "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p="+sampleProof)),
		mk("SaslAuthenticateRequest v2 PLAIN malformed", true, 36, 2, "PLAIN", saslAuthReq(2, 2, "alice\x00"+samplePassword)),
		mk("SaslAuthenticateResponse v0 PLAIN", false, 36, 0, "PLAIN", saslAuthResp(0, 2, 0, nil, "")),
		mk("SaslAuthenticateResponse v1 failed", false, 36, 1, "PLAIN", saslAuthResp(1, 2, 58, testkit.Ptr("Authentication failed: Invalid username or password"), "")),
		mk("SaslAuthenticateResponse v2 PLAIN", false, 36, 2, "PLAIN", saslAuthResp(2, 2, 0, nil, "")),
		mk("SaslAuthenticateRequest v2 SCRAM client-first", true, 36, 2, "SCRAM-SHA-256", saslAuthReq(2, 2, "n,,n=bob=2Cthe=3Dbuilder,r=rOprNGfwEbeRWgbNEkqO")),
		mk("SaslAuthenticateResponse v2 SCRAM server-first", false, 36, 2, "SCRAM-SHA-256", saslAuthResp(2, 2, 0, nil, "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")),
		mk("SaslAuthenticateRequest v2 SCRAM client-final", true, 36, 2, "SCRAM-SHA-512", saslAuthReq(2, 3, "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p="+sampleProof)),
		mk("SaslAuthenticateResponse v2 SCRAM server-final", false, 36, 2, "SCRAM-SHA-512", saslAuthResp(2, 3, 0, nil, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")),
		mk("SaslAuthenticateResponse v1 SCRAM server-final error", false, 36, 1, "SCRAM-SHA-256", saslAuthResp(1, 3, 58, testkit.Ptr("Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"), "e=invalid-proof")),
		mk("SaslAuthenticateRequest v1 SCRAM delegation token", true, 36, 1, "SCRAM-SHA-256", saslAuthReq(1, 2, "n,,n=tokenid-42,r=abc,tokenauth=true")),
		mk("SaslAuthenticateRequest v2 OAUTHBEARER", true, 36, 2, "OAUTHBEARER", saslAuthReq(2, 2, "n,a=alice,\x01auth=Bearer "+sampleJWT+"\x01traceId=42\x01\x01")),
		mk("SaslAuthenticateResponse v2 OAUTHBEARER error", false, 36, 2, "OAUTHBEARER", saslAuthResp(2, 2, 0, nil, `{"status":"invalid_token"}`)),
		mk("SaslAuthenticateRequest v2 OAUTHBEARER ack", true, 36, 2, "OAUTHBEARER", saslAuthReq(2, 3, "\x01")),
		mk("SaslAuthenticateRequest v1 GSSAPI", true, 36, 1, "GSSAPI", saslAuthReq(1, 2, "\x60\x82\x02\x1e\x06\x09\x2a\x86\x48\x86\xf7\x12\x01\x02\x02\x01\x00\x6e\x82")),
	}
	raw := mk("SaslToken request PLAIN", true, -1, 0, "PLAIN", rawToken(plain))
	raw.raw = true
	rawResp := mk("SaslToken response PLAIN", false, -1, 0, "PLAIN", rawToken(""))
	rawResp.raw = true
	rawScram := mk("SaslToken response SCRAM server-final", false, -1, 0, "SCRAM-SHA-512", rawToken("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="))
	rawScram.raw = true
	return append(out, raw, rawResp, rawScram)
}
