package reassembly

import (
	"net/netip"
	"slices"
)

// flowKey names a connection in Pipeline.conns: both endpoints, the
// smaller first, so that one entry serves both directions. It holds no
// pointers (netip.Addr does), which keeps the map small and out of the
// garbage collector's way at millions of connections.
type flowKey struct{ a, b endpoint }

type endpoint struct {
	addr [16]byte
	port uint16
	v4   bool // an IPv4 address, not the same as its IPv4-mapped IPv6 form
}

func endpointOf(ap netip.AddrPort) endpoint {
	a := ap.Addr()
	return endpoint{addr: a.As16(), port: ap.Port(), v4: a.Is4()}
}

func (e endpoint) less(o endpoint) bool {
	if c := compareBytes(e.addr[:], o.addr[:]); c != 0 {
		return c < 0
	}
	if e.port != o.port {
		return e.port < o.port
	}
	return !e.v4 && o.v4
}

func compareBytes(x, y []byte) int {
	for i := range x {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func keyOf(x, y netip.AddrPort) flowKey {
	a, b := endpointOf(x), endpointOf(y)
	if b.less(a) {
		a, b = b, a
	}
	return flowKey{a, b}
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
// popping such a connection costs a check that finds nothing to do.
type wakeups []*conn

func (w wakeups) less(i, j int) bool {
	if w[i].wakeAt != w[j].wakeAt {
		return w[i].wakeAt < w[j].wakeAt
	}
	return w[i].key.ID < w[j].key.ID
}

func (w wakeups) swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].heapIdx, w[j].heapIdx = int32(i+1), int32(j+1)
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
		if at < c.wakeAt {
			c.wakeAt = at
			w.up(int(c.heapIdx - 1))
		}
		return
	}
	c.wakeAt = at
	*w = append(*w, c)
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
	(*w)[last] = nil
	*w = (*w)[:last]
	c.heapIdx = 0
	if i != last {
		w.down(i)
		w.up(i)
	}
	if cap(*w) > 1024 && len(*w) < cap(*w)/4 {
		*w = slices.Clip(append(wakeups(nil), *w...))
	}
}

// popDue removes and returns the first connection due before now, or nil.
func (w *wakeups) popDue(now int64) *conn {
	if len(*w) == 0 || (*w)[0].wakeAt >= now {
		return nil
	}
	c := (*w)[0]
	w.remove(c)
	return c
}
