package dissect

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// Envelope frames are built with kmsg around kmsg-encoded requests and
// responses, the principal written from Kafka's DefaultPrincipalData
// facts by testkit, not by the code under test.

var envClient = netip.MustParseAddr("10.0.0.5")

func envCreateAcls() *kmsg.CreateACLsRequest {
	r := kmsg.NewPtrCreateACLsRequest()
	r.SetVersion(3)
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral
	c.Principal, c.Host = "User:bob", "*"
	c.Operation, c.PermissionType = kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	r.Creations = append(r.Creations, c)
	return r
}

func envCreateAclsResp(code int16) *kmsg.CreateACLsResponse {
	r := kmsg.NewPtrCreateACLsResponse()
	r.SetVersion(3)
	res := kmsg.NewCreateACLsResponseResult()
	res.ErrorCode = code
	r.Results = append(r.Results, res)
	return r
}

// sameTree checks that got is want's tree shifted by delta bytes, field by
// field: names, types, values, displays and sizes.
func sameTree(t *testing.T, path string, got, want *Node, delta int) {
	t.Helper()
	path += "/" + want.Name
	if got == nil {
		t.Errorf("%s: missing", path)
		return
	}
	if got.Name != want.Name || got.Type != want.Type || fmt.Sprint(got.Value()) != fmt.Sprint(want.Value()) ||
		got.Display() != want.Display() || got.Size != want.Size || got.Offset != want.Offset+delta {
		t.Errorf("%s: got %s %s = %v [%d, %d], want %s %s = %v [%d+%d, %d]", path, got.Name, got.Type, got.Value(), got.Offset, got.Size,
			want.Name, want.Type, want.Value(), want.Offset, delta, want.Size)
		return
	}
	if len(got.Children) != len(want.Children) {
		t.Errorf("%s: %d children, want %d", path, len(got.Children), len(want.Children))
		return
	}
	for i := range want.Children {
		sameTree(t, path, got.Children[i], want.Children[i], delta)
	}
}

// sameMessage checks the forwarded message in envelope frame env against
// the standalone decode of its frame: every node but the size prefix,
// offsets moved to where the bytes sit in the envelope.
func sameMessage(t *testing.T, in *Message, standalone *Message, data *Node) {
	t.Helper()
	if in == nil {
		t.Fatal("no inner message")
	}
	if in.APIKey != standalone.APIKey || in.APIVersion != standalone.APIVersion || in.CorrelationID != standalone.CorrelationID || in.Direction != standalone.Direction {
		t.Errorf("inner %s v%d %s corr=%d, want %s v%d %s corr=%d", in.APIName, in.APIVersion, in.Direction, in.CorrelationID,
			standalone.APIName, standalone.APIVersion, standalone.Direction, standalone.CorrelationID)
	}
	start := data.Offset + data.Size - len(data.Bytes)
	if in.Tree.Offset != start || in.Tree.Size != len(data.Bytes) {
		t.Errorf("inner root [%d, %d], want the value bytes [%d, %d]", in.Tree.Offset, in.Tree.Size, start, len(data.Bytes))
	}
	if len(data.Children) != 1 || data.Children[0] != in.Tree {
		t.Errorf("the inner tree is not the only child of %s", data.Name)
	}
	// The standalone frame's size prefix is not forwarded: its bytes move
	// by start-4.
	kids := standalone.Tree.Children[1:]
	if len(in.Tree.Children) != len(kids) {
		t.Fatalf("inner root has %d children, want %d", len(in.Tree.Children), len(kids))
	}
	for i := range kids {
		sameTree(t, "", in.Tree.Children[i], kids[i], start-4)
	}
	if in.Tree.Name != standalone.Tree.Name || in.Tree.Type != standalone.Tree.Type {
		t.Errorf("inner root %s %s, want %s %s", in.Tree.Name, in.Tree.Type, standalone.Tree.Name, standalone.Tree.Type)
	}
}

