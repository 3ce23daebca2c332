package reassembly

import (
	"fmt"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// merge interleaves the packets of several conversations in the order
// given: one packet of conversation i for each i in order.
func merge(vs []*testkit.Conn, order ...int) []testkit.Packet {
	next := make([]int, len(vs))
	var out []testkit.Packet
	for _, i := range order {
		out = append(out, vs[i].Cap.Packets[next[i]])
		next[i]++
	}
	return out
}

// TestEvictLeastRecentlyActive: with MaxConns 2, a third connection ends
// the one whose last packet is oldest, not the oldest connection: its cut
// frame is Incomplete with reason "evicted", after the Evicted event and
// before its ConnEnd.
func TestEvictLeastRecentlyActive(t *testing.T) {
	cliA := netip.MustParseAddrPort("10.0.0.1:40001")
	cliB := netip.MustParseAddrPort("10.0.0.1:40002")
	cliC := netip.MustParseAddrPort("10.0.0.1:40003")
	a, b, c := newConv(cliA, srv, 100, 500), newConv(cliB, srv, 200, 600), newConv(cliC, srv, 300, 700)
	qa, qb := kreq(30, 3, 1, "a", 20), kreq(31, 3, 2, "b", 20)
	a.Handshake()
	a.Send(true, qa[:10])
	b.Handshake()
	b.Send(true, qb[:12])
	a.Send(true, qa[10:])
	c.Handshake()
	c.Send(true, kreq(30, 3, 3, "c", 5))
	// Packets 1-4 a, 5-8 b, 9 a, 10-13 c: a was active after b.
	cfg := testConfig()
	cfg.MaxConns = 2
	r := runAt(t, cfg, merge([]*testkit.Conn{a, b, c}, 0, 0, 0, 0, 1, 1, 1, 1, 0, 2, 2, 2, 2))
	wantLines(t, r,
		fmt.Sprintf("9: frame c1> off=0 size=%d pk=[4 9]", len(qa)),
		// b's last packet was number 8, at its own conversation's 3 ms.
		"10: evicted c2 10.0.0.1:40002>10.0.0.2:9092 last=3ms max=2",
		fmt.Sprintf("10: incomplete c2> off=0 have=12 want=%d evicted", len(qb)),
		"10: end c2 10.0.0.1:40002>10.0.0.2:9092 reset=false",
		"13: frame c3> off=0 size=20 pk=[13]",
		"close: end c1 10.0.0.1:40001>10.0.0.2:9092 reset=false",
		"close: end c3 10.0.0.1:40003>10.0.0.2:9092 reset=false",
	)
	var p *Pipeline
	_, p = runWith(t, cfg, merge([]*testkit.Conn{a, b, c}, 0, 0, 0, 0, 1, 1, 1, 1, 0, 2, 2, 2, 2), nil, false)
	if st := p.Stats(); st.Evicted != 1 || st.Connections != 3 {
		t.Errorf("stats: %d evicted, %d connections; want 1, 3", st.Evicted, st.Connections)
	}
}

// TestEvictForgetsEndedConnectionsFirst: a connection that ended is only
// remembered for its late packets; making room forgets it silently
// before any open connection is evicted.
func TestEvictForgetsEndedConnectionsFirst(t *testing.T) {
	cliA := netip.MustParseAddrPort("10.0.0.1:40001")
	cliB := netip.MustParseAddrPort("10.0.0.1:40002")
	a, b := newConv(cliA, srv, 100, 500), newConv(cliB, srv, 200, 600)
	a.Handshake()
	a.Send(true, kreq(30, 3, 1, "a", 3))
	a.Fin(true)
	a.Fin(false)
	b.Handshake()
	b.Send(true, kreq(31, 3, 2, "b", 4))
	cfg := testConfig()
	cfg.MaxConns = 1
	r, p := runWith(t, cfg, merge([]*testkit.Conn{a, b}, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1), nil, true)
	wantLines(t, r,
		"4: frame c1> off=0 size=18 pk=[4]",
		"6: end c1 10.0.0.1:40001>10.0.0.2:9092 reset=false",
		"10: frame c2> off=0 size=19 pk=[10]",
		"close: end c2 10.0.0.1:40002>10.0.0.2:9092 reset=false",
	)
	if st := p.Stats(); st.Evicted != 0 {
		t.Errorf("%d evicted, want 0", st.Evicted)
	}
}

// TestWakeups: the deadline heap pops in time order (ties by connection
// ID), keeps the earlier of two deadlines for a connection, and removes
// from the middle.
func TestWakeups(t *testing.T) {
	cs := make([]*conn, 7)
	for i := range cs {
		cs[i] = &conn{key: ConnKey{ID: uint64(i + 1)}}
	}
	var w wakeups
	for i, at := range []int64{50, 20, 70, 20, 90, 10, 60} {
		w.schedule(cs[i], at)
	}
	w.schedule(cs[4], 30)  // earlier: moves up
	w.schedule(cs[0], 100) // later: ignored
	w.remove(cs[6])
	w.remove(cs[6]) // not there any more: nothing
	var got []string
	for c, at := w.popDue(60); c != nil; c, at = w.popDue(60) {
		got = append(got, fmt.Sprintf("%d@%d", c.key.ID, at))
	}
	if g, want := fmt.Sprint(got), "[6@10 2@20 4@20 5@30 1@50]"; g != want {
		t.Errorf("popped %s, want %s", g, want)
	}
	if len(w) != 1 || w[0].c != cs[2] || cs[2].heapIdx != 1 {
		t.Fatalf("left %d, want c3 alone at 1", len(w))
	}
	for _, c := range cs {
		if c != cs[2] && c.heapIdx != 0 {
			t.Errorf("c%d still has heap index %d", c.key.ID, c.heapIdx)
		}
	}
	if c, at := w.popDue(70); c != nil {
		t.Errorf("c%d due at 70, wakes at %d: only before", c.key.ID, at)
	}
}

// TestTickTakesDueConnectionsInCreationOrder: holes that expire in the
// same tick are given up on connection by connection in creation order,
// whichever hole is older, as a pass over all connections would.
func TestTickTakesDueConnectionsInCreationOrder(t *testing.T) {
	cliA := netip.MustParseAddrPort("10.0.0.1:40001")
	cliB := netip.MustParseAddrPort("10.0.0.1:40002")
	cliC := netip.MustParseAddrPort("10.0.0.1:40003")
	a, b, c := newConv(cliA, srv, 100, 500), newConv(cliB, srv, 200, 600), newConv(cliC, srv, 300, 700)
	a.Handshake()
	b.Handshake()
	c.Handshake()
	qa, qb := kreq(30, 3, 1, "a", 10), kreq(31, 3, 2, "b", 10)
	b.Raw(true, b.CSeq+5, "A", qb[5:], -1) // hole of 5 bytes, held at b's 3 ms
	a.Cap.Wait(500 * time.Millisecond)
	a.Raw(true, a.CSeq+3, "A", qa[3:], -1) // hole of 3 bytes, held at a's 503 ms
	c.Cap.Wait(3 * time.Second)
	c.Send(true, kreq(30, 3, 3, "c", 1)) // at 3.003 s: both holes are 2 s old
	cfg := testConfig()
	cfg.ReorderWait = 2 * time.Second
	r := runAt(t, cfg, merge([]*testkit.Conn{a, b, c}, 0, 0, 0, 1, 1, 1, 2, 2, 2, 1, 0, 2))
	wantLines(t, r,
		"12: gap c1> off=0 len=3",
		"12: gap c2> off=0 len=5",
		"12: frame c3> off=0 size=16 pk=[12]",
		fmt.Sprintf("close: unparseable c1> off=3 len=%d", len(qa)-3),
		"close: end c1 10.0.0.1:40001>10.0.0.2:9092 reset=false",
		fmt.Sprintf("close: unparseable c2> off=5 len=%d", len(qb)-5),
		"close: end c2 10.0.0.1:40002>10.0.0.2:9092 reset=false",
		"close: end c3 10.0.0.1:40003>10.0.0.2:9092 reset=false",
	)
}

// TestHeldBuffersReturned: many connections each hold data behind a
// 1-byte hole, up to the total cap; once the holes are given up on,
// nothing is accounted, no direction keeps a large buffer and the
// reuse pool stays within its bound.
func TestHeldBuffersReturned(t *testing.T) {
	const conns, segs = 40, 12
	var stream []byte
	for i := int32(1); len(stream) < segs*1448+1; i++ {
		stream = append(stream, kreq(0, 9, i, "producer", 3000)...)
	}
	var pkts []testkit.Packet
	for i := range conns {
		v := newConv(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 9, 0, byte(i)}), 40000), srv, uint32(i)*1000, 7)
		v.Raw(true, v.CSeq, "S", nil, -1)
		for s := 0; s < segs; s++ {
			v.Raw(true, v.CSeq+1+uint32(1+s*1448), "A", stream[1+s*1448:1+(s+1)*1448], -1)
		}
		pkts = append(pkts, v.Cap.Packets...)
	}
	// All at about the same time; then one packet past ReorderWait.
	late := newConv(netip.MustParseAddrPort("10.9.1.1:40000"), srv, 1, 1)
	late.Cap.Wait(4 * time.Second)
	late.Raw(true, 1, "S", nil, -1)
	pkts = append(pkts, late.Cap.Packets...)

	cfg := testConfig()
	cfg.MaxTotalBuffer = 20 * segs * 1448 // half the connections fit
	// As the CLI does: Produce bodies are not kept, so nothing stays reserved.
	cfg.Framing = testRules{keep: func(key int16) bool { return key != 0 }}
	r := &recorder{}
	p := NewPipeline(cfg, r.emit)
	peak := 0
	for i, k := range pkts {
		p.Packet(k.Data, k.CI, k.Link)
		checkBuffers(t, p)
		peak = max(peak, p.buffered)
		if i == len(pkts)-2 && p.buffered != 20*segs*1448 {
			t.Fatalf("before the holes expire: %d bytes held, want %d", p.buffered, 20*segs*1448)
		}
	}
	if p.buffered != 0 {
		t.Fatalf("after ReorderWait: %d bytes still accounted", p.buffered)
	}
	if peak > cfg.MaxTotalBuffer {
		t.Errorf("peak %d bytes held, over the %d cap", peak, cfg.MaxTotalBuffer)
	}
	if gaps := eventsOf[*Gap](r); len(gaps) != conns {
		t.Errorf("%d gaps, want one per connection", len(gaps))
	} else {
		for _, g := range gaps {
			if g.StreamOffset != 0 || g.Length != 1 {
				t.Errorf("c%d: gap at %d of %d bytes, want 0 and 1", g.ConnID, g.StreamOffset, g.Length)
			}
		}
	}
	if limits := eventsOf[*BufferLimit](r); len(limits) != conns-20 {
		t.Errorf("%d buffer limits, want %d", len(limits), conns-20)
	}
	if len(p.waits) != 0 {
		t.Errorf("%d connections still wait for a hole", len(p.waits))
	}
	// Every chunk is free again, for reuse, until ticks without use unmap
	// the slabs: at most half the idle chunks a tick, in whole slabs.
	// 20 connections held 12 segments each: 240 chunks in 4 slabs.
	slabs := func() (n int) {
		for _, s := range p.slabs {
			if s != nil {
				n++
			}
		}
		return n
	}
	if n, s := len(p.free), slabs(); n != 4*slabChunks || s != 4 {
		t.Errorf("after the holes: %d free chunks in %d slabs, want %d in 4", n, s, 4*slabChunks)
	}
	for i, want := range []int{2, 1, 0, 0} {
		late.Cap.Wait(time.Second)
		late.Raw(true, 2, "A", nil, -1)
		k := late.Cap.Packets[len(late.Cap.Packets)-1]
		p.Packet(k.Data, k.CI, k.Link)
		if s := slabs(); s != want || len(p.free) != want*slabChunks {
			t.Errorf("idle tick %d: %d slabs, %d free chunks; want %d slabs", i+1, s, len(p.free), want)
		}
	}
	for c := range p.conns.all() {
		for _, h := range c.h {
			if h == nil {
				continue
			}
			f := &h.fr
			if h.ord.ooo != nil || cap(f.buf) > keepBuf || cap(f.marks) > keepMarks ||
				(f.resyncState != nil && (cap(f.rbuf) > keepResync || cap(f.spare) > keepResync)) {
				t.Errorf("c%d keeps buffers: ooo %d, buf %d, marks %d", c.key.ID, cap(h.ord.ooo), cap(f.buf), cap(f.marks))
			}
		}
	}
	p.Close()
	if p.buffered != 0 || p.conns.len() != 0 || p.active.n != 0 || p.ended.n != 0 {
		t.Errorf("after Close: %d bytes, %d connections, lists %d+%d", p.buffered, p.conns.len(), p.active.n, p.ended.n)
	}
}

