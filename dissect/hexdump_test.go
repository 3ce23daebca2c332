package dissect

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestHexRowsNames: each row of the byte layout names, in the leaves'
// order, every leaf that holds one of its bytes. The leaves here overlap,
// span rows, end at row boundaries and come out of offset order; the names
// are checked against the definition, row by row.
func TestHexRowsNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, 700)
	for round := 0; round < 50; round++ {
		var leaves []*Node
		for i := 0; i < 1+rng.IntN(60); i++ {
			off := rng.IntN(len(raw) + 20)
			size := 1 + rng.IntN(40)
			if rng.IntN(8) == 0 {
				size = 16 * (1 + rng.IntN(5)) // ends on a row's boundary
				off -= off % 16
			}
			leaves = append(leaves, &Node{Name: string(rune('a'+i%26)) + strings.Repeat("x", i/26), Offset: off, Size: size})
		}
		lines := strings.Split(strings.TrimSuffix(string(appendHexRows(nil, raw, leaves, nil)), "\n"), "\n")
		if len(lines) != (len(raw)+15)/16 {
			t.Fatalf("%d rows", len(lines))
		}
		for r, line := range lines {
			var want []string
			for _, n := range leaves {
				if n.Offset < min(r*16+16, len(raw)) && n.Offset+n.Size > r*16 {
					want = append(want, n.Name)
				}
			}
			got := strings.TrimSpace(line[len("0000  ")+16*3+1+1+16:])
			if w := strings.Join(want, ", "); got != w {
				t.Fatalf("round %d row %d: %q, want %q", round, r, got, w)
			}
		}
	}
}

// TestLayoutSourcesNamed: with many compressed batches, each source's
// block names the records of that source and none of another's.
func TestLayoutSourcesNamed(t *testing.T) {
	var raw []byte
	const batches = 40
	for i := 0; i < batches; i++ {
		b := batch(t, batchSpec{attrs: codecGzip, base: int64(i), records: []kmsg.Record{rec(0, "k", "v")}})
		raw = append(raw, b...)
	}
	m := Builtin().Decode(produce(9, raw), Options{})
	if len(m.Problems) > 0 || len(m.Sources) != batches {
		t.Fatalf("%d sources, problems %v", len(m.Sources), m.Problems)
	}
	out := string(AppendLayout(nil, m))
	blocks := strings.Split(out, "\nsource #")
	if len(blocks) != batches+1 {
		t.Fatalf("%d blocks", len(blocks))
	}
	for _, b := range blocks[1:] {
		// One record of 9 bytes on one row: its length, attributes,
		// deltas, key, value and the headers' count (a "length" too).
		if !strings.HasSuffix(b, "  length, attributes, timestamp_delta, offset_delta, key, value, length\n") &&
			!strings.HasSuffix(b, "  length, attributes, timestamp_delta, offset_delta, key, value, length") {
			t.Fatalf("block:\n%s", b)
		}
		if strings.Count(b, "\n") > 2 {
			t.Fatalf("block of more than one row:\n%s", b)
		}
	}
	if strings.Contains(blocks[0], "timestamp_delta") || !strings.Contains(blocks[0], "last_offset_delta") {
		t.Errorf("the frame's block names fields of a decompressed source, or not its own:\n%s", blocks[0])
	}
}

// BenchmarkLayoutManyFields: the byte layout of a frame of a plain batch of
// 100,000 minimal records, some 800,000 fields.
func BenchmarkLayoutManyFields(b *testing.B) {
	one := encodeRecord(kmsg.Record{})
	bt := batch(b, batchSpec{payload: bytes.Repeat(one, 100_000)})
	binary.BigEndian.PutUint32(bt[57:], 100_000)
	fixCRC(bt)
	m := Builtin().Decode(produce(9, bt), Options{})
	var dst []byte
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst = AppendLayout(dst[:0], m)
	}
	b.SetBytes(int64(len(m.Raw)))
}
