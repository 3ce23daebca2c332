package tui

import (
	"net/netip"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/filter"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// The explorer's filter reads forwarded as the CLI does: true for an
// Envelope carrying a decoded forwarded message, and the forwarded
// message's body fields by name.
func TestFilterForwardedEnvelope(t *testing.T) {
	r := kmsg.NewPtrCreateACLsRequest()
	r.SetVersion(3)
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceName, c.Principal, c.Host = "orders", "User:bob", "*"
	r.Creations = append(r.Creations, c)
	env := dissect.Builtin().Decode(testkit.EnvelopeRequest(r, 7, nil, "User", "alice", netip.MustParseAddr("10.0.0.5"), 3, nil), dissect.Options{})
	plain := dissect.Builtin().Decode(testkit.KmsgRequest(r, 7, nil), dissect.Options{})
	for expr, want := range map[string][2]bool{
		`forwarded`:                            {true, false},
		`Principal == "User:bob"`:              {true, true},
		`forwarded && Principal == "User:bob"`: {true, false},
		`forwarded.principal == "User:alice"`:  {true, false},
		`forwarded.client == 10.0.0.5`:         {true, false},
		`forwarded.client == 10.0.0.6`:         {false, false},
	} {
		f, err := filter.Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range []*dissect.Message{env, plain} {
			e := EntryOf(m)
			if got := f.Match(&entryFields{e: &e, load: func(int) *dissect.Message { return m }}); got != want[i] {
				t.Errorf("%s on %s: %v", expr, m.APIName, got)
			}
		}
	}
}
