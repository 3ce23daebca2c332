package tui

import (
	"strings"

	"github.com/kdissect/kdissect/dissect"
)

// treeRow is one visible line of the field tree.
type treeRow struct {
	node   *dissect.Node
	key    string // name path below the root, "/"-joined; "" for the root
	depth  int
	prefix string // the reference's "+-- " / "|   " drawing
	parent int    // row of the parent, -1 for the root
}

// treeModel is the field tree of the selected message. Expansion is kept
// by name path, so it carries over to the next message of the same shape
// (Wireshark and termshark behave the same way); so does the selection.
type treeModel struct {
	root     *dissect.Node
	expanded map[string]bool // overrides of the default (isExpanded: nodes of up to maxAutoExpand children)
	rows     []treeRow
	cursor   int
	offset   int
}

// maxAutoExpand: nodes with more children than this start collapsed, so a
// DeleteAcls with a thousand filters does not flood the tree.
const maxAutoExpand = 16

func newTree() treeModel { return treeModel{expanded: map[string]bool{}} }

func childKey(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}

func (t *treeModel) isExpanded(key string, n *dissect.Node) bool {
	if len(n.Children) == 0 {
		return false
	}
	if v, ok := t.expanded[key]; ok {
		return v
	}
	return len(n.Children) <= maxAutoExpand
}

// setRoot shows a new tree and selects the node with the same name path as
// the one selected before, or the nearest ancestor path that exists.
func (t *treeModel) setRoot(root *dissect.Node) {
	key := ""
	if n := t.selectedRow(); n != nil {
		key = n.key
	}
	t.root = root
	t.rows = t.rows[:0]
	t.cursor, t.offset = 0, 0
	if root == nil {
		return
	}
	for {
		if path := findKey(root, key); path != nil {
			t.selectPath(path)
			return
		}
		i := strings.LastIndexByte(key, '/')
		if i < 0 {
			break
		}
		key = key[:i]
	}
	t.rebuild()
}

// findKey is the path (root first) to the node with the name path key.
func findKey(root *dissect.Node, key string) []*dissect.Node {
	path := []*dissect.Node{root}
	if key == "" {
		return path
	}
	n := root
	for _, name := range strings.Split(key, "/") {
		n = n.Child(name)
		if n == nil {
			return nil
		}
		path = append(path, n)
	}
	return path
}

// rebuild flattens the expanded part of the tree into rows.
func (t *treeModel) rebuild() {
	t.rows = t.rows[:0]
	if t.root == nil {
		return
	}
	var walk func(n *dissect.Node, key string, depth int, prefix string, last bool, parent int)
	walk = func(n *dissect.Node, key string, depth int, prefix string, last bool, parent int) {
		row := treeRow{node: n, key: key, depth: depth, parent: parent}
		childPrefix := ""
		if depth > 0 {
			row.prefix = prefix + "+-- "
			if last {
				childPrefix = prefix + "    "
			} else {
				childPrefix = prefix + "|   "
			}
		}
		me := len(t.rows)
		t.rows = append(t.rows, row)
		if !t.isExpanded(key, n) {
			return
		}
		for i, c := range n.Children {
			walk(c, childKey(key, c.Name), depth+1, childPrefix, i == len(n.Children)-1, me)
		}
	}
	walk(t.root, "", 0, "", true, -1)
	t.cursor = clamp(t.cursor, 0, len(t.rows)-1)
}

func (t *treeModel) selectedRow() *treeRow {
	if t.cursor < 0 || t.cursor >= len(t.rows) {
		return nil
	}
	return &t.rows[t.cursor]
}

// selected is the node under the cursor, or nil.
func (t *treeModel) selected() *dissect.Node {
	if r := t.selectedRow(); r != nil {
		return r.node
	}
	return nil
}

// selectPath expands every ancestor on path (root first) and puts the
// cursor on its last node.
func (t *treeModel) selectPath(path []*dissect.Node) {
	if len(path) == 0 || t.root == nil || path[0] != t.root {
		return
	}
	key := ""
	changed := false
	for i, n := range path[:len(path)-1] {
		if i > 0 {
			key = childKey(key, n.Name)
		}
		if !t.isExpanded(key, n) {
			t.expanded[key] = true
			changed = true
		}
	}
	if changed || len(t.rows) == 0 || t.rows[0].node != t.root {
		t.rebuild() // a move within open fields keeps the rows: a tree may have millions
	}
	target := path[len(path)-1]
	for i := range t.rows {
		if t.rows[i].node == target {
			t.cursor = i
			return
		}
	}
}

