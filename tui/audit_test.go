package tui

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/dissect/audit"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// auditCapture is a CreateAcls v3 exchange (one creation accepted, one
// refused, whose principal is hostile wire text) and a DeleteAcls v1
// request the capture holds no response for.
func auditCapture(t *testing.T) ([]Entry, Loader) {
	t.Helper()
	creq := kmsg.NewPtrCreateACLsRequest()
	creq.Version = 3
	for _, who := range []string{"User:alice", "User:\x1b[31mevil\u202e"} {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral
		c.Principal, c.Host, c.Operation, c.PermissionType = who, "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
		creq.Creations = append(creq.Creations, c)
	}
	cresp := kmsg.NewPtrCreateACLsResponse()
	cresp.Version = 3
	ok, refused := kmsg.NewCreateACLsResponseResult(), kmsg.NewCreateACLsResponseResult()
	refused.ErrorCode = 31
	cresp.Results = []kmsg.CreateACLsResponseResult{ok, refused}
	dreq := kmsg.NewPtrDeleteACLsRequest()
	dreq.Version = 1
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.Operation, f.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	f.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	dreq.Filters = []kmsg.DeleteACLsRequestFilter{f}

	reg := dissect.Builtin()
	kadm := testkit.Ptr("kadm")
	frames := map[int][]byte{1: testkit.KmsgRequest(creq, 7, kadm), 2: testkit.KmsgResponse(cresp, 7), 3: testkit.KmsgRequest(dreq, 8, kadm)}
	load := func(i int) (*dissect.Message, error) {
		switch i {
		case 1, 3:
			return reg.Decode(frames[i], dissect.Options{}), nil
		case 2:
			return reg.Decode(frames[2], dissect.Options{Direction: dissect.Response, APIKey: 30, APIVersion: 3}), nil
		}
		return nil, os.ErrNotExist
	}
	m1, _ := load(1)
	m2, _ := load(2)
	m3, _ := load(3)
	return []Entry{
		entryOf(1, t0, "10.0.0.1:50312", "10.0.0.2:9092", m1, 2),
		entryOf(2, t0.Add(time.Millisecond), "10.0.0.2:9092", "10.0.0.1:50312", m2, 1),
		entryOf(3, t0.Add(2*time.Second), "10.0.0.1:50312", "10.0.0.2:9092", m3, -1),
	}, load
}

func TestAuditView(t *testing.T) {
	entries, load := auditCapture(t)
	m := newTestModel(t, load, entries, 160, 24)
	m = send(m, keys("G", "a")...)
	if !m.audit.open || len(m.audit.rows) != 3 {
		t.Fatalf("a: open %v, %d rows", m.audit.open, len(m.audit.rows))
	}
	lines := screenLines(t, m)
	screen := strings.Join(lines, "\n")
	for _, want := range []string{
		" Security changes  3 rows · enter: go to the request · a or esc closes",
		" #  TIME                 CLIENT          PRINCIPAL  ACTION  BINDING",
		" 1  2024-05-01 12:00:00  10.0.0.1:50312  -          create  ALLOW User:alice WRITE on TOPIC orders",
		` 1  2024-05-01 12:00:00  10.0.0.1:50312  -          create  ALLOW User:\x1b[31mevil\u202e WRITE on TOPIC orders  CLUSTER_AUTHORIZATION_FAILED`,
		" 3  2024-05-01 12:00:02  10.0.0.1:50312  -          delete  ANY (any) ANY on ANY (any) (ANY) from (any)",
		" 3 changes by unknown principals: 1 created, 0 deleted, 1 failed, 1 unanswered",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("audit view lacks %q:\n%s", want, screen)
		}
	}
	if strings.ContainsAny(screen, "\x1b\u202e") {
		t.Errorf("raw wire text on the screen:\n%q", screen)
	}
	// Enter on the DeleteAcls row goes to its request in the list.
	m = send(m, keys("g", "j", "j", "enter")...)
	if m.audit.open || m.selectedIndex() != 3 || m.focus != paneList {
		t.Errorf("enter on row 3: open %v, selected %d, focus %d", m.audit.open, m.selectedIndex(), m.focus)
	}
	// The view keeps its cursor; the first row's request is #1.
	m = send(m, keys("a", "g", "enter")...)
	if m.audit.open || m.selectedIndex() != 1 {
		t.Errorf("enter on row 1: open %v, selected %d", m.audit.open, m.selectedIndex())
	}
	// a and esc close it; keys do not reach the panes meanwhile.
	m = send(m, keys("a", "j", "a")...)
	if m.audit.open || m.selectedIndex() != 1 {
		t.Errorf("a j a: open %v, selected %d", m.audit.open, m.selectedIndex())
	}
	m = send(m, keys("a", "esc")...)
	if m.audit.open {
		t.Error("esc did not close the audit view")
	}
	// A request hidden by the filter is named, not jumped to.
	m = send(m, join(keys("f"), typed("DeleteAcls"), keys("enter", "a", "g", "enter"))...)
	if !m.audit.open || m.notice != "message #1 is hidden by the filter" {
		t.Errorf("hidden request: open %v, notice %q", m.audit.open, m.notice)
	}
}

