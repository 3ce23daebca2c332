package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/kdissect/kdissect/dissect"
)

const (
	pathPrincipal = "CreateAclsRequest > CreateAclsRequest > Creations > AclCreation[0] > Principal"
	pathOperation = "CreateAclsRequest > CreateAclsRequest > Creations > AclCreation[0] > Operation"
	pathCreation  = "CreateAclsRequest > CreateAclsRequest > Creations > AclCreation[0]"
)

func TestStartsOnFirstMessage(t *testing.T) {
	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 80, 24)
	if got := m.selectedIndex(); got != 0 {
		t.Fatalf("selected %d, want 0", got)
	}
	if m.focus != paneList {
		t.Errorf("focus %d, want list", m.focus)
	}
	if m.cur == nil || m.cur.Tree == nil || m.cur.Tree.Name != "CreateAclsRequest" {
		t.Fatalf("request not decoded: %+v", m.cur)
	}
	if lo, hi := m.marked(); lo != 0 || hi != 25 {
		t.Errorf("marked [%d,%d), want the whole frame [0,25)", lo, hi)
	}
}

func TestListNavigationLoadsSelected(t *testing.T) {
	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 80, 24)
	m = send(m, keys("j")...)
	if m.selectedIndex() != 1 || m.cur.Direction != dissect.Response {
		t.Fatalf("j: selected %d (%v)", m.selectedIndex(), m.cur.Direction)
	}
	m = send(m, keys("j")...) // stays on the last row
	if m.selectedIndex() != 1 {
		t.Errorf("j past the end: selected %d", m.selectedIndex())
	}
	m = send(m, keys("g")...)
	if m.selectedIndex() != 0 {
		t.Errorf("g: selected %d", m.selectedIndex())
	}
	m = send(m, keys("G", "up", "end", "home")...)
	if m.selectedIndex() != 0 {
		t.Errorf("G up end home: selected %d", m.selectedIndex())
	}
}

func TestTabCyclesPanes(t *testing.T) {
	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 80, 24)
	want := []pane{paneTree, paneHex, paneList}
	for i, w := range want {
		m = send(m, keys("tab")...)
		if m.focus != w {
			t.Fatalf("tab %d: focus %d, want %d", i+1, m.focus, w)
		}
	}
	m = send(m, keys("shift+tab")...)
	if m.focus != paneHex {
		t.Errorf("shift+tab: focus %d", m.focus)
	}
	m = send(m, keys("1")...)
	if m.focus != paneList {
		t.Errorf("1: focus %d", m.focus)
	}
	m = send(m, keys("2")...)
	if m.focus != paneTree {
		t.Errorf("2: focus %d", m.focus)
	}
	m = send(m, keys("3")...)
	if m.focus != paneHex {
		t.Errorf("3: focus %d", m.focus)
	}
}

// Moving in the tree marks exactly the node's bytes and puts the hex
// cursor on them.
func TestTreeDrivesHex(t *testing.T) {
	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 80, 24)
	m = send(m, keys("tab", "G", "k", "k", "k", "k", "k")...)
	if got := m.selectedPath(); got != pathPrincipal {
		t.Fatalf("selected %q", got)
	}
	if lo, hi := m.marked(); lo != 0x13 || hi != 0x14 {
		t.Errorf("marked [%#x,%#x), want [0x13,0x14)", lo, hi)
	}
	if m.hex.cursor != 0x13 {
		t.Errorf("hex cursor %#x, want 0x13", m.hex.cursor)
	}
	// Parent: the range grows; the cursor is inside it and stays.
	m = send(m, keys("h")...)
	if got := m.selectedPath(); got != pathCreation {
		t.Fatalf("h: selected %q", got)
	}
	if lo, hi := m.marked(); lo != 0x10 || hi != 0x18 {
		t.Errorf("marked [%#x,%#x), want [0x10,0x18)", lo, hi)
	}
	if m.hex.cursor != 0x13 {
		t.Errorf("hex cursor moved to %#x though it was inside the field", m.hex.cursor)
	}
	// The status line names the field.
	v := send(m, tea.WindowSizeMsg{Width: 160, Height: 48}).render()
	if !strings.Contains(v, "CreateAclsRequest > Creations > AclCreation[0] [0x0010, 8B] AclCreation = struct") {
		t.Errorf("status line missing path:\n%s", v)
	}
}

