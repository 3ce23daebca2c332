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

	entriesCh  <-chan Entry
	progressCh <-chan ProgressMsg
}

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
	case entriesDrainedMsg:
		m.addEntries(msg.entries)
		return m, drainEntries(m.entriesCh)
	case entriesClosedMsg:
		m.closed = true
	case ProgressMsg:
		m.progress, m.hasProgress = msg, true
	case progressDrainedMsg:
		m.progress, m.hasProgress = msg.p, true
		return m, drainProgress(m.progressCh)
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
	if m.audit.open && slices.ContainsFunc(es, func(e Entry) bool { return e.APIKey == 30 || e.APIKey == 31 }) {
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

// handleKeys acts on keys in order. The only command a key gives is
// tea.Quit, and the keys after it are not the explorer's any more.
func (m *Model) handleKeys(ks []tea.KeyPressMsg) tea.Cmd {
	for _, k := range ks {
		if cmd := m.handleKey(k); cmd != nil {
			return cmd
		}
	}
	return nil
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	m.notice = ""
	if msg.Code == 'c' && msg.Mod == tea.ModCtrl {
		return tea.Quit
	}
	if m.input != inputNone {
		m.inputKey(msg)
		return nil
	}
	k := &m.keys
	if m.audit.open {
		return m.auditKey(msg)
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, k.Quit):
			return tea.Quit
		case key.Matches(msg, k.Help, k.Cancel):
			m.showHelp = false
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
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
		m.input, m.text = inputFilter, []rune(m.list.filter)
	case key.Matches(msg, k.Next):
		m.findNext(+1)
	case key.Matches(msg, k.Prev):
		m.findNext(-1)
	case key.Matches(msg, k.Peer):
		m.jumpPeer()
	case key.Matches(msg, k.Audit):
		m.openAudit()
	case key.Matches(msg, k.Cancel):
		m.query = ""
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
	return nil
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

// inputKey edits the search/filter prompt.
func (m *Model) inputKey(msg tea.KeyPressMsg) {
	switch {
	case msg.Code == tea.KeyEnter:
		text := strings.TrimSpace(string(m.text))
		mode := m.input
		m.input, m.text = inputNone, nil
		if mode == inputSearch {
			m.query = text
			if text != "" {
				m.findNext(+1)
			}
		} else {
			m.applyFilter(text)
		}
	case msg.Code == tea.KeyEscape:
		m.input, m.text = inputNone, nil
	case msg.Code == tea.KeyBackspace:
		if len(m.text) > 0 {
			m.text = m.text[:len(m.text)-1]
		}
	case msg.Code == 'u' && msg.Mod == tea.ModCtrl:
		m.text = nil
	default:
		for _, r := range msg.Text { // empty for keys that type nothing
			// Only what dissect.Escape shows as itself: a control or a
			// bidi override typed (or pasted) is dropped, not searched for.
			if strconv.IsPrint(r) {
				m.text = append(m.text, r)
			}
		}
	}
}

// applyFilter narrows the list and reloads when the selection moved.
func (m *Model) applyFilter(f string) {
	m.list.setFilter(f)
	m.loadSelected()
	m.revealAll() // the list's height follows the rows shown
	if m.list.filtered() {
		m.notice = fmt.Sprintf("filter %q: %d of %d messages", dissect.Escape(m.list.filter), m.list.len(), len(m.list.entries))
	}
}

// findNext goes to the next (dir 1) or previous (-1) match of the search.
// From the tree or bytes it looks through the selected message's fields
// first; past its last match (or from the list) it moves to the next
// message whose row matches, and to the first matching field there.
func (m *Model) findNext(dir int) {
	if m.query == "" {
		m.notice = "no search yet: press /"
		return
	}
	q := strings.ToLower(m.query)
	if m.focus != paneList {
		if found, _ := m.findInTree(q, dir, false); found {
			return
		}
	}
	if m.findEntry(q, dir) {
		return
	}
	// No other message matches: go round the selected one's fields.
	if found, wrapped := m.findInTree(q, dir, true); found {
		if wrapped {
			m.notice = "search wrapped"
		}
		return
	}
	m.notice = "not found: " + dissect.Escape(m.query)
}

// findInTree selects the next node whose label matches q after the
// selected one (before it for dir -1); wrap continues from the other end,
// and wrapped says whether it had to.
func (m *Model) findInTree(q string, dir int, wrap bool) (found, wrapped bool) {
	if m.cur == nil || m.cur.Tree == nil {
		return false, false
	}
	nodes := preorder(m.cur.Tree)
	cur := m.tree.selected()
	start := -1
	for i, p := range nodes {
		if p[len(p)-1] == cur {
			start = i
		}
	}
	return m.findInTreeFrom(nodes, q, start, dir, wrap)
}

func (m *Model) findInTreeFrom(nodes [][]*dissect.Node, q string, start, dir int, wrap bool) (found, wrapped bool) {
	n := len(nodes)
	for i := 1; i <= n; i++ {
		j := start + dir*i
		if j < 0 || j >= n {
			if !wrap {
				return false, false
			}
			j = ((j % n) + n) % n
			wrapped = true
		}
		if strings.Contains(strings.ToLower(label(nodes[j][len(nodes[j])-1])), q) {
			m.tree.selectPath(nodes[j])
			m.syncFromTree()
			return true, wrapped
		}
	}
	return false, false
}

// findEntry selects the next message whose row matches q, wrapping, and
// its first (last for dir -1) matching field.
func (m *Model) findEntry(q string, dir int) bool {
	n := m.list.len()
	for i := 1; i < n; i++ {
		row := ((m.list.cursor+dir*i)%n + n) % n
		if !strings.Contains(searchText(m.list.at(row)), q) {
			continue
		}
		if (dir > 0 && row < m.list.cursor) || (dir < 0 && row > m.list.cursor) {
			m.notice = "search wrapped"
		}
		m.selectRow(row)
		if m.cur != nil && m.cur.Tree != nil {
			nodes := preorder(m.cur.Tree)
			start := -1
			if dir < 0 {
				start = len(nodes)
			}
			m.findInTreeFrom(nodes, q, start, dir, false)
		}
		return true
	}
	return false
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
	m.selectRow(row)
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
