package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/kdissect/kdissect/dissect"
)

// inputMode is what the prompt on the key line is collecting.
type inputMode int

const (
	inputNone inputMode = iota
	inputSearch
	inputFilter
)

// Model is the explorer. It implements tea.Model; View is a function of
// its state alone.
type Model struct {
	load   Loader
	opt    Options
	keys   KeyMap
	st     Styles
	help   help.Model
	cache  *msgCache
	width  int
	height int
	focus  pane

	list listModel
	tree treeModel
	hex  hexModel

	cur      *dissect.Message // decoded selected message (nil on error)
	curIndex int              // its Entry.Index; -1 when nothing is loaded
	curErr   error

	progress    ProgressMsg
	hasProgress bool
	closed      bool // the entry channel is closed

	audit auditView // the ACL change log (key a)

	input    inputMode
	text     []rune // the prompt's text
	query    string // last search
	showHelp bool
	notice   string // one-shot message on the key line

	reg    *dissect.Registry // the filter language's body fields
	bar    filterBar
	scan   *scanCache // the background jobs' decodes
	fjob   int        // the list filter generation whose chunk is under way, or -1
	search searchJob
	hits   searchHits
	nav    navHistory
	// undecrypted is how many TLS connections the reader could not
	// decrypt: the empty list says so.
	undecrypted int

	entriesCh  <-chan Entry
	progressCh <-chan ProgressMsg
}

// The background jobs' cache: enough for a screenful of n and N without
// decoding again, bounded in bytes for captures of large produce batches.
const (
	scanCacheSize  = 512
	scanCacheBytes = 64 << 20
)

// New builds an explorer that decodes messages with load. Feed it entries
// with EntriesMsg (Run does that from a channel).
func New(load Loader, opt Options) Model {
	m := Model{
		load:     load,
		opt:      opt,
		keys:     DefaultKeyMap(),
		help:     help.New(),
		cache:    &msgCache{},
		list:     newList(),
		tree:     newTree(),
		curIndex: -1,
		reg:      opt.Registry,
		scan:     newScanCache(scanCacheSize, scanCacheBytes),
		fjob:     -1,
	}
	if m.reg == nil {
		m.reg = dissect.Builtin()
	}
	load, scan := m.load, m.scan
	m.list.decode = func(i int) *dissect.Message { return scan.get(i, load) }
	if opt.Filter != "" {
		lf, err := compileFilter(opt.Filter, m.reg)
		if err != nil {
			// Shown where it can be mended, as if typed.
			m.input, m.text, m.bar.err = inputFilter, []rune(opt.Filter), err
		} else {
			m.list.setFilter(lf)
			m.bar.remember(lf.text)
		}
	}
	// Colour until the program says what the terminal takes
	// (tea.ColorProfileMsg): New must not look at the terminal itself.
	m.setStyles(NewStyles())
	return m
}

func (m *Model) setStyles(st Styles) {
	m.st = st
	m.help.Styles = st.Help
}

// Init starts draining the channels Run handed over.
func (m Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	if m.entriesCh != nil {
		cmds = append(cmds, drainEntries(m.entriesCh))
	}
	if m.progressCh != nil {
		cmds = append(cmds, drainProgress(m.progressCh))
	}
	return tea.Batch(cmds...)
}

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.revealAll()
	case EntriesMsg:
		m.addEntries(msg)
		return m, m.filterCmd()
	case entriesDrainedMsg:
		m.addEntries(msg.entries)
		return m, tea.Batch(drainEntries(m.entriesCh), m.filterCmd())
	case entriesClosedMsg:
		m.closed = true
	case ProgressMsg:
		m.setProgress(msg)
	case progressDrainedMsg:
		m.setProgress(msg.p)
		return m, drainProgress(m.progressCh)
	case filterChunkMsg:
		return m, m.filterAnswer(msg)
	case searchChunkMsg:
		return m, m.searchAnswer(msg)
	case progressClosedMsg:
	case tea.ColorProfileMsg:
		m.setStyles(stylesFor(msg.Profile))
	case tea.KeyPressMsg:
		return m, m.handleKeys(splitKeys(msg))
	case tea.PasteMsg:
		return m, m.handleKeys(pastedKeys(msg.Content))
	case tea.MouseClickMsg:
		m.handleMouse(msg.Mouse(), false)
	case tea.MouseWheelMsg:
		m.handleMouse(msg.Mouse(), true)
	}
	return m, nil
}