// BenchmarkIdleConnMemory reports the heap held per idle connection of a
// SYN flood (a SYN and a 40-byte head of a 1 MiB request each, never
// closed), the case that sets how many connections fit in memory.
func BenchmarkIdleConnMemory(b *testing.B) {
	const n = 100000
	pkts := make([]testkit.Packet, 0, 2*n)
	head := kreq(0, 9, 1, "flood-client", 20)[:40]
	head[0], head[1], head[2], head[3] = 0, 0x10, 0, 0
	for i := range n {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{11, 0, byte(i >> 8), byte(i)}), uint16(20000+i%40000))
		v := newConv(c, srv, uint32(i)*7919, 1)
		v.Raw(true, v.CSeq, "S", nil, -1)
		v.Raw(true, v.CSeq+1, "A", head, -1)
		pkts = append(pkts, v.Cap.Packets...)
	}
	b.ResetTimer()
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p := NewPipeline(testConfig(), func(Event) {})
		for _, k := range pkts {
			p.Packet(k.Data, k.CI, k.Link)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-B/conn")
		if p.conns.len() != n {
			b.Fatalf("%d connections, want %d", p.conns.len(), n)
		}
	}
}

// TestConnTable: connections are found from either direction, deleting
// one keeps every other reachable (backward shift across wrapped
// clusters), and the table grows past its half-full bound.
func TestConnTable(t *testing.T) {
	var tab connTable
	live := map[*conn]bool{}
	var all []*conn
	for i := range 3000 {
		c := &conn{key: ConnKey{
			Client: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 7, byte(i >> 8), byte(i)}), uint16(1000+i%7)),
			Server: srv, ID: uint64(i + 1)}}
		tab.put(c)
		live[c] = true
		all = append(all, c)
	}
	if tab.len() != 3000 || len(tab.slots) != 4096 {
		t.Fatalf("%d connections in %d slots, want 3000 in 4096", tab.len(), len(tab.slots))
	}
	for i, c := range all {
		if i%3 != 0 {
			tab.delete(c)
			delete(live, c)
		}
	}
	tab.delete(all[1]) // gone already: nothing
	for _, c := range all {
		got, back := tab.get(c.key.Client, c.key.Server), tab.get(c.key.Server, c.key.Client)
		if want := live[c]; (got == c) != want || got != back || (!want && got != nil) {
			t.Fatalf("c%d (live %v): found %v forward, %v backward", c.key.ID, want, got != nil, back != nil)
		}
	}
	n := 0
	for c := range tab.all() {
		if !live[c] {
			t.Errorf("c%d listed after delete", c.key.ID)
		}
		n++
	}
	if n != len(live) || tab.len() != len(live) {
		t.Errorf("%d listed, %d counted, want %d", n, tab.len(), len(live))
	}
}

