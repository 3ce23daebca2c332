package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/kdissect/kdissect/dissect"
)

// View is the screen, on the alternate screen (given back when the
// explorer quits) with mouse reporting.
func (m Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	return v
}

// render draws the screen: exactly height lines, none wider than width.
func (m Model) render() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	l := m.layout()
	if !l.ok {
		lines := []string{fit(fmt.Sprintf("kdissect needs at least %dx%d (have %dx%d)", minWidth, minHeight, m.width, m.height), m.width)}
		for len(lines) < m.height {
			lines = append(lines, fit("", m.width))
		}
		return strings.Join(lines, "\n")
	}
	lines := make([]string, 0, m.height)
	lines = append(lines, m.titleLine())
	lines = append(lines, m.barLines()...)
	switch {
	case m.audit.open:
		lines = append(lines, m.auditScreen(l.contentH)...)
	case m.showHelp:
		lines = append(lines, m.helpScreen(l.contentH)...)
	default:
		lines = append(lines, m.panes(&l)...)
	}
	lines = append(lines, m.statusLines()...)
	lines = append(lines, m.keyLine())
	return strings.Join(lines, "\n")
}

func (m *Model) titleLine() string {
	parts := []string{"kdissect"}
	if m.opt.Title != "" {
		parts = append(parts, dissect.Escape(m.opt.Title))
	}
	n := len(m.list.entries)
	count := fmt.Sprintf("%d messages", n)
	if n == 1 {
		count = "1 message"
	}
	if m.list.filtered() {
		count = fmt.Sprintf("%d of %s · filter %q", m.list.len(), count, dissect.Escape(m.list.filter))
	}
	parts = append(parts, count)
	if m.list.scanning() {
		parts = append(parts, fmt.Sprintf("filtering %d%%", m.list.scanned*100/max(len(m.list.entries), 1)))
	}
	if m.undecrypted > 0 && n > 0 {
		parts = append(parts, m.undecryptedText())
	}
	if m.opt.Live && !m.closed {
		parts = append(parts, "live")
	}
	if p := m.progressText(); p != "" {
		parts = append(parts, p)
	}
	return m.st.Title.Render(fit(" "+strings.Join(parts, " · "), m.width))
}

