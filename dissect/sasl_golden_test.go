package dissect

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// TestGoldenSASL renders every SASL sample as TestGolden renders the ACL
// messages (summary, problems, text tree, byte layout), with the secret
// ranges, into testdata/golden/sasl-*.golden: a person reads them to judge
// the dissection and to see that nothing secret shows.
func TestGoldenSASL(t *testing.T) {
	for _, s := range saslSampleFrames() {
		name := "sasl-" + strings.ReplaceAll(s.name, " ", "-")
		t.Run(name, func(t *testing.T) {
			m := s.decodeSASL()
			if err := checkShape(m, s.frame, false); err != nil {
				t.Fatal(err)
			}
			if err := checkRendered(m); err != nil {
				t.Fatal(err)
			}
			var b []byte
			b = append(b, "mechanism: "...)
			b = append(b, s.mech...)
			b = append(b, "\nsummary: "...)
			b = append(b, m.Summary...)
			b = append(b, '\n')
			for _, p := range m.Problems {
				b = appendProblem(b, p)
				b = append(b, '\n')
			}
			for _, r := range m.SecretRanges() {
				b = append(b, "secret: "...)
				b = appendHexOffset(b, r.Offset)
				b = append(b, ", "...)
				b = append(b, itoa(int64(r.Size))...)
				b = append(b, "B\n"...)
			}
			b = append(b, '\n')
			b = AppendText(b, m.Tree)
			b = append(b, '\n')
			b = AppendHexDump(b, s.frame, m.Tree)
			testkit.Golden(t, filepath.Join("testdata", "golden", name+".golden"), b)
		})
	}
}
