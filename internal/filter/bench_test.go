package filter

import (
	"os"
	"testing"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
)

// benchRecord is the seed CreateAcls v3 request as a run hands it out.
func benchRecord(b *testing.B) *capture.Record {
	raw, err := os.ReadFile("../../testdata/frames/createacls-v3-request.bin")
	if err != nil {
		b.Fatal(err)
	}
	m := dissect.Builtin().Decode(raw, dissect.Options{})
	return &capture.Record{Kind: capture.KindMessage, Message: m}
}

// The cost of a filter on a decoded message: what -Y adds per message.
func BenchmarkRecord(b *testing.B) {
	r := benchRecord(b)
	for _, expr := range []string{`api == "CreateAcls"`, `api == "Produce"`, `Principal contains "alice"`,
		`api == "CreateAcls" && principal == "User:alice" || latency_us > 100000`} {
		f, err := Compile(expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.Record(r)
			}
		})
	}
}

// A header-field filter allocates nothing per message.
func TestRecordDoesNotAllocate(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/frames/createacls-v3-request.bin")
	if err != nil {
		t.Fatal(err)
	}
	r := &capture.Record{Kind: capture.KindMessage, Message: dissect.Builtin().Decode(raw, dissect.Options{})}
	for _, expr := range []string{`api == "CreateAcls" && direction == "request"`, `ResourceName matches "^orders" || Principal == "" && Operation == "UNKNOWN"`} {
		f, _ := Compile(expr)
		if !f.Record(r) {
			t.Fatalf("%s does not match the seed request", expr)
		}
		if n := testing.AllocsPerRun(100, func() { f.Record(r) }); n != 0 {
			t.Errorf("%s: %.0f allocations a message", expr, n)
		}
	}
}
