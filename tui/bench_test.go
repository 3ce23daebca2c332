package tui

import (
	"testing"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// BenchmarkHexMoveBigTree: a cursor move in the hex pane of a message of
// 200,000 fields, all expanded, selects the field under it.
func BenchmarkHexMoveBigTree(b *testing.B) {
	raw := testkit.EmptyGroups(200_000, 1)
	reg := dissect.Builtin()
	load := func(int) (*dissect.Message, error) { return reg.Decode(raw, dissect.Options{}), nil }
	msg, _ := load(0)
	m := newTestModel(b, load, []Entry{entryOf(0, t0, "10.0.0.1:1", "10.0.0.2:9092", msg, -1)}, 120, 40)
	m = send(m, keys("tab", "e", "tab")...) // to the tree, every field open, to the hex pane
	if len(m.tree.rows) < 200_000 {
		b.Fatalf("%d rows", len(m.tree.rows))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m = send(m, keys("l")...)
	}
}