func (m *Model) progressText() string {
	if !m.hasProgress {
		return ""
	}
	p := m.progress
	switch {
	case p.Err != nil:
		return "error: " + dissect.Escape(p.Err.Error())
	case p.Finished:
		return "done"
	case p.Total > 0:
		return fmt.Sprintf("reading %d%%", p.Done*100/p.Total)
	default:
		return "read " + byteSize(p.Done)
	}
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// header renders a pane header; the focused pane's is marked ▶.
func (m *Model) header(p pane, text string, w int) string {
	if m.focus == p {
		return m.st.HeaderFocused.Render(fit("▶ "+text, w))
	}
	return m.st.Header.Render(fit("  "+text, w))
}

func (m *Model) treeTitle() string {
	e := m.list.byIndex(m.curIndex)
	if e == nil {
		return "Fields"
	}
	s := fmt.Sprintf("Fields · #%d %s %s · corr %d", e.Index, apiText(e), e.Direction, e.CorrelationID)
	if m.cur != nil && len(m.cur.Problems) > 0 {
		s += fmt.Sprintf(" · ! %d problem(s)", len(m.cur.Problems))
	}
	if e.KafkaError != "" {
		s += " · E " + dissect.Escape(e.KafkaError)
	}
	return s
}

func (m *Model) hexTitle(wide bool) string {
	if m.curIndex < 0 {
		return "Bytes"
	}
	s := fmt.Sprintf("Bytes %dB", len(m.hex.raw))
	if wide && m.focus == paneHex && len(m.hex.raw) > 0 {
		s += fmt.Sprintf(" · cursor 0x%04x", m.hex.cursor)
	}
	return s
}

func (m *Model) panes(l *layout) []string {
	W := m.width
	var out []string
	out = append(out, m.header(paneList, m.list.header(W - 2)[2:], W))
	out = append(out, m.list.view(&m.st, W, l.list.h, m.focus == paneList, m.emptyText())...)

	lo, hi := m.marked()
	empty := "(no message selected)"
	if m.curErr != nil {
		empty = "cannot decode: " + dissect.Escape(m.curErr.Error())
	}
	treeLines := m.tree.view(&m.st, l.tree.w, l.tree.h, m.focus == paneTree, empty)
	hexLines := m.hex.view(&m.st, l.hex.w, l.hex.h, lo, hi, m.focus == paneHex)
	if !l.wide {
		out = append(out, m.header(paneTree, m.treeTitle(), W))
		out = append(out, treeLines...)
		title := m.hexTitle(false)
		hdr := m.header(paneHex, title+" ", lipgloss.Width(title)+3)
		out = append(out, fit(hdr+legend(&m.st), W))
		out = append(out, hexLines...)
		return out
	}
	sep := m.st.Separator.Render("│")
	out = append(out, m.header(paneTree, m.treeTitle(), l.tree.w)+sep+m.header(paneHex, m.hexTitle(true), l.hex.w))
	right := append([]string{fit(legend(&m.st), l.hex.w)}, hexLines...)
	for i, t := range treeLines {
		out = append(out, t+sep+right[i])
	}
	return out
}

// emptyText is what an empty list says before any message: why, when the
// capture's TLS could not be decrypted.
func (m *Model) emptyText() string {
	if m.list.scanning() {
		return "decoding the messages to match the filter…"
	}
	if m.undecrypted > 0 {
		return m.undecryptedText()
	}
	return "no messages yet"
}

func (m *Model) undecryptedText() string {
	if m.undecrypted == 1 {
		return "1 TLS connection not decrypted: --tls-keylog"
	}
	return fmt.Sprintf("%d TLS connections not decrypted: --tls-keylog", m.undecrypted)
}

// barPrompt leads the filter bar's text.
const barPrompt = " filter › "

// barLines is the filter bar while it is open: the text, and under it the
// compile error pointing at its column, or what the text means.
func (m *Model) barLines() []string {
	if m.input != inputFilter {
		return nil
	}
	W := m.width
	text := dissect.Escape(string(m.text))
	pw := lipgloss.Width(barPrompt)
	hidden := 0 // runes cut off the front, for an ellipsis
	if room := W - pw - 1; lipgloss.Width(text) > room && room > 1 {
		// Keep the end, where the typing is, in view.
		rs := []rune(text)
		hidden = len(rs) - (room - 1)
		text = "…" + string(rs[hidden:])
	}
	first := fit(m.st.Prompt.Render(barPrompt)+text+"█", W)
	var second string
	switch {
	case m.bar.err != nil:
		msg := "✗ " + dissect.Escape(m.bar.err.Error())
		if col := errorColumn(m.bar.err); col > 0 && col-1 >= hidden {
			pad := pw + col - 1 - hidden
			if hidden > 0 {
				pad++ // the ellipsis
			}
			// The caret under the column, the message after it, or before
			// it when the column is too far right for the message to fit.
			w := lipgloss.Width(msg)
			if pad+2+w > W && pad >= w+1 {
				msg = strings.Repeat(" ", pad-w-1) + msg + " ^"
			} else {
				msg = strings.Repeat(" ", pad) + "^ " + msg
			}
			second = m.st.Problem.Render(msg)
			break
		}
		second = m.st.Problem.Render("   " + msg)
	case m.bar.pending != nil && m.bar.pending.text == "":
		second = m.st.Dim.Render("   enter: every message")
	case m.bar.pending != nil:
		second = m.st.Dim.Render("   enter applies the " + m.bar.pending.describe())
	case m.list.flt == nil:
		second = m.st.Dim.Render("   the language of -Y: api == \"CreateAcls\" && principal == \"User:alice\", ResourceName matches \"^orders\" · empty: every message")
	case m.list.flt.short != shortNone:
		second = m.st.Dim.Render("   " + m.list.flt.describe())
	case m.list.scanning():
		second = m.st.Dim.Render(fmt.Sprintf("   ✓ decoding the messages to match their fields: %d of %d", m.list.scanned, len(m.list.entries)))
	default:
		second = m.st.Dim.Render(fmt.Sprintf("   ✓ %d of %d messages", m.list.len(), len(m.list.entries)))
	}
	return []string{first, fit(second, W)}
}

// statusLines are the selected field's path, type, value and place, and
// its doc (or problems).
func (m *Model) statusLines() []string {
	W := m.width
	var first, second string
	n := m.tree.selected()
	switch {
	case n != nil:
		var names []string
		path := m.tree.path()
		for _, p := range path[min(1, len(path)-1):] {
			names = append(names, dissect.Escape(p.Name))
		}
		first = m.st.StatusPath.Render(strings.Join(names, " > ")) + m.st.StatusText.Render(" "+valueText(n))
		var probs []string
		for _, p := range n.Problems {
			probs = append(probs, fmt.Sprintf("! 0x%04x %s", p.Offset, dissect.Escape(p.Message)))
		}
		if n == m.cur.Tree {
			for _, p := range m.cur.Problems {
				probs = append(probs, fmt.Sprintf("! 0x%04x %s", p.Offset, dissect.Escape(p.Message)))
			}
		}
		switch {
		case len(probs) > 0:
			second = m.st.Problem.Render(strings.Join(probs, "  "))
		case n == m.cur.Tree:
			sum := dissect.Escape(m.cur.Summary)
			if e := m.list.selected(); e != nil && e.Who != "" {
				sum += " by " + dissect.Escape(e.Who)
			}
			if e := m.list.selected(); e != nil && e.Software != "" {
				sum += " using " + dissect.Escape(e.Software)
			}
			if e := m.list.selected(); e != nil && e.TLS != "" {
				// First, where the width never cuts it off.
				v, _, _ := strings.Cut(strings.TrimPrefix(e.TLS, "TLS "), " ")
				sum = "[TLS " + dissect.Escape(v) + " decrypted] " + sum
			}
			second = m.st.Doc.Render(sum)
		default:
			second = m.st.Doc.Render(dissect.Escape(n.Doc))
		}
	case m.curErr != nil:
		first = m.st.Problem.Render("cannot decode message: " + dissect.Escape(m.curErr.Error()))
	case m.list.noMatch() != "":
		first = m.st.Dim.Render(m.list.noMatch())
	case m.list.len() == 0 && m.undecrypted > 0 && len(m.list.entries) == 0:
		first = m.st.Dim.Render(m.undecryptedText())
	case m.list.len() == 0:
		first = m.st.Dim.Render("no messages")
	}
	return []string{fit(" "+first, W), fit(" "+second, W)}
}

// valueText is "[0xOFFSET, SIZEB] TYPE = VALUE" for the status line: the
// place first, so it survives the cut on a narrow screen.
func valueText(n *dissect.Node) string {
	b := dissect.AppendSpan(nil, n.Offset, n.Size)
	if n.Type != "" {
		b = append(b, ' ')
		b = append(b, dissect.Escape(n.Type)...)
	}
	if n.HasValue() {
		b = append(b, " = "...)
		b = n.AppendDisplay(b) // Display escapes wire text itself
	}
	return string(b)
}

// keyLine is the prompt while typing, else a notice, else short help.
func (m *Model) keyLine() string {
	W := m.width
	switch {
	case m.input == inputSearch:
		return fit(m.st.Prompt.Render("/")+dissect.Escape(string(m.text))+"█"+m.st.Dim.Render("   enter search · esc cancel"), W)
	case m.input == inputFilter:
		return fit(m.st.Dim.Render(" filter bar: enter done · esc leaves, esc again clears · ↑↓ history · ^u empties"), W)
	case m.search.active:
		return fit(m.st.Notice.Render(m.searchProgress()), W)
	case m.notice != "":
		return fit(m.st.Notice.Render(m.notice), W)
	}
	h := m.help
	h.SetWidth(W)
	return fit(h.ShortHelpView(m.shortHelp()), W)
}

// shortHelp is the key line's bindings for the focused pane, the most
// important first (the line is cut to the width).
func (m *Model) shortHelp() []key.Binding {
	k := m.keys
	short := func(help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(help), key.WithHelp(help, desc))
	}
	out := []key.Binding{k.Help, k.Quit, short("tab", "pane"), k.Search, short("f", "filter"), short("p", "req↔resp")}
	switch m.focus {
	case paneList:
		out = append(out, short("↑↓/jk", "select"))
	case paneTree:
		out = append(out, short("↑↓/jk", "move"), short("enter/←→", "collapse/expand"))
	case paneHex:
		out = append(out, short("←↓↑→/hjkl", "move byte"))
	}
	return out
}

