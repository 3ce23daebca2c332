package dissect

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A reused Decoder must give exactly what a fresh decode gives, whatever
// came before it: big frames then small ones, broken ones in between.
func TestDecoderReuseMatchesFreshDecodes(t *testing.T) {
	frames := append(sampleFrames(140), sampleFrames(0)...)
	seed := readTestdata(t, "createacls-v3-request.bin")
	frames = append(frames,
		seedFrame{"seed cut", true, 30, 3, seed[:19]},
		seedFrame{"seed", true, 30, 3, seed},
		seedFrame{"unknown key", true, 0, 0, []byte{0, 0, 0, 10, 3, 231, 0, 1, 0, 0, 0, 9, 0, 0}},
		// Thousands of records wait on the decoder's stack at once.
		seedFrame{"Produce, 3000 records", true, 0, 9, produce(9, batch(t, batchSpec{records: manyRecords(3000)}))},
		seedFrame{"Produce, 3 records", true, 0, 9, produce(9, batch(t, batchSpec{records: manyRecords(3)}))})
	x := Builtin().NewDecoder()
	for round := 0; round < 2; round++ {
		for _, f := range frames {
			fresh := f.decode()
			var reused *Message
			if f.request {
				reused = x.Decode(f.frame, Options{})
			} else {
				reused = x.Decode(f.frame, Options{Direction: Response, APIKey: f.key, APIVersion: f.ver})
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
	x.Decode(seed, Options{})
	if n := testing.AllocsPerRun(100, func() { x.Decode(seed, Options{}) }); n > 2 {
		t.Errorf("%v allocations per seed decode, want at most 2", n)
	}
	big := sampleFrames(20)[3] // DeleteAcls v0 response with 22 matching ACLs
	x.Decode(big.frame, Options{Direction: Response, APIKey: big.key, APIVersion: big.ver})
	fresh := testing.AllocsPerRun(20, func() { big.decode() })
	reused := testing.AllocsPerRun(20, func() { x.Decode(big.frame, Options{Direction: Response, APIKey: big.key, APIVersion: big.ver}) })
	if reused >= fresh {
		t.Errorf("reused decoder allocates %v times, a fresh decode %v", reused, fresh)
	}
	// A batch of thousands of records allocates no more than one of a few:
	// its storage, its stack included, is the decoder's from the last time.
	allocs := func(n int) float64 {
		frame := produce(9, batch(t, batchSpec{records: manyRecords(n)}))
		x.Decode(frame, Options{})
		return testing.AllocsPerRun(10, func() { x.Decode(frame, Options{}) })
	}
	if few, many := allocs(20), allocs(2000); many > few {
		t.Errorf("a reused decoder allocates %v times for 2000 records, %v for 20", many, few)
	}
}

// manyRecords is n records with keys and values and without headers (a
// header key is a string, made anew in each decode).
func manyRecords(n int) []kmsg.Record {
	rs := make([]kmsg.Record, n)
	for i := range rs {
		rs[i] = rec(int32(i), "key-"+strconv.Itoa(i), "value")
	}
	return rs
}

// A capture that skips the body of an API it is not showing in full hands
// over only the head of the frame: that is not a truncated frame.
func TestHeadOnlyDecodes(t *testing.T) {
	// A request of an API without a definition (93, taken out), 10,000
	// bytes of which the first 40 were kept.
	frame := make([]byte, 4+10000)
	copy(frame, []byte{0, 0, 0x27, 0x10, 0, 93, 0, 0, 0, 0, 0, 5, 0, 3, 'c', 'l', 'i', 0})
	x := undefined93().NewDecoder()
	m := x.Decode(frame[:40], Options{Head: true})
	if len(m.Problems) != 0 || m.Tree.Size != len(frame) {
		t.Fatalf("problems %v, root size %d", m.Problems, m.Tree.Size)
	}
	body := m.Tree.Child("body")
	if body == nil || body.Offset != 18 || body.Size != len(frame)-18 {
		t.Fatalf("body %+v, want it to cover [18, %d)", body, len(frame))
	}
	if m.Tree.Child("not_kept") != nil {
		t.Error("the opaque body already covers the bytes not kept")
	}

	// A CreateAcls head cut inside its second creation: the walk stops
	// there quietly, and the rest is one node.
	full := sampleFrames(3)[0].frame // CreateAcls v0 request
	m = x.Decode(full[:60], Options{Head: true})
	if len(m.Problems) != 0 {
		t.Fatalf("problems %v", m.Problems)
	}
	nk := m.Tree.Child("not_kept")
	if nk == nil || nk.Offset != 60 || nk.Offset+nk.Size != len(full) || m.Tree.Size != len(full) {
		t.Fatalf("not_kept %+v, root size %d, frame %d", nk, m.Tree.Size, len(full))
	}
	if c := m.Tree.Find("CreateAclsRequest", "Creations", "AclCreation[0]", "ResourceType"); c == nil || !c.HasValue() {
		t.Error("fields inside the kept bytes are decoded")
	}

	// Kept bytes that hold the whole frame decode as usual, and a length
	// beyond even the bytes not kept is still a problem.
	if m := x.Decode(full, Options{Head: true}); len(m.Problems) != 0 || m.Tree.Child("not_kept") != nil || !bytes.Equal(AppendJSON(nil, m), AppendJSON(nil, Builtin().Decode(full, Options{}))) {
		t.Error("a complete head decodes differently from DecodeRequest")
	}
	bad := []byte{0, 0, 0, 0x20, 0, 30, 0, 1, 0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0xff, 0xff}
	if m := x.Decode(bad, Options{Head: true}); len(m.Problems) != 1 || m.Problems[0].Offset != 14 {
		t.Errorf("an array count no frame could hold: problems %v", m.Problems)
	}
}