func (m *Model) setProgress(p ProgressMsg) {
	m.progress, m.hasProgress = p, true
	m.undecrypted = max(m.undecrypted, p.Undecrypted) // a report dropped while busy must not lower it
	if m.audit.open && m.auditBlind() {
		m.revealAudit() // the rows' area shrank
	}
}

// filterCmd asks the background for the next chunk of a filter on body
// fields, unless one is under way.
func (m *Model) filterCmd() tea.Cmd {
	l := &m.list
	if !l.scanning() || m.fjob == l.gen {
		return nil
	}
	end := min(l.scanned+scanChunk, len(l.entries))
	es := slices.Clone(l.entries[l.scanned:end])
	m.fjob = l.gen
	return filterChunk(l.gen, l.scanned, es, l.flt, m.load, m.scan)
}

// filterAnswer takes a chunk's answer and asks for the next.
func (m *Model) filterAnswer(msg filterChunkMsg) tea.Cmd {
	if msg.gen == m.fjob {
		m.fjob = -1
	}
	if msg.gen != m.list.gen {
		return nil
	}
	before := m.layout()
	if m.list.addScanned(msg.from, msg.n, msg.matched) {
		m.loadSelected()
	}
	m.relayout(before)
	m.list.reveal(m.layout().list.h)
	if !m.list.scanning() && m.input == inputNone && m.notice == "" {
		m.notice = m.filterNotice()
	}
	return m.filterCmd()
}

// addEntries appends to the list. The first entry is selected at once; in
// live mode a selection on the last row follows new entries.
func (m *Model) addEntries(es []Entry) {
	if len(es) == 0 {
		return
	}
	n := m.list.len()
	follow := n == 0 || (m.opt.Live && m.list.cursor == n-1)
	before := m.layout()
	m.list.add(es)
	if m.audit.open && slices.ContainsFunc(es, func(e Entry) bool { return audited(e.APIKey) }) {
		m.buildAudit() // an open change log follows the capture
		m.audit.lines = nil
	}
	if follow && m.list.len() > 0 {
		row := 0
		if m.opt.Live {
			row = m.list.len() - 1
		}
		m.selectRow(row)
	}
	m.relayout(before)
}

// relayout keeps the cursors visible when the panes moved since before
// (the list grows with the rows it shows).
func (m *Model) relayout(before layout) {
	if m.layout() != before {
		m.revealAll()
	}
}

// selectRow moves the list cursor and shows that message.
func (m *Model) selectRow(row int) {
	l := m.layout()
	m.list.moveTo(row, l.list.h)
	m.loadSelected()
}

// loadSelected decodes the selected entry (through the cache) and shows
// its tree and bytes, keeping the tree selection by name path.
func (m *Model) loadSelected() {
	e := m.list.selected()
	if e == nil {
		m.cur, m.curIndex, m.curErr = nil, -1, nil
		m.tree.setRoot(nil)
		m.hex.setData(nil, nil)
		return
	}
	if e.Index == m.curIndex {
		return
	}
	msg, err := m.cache.get(e.Index, m.load)
	if err == nil && msg == nil {
		err = fmt.Errorf("message %d: nothing decoded", e.Index)
	}
	m.cur, m.curIndex, m.curErr = msg, e.Index, err
	var root *dissect.Node
	var raw []byte
	if msg != nil {
		root, raw = msg.Tree, msg.Raw
	}
	m.tree.setRoot(root)
	m.hex.setData(raw, root)
	m.syncFromTree()
}

