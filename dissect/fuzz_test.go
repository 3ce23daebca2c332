package dissect

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to DecodeRequest and, as a response to
// CreateAcls or DeleteAcls v0-3 (sel picks which), to DecodeResponse. The
// invariants hold for any input: no panic, every node inside its parent
// and the frame, siblings in order, valid JSON, and text without control
// bytes. The seeds are every sample frame and the reference frames, so the
// fuzzer starts from well-formed traffic of every version.
func FuzzDecode(f *testing.F) {
	for _, s := range sampleFrames(0) {
		f.Add(s.frame, fuzzSel(s))
	}
	f.Add(readTestdata(f, "createacls-v3-request.bin"), uint8(0))
	f.Add(readTestdata(f, "createacls-v3-response.bin"), uint8(1+3))
	// One Decoder lives across inputs, as in a capture: whatever it decoded
	// before must not leak into the next tree.
	reused := Builtin().NewDecoder()
	f.Fuzz(func(t *testing.T, frame []byte, sel uint8) {
		frame = frame[:len(frame):len(frame)] // a read past the end must panic, not see spare capacity
		m := Builtin().Decode(frame, Options{})
		checkFuzzed(t, m, frame)
		sameAsReused(t, m, reused.Decode(frame, Options{}))
		key, ver := int16(30+(sel>>2)&1), int16(sel&3)
		m = Builtin().Decode(frame, Options{Direction: Response, APIKey: key, APIVersion: ver})
		checkFuzzed(t, m, frame)
		sameAsReused(t, m, reused.Decode(frame, Options{Direction: Response, APIKey: key, APIVersion: ver}))
		// The same bytes as the kept head of a longer frame: nodes may reach
		// past them, but nothing may panic and the JSON stays valid.
		for _, h := range []*Message{reused.Decode(frame, Options{Head: true}), reused.Decode(frame, Options{Direction: Response, APIKey: key, APIVersion: ver, Head: true})} {
			if err := checkRendered(h); err != nil {
				t.Fatalf("head decode: %v", err)
			}
			_ = AppendHexDump(nil, frame, h.Tree)
		}
	})
}

func sameAsReused(t *testing.T, fresh, reused *Message) {
	t.Helper()
	if a, b := AppendJSON(nil, fresh), AppendJSON(nil, reused); !bytes.Equal(a, b) {
		t.Fatalf("a reused Decoder differs from a fresh decode:\n%s\n%s", a, b)
	}
}

// fuzzSel encodes the response a seed frame is decoded as.
func fuzzSel(s seedFrame) uint8 { return uint8(s.key-30)<<2 | uint8(s.ver) }

func checkFuzzed(t *testing.T, m *Message, frame []byte) {
	t.Helper()
	if err := checkShape(m, frame, false); err != nil {
		t.Fatalf("%s: %v", m.Summary, err)
	}
	if err := checkRendered(m); err != nil {
		t.Fatalf("%s: %v", m.Summary, err)
	}
	for _, c := range []byte(m.Summary) {
		if c < 0x20 || c == 0x7f {
			t.Fatalf("summary has byte %#x: %q", c, m.Summary)
		}
	}
	_ = AppendHexDump(nil, frame, m.Tree)
}
