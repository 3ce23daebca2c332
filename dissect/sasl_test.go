package dissect

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// flat lists a token node's descendants as "name [offset,size] = display".
func flat(n *Node) []string {
	var out []string
	n.Walk(func(c *Node, depth int) {
		if depth == 0 {
			return
		}
		s := strings.Repeat(" ", depth-1) + c.Name + fmt.Sprintf(" [%d,%d]", c.Offset, c.Size)
		if c.HasValue() {
			s += " = " + c.Display()
		}
		out = append(out, s)
	})
	return out
}

// TestSASLTokens dissects raw tokens (the token starts at frame offset 4)
// of every kind, with and without ShowSecrets.
func TestSASLTokens(t *testing.T) {
	for _, c := range []struct {
		name    string
		mech    string
		dir     Direction
		tok     string
		note    string
		kids    []string // hidden secrets
		shown   []string // with ShowSecrets; nil: same as kids
		secrets []ByteRange
		problem string
	}{
		{"PLAIN", "plain", Request, "\x00alice\x00s3cr=t", "PLAIN", []string{
			`authzid [4,0] = ""`, `authcid [5,5] = "alice"`, `password [11,6] = <redacted, 6 bytes>`,
		}, []string{
			`authzid [4,0] = ""`, `authcid [5,5] = "alice"`, `password [11,6] = "s3cr=t"`,
		}, []ByteRange{{11, 6}}, ""},
		{"PLAIN empty password", "PLAIN", Request, "\x00alice\x00", "PLAIN", []string{
			`authzid [4,0] = ""`, `authcid [5,5] = "alice"`, `password [11,0] = <redacted, 0 bytes>`,
		}, []string{
			`authzid [4,0] = ""`, `authcid [5,5] = "alice"`, `password [11,0] = ""`,
		}, []ByteRange{{11, 0}}, ""},
		{"PLAIN three NULs", "PLAIN", Request, "\x00a\x00b\x00c", "not a valid PLAIN token", nil, nil,
			[]ByteRange{{4, 6}}, "PLAIN token has 3 NUL separators, not 2"},
		{"PLAIN password with control bytes", "PLAIN", Request, "\x00a\x00\x1b[2J\xff", "PLAIN", []string{
			`authzid [4,0] = ""`, `authcid [5,1] = "a"`, `password [7,5] = <redacted, 5 bytes>`,
		}, []string{
			`authzid [4,0] = ""`, `authcid [5,1] = "a"`, `password [7,5] = "\x1b[2J\xff"`,
		}, []ByteRange{{7, 5}}, "password is not valid UTF-8"},
		{"SCRAM client-first with authzid", "SCRAM-SHA-512", Request, "n,a=admin,n=u=3D1,r=N0nce", "SCRAM client-first", []string{
			`gs2_header [4,10] = "n,a=admin,"`, `username [16,5] = "u=1"`, `nonce [24,5] = "N0nce"`,
		}, nil, nil, ""},
		{"SCRAM bad escape", "SCRAM-SHA-256", Request, "n,,n=a=41,r=x", "SCRAM client-first", []string{
			`gs2_header [4,3] = "n,,"`, `username [9,4] = "a=41"`, `nonce [16,1] = "x"`,
		}, nil, nil, "user name has an = not followed by 2C or 3D"},
		{"SCRAM client-first without nonce", "SCRAM-SHA-256", Request, "n,,n=a", "not a valid SCRAM-SHA-256 token", nil, nil,
			[]ByteRange{{4, 6}}, "SCRAM client-first message lacks its r= attribute"},
		{"SCRAM server-first", "SCRAM-SHA-256", Response, "r=ab,s=c2E=,i=4096", "SCRAM server-first", []string{
			`nonce [6,2] = "ab"`, `salt [11,4] = "c2E="`, `iterations [18,4] = 4096`,
		}, nil, nil, ""},
		{"SCRAM client-final", "SCRAM-SHA-256", Request, "c=biws,r=ab,p=cHJvb2Y=", "SCRAM client-final", []string{
			`channel_binding [6,4] = "biws"`, `nonce [13,2] = "ab"`, `proof [18,8] = <redacted, 8 bytes>`,
		}, []string{
			`channel_binding [6,4] = "biws"`, `nonce [13,2] = "ab"`, `proof [18,8] = "cHJvb2Y="`,
		}, []ByteRange{{18, 8}}, ""},
		{"SCRAM server-final error", "SCRAM-SHA-256", Response, "e=other-error", "SCRAM server-final", []string{
			`error [6,11] = "other-error"`,
		}, nil, nil, ""},
		{"SCRAM garbage", "SCRAM-SHA-256", Response, "hello", "not a valid SCRAM-SHA-256 token", nil, nil,
			[]ByteRange{{4, 5}}, "SCRAM attribute at token byte 0 is not key=value"},
		{"SCRAM unexpected first attribute", "SCRAM-SHA-256", Response, "x=pw", "not a valid SCRAM-SHA-256 token", nil, nil,
			[]ByteRange{{4, 4}}, "SCRAM message starts with an attribute it cannot start with"},
		{"OAUTHBEARER opaque token", "OAUTHBEARER", Request, "n,,\x01auth=Bearer abc.def\x01\x01", "OAUTHBEARER initial response", []string{
			`gs2_header [4,3] = "n,,"`, `scheme [13,6] = "Bearer"`, `token [20,7] = <redacted, 7 bytes>`,
		}, []string{
			`gs2_header [4,3] = "n,,"`, `scheme [13,6] = "Bearer"`, `token [20,7] = "abc.def"`,
		}, []ByteRange{{20, 7}}, ""},
		{"OAUTHBEARER JWT", "OAUTHBEARER", Request, "n,,\x01auth=bearer " + sampleJWT + "\x01\x01", "OAUTHBEARER initial response", []string{
			`gs2_header [4,3] = "n,,"`, `scheme [13,6] = "bearer"`, `token [20,64] = <redacted, 64 bytes>`, ` sub [40,31] = "alice"`,
		}, []string{
			`gs2_header [4,3] = "n,,"`, `scheme [13,6] = "bearer"`, `token [20,64] = "` + sampleJWT + `"`, ` sub [40,31] = "alice"`,
		}, []ByteRange{{20, 64}}, ""},
		{"OAUTHBEARER other scheme", "OAUTHBEARER", Request, "n,,\x01auth=Basic YTpi\x01\x01", "OAUTHBEARER initial response", []string{
			`gs2_header [4,3] = "n,,"`, `auth [13,10] = <redacted, 10 bytes>`,
		}, []string{
			`gs2_header [4,3] = "n,,"`, `auth [13,10] = "Basic YTpi"`,
		}, []ByteRange{{13, 10}}, ""},
		{"OAUTHBEARER unterminated", "OAUTHBEARER", Request, "n,,\x01auth=Bearer abc", "not a valid OAUTHBEARER token", nil, nil,
			[]ByteRange{{4, 19}}, "OAUTHBEARER key=value pair at token byte 4 is not ended by 0x01"},
		{"GSSAPI", "GSSAPI", Request, "\x60\x82\x01\x00", "GSSAPI token, opaque", nil, nil, []ByteRange{{4, 4}}, ""},
		{"unknown mechanism", "", Request, "\x60\x00alice\x00pw\x01", "SASL mechanism unknown", nil, nil, []ByteRange{{4, 11}}, ""},
		{"unknown mechanism, PLAIN recognised", "", Request, "\x00alice\x00pw", "PLAIN", []string{
			`authzid [4,0] = ""`, `authcid [5,5] = "alice"`, `password [11,2] = <redacted, 2 bytes>`,
		}, []string{
			`authzid [4,0] = ""`, `authcid [5,5] = "alice"`, `password [11,2] = "pw"`,
		}, []ByteRange{{11, 2}}, ""},
		{"unknown mechanism, SCRAM recognised", "", Request, "c=biws,r=ab,p=cHJvb2Y=", "SCRAM client-final", []string{
			`channel_binding [6,4] = "biws"`, `nonce [13,2] = "ab"`, `proof [18,8] = <redacted, 8 bytes>`,
		}, []string{
			`channel_binding [6,4] = "biws"`, `nonce [13,2] = "ab"`, `proof [18,8] = "cHJvb2Y="`,
		}, []ByteRange{{18, 8}}, ""},
		{"unknown mechanism, SCRAM-like garbage", "", Response, "v=", "SCRAM server-final", []string{`verifier [6,0] = ""`}, nil, nil, ""},
		{"unknown mechanism, SCRAM-like without nonce stays hidden, without problems", "", Request, "n,,n=a=41", "SASL mechanism unknown", nil, nil, []ByteRange{{4, 9}}, ""},
		{"SCRAM without nonce: one problem", "SCRAM-SHA-256", Request, "n,,n=a=41", "not a valid SCRAM-SHA-256 token", nil, nil,
			[]ByteRange{{4, 9}}, "SCRAM client-first message lacks its r= attribute"},
		{"unknown mechanism, malformed SCRAM stays hidden", "", Request, "c=biws,r=ab,p=cHJv,junk", "SASL mechanism unknown", nil, nil, []ByteRange{{4, 23}}, ""},
		{"unknown mechanism, OAUTHBEARER recognised", "", Request, "n,,\x01auth=Bearer abc\x01\x01", "OAUTHBEARER initial response", []string{
			`gs2_header [4,3] = "n,,"`, `scheme [13,6] = "Bearer"`, `token [20,3] = <redacted, 3 bytes>`,
		}, []string{
			`gs2_header [4,3] = "n,,"`, `scheme [13,6] = "Bearer"`, `token [20,3] = "abc"`,
		}, []ByteRange{{20, 3}}, ""},
		{"unknown mechanism, response", "X-CUSTOM", Response, "challenge", "SASL mechanism unknown", nil, nil, []ByteRange{{4, 9}}, ""},
		{"PLAIN response", "PLAIN", Response, "odd", "PLAIN: the broker sends no token", nil, nil, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			frame := rawToken(c.tok)
			for _, show := range []bool{false, true} {
				m := saslReg.Decode(frame, Options{Direction: c.dir, RawToken: true, Mechanism: c.mech, ShowSecrets: show})
				tok := m.Tree.Child("token")
				if tok.note != c.note {
					t.Errorf("show=%v: note %q, want %q", show, tok.note, c.note)
				}
				want := c.kids
				if show && c.shown != nil {
					want = c.shown
				}
				if got := flat(tok); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("show=%v: children\n%s\nwant\n%s", show, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				secrets := c.secrets
				if show {
					secrets = nil
				}
				if got := m.SecretRanges(); fmt.Sprint(got) != fmt.Sprint(secrets) {
					t.Errorf("show=%v: secrets %v, want %v", show, got, secrets)
				}
				if got := tok.Redacted(); got != (len(secrets) > 0) {
					t.Errorf("show=%v: token redacted=%v", show, got)
				}
				var probs []string
				for _, p := range m.Problems {
					probs = append(probs, p.Message)
				}
				if strings.Join(probs, "; ") != c.problem {
					t.Errorf("problems %q, want %q", probs, c.problem)
				}
				if err := checkShape(m, frame, false); err != nil {
					t.Error(err)
				}
				if err := checkRendered(m); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestSASLTruncatedToken: a raw token frame cut short is a problem, and
// the bytes that are there stay hidden.
func TestSASLTruncatedToken(t *testing.T) {
	frame := rawToken("\x00alice\x00" + samplePassword)
	frame = frame[:len(frame)-3]
	m := saslReg.Decode(frame, Options{Direction: Request, RawToken: true, Mechanism: "PLAIN"})
	if len(m.Problems) == 0 || m.Problems[0].Message != "frame is truncated: size says 23 bytes follow, 20 present" {
		t.Errorf("problems %v", m.Problems)
	}
	if got := AppendText(nil, m.Tree); bytes.Contains(got, []byte(samplePassword[:13])) {
		t.Errorf("password shown:\n%s", got)
	}
	if got := m.SecretRanges(); fmt.Sprint(got) != "[{11 13}]" {
		t.Errorf("secrets %v", got)
	}
}

// FuzzSASLToken: any token, as any mechanism and direction, decodes
// without panic into a tree that keeps the invariants, and with
// ShowSecrets off no output depends on the password of a well-formed
// PLAIN token.
func FuzzSASLToken(f *testing.F) {
	for _, s := range saslSampleFrames() {
		if s.raw {
			f.Add(s.frame[4:], uint8(0))
		}
	}
	f.Add([]byte("n,,n=a,r=b"), uint8(1))
	f.Add([]byte("c=biws,r=ab,p=cHJvb2Y="), uint8(1))
	f.Add([]byte("r=ab,s=c2E=,i=4096"), uint8(9))
	f.Add([]byte("n,,\x01auth=Bearer "+sampleJWT+"\x01\x01"), uint8(3))
	mechs := []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI", "", "X"}
	f.Fuzz(func(t *testing.T, tok []byte, sel uint8) {
		frame := rawToken(string(tok))
		mech := mechs[int(sel>>1)%len(mechs)]
		dir := Direction(sel & 1)
		m := saslReg.Decode(frame, Options{Direction: dir, RawToken: true, Mechanism: mech})
		checkFuzzed(t, m, frame)
		_ = AppendHexDump(nil, frame, m.Tree)
		// The same token inside SaslAuthenticate, at v0-2.
		af := saslAuthReq(int16(sel>>4)%3, 1, string(tok))
		checkFuzzed(t, saslReg.Decode(af, Options{Mechanism: mech}), af)
		if at := bytes.LastIndexByte(tok, 0) + 1; mech == "PLAIN" && dir == Request && bytes.Count(tok, []byte{0}) == 2 && utf8.Valid(tok[at:]) {
			// No output may depend on the password's bytes: the same token
			// with another password of its length renders the same. (Looking
			// for the password in the outputs instead met it spelled by the
			// other fields, the layout's offsets and JSON's escapes.) A
			// password that is not UTF-8 is a problem, by design, so the
			// passwords compared are UTF-8.
			other := bytes.Clone(tok)
			for i := at; i < len(other); i++ {
				other[i] = map[bool]byte{true: 'y', false: 'x'}[other[i] == 'x']
			}
			oframe := rawToken(string(other))
			om := saslReg.Decode(oframe, Options{Direction: dir, RawToken: true, Mechanism: mech})
			render := func(m *Message, frame []byte) [3][]byte {
				return [3][]byte{AppendText(nil, m.Tree), AppendJSON(nil, m), AppendHexDump(nil, frame, m.Tree)}
			}
			got, want := render(m, frame), render(om, oframe)
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("output %d depends on the password %q:\n%s\n%s", i, tok[at:], got[i], want[i])
				}
			}
		}
	})
}

// TestSASLWithoutDefinitions: a registry without the SASL definitions
// (the ACL ones only) shows SaslAuthenticate's body opaque, and hidden: it
// may be a PLAIN token.
func TestSASLWithoutDefinitions(t *testing.T) {
	frame := saslAuthReq(2, 2, "\x00alice\x00"+samplePassword)
	aclOnly := loadBuiltin("defs/*Acls*.json")
	for _, show := range []bool{false, true} {
		m := aclOnly.Decode(frame, Options{ShowSecrets: show})
		body := m.Tree.Child("body")
		if body == nil || body.Size != 25 {
			t.Fatalf("no 25-byte opaque body: %s", AppendText(nil, m.Tree))
		}
		wantDisp, wantSecrets := "<redacted, 25 bytes> (not dissected)", "[{28 25}]"
		if show {
			wantDisp, wantSecrets = "25 bytes (not dissected)", "[]"
		}
		if got := body.Display(); got != wantDisp {
			t.Errorf("show=%v: body %q, want %q", show, got, wantDisp)
		}
		if got := fmt.Sprint(m.SecretRanges()); got != wantSecrets {
			t.Errorf("show=%v: secrets %s, want %s", show, got, wantSecrets)
		}
		layout := AppendHexDump(nil, frame, m.Tree)
		if got := bytes.Contains(layout, []byte(samplePassword[:8])); got != show {
			t.Errorf("show=%v: password in the layout=%v:\n%s", show, got, layout)
		}
	}
	// The response is not hidden: it holds no credential.
	resp := aclOnly.Decode(saslAuthResp(2, 2, 0, nil, ""), Options{Direction: Response, APIKey: 36, APIVersion: 2})
	if b := resp.Tree.Child("body"); b == nil || b.Redacted() {
		t.Errorf("response body: %+v", b)
	}
}

func TestSASLSummaries(t *testing.T) {
	for _, c := range []struct {
		m    *Message
		want string
	}{
		{saslReg.Decode(saslHandshakeResp(1, 1, 0), Options{Direction: Response, APIKey: 17, APIVersion: 1}), "SaslHandshake v1 response corr=1: NONE"},
		{saslReg.Decode(saslHandshakeResp(0, 1, 0, "PLAIN", "GSSAPI"), Options{Direction: Response, APIKey: 17, APIVersion: 0}), "SaslHandshake v0 response corr=1: NONE, enabled: PLAIN, GSSAPI"},
		{saslReg.Decode(saslHandshakeReq(1, 4, "OAUTHBEARER\x1b[2J"), Options{}), `SaslHandshake v1 request corr=4: mechanism OAUTHBEARER\x1b[2J`},
		{saslReg.Decode(saslAuthReq(1, 2, "\x00ev\x1bil\x00pw"), Options{Mechanism: "PLAIN"}), `SaslAuthenticate v1 request corr=2: PLAIN user ev\x1bil`},
		{saslReg.Decode(saslAuthReq(1, 2, ""), Options{Mechanism: "PLAIN"}), "SaslAuthenticate v1 request corr=2: empty token"},
		{saslReg.Decode(rawToken("\x00alice\x00"+samplePassword), Options{Direction: Request, RawToken: true}), "SASL token request: PLAIN user alice"},
		{saslReg.Decode(rawToken("\x01\x02"), Options{Direction: Response, RawToken: true}), "SASL token response: SASL mechanism unknown, <redacted, 2 bytes>"},
		{saslReg.Decode(rawToken("\x00a\x00b\x00c"), Options{Direction: Request, RawToken: true, Mechanism: "PLAIN"}), "SASL token request: not a valid PLAIN token, <redacted, 6 bytes> [malformed: PLAIN token has 3 NUL separators, not 2]"},
	} {
		if c.m.Summary != c.want {
			t.Errorf("summary\n got %s\nwant %s", c.m.Summary, c.want)
		}
	}
}
