package dissect

import (
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestNodeBudgetFields: the tree of any message stops at Options.MaxNodes,
// in an array of structs or strings as in tagged fields: the bytes past it
// are one node, to the end of the message, with the one problem, and a
// budget that fits decodes the same message whole.
func TestNodeBudgetFields(t *testing.T) {
	tags := kmsg.NewPtrDescribeGroupsRequest()
	tags.Version = 5
	for i := range 2000 {
		tags.UnknownTags.Set(uint32(100+i), []byte{1}) // a tag, a size, a byte: four nodes
	}
	for _, c := range []struct {
		name  string
		frame []byte
	}{
		{"array", testkit.EmptyGroups(5000, 3)},
		{"tagged fields", testkit.KmsgRequest(tags, 3, testkit.Ptr("c"))},
	} {
		m := Builtin().Decode(c.frame, Options{})
		if len(m.Problems) > 0 {
			t.Fatalf("%s, default budget: %v", c.name, m.Problems)
		}
		m = Builtin().Decode(c.frame, Options{MaxNodes: 1000})
		var nodes int
		var rest *Node
		m.Tree.Walk(func(n *Node, _ int) {
			nodes++
			if n.Name == "unknown" {
				rest = n
			}
		})
		if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "fields from here on not dissected") ||
			!strings.Contains(m.Problems[0].Message, "--max-nodes") {
			t.Fatalf("%s: problems %v", c.name, m.Problems)
		}
		if nodes > 1000+16 { // the budget is checked before each element, of a few nodes
			t.Errorf("%s: %d nodes", c.name, nodes)
		}
		if rest == nil || rest.Offset != m.Problems[0].Offset || rest.Offset+rest.Size != len(c.frame) {
			t.Errorf("%s: rest %+v, problem at %d, frame of %d bytes", c.name, rest, m.Problems[0].Offset, len(c.frame))
		}
	}
}