func TestEnvelopeRequestNested(t *testing.T) {
	inner := envCreateAcls()
	frame := testkit.EnvelopeRequest(inner, 7, testkit.Ptr("adminclient-1"), "User", "alice", envClient, 3, testkit.Ptr("broker-1"))
	m := Builtin().Decode(frame, Options{})
	if err := checkShape(m, frame, true); err != nil {
		t.Fatal(err)
	}
	data := m.Tree.Find("EnvelopeRequest", "RequestData")
	sameMessage(t, m.Inner, Builtin().Decode(testkit.KmsgRequest(inner, 7, testkit.Ptr("adminclient-1")), Options{}), data)
	if data.Redacted() {
		t.Error("RequestData of a CreateAcls is hidden: it holds no secret")
	}
	if got := m.Inner.Tree.Find("RequestHeader", "client_id"); got == nil || got.Str != "adminclient-1" {
		t.Errorf("inner client_id %v", got)
	}
	f := m.Forwarded
	if f == nil || f.Principal != "User:alice" || f.PrincipalType != "User" || f.PrincipalName != "alice" || f.TokenAuthenticated || f.Client != envClient {
		t.Fatalf("forwarded %+v", f)
	}
	p := m.Tree.Find("EnvelopeRequest", "RequestPrincipal")
	for _, w := range []struct {
		name string
		val  any
	}{{"Version", int64(0)}, {"Type", "User"}, {"Name", "alice"}, {"tokenAuthenticated", false}, {"tagged_fields", int64(0)}} {
		if c := p.Child(w.name); c == nil || c.Value() != w.val {
			t.Errorf("RequestPrincipal/%s = %v, want %v", w.name, c, w.val)
		}
	}
	// Version at the value's first byte (after the 1-byte compact length).
	if v := p.Child("Version"); v.Offset != p.Offset+1 || v.Size != 2 {
		t.Errorf("Version [%d, %d], principal at %d", v.Offset, v.Size, p.Offset)
	}
	if a := m.Tree.Find("EnvelopeRequest", "ClientHostAddress"); !strings.Contains(a.Display(), "(10.0.0.5)") {
		t.Errorf("ClientHostAddress shows %q", a.Display())
	}
	want := "Envelope v0 request corr=3: forwarded CreateAcls v3 request corr=7 by User:alice from 10.0.0.5: ALLOW User:bob READ on TOPIC orders (LITERAL) from *"
	inSum := m.Inner.Summary
	if m.Summary != want {
		t.Errorf("summary\n%s\nwant\n%s (inner %q)", m.Summary, want, inSum)
	}
	// Filters and scripts reach the inner body's fields through the tree.
	if n := m.Tree.Find("EnvelopeRequest", "RequestData", "CreateAclsRequest", "CreateAclsRequest", "Creations", "AclCreation[0]", "Principal"); n == nil || n.Str != "User:bob" {
		t.Errorf("inner Principal %v", n)
	}
	if err := checkRendered(m); err != nil {
		t.Error(err)
	}
}

func TestEnvelopeIPv6AndBadAddress(t *testing.T) {
	v6 := netip.MustParseAddr("2001:db8::7")
	m := Builtin().Decode(testkit.EnvelopeRequest(envCreateAcls(), 1, nil, "User", "carol", v6, 2, nil), Options{})
	if m.Forwarded == nil || m.Forwarded.Client != v6 || len(m.Problems) != 0 {
		t.Errorf("forwarded %+v, problems %v", m.Forwarded, m.Problems)
	}
	env := kmsg.NewPtrEnvelopeRequest()
	env.RequestData = testkit.KmsgRequest(envCreateAcls(), 1, nil)[4:]
	env.RequestPrincipal = testkit.PrincipalData("User", "dave", true)
	env.ClientHostAddress = []byte{1, 2, 3, 4, 5}
	frame := testkit.KmsgRequest(env, 2, nil)
	m = Builtin().Decode(frame, Options{})
	a := m.Tree.Find("EnvelopeRequest", "ClientHostAddress")
	if len(m.Problems) != 1 || m.Problems[0].Offset != a.Offset || !strings.Contains(m.Problems[0].Message, "5 bytes") {
		t.Errorf("problems %v, address at %d", m.Problems, a.Offset)
	}
	if m.Forwarded == nil || m.Forwarded.Principal != "User:dave" || !m.Forwarded.TokenAuthenticated || m.Forwarded.Client.IsValid() {
		t.Errorf("forwarded %+v", m.Forwarded)
	}
	if m.Inner == nil || m.Inner.APIKey != 30 {
		t.Error("the inner request is lost with a bad address")
	}
}

