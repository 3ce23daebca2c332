package dissect

import (
	"runtime"
	"strings"
	"testing"
)

// TestRecordsBatchHeadersOnly: with Options.BatchHeaders a batch is
// decoded as far as its header, and nothing is decompressed. The proof is
// a bomb of every codec that decompresses to 64 MiB, far past a cap of
// 1 MiB: decoded whole it is a problem; header only, it is no problem,
// makes no source and allocates a few kilobytes, and its records node
// still says how many records the header counts. A corrupted batch is
// still found by its CRC, and a MessageSet wrapper stays compressed bytes.
func TestRecordsBatchHeadersOnly(t *testing.T) {
	const limit = 1 << 20
	zeros := make([]byte, 64<<20)
	small := batch(t, batchSpec{records: sampleRecords()})
	for _, c := range codecCases[1:] {
		t.Run(c.name, func(t *testing.T) {
			bomb := batch(t, batchSpec{attrs: c.codec, xerial: c.xerial, records: sampleRecords()[:2], payload: compress(t, int(c.codec), zeros, c.xerial)})
			frame := produce(9, append(append([]byte(nil), bomb...), small...))
			if m := Builtin().Decode(frame, Options{MaxDecompressed: limit}); len(m.Problems) != 1 {
				t.Fatalf("decoded whole: problems %v, want the bomb's", m.Problems)
			}
			x := Builtin().NewDecoder()
			o := Options{MaxDecompressed: limit, BatchHeaders: true}
			x.Decode(frame, o) // the decoder's storage, grown once
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			m := x.Decode(frame, o)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10 {
				t.Errorf("header only: decoding allocated %d bytes", alloc)
			}
			if len(m.Problems) != 0 || len(m.Sources) != 0 {
				t.Fatalf("header only: problems %v, %d sources", m.Problems, len(m.Sources))
			}
			rn := recordsNode(t, m)
			if len(rn.Children) != 2 {
				t.Fatalf("%d batches", len(rn.Children))
			}
			for i, want := range []int64{2, int64(len(sampleRecords()))} {
				b := rn.Children[i]
				recs := b.Child("records")
				if recs.Int != want || len(recs.Children) != 0 || recs.Offset+recs.Size != b.Offset+b.Size {
					t.Errorf("batch %d: records node %d, %d children, ends at %d of %d", i, recs.Int, len(recs.Children), recs.Offset+recs.Size, b.Offset+b.Size)
				}
				if b.Child("crc").Display() == "" || !strings.Contains(b.Child("crc").Display(), "valid") {
					t.Errorf("batch %d: crc %s", i, b.Child("crc").Display())
				}
			}
			if got := rn.Children[0].Child("records").Display(); !strings.Contains(got, "not dissected") {
				t.Errorf("records display %q", got)
			}
		})
	}
	bad := batch(t, batchSpec{attrs: codecZstd, records: sampleRecords(), badCRC: true})
	if m := Builtin().Decode(produce(9, bad), Options{BatchHeaders: true}); len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "CRC-32C mismatch") {
		t.Errorf("a corrupted batch, header only: problems %v", m.Problems)
	}
	inner := messageV(1, 0, 0, 1700000000000, []byte("k"), []byte("v"))
	wrapper := messageV(1, 0, codecGzip, 1700000000000, nil, compress(t, codecGzip, inner, false))
	m := Builtin().Decode(produce(2, wrapper), Options{BatchHeaders: true})
	if len(m.Problems) != 0 || len(m.Sources) != 0 {
		t.Fatalf("MessageSet wrapper, header only: problems %v, %d sources", m.Problems, len(m.Sources))
	}
	if v := recordsNode(t, m).Children[0].Child("value"); len(v.Children) != 0 || !strings.Contains(v.Display(), "not decompressed") {
		t.Errorf("wrapper value %q with %d children", v.Display(), len(v.Children))
	}
}
