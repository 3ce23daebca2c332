package tui

import (
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/kdissect/kdissect/dissect"
)

// Search and a filter on body fields look at every message's tree, which
// the list does not keep. They decode in the background, a chunk of
// entries per command, so the screen stays live and shows how far they
// got; each chunk works on copies of its entries (the list may grow and
// link peers meanwhile) and answers with a message that names its job,
// so the answer of a job given up (a new search, a new filter) is
// dropped.

// scanChunk is how many messages one background command decodes.
const scanChunk = 256

// scanCache keeps the messages the background jobs decoded, bounded in
// count and in frame bytes; the jobs' goroutines and the explorer share it.
type scanCache struct {
	mu    sync.Mutex
	max   int // messages
	maxB  int // frame bytes
	bytes int
	items map[int]*scanItem
	// order is least recently used first; a small ring would do, a slice
	// is plain and the bound keeps it short.
	order []int
}

type scanItem struct {
	msg *dissect.Message // nil: it could not be decoded, which is worth remembering too
}

func newScanCache(max, maxBytes int) *scanCache {
	return &scanCache{max: max, maxB: maxBytes, items: map[int]*scanItem{}}
}

// get decodes index through the cache; nil when it cannot be decoded.
func (c *scanCache) get(index int, load Loader) *dissect.Message {
	if m, ok := c.peek(index); ok {
		return m
	}
	m, err := safeLoad(load, index)
	if err != nil {
		m = nil
	}
	c.put(index, m)
	return m
}

// peek is a cached decode, and whether there is one.
func (c *scanCache) peek(index int) (*dissect.Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[index]
	if !ok {
		return nil, false
	}
	for i, x := range c.order {
		if x == index {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	c.order = append(c.order, index)
	return it.msg, true
}

func (c *scanCache) put(index int, m *dissect.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[index]; ok {
		return
	}
	c.items[index] = &scanItem{msg: m}
	c.bytes += msgBytes(m)
	c.order = append(c.order, index)
	for len(c.order) > 1 && (len(c.order) > c.max || c.bytes > c.maxB) {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= msgBytes(c.items[old].msg)
		delete(c.items, old)
	}
}

func (c *scanCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

func msgBytes(m *dissect.Message) int {
	if m == nil {
		return 0
	}
	return len(m.Raw)
}

// bitset is one bit a list position.
type bitset []uint64

func (b bitset) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

func (b *bitset) set(i int) {
	for i/64 >= len(*b) {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

// searchJob is a search under way: the rows after (before, for N) the one
// it started from, one after the other, wrapping, until one matches.
type searchJob struct {
	id     int
	q      string // lower-cased
	dir    int
	start  int // the row it started from
	rows   int // the list's length when it started: new rows wait for the next search
	step   int // rows start+dir*1 … start+dir*step are decided
	active bool
}

// searchHits remembers, per list position, which messages were decoded
// for the query and whether they matched, so n and N over a large file
// decode each message once per query.
type searchHits struct {
	q          string
	known, hit bitset
}

// searchChunkMsg answers a search chunk: of the positions asked, the
// first examined ones did not match, and found (when >= 0) is the one
// after them that did.
type searchChunkMsg struct {
	id       int
	pos      []int
	examined int // positions decided, the match included
	found    int // index into pos, or -1
}

// searchChunk decodes the entries (copies, at the list positions pos)
// until one matches q.
func searchChunk(id int, q string, pos []int, es []Entry, load Loader, cache *scanCache) tea.Cmd {
	return func() tea.Msg {
		for i := range es {
			if entryMatches(&es[i], q, func(idx int) *dissect.Message { return cache.get(idx, load) }) {
				return searchChunkMsg{id: id, pos: pos, examined: i + 1, found: i}
			}
		}
		return searchChunkMsg{id: id, pos: pos, examined: len(es), found: -1}
	}
}

// entryMatches: the row's text, or any field of the decoded message,
// holds q (lower-cased).
func entryMatches(e *Entry, q string, decode func(int) *dissect.Message) bool {
	if strings.Contains(searchText(e), q) {
		return true
	}
	m := decode(e.Index)
	if m == nil || m.Tree == nil {
		return false
	}
	return treeMatches(m.Tree, q)
}

func treeMatches(n *dissect.Node, q string) bool {
	if nodeMatches(n, q) {
		return true
	}
	for _, c := range n.Children {
		if treeMatches(c, q) {
			return true
		}
	}
	return false
}

// nodeMatches: the field's name or its value as the tree shows it holds
// q. A redacted value is not looked at (its Display is the redaction, and
// a match on a secret would tell what it is), nor are the bytes behind it.
func nodeMatches(n *dissect.Node, q string) bool {
	if strings.Contains(strings.ToLower(n.Name), q) {
		return true
	}
	if !n.HasValue() || n.Redacted() {
		return false
	}
	return strings.Contains(strings.ToLower(n.Display()), q)
}

// filterChunkMsg answers a filter chunk: of the positions from..from+n,
// those in matched pass.
type filterChunkMsg struct {
	gen     int
	from, n int
	matched []int
}

func filterChunk(gen, from int, es []Entry, lf *listFilter, load Loader, cache *scanCache) tea.Cmd {
	return func() tea.Msg {
		var matched []int
		decode := func(idx int) *dissect.Message { return cache.get(idx, load) }
		for i := range es {
			if lf.match(&es[i], decode) {
				matched = append(matched, from+i)
			}
		}
		return filterChunkMsg{gen: gen, from: from, n: len(es), matched: matched}
	}
}
