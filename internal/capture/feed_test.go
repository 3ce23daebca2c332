package capture

import (
	"testing"

	"github.com/kdissect/kdissect/reassembly"
)

// A dissector that gives each batch back before the next one is needed
// keeps the reader on one batch; one that holds them makes up to
// feedBatches, and then the reader fills those given back.
func TestFeedMakesBatchesWhenNeeded(t *testing.T) {
	fill := func(f *feed) *batch {
		for range batchItems {
			f.emit(&reassembly.Frame{Data: []byte{0, 0, 0, 4, 1, 2, 3, 4}, Packets: []int{1}})
		}
		return <-f.full
	}
	f := newFeed(false)
	for range 10 {
		b := fill(f)
		if len(b.items) != batchItems || len(b.buf) != batchItems*8 {
			t.Fatalf("batch holds %d items, %d bytes; want %d, %d", len(b.items), len(b.buf), batchItems, batchItems*8)
		}
		b.reset()
		f.free <- b
	}
	if f.made != 1 {
		t.Fatalf("a dissector keeping up made %d batches, want 1", f.made)
	}

	f = newFeed(false)
	held := map[*batch]bool{}
	for range feedBatches {
		held[fill(f)] = true
	}
	if f.made != feedBatches || len(held) != feedBatches {
		t.Fatalf("%d batches held made %d distinct of %d, want %d", feedBatches, len(held), f.made, feedBatches)
	}
	for b := range held {
		b.reset()
		f.free <- b
	}
	b := fill(f)
	if !held[b] || f.made != feedBatches {
		t.Fatalf("after %d batches the reader made a new one (made %d)", feedBatches, f.made)
	}
}