// syncFromTree follows a tree move: the selected node's bytes are marked
// (the mark is derived from the selection in View) and scrolled into view,
// and the hex cursor jumps to them when it lies outside.
func (m *Model) syncFromTree() {
	l := m.layout()
	m.tree.reveal(l.tree.h)
	n := m.tree.selected()
	if n == nil {
		return
	}
	if n.Source != m.hex.src && m.cur != nil {
		// A node of a decompressed batch: its bytes are the batch's, as
		// Wireshark's Decompressed tab.
		m.hex.setSource(m.cur.SourceData(int(n.Source)), m.cur.Tree, n.Source)
	}
	lo, hi := n.Offset, n.Offset+n.Size
	if m.hex.cursor < lo || m.hex.cursor >= hi {
		m.hex.cursor = clamp(lo, 0, max(len(m.hex.raw)-1, 0))
	}
	m.hex.reveal(lo, hi, l.hex.h)
}

// syncFromHex follows a hex cursor move: the innermost field covering the
// byte is selected, its ancestors expanded.
func (m *Model) syncFromHex() {
	l := m.layout()
	m.hex.reveal(m.hex.cursor, m.hex.cursor+1, l.hex.h)
	if m.cur == nil || m.cur.Tree == nil {
		return
	}
	if path := m.cur.Tree.AtSource(m.hex.src, m.hex.cursor); path != nil {
		m.tree.selectPath(path)
	}
	m.tree.reveal(l.tree.h)
}

// revealAll keeps every cursor visible after a resize, the change log's
// too: its rows get fewer or more with the height.
func (m *Model) revealAll() {
	l := m.layout()
	m.list.reveal(l.list.h)
	m.tree.reveal(l.tree.h)
	m.hex.reveal(m.hex.cursor, m.hex.cursor+1, l.hex.h)
	m.revealAudit()
}

// marked is the byte range of the selected field, [lo, hi).
func (m *Model) marked() (lo, hi int) {
	if n := m.tree.selected(); n != nil {
		return n.Offset, n.Offset + n.Size
	}
	return 0, 0
}

// handleKeys acts on keys in order. After tea.Quit the keys are not the
// explorer's any more; the other commands are the background jobs'.
func (m *Model) handleKeys(ks []tea.KeyPressMsg) tea.Cmd {
	var cmds []tea.Cmd
	for _, k := range ks {
		cmd, quit := m.handleKey(k)
		if quit {
			return tea.Quit
		}
		if cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return tea.Batch(cmds...)
}

func (m *Model) handleKey(msg tea.KeyPressMsg) (cmd tea.Cmd, quit bool) {
	m.notice = ""
	leftBar := m.bar.left
	m.bar.left = false
	if msg.Code == 'c' && msg.Mod == tea.ModCtrl {
		return nil, true
	}
	if m.input != inputNone {
		return m.inputKey(msg), false
	}
	k := &m.keys
	if m.audit.open {
		return m.auditKey(msg)
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, k.Quit):
			return nil, true
		case key.Matches(msg, k.Help, k.Cancel):
			m.showHelp = false
		}
		return nil, false
	}
	switch {
	case key.Matches(msg, k.Quit):
		return nil, true
	case key.Matches(msg, k.Help):
		m.showHelp = true
	case key.Matches(msg, k.NextPane):
		m.focus = (m.focus + 1) % numPanes
	case key.Matches(msg, k.PrevPane):
		m.focus = (m.focus + numPanes - 1) % numPanes
	case key.Matches(msg, k.FocusList):
		m.focus = paneList
	case key.Matches(msg, k.FocusTree):
		m.focus = paneTree
	case key.Matches(msg, k.FocusHex):
		m.focus = paneHex
	case key.Matches(msg, k.Search):
		m.input, m.text = inputSearch, nil
	case key.Matches(msg, k.Filter):
		m.openBar()
	case key.Matches(msg, k.Next):
		return m.startSearch(+1), false
	case key.Matches(msg, k.Prev):
		return m.startSearch(-1), false
	case key.Matches(msg, k.Peer):
		m.jumpPeer()
	case key.Matches(msg, k.Audit):
		m.openAudit()
	case key.Matches(msg, k.Back):
		m.goBack(-1)
	case key.Matches(msg, k.Forward):
		m.goBack(+1)
	case key.Matches(msg, k.Time):
		m.list.times = (m.list.times + 1) % numTimeModes
		m.notice = "Time: " + m.list.times.String()
	case key.Matches(msg, k.Cancel):
		switch {
		case m.search.active:
			m.stopSearch()
		case leftBar && m.list.filtered():
			m.notice = "filter cleared"
			return m.applyFilter(nil), false
		default:
			m.query = ""
		}
	default:
		switch m.focus {
		case paneList:
			m.listKey(msg)
		case paneTree:
			m.treeKey(msg)
		case paneHex:
			m.hexKey(msg)
		}
	}
	return nil, false
}

