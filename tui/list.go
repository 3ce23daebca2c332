package tui

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kdissect/kdissect/dissect"
)

// listModel is the message list. It holds every entry but renders only the
// visible rows; with a filter, shown holds the positions of the matching
// entries (in order), otherwise every entry is shown.
type listModel struct {
	entries []Entry
	pos     map[int]int // Entry.Index → position in entries
	filter  string      // as typed; "" is none
	shown   []int       // positions shown while filtered
	cursor  int         // row (into the shown list)
	hidden  int         // position selected before the filter hid every entry, or -1
	offset  int         // first visible row
	t0      time.Time   // time of the first entry; the Time column is relative to it

	// column widths, grown as entries arrive (stable while scrolling)
	wNo, wTime, wConn, wAPI, wCorr, wInfo int
}

func newList() listModel {
	return listModel{pos: map[int]int{}, hidden: -1, wNo: 3, wTime: 8, wConn: 10, wAPI: 3, wCorr: 4}
}

func (l *listModel) filtered() bool { return l.filter != "" }

// len is the number of rows shown.
func (l *listModel) len() int {
	if l.filtered() {
		return len(l.shown)
	}
	return len(l.entries)
}

// position maps a row to a position in entries.
func (l *listModel) position(row int) int {
	if l.filtered() {
		return l.shown[row]
	}
	return row
}

// at is the entry on row, or nil.
func (l *listModel) at(row int) *Entry {
	if row < 0 || row >= l.len() {
		return nil
	}
	return &l.entries[l.position(row)]
}

func (l *listModel) selected() *Entry { return l.at(l.cursor) }

// byIndex finds an entry by its Index.
func (l *listModel) byIndex(index int) *Entry {
	if p, ok := l.pos[index]; ok {
		return &l.entries[p]
	}
	return nil
}

// rowOf is the row showing the entry with the given Index, or -1 when the
// entry is unknown or filtered out.
func (l *listModel) rowOf(index int) int {
	p, ok := l.pos[index]
	if !ok {
		return -1
	}
	if !l.filtered() {
		return p
	}
	r := sort.SearchInts(l.shown, p)
	if r < len(l.shown) && l.shown[r] == p {
		return r
	}
	return -1
}

// add appends entries, links peers both ways and grows the columns.
func (l *listModel) add(es []Entry) {
	l.entries = slices.Grow(l.entries, len(es))
	for _, e := range es {
		if len(l.entries) == 0 {
			l.t0 = e.Time
		}
		p := len(l.entries)
		l.entries = append(l.entries, e)
		l.pos[e.Index] = p
		if e.Peer >= 0 {
			if q := l.byIndex(e.Peer); q != nil && q.Peer < 0 {
				q.Peer = e.Index
			}
		}
		if l.filtered() && l.match(&l.entries[p]) {
			l.shown = append(l.shown, p)
		}
		l.wNo = max(l.wNo, len(strconv.Itoa(e.Index)))
		l.wTime = max(l.wTime, len(l.timeText(&e)))
		l.wConn = max(l.wConn, len([]rune(connText(&e))))
		l.wAPI = max(l.wAPI, len([]rune(apiText(&e))))
		l.wCorr = max(l.wCorr, len(strconv.Itoa(int(e.CorrelationID))))
		l.wInfo = max(l.wInfo, min(len(infoText(&e)), 64))
	}
}

// setFilter shows only the entries matching f: "errors" (or "problems",
// "!") keeps the malformed ones and the responses carrying a Kafka error
// code; anything else keeps the entries whose API name or connection
// contains it, ignoring case. The cursor stays on the same entry when it
// is still shown, else on the next one shown; when the filter shows
// nothing, the entry is kept for the next filter.
func (l *listModel) setFilter(f string) {
	f = strings.TrimSpace(f)
	keep := l.hidden
	if e := l.selected(); e != nil {
		keep = l.pos[e.Index]
	}
	l.filter = f
	l.shown = l.shown[:0]
	if f != "" {
		for p := range l.entries {
			if l.match(&l.entries[p]) {
				l.shown = append(l.shown, p)
			}
		}
	}
	l.cursor = 0
	l.hidden = -1
	if l.len() == 0 {
		l.hidden = keep
	}
	if keep >= 0 {
		if !l.filtered() {
			l.cursor = keep
		} else {
			l.cursor = min(sort.SearchInts(l.shown, keep), max(len(l.shown)-1, 0))
		}
	}
	l.offset = 0
}

