package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/dissect"
)

// withKafkaErrors is newFake(n) where the responses (odd indexes) listed
// carry a Kafka error code; none has problems unless problems is set.
func withKafkaErrors(n int, problems bool, errs map[int]string) *fakeCapture {
	fc := newFake(n)
	for i := range fc.entries {
		e := &fc.entries[i]
		e.HasProblems = problems && e.HasProblems
		if i%2 == 1 {
			e.Direction = dissect.Response
		}
		e.KafkaError = errs[i]
	}
	return fc
}

func filterTo(m Model, f string) Model {
	return send(m, join(keys("f", "ctrl+u"), typed(f), keys("enter"))...)
}

// A filter that hides every entry says so in the list and on the status
// line; before any entry arrives the list says it is waiting.
func TestEmptyFilterResultSaysSo(t *testing.T) {
	fc := withKafkaErrors(6, false, nil)
	m := newTestModel(t, fc.load, nil, 100, 30)
	if v := strings.Join(screenLines(t, m), "\n"); !strings.Contains(v, "(no messages yet)") {
		t.Errorf("no entries:\n%s", v)
	}
	m = send(m, EntriesMsg(fc.entries))
	m = filterTo(m, "errors")
	if m.list.len() != 0 {
		t.Fatalf("errors on a capture without errors: %d rows", m.list.len())
	}
	lines := screenLines(t, m)
	v := strings.Join(lines, "\n")
	want := `no message matches the filter "errors"`
	if !strings.Contains(v, "("+want+")") || strings.Contains(v, "no messages yet") {
		t.Errorf("list does not say %q:\n%s", want, v)
	}
	if got := strings.TrimSpace(lines[m.height-3]); got != want {
		t.Errorf("status %q, want %q", got, want)
	}
}

// The errors filter keeps malformed entries and responses with a Kafka
// error code; those are marked E and lead their info with the error.
func TestErrorsFilterKeepsKafkaErrors(t *testing.T) {
	fc := withKafkaErrors(10, true, map[int]string{3: "CLUSTER_AUTHORIZATION_FAILED", 7: "INVALID_REQUEST"})
	// newFake marks #4 and #9 as malformed.
	m := newTestModel(t, fc.load, fc.entries, 120, 30)
	m = filterTo(m, "errors")
	var got []int
	for r := 0; r < m.list.len(); r++ {
		got = append(got, m.list.at(r).Index)
	}
	if fmt.Sprint(got) != "[3 4 7 9]" {
		t.Fatalf("errors keeps %v, want [3 4 7 9]", got)
	}
	for r, mark := range []byte{'E', '!', 'E', '!'} {
		text := m.list.rowText(r, 120)
		if text[1] != mark {
			t.Errorf("row %d %q: marker %q, want %q", r, text, text[1], mark)
		}
	}
	if text := m.list.rowText(0, 120); !strings.Contains(text, " CLUSTER_AUTHORIZATION_FAILED · ALLOW User:user3 ") {
		t.Errorf("row of #3 does not lead its info with the error: %q", text)
	}
	if v := m.render(); !strings.Contains(v, "Fields · #3 DeleteAcls v3 response · corr 3 · E CLUSTER_AUTHORIZATION_FAILED") {
		t.Errorf("the tree title does not name the error:\n%s", v)
	}
	// The error is searchable.
	m = filterTo(m, "")
	m = send(m, join(keys("g", "/"), typed("invalid_req"), keys("enter"))...)
	if m.selectedIndex() != 7 {
		t.Errorf("/invalid_req: selected %d, want 7", m.selectedIndex())
	}
}

// A filter that hides everything keeps the selection for the next one.
func TestEmptyFilterKeepsSelection(t *testing.T) {
	fc := newFake(20)
	m := newTestModel(t, fc.load, fc.entries, 100, 30)
	m = send(m, keys("j", "j", "j", "j", "j", "j", "j")...)
	m = filterTo(m, "nothing-matches")
	if m.selectedIndex() != -1 {
		t.Fatalf("empty result: selected %d", m.selectedIndex())
	}
	m = filterTo(m, "nothing-either")
	m = filterTo(m, "")
	if m.selectedIndex() != 7 || m.cur == nil {
		t.Errorf("after an empty result and clearing: selected %d, want 7", m.selectedIndex())
	}
	m = filterTo(m, "nothing-matches")
	m = filterTo(m, "deleteacls")
	if m.selectedIndex() != 7 {
		t.Errorf("after an empty result, a filter showing #7: selected %d", m.selectedIndex())
	}
}