func (m *Model) listKey(msg tea.KeyPressMsg) {
	k := &m.keys
	h := m.layout().list.h
	row := m.list.cursor
	switch {
	case key.Matches(msg, k.Up):
		row--
	case key.Matches(msg, k.Down):
		row++
	case key.Matches(msg, k.PageUp):
		row -= max(h, 1)
	case key.Matches(msg, k.PageDown):
		row += max(h, 1)
	case key.Matches(msg, k.Top):
		row = 0
	case key.Matches(msg, k.Bottom):
		row = m.list.len() - 1
	case key.Matches(msg, k.Toggle, k.Right):
		m.focus = paneTree
		return
	default:
		return
	}
	if m.list.len() > 0 {
		m.list.want = -1 // the user chose: a background filter no longer moves the cursor
		m.selectRow(row)
	}
}

func (m *Model) treeKey(msg tea.KeyPressMsg) {
	k := &m.keys
	h := m.layout().tree.h
	t := &m.tree
	switch {
	case key.Matches(msg, k.Up):
		t.moveTo(t.cursor-1, h)
	case key.Matches(msg, k.Down):
		t.moveTo(t.cursor+1, h)
	case key.Matches(msg, k.PageUp):
		t.moveTo(t.cursor-max(h, 1), h)
	case key.Matches(msg, k.PageDown):
		t.moveTo(t.cursor+max(h, 1), h)
	case key.Matches(msg, k.Top):
		t.moveTo(0, h)
	case key.Matches(msg, k.Bottom):
		t.moveTo(len(t.rows)-1, h)
	case key.Matches(msg, k.Left):
		t.left()
	case key.Matches(msg, k.Right):
		t.right()
	case key.Matches(msg, k.Toggle):
		t.toggle()
	case key.Matches(msg, k.ExpandAll):
		t.setAll(true)
	case key.Matches(msg, k.CollapseAll):
		t.setAll(false)
	default:
		return
	}
	m.syncFromTree()
}

func (m *Model) hexKey(msg tea.KeyPressMsg) {
	k := &m.keys
	h := m.layout().hex.h
	c := m.hex.cursor
	switch {
	case key.Matches(msg, k.Left):
		c--
	case key.Matches(msg, k.Right):
		c++
	case key.Matches(msg, k.Up):
		c -= bytesPerRow
	case key.Matches(msg, k.Down):
		c += bytesPerRow
	case key.Matches(msg, k.PageUp):
		c -= bytesPerRow * max(h, 1)
	case key.Matches(msg, k.PageDown):
		c += bytesPerRow * max(h, 1)
	case key.Matches(msg, k.Top):
		c = 0
	case key.Matches(msg, k.Bottom):
		c = len(m.hex.raw) - 1
	case key.Matches(msg, k.Toggle):
		m.focus = paneTree
		return
	default:
		return
	}
	if len(m.hex.raw) == 0 {
		return
	}
	m.hex.moveTo(c, h)
	m.syncFromHex()
}

// inputKey edits the search prompt or the filter bar.
func (m *Model) inputKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.input == inputFilter {
		return m.barKey(msg)
	}
	switch {
	case msg.Code == tea.KeyEnter:
		text := strings.TrimSpace(string(m.text))
		m.input, m.text = inputNone, nil
		m.query = text
		if text != "" {
			return m.startSearch(+1)
		}
	case msg.Code == tea.KeyEscape:
		m.input, m.text = inputNone, nil
	default:
		m.editText(msg)
	}
	return nil
}

