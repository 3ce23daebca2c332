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

// auditView is the security change log over the messages listed so far:
// the rows of `kdissect audit` of every kind (ACLs, SCRAM credentials,
// delegation tokens, quotas, configs), one a line, with a cursor, under
// the blind spots of the capture read so far. The rows are rebuilt
// (decoding the audited messages again) when the view opens or the list
// grew since.
type auditView struct {
	open    bool
	rows    []audit.Row
	blind   []string // BlindSummary's sentences
	spots   int      // blind spots blind was made from
	lines   []string // heading, one line a row, the count, as WriteTable draws them at width
	width   int      // of lines
	entries int      // list length the rows were built from
	cursor  int      // row
	offset  int      // first row shown
}

// buildAudit turns the listed messages of the audited APIs into
// change-log rows with the pairing `kdissect audit` uses (audit.Log), fed
// in list order, which is capture order. Describes are left out, as the
// audit leaves them without --reads.
func (m *Model) buildAudit() {
	a := &m.audit
	changes := audit.NewLog()
	es := m.list.entries
	for i := range es {
		e := &es[i]
		if !audited(e.APIKey) {
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
	a.spots = -1
	m.auditBlind()
}

// audited says whether the audit view reads an API's messages: an
// Envelope's too, which may forward a change of any kind (the log unwraps
// it).
func audited(key int16) bool {
	return audit.KindOfAPI(key) != "" && !audit.IsRead(key) || key == envelopeKey
}

// envelopeKey is Envelope, a KRaft broker's forwarding of admin requests.
const envelopeKey = 58

// auditBlind makes the view's blind-spot sentences again when the reader
// found more since; it says whether it did.
func (m *Model) auditBlind() bool {
	a := &m.audit
	if m.opt.BlindSpots == nil {
		return false
	}
	spots := m.opt.BlindSpots() // a copy: CountInferred writes in it
	if len(spots) == a.spots {
		return false
	}
	audit.CountInferred(spots, a.rows)
	a.blind, a.spots = audit.BlindSummary(spots), len(spots)
	return true
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
	meta := audit.Meta{Index: e.Index, Time: e.Time, Client: src, Broker: dst, Principal: audit.Principal(e.Identity), Inferred: e.Inferred}
	if e.HasSoftware {
		meta.Software = &dissect.ClientSoftware{Name: e.SoftwareName, Version: e.SoftwareVersion}
	}
	if e.Direction == dissect.Response {
		meta.Latency, meta.HasLatency = e.Latency, e.HasLatency
	}
	return meta
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
	m.auditBlind()
	m.audit.open = true
	m.revealAudit()
}

// auditBlindLines is how many lines the blind spots take at the top: at
// most a third of the content area, the last saying how many more there
// are.
func (m *Model) auditBlindLines() int {
	return min(len(m.audit.blind), max(m.layout().contentH/3, 1))
}

// auditHeight is the number of row lines the view shows: the content
// area less its title, the blind spots, the heading and the count.
func (m *Model) auditHeight() int { return max(m.layout().contentH-3-m.auditBlindLines(), 1) }

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
	out := []string{fit(m.st.StatusPath.Render(" Security changes")+
		m.st.Dim.Render(fmt.Sprintf("  %d rows · enter: go to the request · a or esc closes", len(a.rows))), W)}
	// What the log could not see comes first, as `kdissect audit` says it
	// on stderr: a change log that leaves changes out must say so before
	// it is read. The sentences are the audit's, wire text escaped there.
	nb := m.auditBlindLines()
	for i, l := range a.blind[:nb] {
		if i == nb-1 && nb < len(a.blind) {
			l = fmt.Sprintf("and %d more (kdissect audit lists them all)", len(a.blind)-i)
		}
		out = append(out, fit(m.st.Problem.Render(" ! blind spot: "+dissect.Escape(l)), W))
	}
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
		out = append(out, fit(m.st.Dim.Render(" no changes (ACLs, SCRAM credentials, delegation tokens, quotas, configs) in the messages listed so far"), W))
	}
	for len(out) < height-1 {
		out = append(out, fit("", W))
	}
	out = append(out, fit(m.st.Dim.Render(" "+lines[len(lines)-1]), W))
	return out[:height]
}
