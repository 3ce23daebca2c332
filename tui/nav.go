package tui

import "fmt"

// navPlace is a place to come back to: a message and the field selected
// in it (by name path, as the tree keeps its selection).
type navPlace struct {
	index int
	key   string
}

// navHistory is the back and forward stacks of the jumps (p, the audit
// view's Enter, a search), as a browser keeps them: a jump pushes where it
// left on back and forgets forward.
type navHistory struct {
	back, fwd []navPlace
}

// maxNav bounds each stack.
const maxNav = 100

func pushPlace(s []navPlace, p navPlace) []navPlace {
	s = append(s, p)
	if len(s) > maxNav {
		s = s[len(s)-maxNav:]
	}
	return s
}

// here is the place shown now, and whether there is one.
func (m *Model) here() (navPlace, bool) {
	e := m.list.selected()
	if e == nil {
		return navPlace{}, false
	}
	p := navPlace{index: e.Index}
	if r := m.tree.selectedRow(); r != nil {
		p.key = r.key
	}
	return p, true
}

// jumped records the place left by a jump, when the jump went elsewhere.
func (m *Model) jumped(from navPlace, ok bool) {
	if !ok {
		return
	}
	if to, _ := m.here(); to == from {
		return
	}
	m.nav.back = pushPlace(m.nav.back, from)
	m.nav.fwd = m.nav.fwd[:0]
}

// goBack (dir -1) or forward (+1) in the jump history. A place the
// filter hides stays on its stack, and the notice says why nothing moved.
func (m *Model) goBack(dir int) {
	from, to := &m.nav.back, &m.nav.fwd
	word := "back"
	if dir > 0 {
		from, to = to, from
		word = "forward"
	}
	if len(*from) == 0 {
		m.notice = "nothing to go " + word + " to"
		return
	}
	p := (*from)[len(*from)-1]
	row := m.list.rowOf(p.index)
	if row < 0 {
		m.notice = fmt.Sprintf("#%d is hidden by the filter", p.index)
		return
	}
	if cur, ok := m.here(); ok {
		*to = pushPlace(*to, cur)
	}
	*from = (*from)[:len(*from)-1]
	m.selectRow(row)
	if m.cur != nil && m.cur.Tree != nil {
		if path := findKey(m.cur.Tree, p.key); path != nil {
			m.tree.selectPath(path)
			m.syncFromTree()
		}
	}
	m.notice = fmt.Sprintf("%s to #%d", word, p.index)
}