// A principal of a version Kafka does not know is read as v0 with a
// problem; one cut short is a problem at its end; tags a builder adds
// are hidden (an OAuth builder puts its bearer token there).
func TestEnvelopePrincipalMalformed(t *testing.T) {
	mk := func(p []byte) (*Message, []byte) {
		env := kmsg.NewPtrEnvelopeRequest()
		env.RequestData = testkit.KmsgRequest(envCreateAcls(), 1, nil)[4:]
		env.RequestPrincipal = p
		env.ClientHostAddress = envClient.AsSlice()
		f := testkit.KmsgRequest(env, 2, nil)
		return Builtin().Decode(f, Options{}), f
	}
	good := testkit.PrincipalData("User", "alice", false)
	v1 := append([]byte{0, 1}, good[2:]...)
	m, _ := mk(v1)
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "version 1") || m.Forwarded == nil || m.Forwarded.Principal != "User:alice" {
		t.Errorf("v1: problems %v forwarded %+v", m.Problems, m.Forwarded)
	}
	m, frame := mk(good[:5])
	p := m.Tree.Find("EnvelopeRequest", "RequestPrincipal")
	if len(m.Problems) == 0 || m.Problems[0].Offset < p.Offset || m.Problems[0].Offset > p.Offset+p.Size {
		t.Errorf("cut principal: problems %v, principal [%d, %d]", m.Problems, p.Offset, p.Size)
	}
	if m.Forwarded == nil || m.Forwarded.Principal != "" || m.Forwarded.Client != envClient {
		t.Errorf("cut principal: forwarded %+v", m.Forwarded)
	}
	if err := checkShape(m, frame, false); err != nil {
		t.Error(err)
	}
	token := "eyJhbGciOiJ-bearer-token"
	tagged := append(append(good[:len(good)-1:len(good)-1], 1, 0, byte(len(token))), token...)
	m, frame = mk(tagged)
	if len(m.Problems) != 0 || m.Forwarded == nil || m.Forwarded.Principal != "User:alice" {
		t.Fatalf("tagged: problems %v forwarded %+v", m.Problems, m.Forwarded)
	}
	if out := append(AppendText(nil, m.Tree), AppendHexDump(nil, frame, m.Tree)...); bytes.Contains(out, []byte(token)) || bytes.Contains(out, []byte(hex.EncodeToString([]byte(token))[:16])) {
		t.Error("a principal's tagged data is shown")
	}
}

func TestEnvelopeResponseNested(t *testing.T) {
	inner := envCreateAclsResp(0)
	frame := testkit.EnvelopeResponse(inner, 7, 3)
	m := Builtin().Decode(frame, Options{Direction: Response, APIKey: 58, APIVersion: 0, Inner: InnerAPI{Known: true, APIKey: 30, APIVersion: 3}})
	if err := checkShape(m, frame, true); err != nil {
		t.Fatal(err)
	}
	std := Builtin().Decode(testkit.KmsgResponse(inner, 7), Options{Direction: Response, APIKey: 30, APIVersion: 3})
	sameMessage(t, m.Inner, std, m.Tree.Find("EnvelopeResponse", "ResponseData"))
	if want := "Envelope v0 response corr=3: forwarded CreateAcls v3 response corr=7: 1 result ok"; m.Summary != want && !strings.HasPrefix(m.Summary, "Envelope v0 response corr=3: forwarded CreateAcls v3 response corr=7") {
		t.Errorf("summary %q", m.Summary)
	}
	if m.Forwarded != nil {
		t.Errorf("a response says who forwarded: %+v", m.Forwarded)
	}

	// Without its request: an ACL response is inferred, another kind is
	// left as hidden bytes with a note.
	m = Builtin().Decode(frame, Options{Direction: Response, APIKey: 58})
	if m.Inner == nil || m.Inner.APIKey != 30 || len(m.Problems) != 0 {
		t.Fatalf("inferred inner %+v problems %v", m.Inner, m.Problems)
	}
	if d := m.Tree.Find("EnvelopeResponse", "ResponseData"); !strings.Contains(d.Display(), "inferred") {
		t.Errorf("inferred inner not marked: %q", d.Display())
	}
	tok := kmsg.NewPtrCreateDelegationTokenResponse()
	tok.SetVersion(3)
	tok.TokenID, tok.HMAC = "tid", []byte(secretHMAC)
	frame = testkit.EnvelopeResponse(tok, 7, 3)
	m = Builtin().Decode(frame, Options{Direction: Response, APIKey: 58})
	d := m.Tree.Find("EnvelopeResponse", "ResponseData")
	if m.Inner != nil || !d.Redacted() || !strings.Contains(d.Display(), "not captured") || len(m.Problems) != 0 {
		t.Errorf("unknown inner: %+v %q problems %v", m.Inner, d.Display(), m.Problems)
	}
	if bytes.Contains(AppendHexDump(nil, frame, m.Tree), []byte(hex.EncodeToString([]byte(secretHMAC))[:8])) {
		t.Error("the HMAC of an undecoded ResponseData shows in the layout")
	}
}