// Moving the hex cursor selects the innermost field covering the byte,
// expanding collapsed ancestors.
func TestHexDrivesTree(t *testing.T) {
	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 80, 24)
	m = send(m, keys("2", "c")...) // collapse everything
	if n := len(m.tree.rows); n != 4 {
		t.Fatalf("collapsed tree has %d rows, want root + 3", n)
	}
	m = send(m, keys("3", "j", "l", "l", "l")...)
	if m.hex.cursor != 0x13 {
		t.Fatalf("hex cursor %#x, want 0x13", m.hex.cursor)
	}
	if got := m.selectedPath(); got != pathPrincipal {
		t.Fatalf("selected %q", got)
	}
	if lo, hi := m.marked(); lo != 0x13 || hi != 0x14 {
		t.Errorf("marked [%#x,%#x)", lo, hi)
	}
	m = send(m, keys("right", "right")...)
	if got := m.selectedPath(); got != pathOperation {
		t.Errorf("→→: selected %q", got)
	}
	// Bytes: first row, then the frame size field.
	m = send(m, keys("g")...)
	if got := m.selectedPath(); got != "CreateAclsRequest > Frame > size" {
		t.Errorf("g: selected %q", got)
	}
	m = send(m, keys("G")...)
	if m.hex.cursor != 24 {
		t.Errorf("G: cursor %d", m.hex.cursor)
	}
	if got := m.selectedPath(); got != "CreateAclsRequest > CreateAclsRequest > tagged_fields" {
		t.Errorf("G: selected %q", got)
	}
	// The cursor cannot leave the frame.
	m = send(m, keys("l", "j")...)
	if m.hex.cursor != 24 {
		t.Errorf("cursor left the frame: %d", m.hex.cursor)
	}
}

func TestTreeExpandCollapse(t *testing.T) {
	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 80, 24)
	full := len(m.tree.rows)
	m = send(m, keys("tab", "j")...) // Frame
	if m.tree.selected().Name != "Frame" {
		t.Fatalf("on %q", m.tree.selected().Name)
	}
	m = send(m, keys("enter")...)
	if len(m.tree.rows) != full-1 {
		t.Errorf("enter on Frame: %d rows, want %d", len(m.tree.rows), full-1)
	}
	m = send(m, keys("space")...)
	if len(m.tree.rows) != full {
		t.Errorf("space on Frame: %d rows, want %d", len(m.tree.rows), full)
	}
	m = send(m, keys("left")...) // collapse
	if len(m.tree.rows) != full-1 {
		t.Errorf("← on expanded Frame: %d rows", len(m.tree.rows))
	}
	m = send(m, keys("left")...) // to parent
	if m.tree.cursor != 0 {
		t.Errorf("← on collapsed Frame: cursor %d, want the root", m.tree.cursor)
	}
	m = send(m, keys("j", "right", "right")...) // expand, then first child
	if got := m.selectedPath(); got != "CreateAclsRequest > Frame > size" {
		t.Errorf("→→: %q", got)
	}
	m = send(m, keys("e")...)
	if len(m.tree.rows) != full {
		t.Errorf("e: %d rows", len(m.tree.rows))
	}
	// Expansion is kept by name path: the response shares Frame.
	m = send(m, keys("g", "j", "enter", "p")...)
	if m.selectedIndex() != 1 {
		t.Fatalf("p: selected %d", m.selectedIndex())
	}
	if m.tree.isExpanded("Frame", m.cur.Tree.Child("Frame")) {
		t.Error("Frame collapsed in the request is expanded in the response")
	}
	if got := m.selectedPath(); got != "CreateAclsResponse > Frame" {
		t.Errorf("selection not carried over by name: %q", got)
	}
}

func TestPeerJump(t *testing.T) {
	entries, load := seedCapture(t)
	// The reader emits the request before it knows the response.
	entries[0].Peer = -1
	m := newTestModel(t, load, entries[:1], 80, 24)
	m = send(m, keys("p")...)
	if m.selectedIndex() != 0 || !strings.Contains(m.render(), "no matching response") {
		t.Fatalf("p without a response: selected %d\n%s", m.selectedIndex(), m.render())
	}
	m = send(m, EntriesMsg(entries[1:]))
	m = send(m, keys("p")...)
	if m.selectedIndex() != 1 {
		t.Fatalf("p: selected %d, want the response", m.selectedIndex())
	}
	m = send(m, keys("p")...)
	if m.selectedIndex() != 0 {
		t.Fatalf("p again: selected %d, want the request", m.selectedIndex())
	}
	// Focus and tree stay where they were.
	m = send(m, keys("tab", "j", "j", "p")...)
	if m.focus != paneTree || m.selectedIndex() != 1 {
		t.Errorf("p from the tree: focus %d, selected %d", m.focus, m.selectedIndex())
	}
}

