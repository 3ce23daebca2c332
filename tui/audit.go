package tui

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/dissect/audit"
)

// auditView is the ACL change log over the messages listed so far: the
// rows of `kdissect audit`, one a line, with a cursor. The rows are
// rebuilt (decoding the ACL messages again) when the view opens or the list
// grew since.
type auditView struct {
	open    bool
	rows    []audit.Row
	lines   []string // heading, one line a row, the count, as WriteTable draws them at width
	width   int      // of lines
	entries int      // list length the rows were built from
	cursor  int      // row
	offset  int      // first row shown
}

// buildAudit turns the listed CreateAcls/DeleteAcls messages into
// change-log rows with the pairing `kdissect audit` uses (audit.Log), fed
// in list order, which is capture order.
func (m *Model) buildAudit() {
	a := &m.audit
	changes := audit.NewLog()
	es := m.list.entries
	for i := range es {
		e := &es[i]
		if e.APIKey != 30 && e.APIKey != 31 {
			continue
		}
		msg := m.decode(e.Index)
		if msg == nil {
			continue
		}
		changes.Add(msg, metaOf(e), max(e.Peer, 0)) // the list's "no peer" is -1, the log's 0
	}
	a.rows = changes.Finish()
	a.entries = len(es)
	a.width = 0
	a.cursor = clamp(a.cursor, 0, max(len(a.rows)-1, 0))
}

// decode loads a message without disturbing the selection's cache.
func (m *Model) decode(index int) *dissect.Message {
	msg, err := safeLoad(m.load, index)
	if err != nil {
		return nil
	}
	return msg
}

// metaOf is where, when and by whom an entry's message was captured, its
// Client and Broker the connection's two sides whichever way it went.
func metaOf(e *Entry) audit.Meta {
	src, _ := netip.ParseAddrPort(e.Src)
	dst, _ := netip.ParseAddrPort(e.Dst)
	if e.Direction == dissect.Response {
		src, dst = dst, src
	}
	return audit.Meta{Index: e.Index, Time: e.Time, Client: src, Broker: dst, Principal: audit.Principal(e.Identity)}
}

// auditLines renders the rows at the screen's width (cached until either
// changes).
func (m *Model) auditLines() []string {
	a := &m.audit
	if a.width != m.width || a.lines == nil {
		var b bytes.Buffer
		audit.WriteTable(&b, a.rows, m.width-1, false)
		a.lines = strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		for i, l := range a.lines {
			a.lines[i] = dissect.Escape(l) // already escaped; escaping again is the explorer's own guard and leaves escaped text as it is
		}
		a.width = m.width
	}
	return a.lines
}

func (m *Model) openAudit() {
	if m.audit.entries != len(m.list.entries) || m.audit.lines == nil {
		m.buildAudit()
		m.audit.lines = nil
	}
	m.audit.open = true
	m.revealAudit()
}

// auditHeight is the number of row lines the view shows: the content
// area less its title, the heading and the count.
func (m *Model) auditHeight() int { return max(m.layout().contentH-3, 1) }

func (m *Model) revealAudit() {
	a := &m.audit
	a.offset = revealRow(a.offset, a.cursor, m.auditHeight(), len(a.rows))
}

func (m *Model) auditKey(msg tea.KeyPressMsg) (cmd tea.Cmd, quit bool) {
	k := &m.keys
	a := &m.audit
	h := m.auditHeight()
	switch {
	case key.Matches(msg, k.Quit):
		return nil, true
	case key.Matches(msg, k.Audit, k.Cancel):
		a.open = false
		return nil, false
	case key.Matches(msg, k.Submit):
		m.auditJump()
		return nil, false
	case key.Matches(msg, k.Up):
		a.cursor--
	case key.Matches(msg, k.Down):
		a.cursor++
	case key.Matches(msg, k.PageUp):
		a.cursor -= h
	case key.Matches(msg, k.PageDown):
		a.cursor += h
	case key.Matches(msg, k.Top):
		a.cursor = 0
	case key.Matches(msg, k.Bottom):
		a.cursor = len(a.rows) - 1
	}
	a.cursor = clamp(a.cursor, 0, max(len(a.rows)-1, 0))
	m.revealAudit()
	return nil, false
}

// auditJump closes the view on the request of the row under the cursor
// (its response when the request was not captured whole).
func (m *Model) auditJump() {
	a := &m.audit
	if a.cursor >= len(a.rows) {
		return
	}
	r := &a.rows[a.cursor]
	idx := -1
	switch {
	case r.RequestIndex != nil && m.list.byIndex(*r.RequestIndex) != nil:
		idx = *r.RequestIndex
	case r.ResponseIndex != nil:
		idx = *r.ResponseIndex
	}
	row := m.list.rowOf(idx)
	if row < 0 {
		m.notice = fmt.Sprintf("message #%d is hidden by the filter", idx)
		return
	}
	a.open = false
	m.focus = paneList
	from, ok := m.here()
	m.selectRow(row)
	m.jumped(from, ok)
}

// auditScreen is the view's content area: a title, the table's heading,
// the visible rows (the cursor's marked) and the count.
func (m *Model) auditScreen(height int) []string {
	W := m.width
	a := &m.audit
	lines := m.auditLines()
	out := []string{fit(m.st.StatusPath.Render(" ACL changes")+
		m.st.Dim.Render(fmt.Sprintf("  %d rows · enter: go to the request · a or esc closes", len(a.rows))), W)}
	out = append(out, fit(" "+lines[0], W))
	rows := lines[1 : len(lines)-1]
	for i := a.offset; i < len(rows) && len(out) < height-1; i++ {
		s := fit(" "+rows[i], W)
		if i == a.cursor {
			s = m.st.Selected.Render(s)
		}
		out = append(out, s)
	}
	if len(rows) == 0 {
		out = append(out, fit(m.st.Dim.Render(" no CreateAcls/DeleteAcls changes in the messages read so far"), W))
	}
	for len(out) < height-1 {
		out = append(out, fit("", W))
	}
	out = append(out, fit(m.st.Dim.Render(" "+lines[len(lines)-1]), W))
	return out[:height]
}