// A forwarded message cut short is a problem at its offset in the
// envelope; the tree keeps what was read, the envelope's other fields
// still decode, and the bytes not read stay hidden.
func TestEnvelopeInnerTruncated(t *testing.T) {
	scram := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations = "alice", 1, 8192
	u.Salt, u.SaltedPassword = []byte(secretSalt), []byte(secretSalted)
	scram.Upsertions = append(scram.Upsertions, u)
	full := testkit.KmsgRequest(scram, 9, nil)[4:]
	for cut := 1; cut < len(full); cut++ {
		env := kmsg.NewPtrEnvelopeRequest()
		env.RequestData = full[:cut]
		env.RequestPrincipal = testkit.PrincipalData("User", "alice", false)
		env.ClientHostAddress = envClient.AsSlice()
		frame := testkit.KmsgRequest(env, 2, nil)
		m := Builtin().Decode(frame, Options{})
		if err := checkShape(m, frame, false); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		data := m.Tree.Find("EnvelopeRequest", "RequestData")
		start := data.Offset + data.Size - len(data.Bytes)
		if len(m.Problems) == 0 {
			t.Fatalf("cut %d: no problem", cut)
		}
		if p := m.Problems[0]; p.Offset < start || p.Offset > start+cut {
			t.Errorf("cut %d: problem %v outside the RequestData bytes [%d, %d]", cut, p, start, start+cut)
		}
		if m.Forwarded == nil || m.Forwarded.Principal != "User:alice" || m.Forwarded.Client != envClient {
			t.Errorf("cut %d: forwarded %+v", cut, m.Forwarded)
		}
		if cut >= 4 && (m.Inner == nil || m.Inner.APIKey != 51) {
			t.Errorf("cut %d: inner %+v", cut, m.Inner)
		}
		out := [][]byte{AppendText(nil, m.Tree), AppendJSON(nil, m), AppendHexDump(nil, frame, m.Tree), []byte(m.Summary)}
		for _, o := range out {
			for _, s := range []string{secretSalt[:8], secretSalted[:8], hex.EncodeToString([]byte(secretSalt))[:12], hex.EncodeToString([]byte(secretSalted))[:12]} {
				if bytes.Contains(o, []byte(s)) {
					t.Fatalf("cut %d: %q shown", cut, s)
				}
			}
		}
	}
}

// An Envelope inside an Envelope is not decoded a second level down;
// every truncation of an envelope frame decodes without a panic.
func TestEnvelopeHostile(t *testing.T) {
	innerEnv := kmsg.NewPtrEnvelopeRequest()
	innerEnv.RequestData = testkit.KmsgRequest(envCreateAcls(), 1, nil)[4:]
	frame := testkit.EnvelopeRequest(innerEnv, 5, nil, "User", "x", envClient, 6, nil)
	m := Builtin().Decode(frame, Options{})
	if m.Inner == nil || m.Inner.APIKey != 58 {
		t.Fatalf("inner %+v", m.Inner)
	}
	if d := m.Inner.Tree.Find("EnvelopeRequest", "RequestData"); d == nil || len(d.Children) != 0 || !strings.Contains(d.Display(), "not decoded") {
		t.Errorf("nested envelope decoded: %v", d)
	}
	good := testkit.EnvelopeRequest(envCreateAcls(), 1, nil, "User", "a", envClient, 2, nil)
	resp := testkit.EnvelopeResponse(envCreateAclsResp(0), 1, 2)
	dec := Builtin().NewDecoder()
	for i := 4; i <= len(good); i++ {
		f := testkit.SetSize(append([]byte(nil), good[:i]...))
		if err := checkShape(dec.Decode(f, Options{}), f, false); err != nil {
			t.Fatalf("request cut at %d: %v", i, err)
		}
	}
	for i := 4; i <= len(resp); i++ {
		f := testkit.SetSize(append([]byte(nil), resp[:i]...))
		if err := checkShape(dec.Decode(f, Options{Direction: Response, APIKey: 58}), f, false); err != nil {
			t.Fatalf("response cut at %d: %v", i, err)
		}
	}
}