// ---- synthetic captures ----

// fakeMessage is a hand-built message for entry e: a frame, a header with
// the correlation id and a body holding a principal and a resource name.
func fakeMessage(e Entry, principal, resource string) *dissect.Message {
	raw := make([]byte, 48)
	for i := range raw {
		raw[i] = byte(i)
	}
	str := func(name string, off, size int, v string) *dissect.Node {
		return &dissect.Node{Name: name, Type: "string", Kind: dissect.KindString, Offset: off, Size: size,
			Category: dissect.CatRequestBody, Str: v, Doc: "The " + name + "."}
	}
	root := &dissect.Node{Name: e.APIName + "Request", Type: "message v1", Kind: dissect.KindGroup, Size: len(raw),
		Children: []*dissect.Node{
			{Name: "Frame", Kind: dissect.KindGroup, Size: 4, Children: []*dissect.Node{
				{Name: "size", Type: "int32", Kind: dissect.KindInt, Size: 4, Int: 44},
			}},
			{Name: "RequestHeader", Type: "v1", Kind: dissect.KindGroup, Offset: 4, Size: 8, Category: dissect.CatHeader,
				Children: []*dissect.Node{
					{Name: "correlation_id", Type: "int32", Kind: dissect.KindInt, Offset: 8, Size: 4,
						Category: dissect.CatHeader, Int: int64(e.CorrelationID)},
				}},
			{Name: "Body", Type: "struct", Kind: dissect.KindStruct, Offset: 12, Size: 36, Category: dissect.CatRequestBody,
				Children: []*dissect.Node{
					str("Principal", 12, 18, principal),
					str("ResourceName", 30, 18, resource),
				}},
		}}
	return &dissect.Message{APIKey: e.APIKey, APIName: e.APIName, APIVersion: e.APIVersion, Direction: e.Direction,
		CorrelationID: e.CorrelationID, Tree: root, Raw: raw}
}

type fakeCapture struct {
	entries []Entry
	loads   []int // indexes passed to the loader, in order
}

// newFake is n entries alternating CreateAcls/DeleteAcls requests from
// two clients; every 5th has problems; each summary names a principal.
func newFake(n int) *fakeCapture {
	fc := &fakeCapture{}
	for i := 0; i < n; i++ {
		e := Entry{Index: i, Time: t0.Add(time.Duration(i) * time.Millisecond), Src: fmt.Sprintf("10.0.0.%d:5000", 1+i%2),
			Dst: "10.0.0.9:9092", APIKey: 30, APIName: "CreateAcls", APIVersion: 3, CorrelationID: int32(i), Peer: -1,
			Summary: fmt.Sprintf("ALLOW User:user%d WRITE on TOPIC topic%d", i, i)}
		if i%2 == 1 {
			e.APIKey, e.APIName = 31, "DeleteAcls"
		}
		e.HasProblems = i%5 == 4
		fc.entries = append(fc.entries, e)
	}
	return fc
}

func (fc *fakeCapture) load(i int) (*dissect.Message, error) {
	fc.loads = append(fc.loads, i)
	if i < 0 || i >= len(fc.entries) {
		return nil, errors.New("no such message")
	}
	e := fc.entries[i]
	return fakeMessage(e, fmt.Sprintf("User:user%d", i), fmt.Sprintf("topic%d", i)), nil
}