// path is the path (root first) to the selected node.
func (t *treeModel) path() []*dissect.Node {
	var out []*dissect.Node
	for r := t.cursor; r >= 0 && r < len(t.rows); r = t.rows[r].parent {
		out = append(out, t.rows[r].node)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// setExpanded expands or collapses the selected node.
func (t *treeModel) setExpanded(on bool) {
	r := t.selectedRow()
	if r == nil || len(r.node.Children) == 0 {
		return
	}
	t.expanded[r.key] = on
	node := r.node
	t.rebuild()
	t.cursor = t.rowOfNode(node)
}

func (t *treeModel) rowOfNode(n *dissect.Node) int {
	for i := range t.rows {
		if t.rows[i].node == n {
			return i
		}
	}
	return 0
}

func (t *treeModel) toggle() {
	if r := t.selectedRow(); r != nil {
		t.setExpanded(!t.isExpanded(r.key, r.node))
	}
}

// left collapses an expanded node, otherwise goes to the parent.
func (t *treeModel) left() {
	r := t.selectedRow()
	if r == nil {
		return
	}
	if t.isExpanded(r.key, r.node) {
		t.setExpanded(false)
	} else if r.parent >= 0 {
		t.cursor = r.parent
	}
}

// right expands a collapsed node, otherwise goes to its first child.
func (t *treeModel) right() {
	r := t.selectedRow()
	if r == nil || len(r.node.Children) == 0 {
		return
	}
	if !t.isExpanded(r.key, r.node) {
		t.setExpanded(true)
	} else if t.cursor+1 < len(t.rows) {
		t.cursor++
	}
}

// setAll expands or collapses every node (collapse keeps the root open).
func (t *treeModel) setAll(on bool) {
	if t.root == nil {
		return
	}
	node := t.selected()
	var walk func(n *dissect.Node, key string)
	walk = func(n *dissect.Node, key string) {
		if len(n.Children) > 0 {
			t.expanded[key] = on || key == ""
		}
		for _, c := range n.Children {
			walk(c, childKey(key, c.Name))
		}
	}
	walk(t.root, "")
	t.rebuild()
	t.cursor = 0
	for i := range t.rows {
		if t.rows[i].node == node {
			t.cursor = i
		}
	}
}

func (t *treeModel) moveTo(row, height int) {
	t.cursor = clamp(row, 0, len(t.rows)-1)
	t.reveal(height)
}

func (t *treeModel) reveal(height int) {
	t.offset = revealRow(t.offset, t.cursor, height, len(t.rows))
}

func (t *treeModel) scroll(d, height int) {
	t.offset = clamp(t.offset+d, 0, max(len(t.rows)-height, 0))
}

// label is a node's line in the tree, dissect's head without the doc:
// NAME TYPE = VALUE [0xOFFSET, SIZEB], escaped for the terminal.
func label(n *dissect.Node) string { return string(dissect.AppendHead(nil, n)) }

// marker is the expand/collapse triangle of a row, "" for a leaf.
func (t *treeModel) marker(r *treeRow) string {
	switch {
	case len(r.node.Children) == 0:
		return ""
	case t.isExpanded(r.key, r.node):
		return "▾ "
	default:
		return "▸ "
	}
}

// rowText is one row unstyled: a gutter ('>' cursor, '!' problems), the
// tree drawing, the triangle and the label.
func (t *treeModel) rowText(i, w int) string {
	r := &t.rows[i]
	var b strings.Builder
	if i == t.cursor {
		b.WriteByte('>')
	} else {
		b.WriteByte(' ')
	}
	if len(r.node.Problems) > 0 {
		b.WriteByte('!')
	} else {
		b.WriteByte(' ')
	}
	b.WriteString(r.prefix)
	b.WriteString(t.marker(r))
	b.WriteString(label(r.node))
	return fit(b.String(), w)
}

// markerCol is the screen column (within the pane) of the row's triangle.
func (t *treeModel) markerCol(i int) int { return 2 + len(t.rows[i].prefix) }

func (t *treeModel) view(st *Styles, w, height int, focused bool, empty string) []string {
	lines := make([]string, 0, height)
	for i := 0; i < height; i++ {
		row := t.offset + i
		if row >= len(t.rows) {
			if i == 0 {
				lines = append(lines, st.Dim.Render(fit("  "+empty, w)))
				continue
			}
			lines = append(lines, fit("", w))
			continue
		}
		text := t.rowText(row, w)
		switch {
		case row == t.cursor && focused:
			lines = append(lines, st.Selected.Render(text))
		case row == t.cursor:
			lines = append(lines, st.SelectedBlur.Render(text))
		case len(t.rows[row].node.Problems) > 0:
			lines = append(lines, st.Problem.Render(text))
		default:
			lines = append(lines, st.Row.Render(text))
		}
	}
	return lines
}

// preorder lists every node with its path, for search.
func preorder(root *dissect.Node) [][]*dissect.Node {
	var out [][]*dissect.Node
	var walk func(n *dissect.Node, path []*dissect.Node)
	walk = func(n *dissect.Node, path []*dissect.Node) {
		path = append(path[:len(path):len(path)], n)
		out = append(out, path)
		for _, c := range n.Children {
			walk(c, path)
		}
	}
	if root != nil {
		walk(root, nil)
	}
	return out
}
