package dissect

import "testing"

// BenchmarkLoadBuiltin is what the definitions cost a process at start-up:
// the first decode parses every embedded definition (Builtin is lazy).
func BenchmarkLoadBuiltin(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if r := loadBuiltin("defs/*.json"); len(r.req) == 0 {
			b.Fatal("no definitions")
		}
	}
}