// editText takes a key that edits the prompt's text; it reports whether
// the text changed.
func (m *Model) editText(msg tea.KeyPressMsg) bool {
	switch {
	case msg.Code == tea.KeyBackspace:
		if len(m.text) > 0 {
			m.text = m.text[:len(m.text)-1]
			return true
		}
	case msg.Code == 'u' && msg.Mod == tea.ModCtrl:
		changed := len(m.text) > 0
		m.text = nil
		return changed
	default:
		changed := false
		for _, r := range msg.Text { // empty for keys that type nothing
			// Only what dissect.Escape shows as itself: a control or a
			// bidi override typed (or pasted) is dropped, not searched for.
			if strconv.IsPrint(r) {
				m.text = append(m.text, r)
				changed = true
			}
		}
		return changed
	}
	return false
}

// openBar opens the filter bar on the filter applied.
func (m *Model) openBar() {
	before := m.layout()
	m.input, m.text = inputFilter, []rune(m.list.filter)
	m.bar.err, m.bar.pos, m.bar.draft, m.bar.pending = nil, len(m.bar.history), nil, nil
	m.bar.keep = m.list.keepPos()
	m.relayout(before)
}

// barKey is a key in the filter bar: each edit applies the text when it
// compiles (the list keeps the last good filter when it does not), Enter
// and Esc leave the bar, ↑ and ↓ walk the filters applied before.
func (m *Model) barKey(msg tea.KeyPressMsg) tea.Cmd {
	b := &m.bar
	switch {
	case msg.Code == tea.KeyEnter:
		lf, err := compileFilter(string(m.text), m.reg)
		if err != nil {
			return nil // the error is on the bar; there is nothing to apply
		}
		var cmd tea.Cmd
		if !sameFilter(lf, m.list.flt) {
			cmd = m.applyFilterKeeping(lf, b.keep)
		}
		m.leaveBar()
		if m.list.filtered() {
			m.notice = m.filterNotice()
		}
		return cmd
	case msg.Code == tea.KeyEscape:
		m.leaveBar()
		b.left = true
		return nil
	case msg.Code == tea.KeyUp:
		if b.pos == 0 || len(b.history) == 0 {
			return nil
		}
		if b.pos == len(b.history) {
			b.draft = slices.Clone(m.text)
			if string(m.text) == b.history[b.pos-1] && b.pos > 1 {
				b.pos-- // the bar opened on the newest: ↑ shows the one before
			}
		}
		b.pos--
		m.text = []rune(b.history[b.pos])
	case msg.Code == tea.KeyDown:
		if b.pos >= len(b.history) {
			return nil
		}
		b.pos++
		if b.pos == len(b.history) {
			m.text = b.draft
		} else {
			m.text = []rune(b.history[b.pos])
		}
	default:
		if !m.editText(msg) {
			return nil
		}
	}
	return m.liveFilter()
}

// liveFilter applies the bar's text when it is a filter of the language.
// An empty text and a shorthand wait for Enter: a word on its way to a
// field name or to a filter would otherwise filter by its letters, and
// clearing the text to type another would show every message meanwhile.
func (m *Model) liveFilter() tea.Cmd {
	lf, err := compileFilter(string(m.text), m.reg)
	m.bar.err = err
	m.bar.pending = nil
	if err != nil {
		return nil
	}
	if lf == nil || lf.short != shortNone {
		if !sameFilter(lf, m.list.flt) {
			m.bar.pending = lf
			if lf == nil {
				m.bar.pending = &listFilter{} // "every message", on Enter
			}
		}
		return nil
	}
	if sameFilter(lf, m.list.flt) {
		return nil
	}
	return m.applyFilterKeeping(lf, m.bar.keep)
}

func sameFilter(a, b *listFilter) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.text == b.text
}

