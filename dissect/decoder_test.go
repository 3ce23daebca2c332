package dissect

import (
	"bytes"
	"testing"
)

// A reused Decoder must give exactly what a fresh decode gives, whatever
// came before it: big frames then small ones, broken ones in between.
func TestDecoderReuseMatchesFreshDecodes(t *testing.T) {
	frames := append(sampleFrames(140), sampleFrames(0)...)
	seed := readTestdata(t, "createacls-v3-request.bin")
	frames = append(frames,
		seedFrame{"seed cut", true, 30, 3, seed[:19]},
		seedFrame{"seed", true, 30, 3, seed},
		seedFrame{"unknown key", true, 0, 0, []byte{0, 0, 0, 10, 3, 231, 0, 1, 0, 0, 0, 9, 0, 0}})
	x := Builtin().NewDecoder()
	for round := 0; round < 2; round++ {
		for _, f := range frames {
			fresh := f.decode()
			var reused *Message
			if f.request {
				reused = x.Request(f.frame)
			} else {
				reused = x.Response(f.frame, f.key, f.ver)
			}
			if a, b := AppendJSON(nil, fresh), AppendJSON(nil, reused); !bytes.Equal(a, b) {
				t.Fatalf("round %d, %s: reused decoder differs\nfresh  %s\nreused %s", round, f.name, a, b)
			}
			if a, b := AppendText(nil, fresh.Tree), AppendText(nil, reused.Tree); !bytes.Equal(a, b) {
				t.Fatalf("round %d, %s: text differs", round, f.name)
			}
		}
	}
}

// After warming up on a frame, decoding it again allocates only the
// summary line and the strings read from the wire, never the tree.
func TestDecoderSteadyStateAllocations(t *testing.T) {
	seed := readTestdata(t, "createacls-v3-request.bin")
	x := Builtin().NewDecoder()
	x.Request(seed)
	if n := testing.AllocsPerRun(100, func() { x.Request(seed) }); n > 2 {
		t.Errorf("%v allocations per seed decode, want at most 2", n)
	}
	big := sampleFrames(20)[3] // DeleteAcls v0 response with 22 matching ACLs
	x.Response(big.frame, big.key, big.ver)
	fresh := testing.AllocsPerRun(20, func() { big.decode() })
	reused := testing.AllocsPerRun(20, func() { x.Response(big.frame, big.key, big.ver) })
	if reused >= fresh {
		t.Errorf("reused decoder allocates %v times, a fresh decode %v", reused, fresh)
	}
}