// helpScreen lists every key, the groups side by side as far as they fit.
func (m *Model) helpScreen(height int) []string {
	W := m.width
	h := m.help
	h.SetWidth(0)
	lines := []string{
		fit(m.st.StatusPath.Render(" Keys")+m.st.Dim.Render("  (? or esc closes)"), W),
		fit("", W),
	}
	var row []string
	flush := func() {
		if len(row) == 0 {
			return
		}
		block := lipgloss.JoinHorizontal(lipgloss.Top, row...)
		for _, s := range strings.Split(block, "\n") {
			lines = append(lines, fit(" "+s, W))
		}
		lines = append(lines, fit("", W))
		row = nil
	}
	used := 0
	for _, g := range m.keys.FullHelp() {
		col := h.FullHelpView([][]key.Binding{g})
		cw := lipgloss.Width(col) + 4
		if used+cw > W-1 && len(row) > 0 {
			flush()
			used = 0
		}
		row = append(row, lipgloss.NewStyle().Width(cw).Render(col))
		used += cw
	}
	flush()
	notes := []string{
		"tree ↔ bytes: moving in one pane selects in the other (the focused pane leads)",
		"/ finds text in any field of any message (not in secrets), decoding them in the background",
		"f filter bar: -Y's language (api == \"CreateAcls\" && Principal contains \"alice\"); a word that is",
		"  not a field is the old shorthand: errors, or part of an API name or host:port",
		"⌫ [ ]: back and forward after p, a jump from the audit view, a search; t: the Time column",
		"mouse: click a row or byte to select, a ▸/▾ to expand, wheel to scroll",
	}
	for _, s := range notes {
		lines = append(lines, fit(m.st.Dim.Render(" "+s), W))
	}
	for len(lines) < height {
		lines = append(lines, fit("", W))
	}
	return lines[:height]
}