func (l *listModel) match(e *Entry) bool {
	f := strings.ToLower(l.filter)
	switch f {
	case "":
		return true
	case "errors", "error", "problems", "!":
		return e.failed()
	}
	return strings.Contains(strings.ToLower(e.APIName), f) ||
		strings.Contains(strings.ToLower(e.Src), f) ||
		strings.Contains(strings.ToLower(e.Dst), f) ||
		strings.Contains(strings.ToLower(connText(e)), f)
}

// searchText is what / looks through for an entry: its number, connection,
// API, correlation id, Kafka error, summary and identity, as displayed.
func searchText(e *Entry) string {
	return strings.ToLower(strconv.Itoa(e.Index) + " " + connText(e) + " " + dirText(e.Direction) + " " +
		apiText(e) + " " + strconv.Itoa(int(e.CorrelationID)) + " " + dissect.Escape(e.KafkaError) + " " + dissect.Escape(e.Summary) + " " + dissect.Escape(e.Who))
}

// moveTo puts the cursor on row (clamped) and scrolls it into view.
func (l *listModel) moveTo(row, height int) {
	l.cursor = clamp(row, 0, l.len()-1)
	l.reveal(height)
}

func (l *listModel) reveal(height int) {
	l.offset = revealRow(l.offset, l.cursor, height, l.len())
}

func (l *listModel) scroll(d, height int) {
	l.offset = clamp(l.offset+d, 0, max(l.len()-height, 0))
}

func (l *listModel) timeText(e *Entry) string {
	d := e.Time.Sub(l.t0)
	return strconv.FormatFloat(d.Seconds(), 'f', 6, 64)
}

// infoText is the summary without the "API vN direction corr=N: " lead
// that repeats the row's own columns, led by the Kafka error's name so
// that the cut to the column never hides it.
func infoText(e *Entry) string {
	info := summaryText(e)
	if e.TLS != "" {
		info = "[TLS] " + info // decrypted: the explorer shows plaintext the wire did not carry
	}
	if who := dissect.Escape(e.Who); who != "" {
		info += " by " + who
	}
	if k := dissect.Escape(e.KafkaError); k != "" {
		if info == "" {
			return k
		}
		return k + " · " + info
	}
	return info
}

func summaryText(e *Entry) string {
	s := dissect.Escape(e.Summary)
	lead := apiText(e) + " " + e.Direction.String() + " corr=" + strconv.Itoa(int(e.CorrelationID))
	if rest, ok := strings.CutPrefix(s, lead); ok {
		if rest == "" {
			return ""
		}
		if r, ok := strings.CutPrefix(rest, ": "); ok {
			return r
		}
		if r, ok := strings.CutPrefix(rest, " "); ok {
			return r
		}
	}
	return s
}

func connText(e *Entry) string { return dissect.Escape(e.Src) + " → " + dissect.Escape(e.Dst) }

func apiText(e *Entry) string {
	name := dissect.Escape(e.APIName)
	if name == "" {
		name = "api" + strconv.Itoa(int(e.APIKey))
	}
	return name + " v" + strconv.Itoa(int(e.APIVersion))
}

func dirText(d dissect.Direction) string {
	if d == dissect.Response {
		return "rsp"
	}
	return "req"
}

// listCols is the column layout of the list for one width.
type listCols struct{ no, time, conn, api, corr, info int }