// A Session keeps what an Envelope request forwards and decodes its
// response's ResponseData as the forwarded request's response.
func TestEnvelopeSessionMatchesInner(t *testing.T) {
	var got []*Message
	sink := &envSink{keep: func(m *Message) { got = append(got, m) }}
	s := NewSession[string](NewRegistry(), sink)
	s.Hold = true
	s.Frame("", client(1, 0, testkit.EnvelopeRequest(envCreateAcls(), 7, nil, "User", "alice", envClient, 3, nil)))
	s.Frame("", broker(1, 5, testkit.EnvelopeResponse(envCreateAclsResp(0), 7, 3)))
	s.Flush()
	if len(got) != 2 {
		t.Fatalf("%d messages", len(got))
	}
	if in := got[1].Inner; in == nil || in.APIKey != 30 || in.APIVersion != 3 || in.Direction != Response || strings.Contains(got[1].Summary, "inferred") {
		t.Errorf("response inner %+v", in)
	}
	if sink.opts.Inner != (InnerAPI{Known: true, APIKey: 30, APIVersion: 3}) {
		t.Errorf("response options %+v", sink.opts)
	}
}

// envSink keeps summaries and inner keys, as the session's decoder reuses
// its messages.
type envSink struct {
	keep func(*Message)
	opts Options
}

func (s *envSink) Message(_ string, x Exchange, m *Message) {
	c := *m
	if m.Inner != nil {
		in := *m.Inner
		c.Inner = &in
	}
	s.opts = x.Options
	s.keep(&c)
}
func (s *envSink) Unmatched(string, Unmatched)   {}
func (s *envSink) Incomplete(string, Incomplete) {}
func (s *envSink) Event(string)                  {}

// FuzzEnvelope: whatever an Envelope carries, as its request's RequestData
// and principal or as its response's ResponseData, decodes without a
// panic into a tree that keeps the invariants and renders cleanly.
func FuzzEnvelope(f *testing.F) {
	f.Add(testkit.KmsgRequest(envCreateAcls(), 7, nil)[4:], testkit.PrincipalData("User", "a", false), int16(30), int16(3))
	f.Add(testkit.KmsgResponse(envCreateAclsResp(31), 7)[4:], []byte{0, 0, 1}, int16(38), int16(3))
	f.Add([]byte{0, 58, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0, 0x10}, []byte{0, 1, 0xff}, int16(58), int16(0))
	f.Fuzz(func(t *testing.T, data, principal []byte, key, ver int16) {
		env := kmsg.NewPtrEnvelopeRequest()
		env.RequestData, env.RequestPrincipal, env.ClientHostAddress = data, principal, principal
		frame := testkit.KmsgRequest(env, 1, nil)
		resp := kmsg.NewPtrEnvelopeResponse()
		resp.ResponseData = data
		rframe := testkit.KmsgResponse(resp, 1)
		for _, c := range []struct {
			frame []byte
			o     Options
		}{
			{frame, Options{}},
			{rframe, Options{Direction: Response, APIKey: 58, Inner: InnerAPI{Known: true, APIKey: key, APIVersion: ver}}},
			{rframe, Options{Direction: Response, APIKey: 58}},
		} {
			m := Builtin().Decode(c.frame, c.o)
			if err := checkShape(m, c.frame, false); err != nil {
				t.Fatal(err)
			}
			if err := checkRendered(m); err != nil {
				t.Fatal(err)
			}
			if m.Inner != nil {
				if err := checkRendered(m.Inner); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// A reused Decoder carries nothing of one Envelope into the next.
func TestEnvelopeDecoderReuse(t *testing.T) {
	dec := Builtin().NewDecoder()
	m := dec.Decode(testkit.EnvelopeRequest(envCreateAcls(), 1, nil, "User", "alice", envClient, 2, nil), Options{})
	if m.Forwarded == nil || m.Forwarded.Principal != "User:alice" {
		t.Fatalf("forwarded %+v", m.Forwarded)
	}
	env := kmsg.NewPtrEnvelopeRequest()
	env.RequestData = testkit.KmsgRequest(envCreateAcls(), 1, nil)[4:]
	env.ClientHostAddress = []byte{192, 0, 2, 9}
	m = dec.Decode(testkit.KmsgRequest(env, 3, nil), Options{})
	if f := m.Forwarded; f == nil || f.Principal != "" || f.TokenAuthenticated || f.Client != netip.MustParseAddr("192.0.2.9") || m.Inner == nil {
		t.Errorf("after reuse: forwarded %+v", f)
	}
	m = dec.Decode(testkit.KmsgRequest(envCreateAcls(), 4, nil), Options{})
	if m.Inner != nil || m.Forwarded != nil {
		t.Errorf("a CreateAcls after Envelopes: inner %v forwarded %v", m.Inner, m.Forwarded)
	}
}