// "search wrapped" only when the search went past the end: here the one
// message that matches has two matching fields, and n from the list walks
// them.
func TestSearchWrappedOnlyWhenItWraps(t *testing.T) {
	fc := newFake(3)
	load := func(i int) (*dissect.Message, error) {
		if i == 1 {
			return fakeMessage(fc.entries[i], "User:same", "same-topic"), nil
		}
		return fc.load(i)
	}
	m := newTestModel(t, load, fc.entries, 100, 30)
	m = send(m, keys("j")...)
	m = send(m, join(keys("/"), typed("same"), keys("enter"))...)
	check := func(step, field string, wrapped bool) {
		t.Helper()
		if n := m.tree.selected(); m.selectedIndex() != 1 || n == nil || n.Name != field {
			t.Errorf("%s: #%d %v, want #1 %s", step, m.selectedIndex(), n, field)
		}
		if got := m.notice == "search wrapped"; got != wrapped {
			t.Errorf("%s: notice %q, wrapped want %v", step, m.notice, wrapped)
		}
	}
	check("/same", "Principal", false)
	m = send(m, keys("n")...)
	check("n", "ResourceName", false)
	m = send(m, keys("n")...)
	check("n past the last", "Principal", true)
	m = send(m, keys("N")...)
	check("N before the first", "ResourceName", true)
	m = send(m, keys("N")...)
	check("N", "Principal", false)
	// Across messages from the list: #11 → … wraps to #1.
	fc = newFake(30)
	m = newTestModel(t, fc.load, fc.entries, 100, 30)
	m = send(m, join(keys("/"), typed("user1"), keys("enter"))...)
	if m.selectedIndex() != 1 || m.notice != "" {
		t.Errorf("/user1: #%d notice %q", m.selectedIndex(), m.notice)
	}
	m = send(m, keys("G", "n")...)
	if m.selectedIndex() != 1 || m.notice != "search wrapped" {
		t.Errorf("n from the last row: #%d notice %q, want #1 and search wrapped", m.selectedIndex(), m.notice)
	}
}

// The list is as tall as the rows shown allow: a filter that keeps a few
// rows gives the rest of the screen to the tree, and no blank row stays
// between the last row and the tree's header.
func TestListHeightFollowsShownRows(t *testing.T) {
	fc := newFake(40)
	for _, sz := range [][2]int{{100, 40}, {160, 48}} {
		m := newTestModel(t, fc.load, fc.entries, sz[0], sz[1])
		full := m.layout()
		m = filterTo(m, "errors") // #4, #9, … : 8 rows
		if m.list.len() != 8 {
			t.Fatalf("%v: %d rows", sz, m.list.len())
		}
		l := m.layout()
		if want := min(8, full.list.h); l.list.h != want {
			t.Errorf("%v: list %d rows high with 8 shown, want %d", sz, l.list.h, want)
		}
		if l.tree.h <= full.tree.h && l.list.h < full.list.h {
			t.Errorf("%v: tree %d rows high, was %d: it did not get the room", sz, l.tree.h, full.tree.h)
		}
		lines := screenLines(t, m)
		if hdr := lines[l.list.y+l.list.h]; !strings.Contains(hdr, "Fields · #") {
			t.Errorf("%v: the line after the list's %d rows is %q, want the tree header", sz, l.list.h, hdr)
		}
		if last := lines[l.list.y+l.list.h-1]; !strings.Contains(last, "Acls v3") {
			t.Errorf("%v: the list's last line is %q, want a row", sz, last)
		}
		// One row shown: the list keeps its minimum of three lines.
		m = filterTo(m, "10.0.0.1:5000 → 10.0.0.9:9092")
		m = filterTo(m, "nothing")
		if l := m.layout(); l.list.h != 3 {
			t.Errorf("%v: empty result: list %d rows high, want 3", sz, l.list.h)
		}
		// The tree cursor stays visible as the list grows back.
		m = send(m, keys("2", "G")...)
		m = filterTo(m, "")
		if l := m.layout(); m.tree.cursor < m.tree.offset || m.tree.cursor >= m.tree.offset+l.tree.h {
			t.Errorf("%v: tree cursor %d off screen [%d,+%d)", sz, m.tree.cursor, m.tree.offset, l.tree.h)
		}
	}
}