func TestAuditViewFollowsNewEntries(t *testing.T) {
	entries, load := auditCapture(t)
	m := newTestModel(t, load, entries[:1], 100, 24)
	m = send(m, keys("a")...)
	if len(m.audit.rows) != 2 || m.audit.rows[0].Result != "no_response" {
		t.Fatalf("before the response: %d rows", len(m.audit.rows))
	}
	m = send(m, EntriesMsg(entries[1:]))
	if len(m.audit.rows) != 3 || m.audit.rows[0].Result != "ok" || m.audit.rows[1].Result != "error" {
		t.Errorf("after: %+v", m.audit.rows)
	}
	screenLines(t, m)
	// Narrow screens cut the table, never the frame.
	m = send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	for _, l := range screenLines(t, m)[3:5] {
		if !strings.HasPrefix(l, " 1  12:00:00  -          create  ALLOW User:") {
			t.Errorf("80 columns: %q", l)
		}
	}
}

// The audit view names each change's principal as `kdissect audit` does:
// audit.Principal of the identity the request was seen with, qualified
// when the broker refused it or had not accepted it yet, "-" when the wire
// does not say, wire text escaped.
func TestAuditViewPrincipals(t *testing.T) {
	admin := dissect.Identity{Principal: "User:admin", Mechanism: "SCRAM-SHA-256", Source: "sasl", Authenticated: true}
	for _, c := range []struct {
		name     string
		req, rsp dissect.Identity // of the CreateAcls exchange
		del      dissect.Identity // of the unanswered DeleteAcls
		screen   []string
	}{
		{"accepted, refused", admin, admin,
			dissect.Identity{Principal: "User:\x1b[2Jmallory\u202e", Mechanism: "PLAIN", Source: "sasl", Failed: true},
			[]string{
				" 1  12:00:00  User:admin                          create  ALLOW User:alice WRITE on TOPIC orders",
				` 3  12:00:02  User:\x1b[2Jmallory\u202e (failed)  delete  ANY (any) ANY on ANY (any) (ANY) from (any)`,
				" 3 changes by 2 principals: 1 created, 0 deleted, 1 failed, 1 unanswered",
			}},
		// The request's identity names the change, as in `kdissect audit`:
		// the response may come after the broker accepted it.
		{"not yet accepted, GSSAPI", dissect.Identity{Principal: "User:bob", Mechanism: "PLAIN", Source: "sasl"},
			dissect.Identity{Principal: "User:bob", Mechanism: "PLAIN", Source: "sasl", Authenticated: true},
			dissect.Identity{Mechanism: "GSSAPI", Source: "sasl", Authenticated: true},
			[]string{
				" 1  2024-05-01 12:00:00  10.0.0.1:50312  User:bob (not yet accepted)  create  ALLOW User:alice WRITE on TOPIC orders",
				" 3  2024-05-01 12:00:02  10.0.0.1:50312  -                            delete",
				" 3 changes by 1 principal and unknown ones: 1 created, 0 deleted, 1 failed, 1 unanswered",
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			entries, load := auditCapture(t)
			for i, id := range []dissect.Identity{c.req, c.rsp, c.del} {
				entries[i].Identity, entries[i].Who = id, id.String()
			}
			m := newTestModel(t, load, entries, 160, 24)
			m = send(m, keys("a")...)
			if len(m.audit.rows) != 3 {
				t.Fatalf("%d rows, want 3", len(m.audit.rows))
			}
			for i, want := range []*string{audit.Principal(c.req), audit.Principal(c.req), audit.Principal(c.del)} {
				got := m.audit.rows[i].Principal
				if (got == nil) != (want == nil) || (got != nil && *got != *want) {
					t.Errorf("row %d: principal %v, want %v", i, deref(got), deref(want))
				}
			}
			screen := strings.Join(screenLines(t, m), "\n")
			for _, want := range c.screen {
				if !strings.Contains(screen, want) {
					t.Errorf("audit view lacks %q:\n%s", want, screen)
				}
			}
			if strings.ContainsAny(screen, "\x1b\u202e") {
				t.Errorf("raw wire text on the screen:\n%q", screen)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return strconv.Quote(*s)
}

// manyACLs is one CreateAcls v3 request of n creations, none answered: n
// rows in the audit view.
func manyACLs(t *testing.T, n int) ([]Entry, Loader) {
	t.Helper()
	req := kmsg.NewPtrCreateACLsRequest()
	req.Version = 3
	for i := range n {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral
		c.Principal, c.Host, c.Operation, c.PermissionType = fmt.Sprintf("User:u%02d", i), "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, c)
	}
	frame := testkit.KmsgRequest(req, 7, testkit.Ptr("kadm"))
	reg := dissect.Builtin()
	load := func(int) (*dissect.Message, error) { return reg.Decode(frame, dissect.Options{}), nil }
	m, _ := load(1)
	return []Entry{entryOf(1, t0, "10.0.0.1:50312", "10.0.0.2:9092", m, -1)}, load
}

// A resize keeps the audit view's selected row on screen, wherever it was.
func TestAuditViewResize(t *testing.T) {
	const n = 40
	entries, load := manyACLs(t, n)
	m := newTestModel(t, load, entries, 100, 30)
	shown := func(what string, m Model) {
		t.Helper()
		a := &m.audit
		h := m.auditHeight()
		if a.cursor < a.offset || a.cursor >= a.offset+h {
			t.Errorf("%s (%dx%d): cursor on row %d, rows [%d, %d) shown", what, m.width, m.height, a.cursor, a.offset, a.offset+h)
		}
		// The row itself is on the screen, under the heading.
		want := fmt.Sprintf("ALLOW User:u%02d WRITE", a.cursor)
		lines := screenLines(t, m)
		row := -1
		for i, l := range lines {
			if strings.Contains(l, want) {
				row = i
			}
		}
		if row < 3 || row >= 3+h {
			t.Errorf("%s (%dx%d): %s is on screen line %d, not among the rows:\n%s", what, m.width, m.height, want, row, strings.Join(lines, "\n"))
		}
		// No room is wasted: a taller screen shows as many rows as fit.
		if rows := min(h, n); a.offset+rows > n {
			t.Errorf("%s (%dx%d): rows [%d, %d) of %d", what, m.width, m.height, a.offset, a.offset+rows, n)
		}
	}
	m = send(m, keys("a", "G")...)
	shown("G", m)
	for _, sz := range [][2]int{{100, 14}, {100, 12}, {80, 24}, {160, 60}, {100, 13}} {
		m = send(m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		shown("last row", m)
	}
	// From the middle, both ways.
	m = send(m, tea.WindowSizeMsg{Width: 100, Height: 24})
	m = send(m, keys("g", "pgdown", "j", "j")...)
	if m.audit.cursor < 10 || m.audit.cursor > n-10 {
		t.Fatalf("cursor on row %d, want one in the middle", m.audit.cursor)
	}
	for _, sz := range [][2]int{{100, 12}, {100, 30}, {100, 14}} {
		m = send(m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		shown("middle row", m)
	}
	// A screen too small for the explorer and back.
	m = send(m, tea.WindowSizeMsg{Width: 30, Height: 8}, tea.WindowSizeMsg{Width: 100, Height: 12})
	shown("after a tiny screen", m)
}

// A change forwarded inside an Envelope is a row of the view too, by the
// principal the envelope names (its response not captured here).
func TestAuditViewForwardedChange(t *testing.T) {
	r := kmsg.NewPtrCreateACLsRequest()
	r.SetVersion(3)
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral
	c.Principal, c.Host, c.Operation, c.PermissionType = "User:bob", "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
	r.Creations = append(r.Creations, c)
	frame := testkit.EnvelopeRequest(r, 7, nil, "User", "alice", netip.MustParseAddr("10.0.0.5"), 3, nil)
	load := func(int) (*dissect.Message, error) { return dissect.Builtin().Decode(frame, dissect.Options{}), nil }
	m1, _ := load(1)
	m := newTestModel(t, load, []Entry{entryOf(1, t0, "10.0.0.9:50312", "10.0.0.2:9093", m1, -1)}, 160, 24)
	m = send(m, keys("a")...)
	screen := strings.Join(screenLines(t, m), "\n")
	if len(m.audit.rows) != 1 || !strings.Contains(screen, "User:alice") || !strings.Contains(screen, "ALLOW User:bob WRITE on TOPIC orders") {
		t.Errorf("%d rows:\n%s", len(m.audit.rows), screen)
	}
}