func TestFilter(t *testing.T) {
	fc := newFake(20)
	m := newTestModel(t, fc.load, fc.entries, 100, 30)
	apply := func(m Model, f string) Model {
		return send(m, join(keys("f", "ctrl+u"), typed(f), keys("enter"))...)
	}
	m = send(m, keys("j", "j", "j", "j")...) // on #4, which has problems
	m = apply(m, "errors")
	if m.list.len() != 4 {
		t.Fatalf("errors: %d rows, want 4", m.list.len())
	}
	for r := 0; r < m.list.len(); r++ {
		if !m.list.at(r).HasProblems {
			t.Errorf("row %d has no problems", r)
		}
	}
	if m.selectedIndex() != 4 {
		t.Errorf("selection lost: %d", m.selectedIndex())
	}
	if !strings.Contains(m.render(), `4 of 20 messages · filter "errors"`) {
		t.Errorf("title does not show the filter:\n%s", m.render())
	}
	m = apply(m, "deleteacls")
	if m.list.len() != 10 || m.list.at(0).APIName != "DeleteAcls" {
		t.Errorf("DeleteAcls: %d rows", m.list.len())
	}
	if m.selectedIndex() != 5 {
		t.Errorf("selection should move to the next shown entry: %d", m.selectedIndex())
	}
	m = apply(m, "10.0.0.2")
	if m.list.len() != 10 || m.list.at(0).Index != 1 {
		t.Errorf("connection filter: %d rows", m.list.len())
	}
	m = apply(m, "nothing-matches")
	if m.list.len() != 0 || m.cur != nil || m.selectedIndex() != -1 {
		t.Errorf("empty filter result: %d rows, cur %v", m.list.len(), m.cur)
	}
	screenLines(t, m)
	m = apply(m, "")
	if m.list.len() != 20 {
		t.Errorf("cleared filter: %d rows", m.list.len())
	}
	// p to a peer hidden by the filter says so.
	fc2 := newFake(4)
	fc2.entries[0].Peer, fc2.entries[1].Peer = 1, 0
	m = newTestModel(t, fc2.load, fc2.entries, 100, 30)
	m = apply(m, "createacls")
	m = send(m, keys("p")...)
	if m.selectedIndex() != 0 || !strings.Contains(m.render(), "hidden by the filter") {
		t.Errorf("p to a filtered peer: selected %d", m.selectedIndex())
	}
	// The bar applies a filter of the language as it is typed; esc leaves
	// it on that, and a second esc clears the filter.
	m = send(m, join(keys("f", "ctrl+u"), typed(`api == "DeleteAcls"`), keys("esc"))...)
	if m.input != inputNone || m.list.filter != `api == "DeleteAcls"` || m.list.len() != 2 {
		t.Errorf("esc in the bar: input %v, filter %q, %d rows", m.input, m.list.filter, m.list.len())
	}
	m = send(m, keys("esc")...)
	if m.list.filtered() || m.list.len() != 4 {
		t.Errorf("a second esc left the filter %q, %d rows", m.list.filter, m.list.len())
	}
	// Esc later, after another key, does not.
	m = send(m, join(keys("f"), typed(`api == "CreateAcls"`), keys("esc", "j", "esc"))...)
	if m.list.filter != `api == "CreateAcls"` {
		t.Errorf("esc after another key cleared the filter")
	}
}

func TestSearch(t *testing.T) {
	fc := newFake(30)
	m := newTestModel(t, fc.load, fc.entries, 100, 30)
	m = send(m, join(keys("/"), typed("user1"), keys("enter"))...)
	if m.selectedIndex() != 1 {
		t.Fatalf("/user1: selected %d, want 1", m.selectedIndex())
	}
	// The matching field of the found message is selected.
	if n := m.tree.selected(); n == nil || n.Name != "Principal" {
		t.Errorf("/user1: field %v, want Principal", n)
	}
	m = send(m, keys("n")...)
	if m.selectedIndex() != 10 {
		t.Errorf("n: selected %d, want 10", m.selectedIndex())
	}
	m = send(m, keys("n", "n")...)
	if m.selectedIndex() != 12 {
		t.Errorf("n n: selected %d, want 12", m.selectedIndex())
	}
	m = send(m, keys("N")...)
	if m.selectedIndex() != 11 {
		t.Errorf("N: selected %d, want 11", m.selectedIndex())
	}
	// From the tree, n steps through fields first: topic11 is both the
	// ResourceName of #11 and in its summary.
	m = send(m, join(keys("2", "/"), typed("topic1"), keys("enter"))...)
	if m.selectedIndex() != 11 || m.tree.selected().Name != "ResourceName" {
		t.Errorf("/topic1 from the tree: #%d %q", m.selectedIndex(), m.tree.selected().Name)
	}
	if lo, hi := m.marked(); lo != 30 || hi != 48 {
		t.Errorf("ResourceName marked [%d,%d)", lo, hi)
	}
	m = send(m, keys("n")...) // no more fields in #11: next message
	if m.selectedIndex() != 12 || m.tree.selected().Name != "ResourceName" {
		t.Errorf("n: #%d %q", m.selectedIndex(), m.tree.selected().Name)
	}
	// Field names match too, in the next message: #12's correlation_id
	// is above the selected field.
	m = send(m, join(keys("/"), typed("correlation"), keys("enter"))...)
	if m.selectedIndex() != 13 || m.tree.selected().Name != "correlation_id" {
		t.Errorf("/correlation: #%d %q", m.selectedIndex(), m.tree.selected().Name)
	}
	m = send(m, join(keys("/"), typed("no such thing"), keys("enter"))...)
	if !strings.Contains(m.render(), "not found: no such thing") {
		t.Errorf("no notice for a failed search:\n%s", m.render())
	}
	m = send(m, keys("esc", "n")...)
	if !strings.Contains(m.render(), "no search yet") {
		t.Errorf("esc did not clear the search")
	}
}

