package dissect

import (
	"testing"

	"github.com/kdissect/kdissect/reassembly"
)

// KafkaFraming uses no reassembly type, so only the compiler can say that
// it still is what the framer asks for.
var _ reassembly.FrameRules = KafkaFraming{}

func TestKafkaFraming(t *testing.T) {
	k := KafkaFraming{MaxFrame: 1 << 20}
	// CreateAcls v1, correlation id 0x01020304, client id "ab".
	req := []byte{0, 0, 0, 12, 0, 30, 0, 1, 1, 2, 3, 4, 0, 2, 'a', 'b'}
	if got := k.Size(req); got != 12 {
		t.Errorf("Size = %d, want 12", got)
	}
	if got := k.Size([]byte{0xff, 0xff, 0xff, 0xfe}); got != -2 {
		t.Errorf("Size of a negative prefix = %d, want -2", got)
	}
	if k.PrefixLen() != 4 || k.MinSize(true, false) != 8 || k.MinSize(false, false) != 4 ||
		k.MinSize(true, true) != 4 || k.MinSize(false, true) != 0 {
		t.Errorf("PrefixLen, MinSize = %d %d %d %d %d, want 4 8 4 4 0", k.PrefixLen(),
			k.MinSize(true, false), k.MinSize(false, false), k.MinSize(true, true), k.MinSize(false, true))
	}
	if !k.PlausibleRequest(req) {
		t.Error("a CreateAcls v1 head is not plausible")
	}
	if (KafkaFraming{MaxFrame: 11}).PlausibleRequest(req) {
		t.Error("a head larger than MaxFrame is plausible")
	}
	// Cut before client_id's length, a head is not judged.
	if k.PlausibleRequest(req[:13]) || !k.PlausibleRequest(req[:14]) {
		t.Error("a head is judged on fewer than 14 bytes, or not on 14")
	}
	if key, ok := k.Key(true, req); !ok || key != 0x01020304 {
		t.Errorf("request Key = %#x %v, want 0x1020304 true", key, ok)
	}
	if _, ok := k.Key(true, req[:11]); ok {
		t.Error("request Key of 11 bytes is ok")
	}
	resp := []byte{0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff}
	if key, ok := k.Key(false, resp); !ok || key != 0xffffffff {
		t.Errorf("response Key = %#x %v, want 0xffffffff true", key, ok)
	}
	if _, ok := k.Key(false, resp[:7]); ok {
		t.Error("response Key of 7 bytes is ok")
	}
}

// Keep keeps what a session decodes: wanted APIs with a definition (for
// the request and the response apart), SASL always, and after a
// SaslHandshake v0 every frame (its raw tokens).
func TestKafkaFramingKeep(t *testing.T) {
	head := func(key, ver int16) []byte {
		return []byte{0, 0, 0, 40, byte(key >> 8), byte(key), byte(ver >> 8), byte(ver), 0, 0, 0, 7, 0xff, 0xff}
	}
	// A registry of the ACL and SASL APIs, and DescribeAcls' request
	// without its response, whatever the built-in registry defines.
	all := NewRegistry().AddSASL()
	reg := &Registry{req: map[int16]*defSlot{}, resp: map[int16]*defSlot{}}
	for _, k := range []int16{17, 29, 30, 31, 36} {
		reg.req[k] = all.req[k]
		if k != 29 {
			reg.resp[k] = all.resp[k]
		}
	}
	if !reg.HasDefinition(29, true) || reg.HasDefinition(29, false) || reg.HasDefinition(0, true) {
		t.Fatal("the test's registry is not as it says")
	}
	acl := func(key int16) bool { return key == 30 || key == 31 || key == 29 }
	type keep struct{ body, response, all bool }
	for _, c := range []struct {
		name string
		k    KafkaFraming
		head []byte
		want keep
	}{
		{"CreateAcls, defined and wanted", KafkaFraming{Wants: acl, Registry: reg}, head(30, 3), keep{true, true, false}},
		{"CreateAcls, not wanted", KafkaFraming{Wants: func(int16) bool { return false }, Registry: reg}, head(30, 3), keep{}},
		{"Produce, no definition", KafkaFraming{Registry: reg}, head(0, 9), keep{}},
		{"DescribeAcls, a request definition only", KafkaFraming{Wants: acl, Registry: reg}, head(29, 3), keep{true, false, false}},
		{"Produce, no registry", KafkaFraming{}, head(0, 9), keep{true, true, false}},
		{"Produce, wanted, no registry", KafkaFraming{Wants: acl}, head(0, 9), keep{}},
		{"SaslAuthenticate, not wanted", KafkaFraming{Wants: acl, Registry: reg}, head(36, 2), keep{true, true, false}},
		{"SaslHandshake v1", KafkaFraming{Wants: acl, Registry: reg}, head(17, 1), keep{true, true, false}},
		{"SaslHandshake v0: raw tokens follow", KafkaFraming{Wants: acl, Registry: reg}, head(17, 0), keep{true, true, true}},
		{"too short to name its API", KafkaFraming{Wants: acl, Registry: reg}, head(0, 9)[:7], keep{true, true, false}},
	} {
		var got keep
		got.body, got.response, got.all = c.k.Keep(c.head)
		if got != c.want {
			t.Errorf("%s: Keep = %+v, want %+v", c.name, got, c.want)
		}
	}
}

// A session's rules follow what it hands out, as set when they are built.
func TestSessionFraming(t *testing.T) {
	s := NewSession[string](NewRegistry(), nil)
	s.Wants = func(key int16) bool { return key == 31 }
	k := s.Framing(1000)
	if k.MaxFrame != 1000 || k.Registry == nil {
		t.Fatalf("Framing = %+v", k)
	}
	h30 := []byte{0, 0, 0, 40, 0, 30, 0, 3, 0, 0, 0, 7}
	h31 := []byte{0, 0, 0, 40, 0, 31, 0, 3, 0, 0, 0, 7}
	if body, resp, _ := k.Keep(h30); body || resp {
		t.Error("keeps CreateAcls, which the session does not hand out")
	}
	if body, resp, _ := k.Keep(h31); !body || !resp {
		t.Error("does not keep DeleteAcls, which the session hands out")
	}
}
