package tui

// pane identifies one of the three panes; the focused one takes the keys.
type pane int

const (
	paneList pane = iota
	paneTree
	paneHex
	numPanes
)

type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool { return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h }

// layout is where everything goes on the screen, computed from the window
// size, the number of list rows shown and the frame size alone; View and
// the mouse handler share it.
//
// Narrow (stacked, as Wireshark's default): title, list, tree, bytes,
// status (2 lines), key line. Wide: the list on top, tree and bytes side by
// side below it.
type layout struct {
	ok       bool
	wide     bool
	contentY int // first line below the title
	contentH int // lines between the title and the status
	listHdr  rect
	treeHdr  rect
	hexHdr   rect
	legendY  int // wide only: the legend line above the bytes
	list     rect
	tree     rect
	hex      rect
	statusY  int
}

const (
	minWidth  = 40
	minHeight = 12
	wideWidth = 130 // at least this wide: tree and bytes side by side
)

func (m *Model) layout() layout {
	W, H := m.width, m.height
	var l layout
	if W < minWidth || H < minHeight {
		return l
	}
	l.ok = true
	top := 1 + m.barHeight() // the title, and the filter bar when open
	l.contentY = top
	l.contentH = H - 3 - top // less two status lines and the key line
	l.statusY = H - 3
	hexW := max(m.hex.width(), 72)
	if W >= wideWidth && W-hexW-1 >= 50 {
		l.wide = true
		avail := l.contentH - 2 // list header, bottom header
		listH := clamp(m.list.len(), 3, clamp(avail/3, 3, avail-4))
		bottomH := avail - listH
		l.listHdr = rect{0, top, W, 1}
		l.list = rect{0, top + 1, W, listH}
		y := top + 1 + listH
		treeW := W - hexW - 1
		l.treeHdr = rect{0, y, treeW, 1}
		l.hexHdr = rect{treeW + 1, y, hexW, 1}
		l.tree = rect{0, y + 1, treeW, bottomH}
		l.legendY = y + 1
		l.hex = rect{treeW + 1, y + 2, hexW, bottomH - 1}
		return l
	}
	avail := l.contentH - 3 // three pane headers
	hexH := clamp(max(m.hex.rows(), 1), 1, max(avail/4, 2))
	rest := avail - hexH
	maxList := max(rest*2/5, 1)
	// The list is as tall as the rows it shows (filtered or not) allow, so
	// a short capture or a narrow filter leaves the room to the tree.
	listH := clamp(m.list.len(), min(3, maxList), maxList)
	treeH := rest - listH
	l.listHdr = rect{0, top, W, 1}
	l.list = rect{0, top + 1, W, listH}
	l.treeHdr = rect{0, top + 1 + listH, W, 1}
	l.tree = rect{0, top + 2 + listH, W, treeH}
	l.hexHdr = rect{0, top + 2 + listH + treeH, W, 1}
	l.hex = rect{0, top + 3 + listH + treeH, W, hexH}
	return l
}

// barHeight is the lines the filter bar takes: the text and its note
// while open, none otherwise (the title names the filter applied).
func (m *Model) barHeight() int {
	if m.input == inputFilter {
		return 2
	}
	return 0
}

// paneAt is the pane (header included) under a screen cell.
func (l *layout) paneAt(x, y int) (p pane, header, ok bool) {
	switch {
	case l.listHdr.contains(x, y):
		return paneList, true, true
	case l.list.contains(x, y):
		return paneList, false, true
	case l.treeHdr.contains(x, y):
		return paneTree, true, true
	case l.tree.contains(x, y):
		return paneTree, false, true
	case l.hexHdr.contains(x, y):
		return paneHex, true, true
	case l.hex.contains(x, y):
		return paneHex, false, true
	}
	return 0, false, false
}