// Only the selected message is decoded, through a small cache; the list
// renders only the rows on screen.
func TestLargeCaptureIsVirtualised(t *testing.T) {
	fc := newFake(100000)
	m := newTestModel(t, fc.load, fc.entries, 80, 24)
	if len(fc.loads) != 1 {
		t.Fatalf("%d decodes after loading the list, want 1", len(fc.loads))
	}
	m = send(m, keys("pgdown", "pgdown", "G")...)
	if m.selectedIndex() != 99999 {
		t.Fatalf("G: selected %d", m.selectedIndex())
	}
	if len(fc.loads) != 4 {
		t.Errorf("%d decodes for 4 selections", len(fc.loads))
	}
	m = send(m, keys("g")...) // cached
	if len(fc.loads) != 4 {
		t.Errorf("going back to #0 decoded again (%v)", fc.loads)
	}
	lines := screenLines(t, send(m, keys("G")...))
	rows := 0
	for _, l := range lines {
		if strings.Contains(l, "Acls v3") {
			rows++
		}
	}
	if rows == 0 || rows > 10 {
		t.Errorf("%d list rows rendered at 80x24", rows)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "99999") {
		t.Error("last row not shown after G")
	}
}

func TestLiveFollowsTail(t *testing.T) {
	fc := newFake(10)
	m := New(fc.load, Options{Live: true})
	m.setStyles(stylesFor(colorprofile.TrueColor))
	m = send(m, tea.WindowSizeMsg{Width: 80, Height: 24}, EntriesMsg(fc.entries[:3]))
	if m.selectedIndex() != 2 {
		t.Fatalf("live: selected %d, want the last", m.selectedIndex())
	}
	m = send(m, EntriesMsg(fc.entries[3:5]))
	if m.selectedIndex() != 4 {
		t.Fatalf("live: selected %d after more entries, want 4", m.selectedIndex())
	}
	m = send(m, keys("k")...)
	m = send(m, EntriesMsg(fc.entries[5:]))
	if m.selectedIndex() != 3 {
		t.Errorf("live: the selection moved (%d) after the user left the tail", m.selectedIndex())
	}
	// Not live: the first entry stays selected.
	m = newTestModel(t, fc.load, fc.entries[:3], 80, 24)
	m = send(m, EntriesMsg(fc.entries[3:]))
	if m.selectedIndex() != 0 {
		t.Errorf("not live: selected %d", m.selectedIndex())
	}
}

