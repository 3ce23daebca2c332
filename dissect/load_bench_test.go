package dissect

import (
	"encoding/binary"
	"testing"
)

// BenchmarkLoadBuiltin is what the definitions cost every process at
// start-up: they are filed unparsed (see defSlot).
func BenchmarkLoadBuiltin(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if r := loadBuiltin("defs/*.json"); len(r.req) == 0 {
			b.Fatal("no definitions")
		}
	}
}

// BenchmarkParseBuiltin is what parsing every definition costs, as a
// run that decodes all 95 APIs pays by the end.
func BenchmarkParseBuiltin(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if len(loadBuiltin("defs/*.json").Defs()) == 0 {
			b.Fatal("no definitions")
		}
	}
}

// TestBuiltinSlots: each built-in definition is filed under the API key
// and direction its parse says, and is parsed only when asked for.
func TestBuiltinSlots(t *testing.T) {
	r := loadBuiltin("defs/*.json")
	n := 0
	for dir, m := range map[bool]map[int16]*defSlot{true: r.req, false: r.resp} {
		for key, s := range m {
			if s.def != nil {
				t.Errorf("%s parsed at loading", s.name)
			}
			d := s.get()
			if d.APIKey != key || d.Request != dir {
				t.Errorf("%s filed as key %d request %v; its parse says key %d request %v", s.name, key, dir, d.APIKey, d.Request)
			}
			n++
		}
	}
	if n != 2*int(MaxAPIKey+1) {
		t.Errorf("%d built-in definitions, want %d", n, 2*(MaxAPIKey+1))
	}

	// Decoding a CreateAcls request parses its definition and no other.
	r = loadBuiltin("defs/*.json")
	frame := createAclsV3Request()
	if m := r.Decode(frame, Options{}); m.APIKey != 30 || len(m.Problems) != 0 {
		t.Fatalf("decoded %s with problems %v", m.APIName, m.Problems)
	}
	for dir, m := range map[bool]map[int16]*defSlot{true: r.req, false: r.resp} {
		for key, s := range m {
			if parsed := s.def != nil; parsed != (dir && key == 30) {
				t.Errorf("after decoding a CreateAcls request, %s parsed: %v", s.name, parsed)
			}
		}
	}
}

// createAclsV3Request is a CreateAcls v3 request of one creation, by hand.
func createAclsV3Request() []byte {
	body := []byte{
		0, 30, 0, 3, 0, 0, 0, 7, // key, version, correlation id
		0xff, 0xff, // client id: null
		0,      // header tagged fields
		2,      // one creation
		2,      // ResourceType TOPIC
		2, 't', // ResourceName "t"
		3,                               // PatternType LITERAL
		7, 'U', 's', 'e', 'r', ':', 'a', // Principal (compact: length+1)
		2, '*', // Host
		2, // Operation ALL
		3, // PermissionType ALLOW
		0, // creation tagged fields
		0, // body tagged fields
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}
