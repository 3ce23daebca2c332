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
	flt     *listFilter // what filter is, compiled; nil for none
	// decode loads a message for a filter that reads its problems (set
	// by the model; the list itself decodes nothing).
	decode func(int) *dissect.Message
	// A filter on body fields is applied in the background (Model.scan):
	// the positions below scanned are decided, those from scanned on wait.
	scanned int
	gen     int       // counts setFilter calls: a background answer for another one is dropped
	want    int       // position to select once the background filter reaches it, or -1
	shown   []int     // positions shown while filtered
	cursor  int       // row (into the shown list)
	hidden  int       // position selected before the filter hid every entry, or -1
	offset  int       // first visible row
	t0      time.Time // time of the first entry; the Time column is relative to it
	times   timeMode

	// column widths, grown as entries arrive (stable while scrolling)
	wNo, wTime, wConn, wAPI, wCorr, wInfo int
}

// timeMode is what the Time column shows (t cycles it).
type timeMode uint8

const (
	timeRelative timeMode = iota // seconds since the first message
	timeAbsolute                 // the time of day, UTC
	timeDelta                    // seconds since the previous row shown
	numTimeModes
)

func (t timeMode) String() string {
	return [...]string{"seconds since the first message", "time of day (UTC)", "seconds since the previous row shown"}[t]
}

func newList() listModel {
	return listModel{pos: map[int]int{}, hidden: -1, want: -1, wNo: 3, wTime: 8, wConn: 10, wAPI: 3, wCorr: 4}
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
		if l.filtered() && !l.flt.needsBody() {
			if l.match(&l.entries[p]) {
				l.shown = append(l.shown, p)
			}
			l.scanned = p + 1
		}
		l.wNo = max(l.wNo, len(strconv.Itoa(e.Index)))
		l.wTime = max(l.wTime, len(l.timeText(&e)))
		l.wConn = max(l.wConn, len([]rune(connText(&e))))
		l.wAPI = max(l.wAPI, len([]rune(apiText(&e))))
		l.wCorr = max(l.wCorr, len(strconv.Itoa(int(e.CorrelationID))))
		l.wInfo = max(l.wInfo, min(len(infoText(&e)), 64))
	}
}

// setFilter shows only the entries lf matches (every entry for nil). The
// cursor stays on the same entry when it is still shown, else on the next
// one shown; when the filter shows nothing, the entry is kept for the next
// filter. A filter on body fields matches nothing yet: the model feeds it
// the background's answers (addScanned), and the cursor lands on the same
// entry, or the next shown, once they reach it.
func (l *listModel) setFilter(lf *listFilter) { l.setFilterKeeping(lf, l.keepPos()) }

// keepPos is the position a new filter keeps selected: the selected
// entry's, or the one kept when a filter hid every entry; -1 for none.
func (l *listModel) keepPos() int {
	if e := l.selected(); e != nil {
		return l.pos[e.Index]
	}
	return l.hidden
}

// setFilterKeeping is setFilter keeping the entry at position keep: the
// filter bar applies each text as it is typed, and keeps the entry
// selected when it opened, not the one an intermediate text moved to.
func (l *listModel) setFilterKeeping(lf *listFilter, keep int) {
	l.gen++
	l.flt, l.filter = lf, ""
	if lf != nil {
		l.filter = lf.text
	}
	l.shown = l.shown[:0]
	l.scanned, l.want = 0, -1
	if lf != nil && !lf.needsBody() {
		for p := range l.entries {
			if l.match(&l.entries[p]) {
				l.shown = append(l.shown, p)
			}
		}
		l.scanned = len(l.entries)
	}
	l.cursor = 0
	l.hidden = -1
	l.offset = 0
	if lf.needsBody() {
		l.hidden, l.want = keep, keep
		return
	}
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
}

// scanning reports whether a filter on body fields has entries left to
// decide.
func (l *listModel) scanning() bool {
	return l.flt.needsBody() && l.scanned < len(l.entries)
}

// addScanned takes the background's answer for the positions from..from+n
// (matched among them), in order; it reports whether the selection moved.
func (l *listModel) addScanned(from, n int, matched []int) bool {
	if from != l.scanned {
		return false
	}
	before := l.selected()
	l.shown = append(l.shown, matched...)
	l.scanned = from + n
	if len(l.shown) > 0 {
		l.hidden = -1
	}
	switch {
	case l.want >= 0:
		// On the kept entry or the first shown after it as soon as the
		// scan reaches it; until then on the last shown before it.
		r := sort.SearchInts(l.shown, l.want)
		if r < len(l.shown) {
			l.cursor, l.want = r, -1
		} else {
			l.cursor = max(len(l.shown)-1, 0)
			if !l.scanning() {
				l.want = -1
			}
		}
	case len(l.shown) == 0 && !l.scanning():
		l.cursor = 0
	}
	return l.selected() != before
}

func (l *listModel) match(e *Entry) bool {
	if l.flt == nil {
		return true
	}
	return l.flt.match(e, l.decode)
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

// timeAt is the Time column of a row in the current mode.
func (l *listModel) timeAt(row int) string {
	e := l.at(row)
	switch l.times {
	case timeAbsolute:
		return e.Time.UTC().Format("15:04:05.000000")
	case timeDelta:
		prev := l.at(row - 1)
		if prev == nil {
			return strconv.FormatFloat(0, 'f', 6, 64)
		}
		return strconv.FormatFloat(e.Time.Sub(prev.Time).Seconds(), 'f', 6, 64)
	}
	return l.timeText(e)
}

// timeWidth is the Time column's width in the current mode: a delta is
// at most the time since the first message, whose width wTime follows.
func (l *listModel) timeWidth() int {
	if l.times == timeAbsolute {
		return len("15:04:05.000000")
	}
	return l.wTime
}

func (l *listModel) timeTitle() string {
	return [...]string{"Time", "UTC", "Delta"}[l.times]
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
	c := listCols{no: l.wNo, time: l.timeWidth(), conn: l.wConn, api: l.wAPI, corr: l.wCorr}
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
		cell(&b, l.timeTitle(), c.time, true)
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
		cell(&b, l.timeAt(row), c.time, true)
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
	if l.filtered() && len(l.entries) > 0 && len(l.shown) == 0 && !l.scanning() {
		return fmt.Sprintf("no message matches the filter %q", dissect.Escape(l.filter))
	}
	return ""
}

// view renders height rows starting at the scroll offset.
func (l *listModel) view(st *Styles, w, height int, focused bool, empty string) []string {
	lines := make([]string, 0, height)
	for i := 0; i < height; i++ {
		row := l.offset + i
		if row >= l.len() {
			if i == 0 && l.len() == 0 {
				text := empty
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