func TestMouse(t *testing.T) {
	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 80, 24)
	l := m.layout()
	click := func(x, y int) tea.MouseClickMsg {
		return tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft}
	}
	m = send(m, click(10, l.list.y+1))
	if m.selectedIndex() != 1 || m.focus != paneList {
		t.Fatalf("click on row 2: selected %d focus %d", m.selectedIndex(), m.focus)
	}
	m = send(m, click(10, l.list.y))
	if m.selectedIndex() != 0 {
		t.Fatalf("click on row 1: selected %d", m.selectedIndex())
	}
	// A byte: row 0x10, byte 3 (Principal).
	l = m.layout()
	m = send(m, click(l.hex.x+m.hex.byteCol(3), l.hex.y+1))
	if m.focus != paneHex || m.hex.cursor != 0x13 || m.selectedPath() != pathPrincipal {
		t.Fatalf("click on byte 0x13: focus %d cursor %#x path %q", m.focus, m.hex.cursor, m.selectedPath())
	}
	// The same byte in the ASCII column.
	m = send(m, click(l.hex.x+m.hex.asciiCol()+5, l.hex.y+1))
	if m.hex.cursor != 0x15 || m.selectedPath() != pathOperation {
		t.Errorf("click on ASCII 0x15: cursor %#x path %q", m.hex.cursor, m.selectedPath())
	}
	// A tree row, then its triangle.
	m = send(m, keys("2", "g")...)
	m = send(m, click(30, l.tree.y+1))
	if m.focus != paneTree || m.tree.selected().Name != "Frame" {
		t.Fatalf("click on tree row 2: focus %d node %q", m.focus, m.tree.selected().Name)
	}
	rows := len(m.tree.rows)
	m = send(m, click(l.tree.x+m.tree.markerCol(1), l.tree.y+1))
	if len(m.tree.rows) != rows-1 {
		t.Errorf("click on ▾ did not collapse: %d rows", len(m.tree.rows))
	}
	// Wheel scrolls the tree without moving the selection.
	m = send(m, tea.MouseWheelMsg{X: 5, Y: l.tree.y, Button: tea.MouseWheelDown})
	if m.tree.offset != 3 || m.tree.selected().Name != "Frame" {
		t.Errorf("wheel: offset %d, node %q", m.tree.offset, m.tree.selected().Name)
	}
	m = send(m, tea.MouseWheelMsg{X: 5, Y: l.tree.y, Button: tea.MouseWheelUp})
	if m.tree.offset != 0 {
		t.Errorf("wheel up: offset %d", m.tree.offset)
	}
	// A click on a header focuses that pane.
	m = send(m, click(3, l.listHdr.y))
	if m.focus != paneList {
		t.Errorf("click on the list header: focus %d", m.focus)
	}
}

func TestResize(t *testing.T) {
	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 80, 24)
	m = send(m, keys("tab", "G")...)
	for _, sz := range [][2]int{{80, 24}, {40, 12}, {100, 30}, {129, 40}, {130, 40}, {160, 48}, {250, 70}, {80, 13}} {
		m = send(m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		lines := screenLines(t, m)
		l := m.layout()
		if l.wide != (sz[0] >= wideWidth) {
			t.Errorf("%dx%d: wide=%v", sz[0], sz[1], l.wide)
		}
		// The selected tree row stays on screen.
		if c := m.tree.cursor; c < m.tree.offset || c >= m.tree.offset+l.tree.h {
			t.Errorf("%dx%d: tree cursor %d not in [%d,+%d)", sz[0], sz[1], c, m.tree.offset, l.tree.h)
		}
		if !strings.Contains(strings.Join(lines, "\n"), "> ") {
			t.Errorf("%dx%d: no cursor row", sz[0], sz[1])
		}
	}
	m = send(m, tea.WindowSizeMsg{Width: 30, Height: 8})
	if v := m.render(); !strings.Contains(v, "needs at least") {
		t.Errorf("tiny window:\n%s", v)
	}
	screenLines(t, m)
	m = send(m, tea.MouseClickMsg{X: 1, Y: 1, Button: tea.MouseLeft}, keyMsg("j"))
}

func TestHelpListsEveryKey(t *testing.T) {
	entries, load := seedCapture(t)
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		m := newTestModel(t, load, entries, sz[0], sz[1])
		m = send(m, keys("?")...)
		v := strings.Join(screenLines(t, m), "\n")
		for _, g := range m.keys.FullHelp() {
			for _, b := range g {
				h := b.Help()
				if !strings.Contains(v, h.Key) || !strings.Contains(v, h.Desc) {
					t.Errorf("%dx%d: help lacks %q %q", sz[0], sz[1], h.Key, h.Desc)
				}
			}
		}
		// Keys other than ?/esc/q do nothing while help is shown.
		m = send(m, keys("j", "tab")...)
		if !m.showHelp || m.selectedIndex() != 0 || m.focus != paneList {
			t.Errorf("keys leaked through the help screen")
		}
		m = send(m, keys("esc")...)
		if m.showHelp {
			t.Error("esc did not close help")
		}
	}
}

func TestQuit(t *testing.T) {
	entries, load := seedCapture(t)
	m := newTestModel(t, load, entries, 80, 24)
	for _, k := range []string{"q", "ctrl+c"} {
		_, cmd := m.Update(keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s does not quit", k)
		}
	}
	// In the prompt, q is text; ctrl+c still quits.
	m = send(m, keys("/")...)
	nm, cmd := m.Update(keyMsg("q"))
	if cmd != nil || string(nm.(Model).text) != "q" {
		t.Errorf("q in the prompt: cmd %v text %q", cmd, string(nm.(Model).text))
	}
}