// leaveBar closes the bar on the filter applied, the last good one.
func (m *Model) leaveBar() {
	before := m.layout()
	m.input, m.text = inputNone, nil
	m.bar.err, m.bar.pending = nil, nil
	m.bar.remember(m.list.filter)
	m.relayout(before)
}

// applyFilter narrows the list and reloads when the selection moved.
func (m *Model) applyFilter(lf *listFilter) tea.Cmd {
	return m.applyFilterKeeping(lf, m.list.keepPos())
}

func (m *Model) applyFilterKeeping(lf *listFilter, keep int) tea.Cmd {
	m.search.active = false // its rows are not the list's any more
	m.list.setFilterKeeping(lf, keep)
	m.loadSelected()
	m.revealAll() // the list's height follows the rows shown
	return m.filterCmd()
}

// filterNotice is the key line after a filter is applied.
func (m *Model) filterNotice() string {
	if m.list.scanning() {
		return fmt.Sprintf("filter %q: decoding the messages to match their fields", dissect.Escape(m.list.filter))
	}
	return fmt.Sprintf("filter %q: %d of %d messages", dissect.Escape(m.list.filter), m.list.len(), len(m.list.entries))
}

// jumpPeer selects the response of a request, or the request of a response.
func (m *Model) jumpPeer() {
	e := m.list.selected()
	if e == nil {
		return
	}
	other := "response"
	if e.Direction == dissect.Response {
		other = "request"
	}
	if e.Peer < 0 {
		m.notice = "no matching " + other + " in the capture"
		return
	}
	row := m.list.rowOf(e.Peer)
	if row < 0 {
		if m.list.byIndex(e.Peer) != nil {
			m.notice = fmt.Sprintf("the %s (#%d) is hidden by the filter", other, e.Peer)
		} else {
			m.notice = fmt.Sprintf("the %s (#%d) is not loaded yet", other, e.Peer)
		}
		return
	}
	from, ok := m.here()
	m.selectRow(row)
	m.jumped(from, ok)
}

// handleMouse takes a button press (wheel false) or a wheel turn.
func (m *Model) handleMouse(msg tea.Mouse, wheel bool) {
	if m.showHelp || m.audit.open || m.input != inputNone {
		return
	}
	l := m.layout()
	if !l.ok {
		return
	}
	p, header, ok := l.paneAt(msg.X, msg.Y)
	if !ok {
		return
	}
	switch {
	case wheel && (msg.Button == tea.MouseWheelUp || msg.Button == tea.MouseWheelDown):
		d := 3
		if msg.Button == tea.MouseWheelUp {
			d = -3
		}
		switch p {
		case paneList:
			m.list.scroll(d, l.list.h)
		case paneTree:
			m.tree.scroll(d, l.tree.h)
		case paneHex:
			m.hex.scroll(d/3, l.hex.h)
		}
	case !wheel && msg.Button == tea.MouseLeft:
		m.focus = p
		if header {
			return
		}
		switch p {
		case paneList:
			if row := m.list.offset + msg.Y - l.list.y; row < m.list.len() {
				m.selectRow(row)
			}
		case paneTree:
			row := m.tree.offset + msg.Y - l.tree.y
			if row >= len(m.tree.rows) {
				return
			}
			m.tree.cursor = row
			if x := msg.X - l.tree.x; x >= m.tree.markerCol(row) && x < m.tree.markerCol(row)+2 {
				m.tree.toggle()
			}
			m.syncFromTree()
		case paneHex:
			if off := m.hex.at(msg.X-l.hex.x, msg.Y-l.hex.y, l.hex.w); off >= 0 {
				m.hex.cursor = off
				m.syncFromHex()
			}
		}
	}
}

// Accessors for tests.

func (m *Model) selectedIndex() int {
	if e := m.list.selected(); e != nil {
		return e.Index
	}
	return -1
}

func (m *Model) selectedPath() string {
	var names []string
	for _, n := range m.tree.path() {
		names = append(names, n.Name)
	}
	return strings.Join(names, " > ")
}