// cols fits the columns into w: the connection column shrinks first (to
// 12), then the time column goes, so the summary keeps up to 24 cells.
func (l *listModel) cols(w int) listCols {
	c := listCols{no: l.wNo, time: l.wTime, conn: l.wConn, api: l.wAPI, corr: l.wCorr}
	fixed := func() int { return 2 + c.no + 1 + c.time + 1 + 3 + 1 + c.api + 1 + c.corr + 1 }
	minInfo := clamp(l.wInfo, 4, 24)
	if fixed()+c.conn+1+minInfo > w {
		c.conn = min(c.conn, max(20, w-fixed()-1-minInfo))
	}
	if fixed()+c.conn+1+min(minInfo, 12) > w && c.time > 0 {
		c.time = 0
		c.conn = max(12, w-(fixed()-1)-1-minInfo)
	}
	used := fixed() + c.conn + 1
	if c.time == 0 {
		used--
	}
	c.info = max(w-used, 0)
	return c
}

// header is the column titles, as wide as w.
func (l *listModel) header(w int) string {
	c := l.cols(w)
	var b strings.Builder
	b.WriteString("  ")
	cell(&b, "No.", c.no, true)
	if c.time > 0 {
		cell(&b, "Time", c.time, true)
	}
	cell(&b, "Connection", c.conn, false)
	cell(&b, "Dir", 3, false)
	cell(&b, "API", c.api, false)
	cell(&b, "Corr", c.corr, true)
	b.WriteString("Info")
	return fit(b.String(), w)
}

// rowText is one row without styling, exactly w cells wide.
func (l *listModel) rowText(row, w int) string {
	e := l.at(row)
	c := l.cols(w)
	var b strings.Builder
	if row == l.cursor {
		b.WriteByte('>')
	} else {
		b.WriteByte(' ')
	}
	b.WriteByte(marker(e))
	cell(&b, strconv.Itoa(e.Index), c.no, true)
	if c.time > 0 {
		cell(&b, l.timeText(e), c.time, true)
	}
	cell(&b, connText(e), c.conn, false)
	cell(&b, dirText(e.Direction), 3, false)
	cell(&b, apiText(e), c.api, false)
	cell(&b, strconv.Itoa(int(e.CorrelationID)), c.corr, true)
	b.WriteString(infoText(e))
	return fit(b.String(), w)
}

// marker is the second column of a row: ! for a malformed frame, E for a
// response with a Kafka error code.
func marker(e *Entry) byte {
	switch {
	case e.HasProblems:
		return '!'
	case e.KafkaError != "":
		return 'E'
	}
	return ' '
}

// noMatch is what the list and the status line say when the filter hides
// every entry, or "" when it does not.
func (l *listModel) noMatch() string {
	if l.filtered() && len(l.entries) > 0 && len(l.shown) == 0 {
		return fmt.Sprintf("no message matches the filter %q", dissect.Escape(l.filter))
	}
	return ""
}

// view renders height rows starting at the scroll offset.
func (l *listModel) view(st *Styles, w, height int, focused bool) []string {
	lines := make([]string, 0, height)
	for i := 0; i < height; i++ {
		row := l.offset + i
		if row >= l.len() {
			if i == 0 && l.len() == 0 {
				text := "no messages yet"
				if nm := l.noMatch(); nm != "" {
					text = nm
				}
				lines = append(lines, st.Dim.Render(fit("  ("+text+")", w)))
				continue
			}
			lines = append(lines, fit("", w))
			continue
		}
		text := l.rowText(row, w)
		e := l.at(row)
		switch {
		case row == l.cursor && focused:
			lines = append(lines, st.Selected.Render(text))
		case row == l.cursor:
			lines = append(lines, st.SelectedBlur.Render(text))
		case e.HasProblems:
			lines = append(lines, st.Problem.Render(text))
		case e.KafkaError != "":
			lines = append(lines, st.KafkaError.Render(text))
		default:
			lines = append(lines, st.Row.Render(text))
		}
	}
	return lines
}