func TestLoaderErrors(t *testing.T) {
	fc := newFake(3)
	load := func(i int) (*dissect.Message, error) {
		switch i {
		case 1:
			return nil, errors.New("truncated frame")
		case 2:
			panic("decoder bug")
		}
		return fc.load(i)
	}
	m := newTestModel(t, load, fc.entries, 80, 24)
	m = send(m, keys("j")...)
	if v := m.render(); !strings.Contains(v, "cannot decode") || !strings.Contains(v, "truncated frame") {
		t.Errorf("error not shown:\n%s", v)
	}
	m = send(m, keys("j")...)
	if v := m.render(); !strings.Contains(v, "panicked") {
		t.Errorf("panic not shown:\n%s", v)
	}
	// Keys still work on a failed message.
	m = send(m, keys("2", "j", "3", "l", "p", "1", "k")...)
	if m.selectedIndex() != 1 {
		t.Errorf("selected %d", m.selectedIndex())
	}
	screenLines(t, m)
	m = New(nil, Options{})
	m = send(m, tea.WindowSizeMsg{Width: 80, Height: 24}, EntriesMsg(fc.entries))
	if !strings.Contains(m.render(), "no loader") {
		t.Error("nil loader not reported")
	}
}

func TestProgress(t *testing.T) {
	m := New(nil, Options{Title: "big.pcap"})
	m.setStyles(stylesFor(colorprofile.TrueColor))
	m = send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	if !strings.Contains(m.render(), "no messages yet") {
		t.Errorf("empty list:\n%s", m.render())
	}
	m = send(m, ProgressMsg{Done: 50, Total: 200})
	if !strings.Contains(m.render(), "reading 25%") {
		t.Errorf("progress not shown:\n%s", m.render())
	}
	m = send(m, ProgressMsg{Done: 3 << 20})
	if !strings.Contains(m.render(), "read 3.0 MiB") {
		t.Errorf("unknown total not shown")
	}
	m = send(m, ProgressMsg{Done: 200, Total: 200, Finished: true})
	if !strings.Contains(m.render(), "done") {
		t.Errorf("finished not shown")
	}
	m = send(m, ProgressMsg{Err: errors.New("bad pcap\x1b[2J")})
	v := m.render()
	if !strings.Contains(v, `error: bad pcap\x1b[2J`) {
		t.Errorf("error not shown escaped:\n%s", v)
	}
}

// Run's channel drains: entries come in batches, the drain re-issues
// itself only for its own batches, a closed channel ends it.
func TestChannelDrain(t *testing.T) {
	fc := newFake(10)
	ch := make(chan Entry, 10)
	for _, e := range fc.entries {
		ch <- e
	}
	close(ch)
	pc := make(chan ProgressMsg, 3)
	pc <- ProgressMsg{Done: 1, Total: 10}
	pc <- ProgressMsg{Done: 10, Total: 10, Finished: true}
	close(pc)

	m := New(fc.load, Options{})
	m.entriesCh, m.progressCh = ch, pc
	if m.Init() == nil {
		t.Fatal("Init starts no drain")
	}
	msg := drainEntries(ch)()
	batch, ok := msg.(entriesDrainedMsg)
	if !ok || len(batch.entries) != 10 {
		t.Fatalf("first drain: %#v", msg)
	}
	nm, cmd := m.Update(batch)
	m = nm.(Model)
	if m.list.len() != 10 || cmd == nil {
		t.Fatalf("after a batch: %d rows, cmd %v", m.list.len(), cmd)
	}
	if _, ok := cmd().(entriesClosedMsg); !ok {
		t.Error("drain of a closed channel does not say so")
	}
	p, ok := drainProgress(pc)().(progressDrainedMsg)
	if !ok || !p.p.Finished {
		t.Fatalf("progress drain keeps the latest: %#v", p)
	}
	if _, ok := drainProgress(pc)().(progressClosedMsg); !ok {
		t.Error("closed progress channel")
	}
	// An EntriesMsg sent by other means does not start a second reader.
	_, cmd = m.Update(EntriesMsg(nil))
	if cmd != nil {
		t.Error("EntriesMsg re-issued the drain")
	}
}
