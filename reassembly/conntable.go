package reassembly

import (
	"hash/maphash"
	"net/netip"
)

// connTable finds a connection by its two endpoints, in either order.
// It is an open-addressing hash table (linear probing, backward-shift
// deletion) of pointers with their hash: 16 bytes a slot, 1.3-2.7 slots a
// connection, where a map keyed by the endpoints would hold ~75 bytes a
// connection; the garbage collector sees one slice,
// and a probe reads a connection only when its hash matches. The hash is
// seeded per process, so a capture cannot be made to collide.
type connTable struct {
	slots []connSlot // len is a power of two, or 0
	n     int
	seed  maphash.Seed
}

type connSlot struct {
	hash uint64
	c    *conn
}

func (t *connTable) len() int { return t.n }

// hash is symmetric: both directions of a connection land on one slot.
func (t *connTable) hash(a, b netip.AddrPort) uint64 {
	return maphash.Comparable(t.seed, a) + maphash.Comparable(t.seed, b)
}

func (c *conn) is(a, b netip.AddrPort) bool {
	return c.key.Client == a && c.key.Server == b || c.key.Client == b && c.key.Server == a
}

func (t *connTable) get(a, b netip.AddrPort) *conn {
	if t.n == 0 {
		return nil
	}
	h := t.hash(a, b)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.c == nil {
			return nil
		}
		if s.hash == h && s.c.is(a, b) {
			return s.c
		}
	}
}

// put adds c, whose endpoints are in no other entry.
func (t *connTable) put(c *conn) {
	// At most three quarters full: a new connection is a miss, which
	// probes to the next empty slot (~8.5 slots at that load), but the
	// slots hold the hashes, so a probe reads a connection only on a match.
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.insert(connSlot{t.hash(c.key.Client, c.key.Server), c})
	t.n++
}

func (t *connTable) insert(s connSlot) {
	mask := uint64(len(t.slots) - 1)
	i := s.hash & mask
	for t.slots[i].c != nil {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

func (t *connTable) grow() {
	old := t.slots
	if t.seed == (maphash.Seed{}) {
		t.seed = maphash.MakeSeed()
	}
	t.slots = make([]connSlot, max(64, 2*len(old)))
	for _, s := range old {
		if s.c != nil {
			t.insert(s)
		}
	}
}

// delete removes c if it is in the table.
func (t *connTable) delete(c *conn) {
	if t.n == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	i := t.hash(c.key.Client, c.key.Server) & mask
	for t.slots[i].c != c {
		if t.slots[i].c == nil {
			return
		}
		i = (i + 1) & mask
	}
	// Shift back the entries after i that would no longer be found past
	// the emptied slot.
	for j := (i + 1) & mask; t.slots[j].c != nil; j = (j + 1) & mask {
		if home := t.slots[j].hash & mask; (j-home)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = connSlot{}
	t.n--
}

// all yields every connection, in no particular order.
func (t *connTable) all() func(yield func(*conn) bool) {
	return func(yield func(*conn) bool) {
		for _, s := range t.slots {
			if s.c != nil && !yield(s.c) {
				return
			}
		}
	}
}

// connList is an intrusive doubly linked list of connections: a
// connection is in at most one list (Pipeline.active or Pipeline.ended) and
// moves between them in O(1).
type connList struct {
	head, tail *conn
	n          int
}

func (l *connList) pushBack(c *conn) {
	c.prev, c.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = c
	} else {
		l.head = c
	}
	l.tail = c
	l.n++
}

func (l *connList) remove(c *conn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.tail = c.prev
	}
	c.prev, c.next = nil, nil
	l.n--
}

// touch moves c, which is in l, to the back: the most recently active.
func (l *connList) touch(c *conn) {
	if l.tail != c {
		l.remove(c)
		l.pushBack(c)
	}
}

// wakeups is a min-heap of connections by the capture time (ns) at which
// a hole or a FIN without its preceding bytes has waited ReorderWait. Keys
// may be early (lazily left after the held data drained or moved on):
// popping such a connection costs a check that finds nothing to do. The
// key lives here, not in conn, as few connections wait at any time.
type wakeups []wakeup

type wakeup struct {
	at int64
	c  *conn
}

func (w wakeups) less(i, j int) bool {
	if w[i].at != w[j].at {
		return w[i].at < w[j].at
	}
	return w[i].c.key.ID < w[j].c.key.ID
}

func (w wakeups) swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].c.heapIdx, w[j].c.heapIdx = int32(i+1), int32(j+1)
}

func (w wakeups) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !w.less(i, p) {
			break
		}
		w.swap(i, p)
		i = p
	}
}

func (w wakeups) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(w) {
			return
		}
		m := l
		if r := l + 1; r < len(w) && w.less(r, l) {
			m = r
		}
		if !w.less(m, i) {
			return
		}
		w.swap(i, m)
		i = m
	}
}

// schedule makes sure c is woken no later than at.
func (w *wakeups) schedule(c *conn, at int64) {
	if c.heapIdx > 0 {
		if i := int(c.heapIdx - 1); at < (*w)[i].at {
			(*w)[i].at = at
			w.up(i)
		}
		return
	}
	*w = append(*w, wakeup{at, c})
	c.heapIdx = int32(len(*w))
	w.up(len(*w) - 1)
}

// remove takes c out of the heap if it is there.
func (w *wakeups) remove(c *conn) {
	if c.heapIdx == 0 {
		return
	}
	i, last := int(c.heapIdx-1), len(*w)-1
	if i != last {
		w.swap(i, last)
	}
	(*w)[last] = wakeup{}
	*w = (*w)[:last]
	c.heapIdx = 0
	if i != last {
		w.down(i)
		w.up(i)
	}
	if cap(*w) > 1024 && len(*w) < cap(*w)/4 {
		*w = append(wakeups(nil), *w...)
	}
}

// popDue removes and returns the first connection due before now, or nil,
// and the time it was due.
func (w *wakeups) popDue(now int64) (*conn, int64) {
	if len(*w) == 0 || (*w)[0].at >= now {
		return nil, 0
	}
	e := (*w)[0]
	w.remove(e.c)
	return e.c, e.at
}
