package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/kdissect/kdissect/dissect"
)

// startSearch goes to the next (dir 1) or previous (-1) match of the
// search. From the tree or bytes it looks through the selected message's
// fields first; past its last match (or from the list) it goes on to the
// next message whose row or any field matches, decoding the messages in
// between in the background, and selects the first matching field there.
func (m *Model) startSearch(dir int) tea.Cmd {
	if m.query == "" {
		m.notice = "no search yet: press /"
		return nil
	}
	q := strings.ToLower(m.query)
	if m.hits.q != q {
		m.hits = searchHits{q: q}
	}
	if m.focus != paneList {
		if found, _ := m.findInTree(q, dir, false); found {
			return nil
		}
	}
	m.search = searchJob{id: m.search.id + 1, q: q, dir: dir, start: m.list.cursor, rows: m.list.len(), active: true}
	return m.searchStep()
}

func wrapRow(r, n int) int { return ((r % n) + n) % n }

// searchStep decides the rows it knows, and asks the background for the
// next chunk of those it does not.
func (m *Model) searchStep() tea.Cmd {
	s := &m.search
	for s.step < s.rows-1 {
		i := s.step + 1
		p := m.list.position(wrapRow(s.start+s.dir*i, s.rows))
		if m.hits.known.has(p) {
			if m.hits.hit.has(p) {
				s.step = i
				m.searchFound()
				return nil
			}
			s.step = i
			continue
		}
		var pos []int
		var es []Entry
		for j := i; j < s.rows && len(pos) < scanChunk; j++ {
			pp := m.list.position(wrapRow(s.start+s.dir*j, s.rows))
			if m.hits.known.has(pp) {
				break
			}
			pos = append(pos, pp)
			es = append(es, m.list.entries[pp])
		}
		return searchChunk(s.id, s.q, pos, es, m.load, m.scan)
	}
	s.active = false
	// No other message matches: go round the selected one's fields.
	if found, wrapped := m.findInTree(s.q, s.dir, true); found {
		if wrapped {
			m.notice = "search wrapped"
		}
		return nil
	}
	m.notice = "not found: " + dissect.Escape(m.query)
	return nil
}

// searchAnswer takes a chunk's answer.
func (m *Model) searchAnswer(msg searchChunkMsg) tea.Cmd {
	s := &m.search
	if !s.active || msg.id != s.id {
		return nil
	}
	for k := 0; k < msg.examined; k++ {
		m.hits.known.set(msg.pos[k])
		if k == msg.found {
			m.hits.hit.set(msg.pos[k])
		}
	}
	s.step += msg.examined
	if msg.found >= 0 {
		m.searchFound()
		return nil
	}
	return m.searchStep()
}

// searchFound selects the row at the search's step, and its first (last
// for N) matching field.
func (m *Model) searchFound() {
	s := &m.search
	s.active = false
	row := wrapRow(s.start+s.dir*s.step, s.rows)
	if (s.dir > 0 && row < s.start) || (s.dir < 0 && row > s.start) {
		m.notice = "search wrapped"
	}
	from, ok := m.here()
	m.selectRow(row)
	if m.cur != nil && m.cur.Tree != nil {
		nodes := preorder(m.cur.Tree)
		start := -1
		if s.dir < 0 {
			start = len(nodes)
		}
		m.findInTreeFrom(nodes, s.q, start, s.dir, false)
	}
	m.jumped(from, ok)
}

// stopSearch gives up a search under way; its answers are dropped.
func (m *Model) stopSearch() {
	if m.search.active {
		m.search.active = false
		m.notice = "search stopped"
	}
}

// searchProgress is the key line of a search under way.
func (m *Model) searchProgress() string {
	s := &m.search
	return fmt.Sprintf("searching %q: %d of %d messages · esc stops", dissect.Escape(m.query), s.step, max(s.rows-1, 0))
}

// findInTree selects the next field matching q after the selected one
// (before it for dir -1); wrap continues from the other end, and wrapped
// says whether it had to.
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
		if nodeMatches(nodes[j][len(nodes[j])-1], q) {
			m.tree.selectPath(nodes[j])
			m.syncFromTree()
			return true, wrapped
		}
	}
	return false, false
}