// TestIdleTimeoutByLastActivity: the idle timeout ends the connection
// that went quiet, not the oldest one, and touches nothing else.
func TestIdleTimeoutByLastActivity(t *testing.T) {
	cliA := netip.MustParseAddrPort("10.0.0.1:40001")
	cliB := netip.MustParseAddrPort("10.0.0.1:40002")
	cliC := netip.MustParseAddrPort("10.0.0.1:40003")
	a, b, c := newConv(cliA, srv, 100, 500), newConv(cliB, srv, 200, 600), newConv(cliC, srv, 300, 700)
	a.Handshake()
	b.Handshake()
	qa := kreq(30, 3, 1, "a", 4)
	a.Cap.Wait(8 * time.Second)
	a.Send(true, qa) // a: active at 8 s
	c.Cap.Wait(12 * time.Second)
	c.Handshake() // at 12 s: b, quiet since 2 ms, is 10 s idle; a is not
	cfg := testConfig()
	cfg.IdleTimeout = 10 * time.Second
	r := runAt(t, cfg, merge([]*testkit.Conn{a, b, c}, 0, 0, 0, 1, 1, 1, 0, 2, 2, 2))
	wantLines(t, r,
		fmt.Sprintf("7: frame c1> off=0 size=%d pk=[7]", len(qa)),
		"8: end c2 10.0.0.1:40002>10.0.0.2:9092 reset=false",
		"close: end c1 10.0.0.1:40001>10.0.0.2:9092 reset=false",
		"close: end c3 10.0.0.1:40003>10.0.0.2:9092 reset=false",
	)
}

// TestOneSidedClose: a client that opened with its SYN and closed while the
// broker sent nothing, not even its SYN-ACK, ends at its FIN (the broker's
// side is not captured); picked up without its SYN, it waits for the
// broker, whose answer may follow the FIN.
func TestOneSidedClose(t *testing.T) {
	q := kreq(30, 3, 1, "a", 4)
	v := newConv(cli, srv, 100, 500)
	v.Raw(true, 100, "S", nil, -1)
	v.CSeq++
	v.Send(true, q)
	v.Fin(true)
	r := runAt(t, testConfig(), v.Cap.Packets)
	wantLines(t, r,
		fmt.Sprintf("2: frame c1> off=0 size=%d pk=[2]", len(q)),
		"3: "+endC1,
	)

	w := newConv(cli, srv, 100, 500)
	w.Send(true, q)
	w.Fin(true)
	w.Send(false, kresp(1, 3))
	r = runAt(t, testConfig(), w.Cap.Packets)
	wantLines(t, r,
		fmt.Sprintf("1: frame c1> off=0 size=%d pk=[1]", len(q)),
		"3: frame c1< off=0 size=11 pk=[3]",
		"close: "+endC1,
	)
}
