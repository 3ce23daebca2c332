package reassembly

import (
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// stamp sets a packet's capture time to t0+d.
func stamp(p testkit.Packet, d time.Duration) testkit.Packet {
	p.CI.Timestamp = t0.Add(d)
	return p
}

var cli2 = netipMust("10.0.0.1:40001")

// TestReorderWaitUsesCaptureTime: a hole is given up on once packet
// timestamps (of any connection) are ReorderWait past the segment held
// behind it. Housekeeping runs once a second of capture time, so the Gap
// comes with the first packet after the tick that follows the expiry. The
// test runs in microseconds of wall time with timestamps from 2024: only
// capture time can expire anything.
func TestReorderWaitUsesCaptureTime(t *testing.T) {
	v := opened() // 1-3 at 0, 1, 2 ms
	q, r2 := kreq(30, 3, 1, "c", 40), kreq(31, 3, 2, "c", 5)
	s := v.CSeq
	v.Raw(true, s, "A", q[:20], -1)    // 4 at 3 ms
	v.Raw(true, s+40, "A", q[40:], -1) // 5 at 4 ms: held, expires at 2.004 s
	w := newConv(cli2, srv, 70000, 80000)
	w.Handshake()
	w1 := kreq(32, 3, 9, "w", 5)
	w.Send(true, w1)
	pkts := append(v.Cap.Packets,
		stamp(w.Cap.Packets[0], time.Second),           // 6: tick, nothing old enough
		stamp(w.Cap.Packets[1], 2*time.Second),         // 7: tick, hole 1.996 s old
		stamp(w.Cap.Packets[2], 2005*time.Millisecond), // 8: past the expiry, no tick
		stamp(w.Cap.Packets[3], 3*time.Second))         // 9: tick: the hole becomes a Gap
	v.Raw(true, s+55, "A", r2, -1)
	pkts = append(pkts, stamp(v.Cap.Packets[len(v.Cap.Packets)-1], 3500*time.Millisecond)) // 10
	cfg := testConfig()
	cfg.ReorderWait = 2 * time.Second
	r := runAt(t, cfg, pkts)
	wantLines(t, r,
		"9: gap c1> off=20 len=20",
		"9: incomplete c1> off=0 have=35 want=55 gap",
		"9: frame c2> off=0 size=20 pk=[9]",
		"10: frame c1> off=55 size=20 pk=[10]",
		"close: "+endC1,
		"close: "+endLine(2, cli2, srv, false),
	)
	wantFrames(t, r, w1, r2)
	if g := eventsOf[*Gap](r); len(g) != 1 || !g[0].Time.Equal(t0.Add(3*time.Second)) {
		t.Errorf("gap time: %v", g)
	}
}

// TestIdleTimeoutEndsConnection: a connection without packets for
// IdleTimeout of capture time ends with its partial frame Incomplete; a
// later packet on the same 4-tuple starts a new connection mid-stream.
func TestIdleTimeoutEndsConnection(t *testing.T) {
	v := opened()
	q := kreq(30, 3, 1, "c", 40)
	v.Send(true, q[:20]) // 4 at 3 ms
	w := newConv(cli2, srv, 70000, 80000)
	w.Handshake()
	v.Send(true, q[20:])
	pkts := append(v.Cap.Packets[:4],
		stamp(w.Cap.Packets[0], 5*time.Second),          // 5
		stamp(w.Cap.Packets[1], 10500*time.Millisecond), // 6: c1 idle for 10.497 s
		stamp(v.Cap.Packets[4], 11*time.Second))         // 7: c1's 4-tuple again
	cfg := testConfig()
	cfg.IdleTimeout = 10 * time.Second
	r := runAt(t, cfg, pkts)
	wantLines(t, r,
		"6: incomplete c1> off=0 have=20 want=55 idle timeout",
		"6: "+endC1,
		"close: "+endLine(2, cli2, srv, false),
		"close: unparseable c3> off=0 len=35 leading unframed",
		"close: "+endLine(3, cli, srv, false),
	)
	if e := eventsOf[*ConnEnd](r); len(e) != 3 || !e[0].Time.Equal(t0.Add(10500*time.Millisecond)) || e[0].Reset {
		t.Errorf("ConnEnd: %+v", e)
	}
}

// TestFINEndsConnection: FIN both ways ends the connection at the second
// FIN; later packets of it are ignored, not a new connection.
func TestFINEndsConnection(t *testing.T) {
	v := opened()
	q, a := kreq(30, 3, 1, "c", 5), kresp(1, 5)
	v.Send(true, q)                       // 4
	v.Send(false, a)                      // 5
	v.Fin(true)                           // 6
	v.Fin(false)                          // 7
	v.Raw(true, v.CSeq, "A", nil, -1)     // 8
	v.Raw(false, v.SSeq-1, "FA", nil, -1) // 9: FIN again
	r, p := runWith(t, testConfig(), v.Cap.Packets, nil, true)
	wantLines(t, r,
		"4: frame c1> off=0 size=20 pk=[4]",
		"5: frame c1< off=0 size=13 pk=[5]",
		"7: "+endC1,
	)
	if e := eventsOf[*ConnEnd](r); len(e) != 1 || !e[0].Time.Equal(v.Cap.Packets[6].CI.Timestamp) {
		t.Errorf("ConnEnd %+v", e)
	}
	if st := p.Stats(); st.Ignored != 2 || st.Connections != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestFINCases: how a FIN closes a direction when frames or bytes are
// missing. Each case starts after the handshake with a 55-byte request q
// and ends with its events numbered by packet.
func TestFINCases(t *testing.T) {
	q := kreq(30, 3, 1, "c", 40)
	for _, tc := range []struct {
		name string
		// build appends packets 4 and on.
		build func(v *testkit.Conn, s uint32) []testkit.Packet
		want  []string
	}{{
		// A frame cut by FIN is Incomplete "connection closed" when its
		// direction closes: on the client side with the FIN in the data
		// segment, on the server side before the size prefix is complete.
		name: "partial frames",
		build: func(v *testkit.Conn, s uint32) []testkit.Packet {
			v.Raw(true, s, "FA", q[:20], -1) // 4
			v.CSeq += 21
			v.Send(false, kresp(1, 5)[:3]) // 5
			v.Fin(false)                   // 6
			return v.Cap.Packets
		},
		want: []string{
			"4: incomplete c1> off=0 have=20 want=55 connection closed",
			"6: incomplete c1< off=0 have=3 want=-1 connection closed",
			"6: " + endC1,
		},
	}, {
		// A FIN that overtakes the last data segment closes its direction
		// only when that segment arrives.
		name: "FIN before the last segment",
		build: func(v *testkit.Conn, s uint32) []testkit.Packet {
			v.Raw(true, s, "A", q[:30], -1)    // 4
			v.Raw(true, s+55, "FA", nil, -1)   // 5
			v.Raw(true, s+30, "A", q[30:], -1) // 6
			v.Fin(false)                       // 7
			return v.Cap.Packets
		},
		want: []string{
			"6: frame c1> off=0 size=55 pk=[4 6]",
			"7: " + endC1,
		},
	}, {
		// The bytes before a FIN never come: that hole is given up on
		// after ReorderWait like any other, which ends the connection
		// then rather than at the idle timeout or the end of input.
		name: "FIN after a lost tail",
		build: func(v *testkit.Conn, s uint32) []testkit.Packet {
			v.Raw(true, s, "A", q[:30], -1)  // 4 at 3 ms
			v.Raw(true, s+55, "FA", nil, -1) // 5 at 4 ms
			v.Fin(false)                     // 6
			w := newConv(cli2, srv, 70000, 80000)
			w.Handshake()
			return append(v.Cap.Packets, stamp(w.Cap.Packets[0], 5*time.Second)) // 7
		},
		want: []string{
			"7: gap c1> off=30 len=25",
			"7: incomplete c1> off=0 have=30 want=55 gap",
			"7: " + endC1,
			"close: " + endLine(2, cli2, srv, false),
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			v := opened()
			wantLines(t, runAt(t, testConfig(), tc.build(v, v.CSeq)), tc.want...)
		})
	}
}

// TestSequenceWrapInsideFrames: frames straddle 2^32 in both directions,
// with the segment after the wrap arriving before the one across it.
func TestSequenceWrapInsideFrames(t *testing.T) {
	v := newConv(cli, srv, 0xffffffe1, 0xfffffff0)
	v.Handshake()                                             // client data from 2^32-30, server data from 2^32-15
	f1, f2 := kreq(30, 3, 1, "c", 5), kreq(30, 3, 2, "c", 40) // [0,20) [20,75): 2^32 at 30
	all := cat(f1, f2)
	p1, p2 := kresp(1, 5), kresp(2, 20) // [0,13) [13,41): 2^32 at 15
	rall := cat(p1, p2)
	c, s := v.CSeq, v.SSeq
	if c+30 != 0 || s+15 != 0 {
		t.Fatalf("sequence numbers %#x %#x", c, s)
	}
	v.Raw(true, c, "A", all[:25], -1)      // 4
	v.Raw(true, c+50, "A", all[50:], -1)   // 5: after the wrap, held
	v.Raw(true, c+25, "A", all[25:50], -1) // 6: across the wrap
	v.Raw(true, c+25, "A", all[25:50], -1) // 7: again
	v.Raw(false, s+10, "A", rall[10:], -1) // 8: across the wrap, held
	v.Raw(false, s, "A", rall[:10], -1)    // 9
	r := runAt(t, testConfig(), v.Cap.Packets)
	wantLines(t, r,
		"4: frame c1> off=0 size=20 pk=[4]",
		"6: frame c1> off=20 size=55 pk=[4 6 5]",
		"7: retrans c1> off=25 len=25",
		"9: frame c1< off=0 size=13 pk=[9 8]",
		"9: frame c1< off=13 size=28 pk=[8]",
		"close: "+endC1,
	)
	wantFrames(t, r, f1, f2, p1, p2)
}

// TestStreamOffsets: offsets count from ISN+1 when the SYN was captured
// (data on the SYN included), from the first captured byte otherwise, and
// lost bytes count.
func TestStreamOffsets(t *testing.T) {
	f1, f2 := kreq(30, 3, 1, "c", 5), kreq(31, 3, 2, "c", 5) // 20 bytes each
	t.Run("syn", func(t *testing.T) {
		v := newConv(cli, srv, 1000, 5000)
		v.Raw(true, 1000, "S", f1, -1) // 1: data on the SYN starts at ISN+1
		v.Raw(false, 5000, "SA", nil, -1)
		v.Raw(true, 1000, "S", f1, -1) // 3: the SYN again
		v.Raw(true, 1021, "A", f2, -1) // 4
		r := runAt(t, testConfig(), v.Cap.Packets)
		wantLines(t, r,
			"1: frame c1> off=0 size=20 pk=[1]",
			"3: retrans c1> off=0 len=20",
			"4: frame c1> off=20 size=20 pk=[4]",
			"close: "+endC1,
		)
	})
	t.Run("no-syn", func(t *testing.T) {
		v := newConv(cli, srv, 7000, 9000)
		v.Raw(true, 7000, "A", nil, -1) // 1: a bare ACK starts nothing
		v.Raw(true, 7000, "A", f1, -1)  // 2: the first captured byte is offset 0
		v.Raw(false, 9000, "A", nil, -1)
		v.Raw(false, 9000, "A", kresp(1, 5), -1)     // 4
		v.Raw(true, 6990, "A", make([]byte, 10), -1) // 5: before the start
		v.Raw(true, 7020, "A", f2, -1)               // 6
		r, p := runWith(t, testConfig(), v.Cap.Packets, nil, true)
		wantLines(t, r,
			"2: frame c1> off=0 size=20 pk=[2]",
			"4: frame c1< off=0 size=13 pk=[4]",
			"5: retrans c1> off=-10 len=10",
			"6: frame c1> off=20 size=20 pk=[6]",
			"close: "+endC1,
		)
		if st := p.Stats(); st.Ignored != 1 {
			t.Errorf("ignored %d", st.Ignored)
		}
	})
	t.Run("gap-before-frame", func(t *testing.T) {
		v := opened()
		f0 := kreq(30, 3, 0, "c", 15) // 30 bytes, never captured
		s := v.CSeq
		v.Raw(true, s+30, "A", f1, -1) // 4
		v.Raw(true, s+50, "A", f2, -1) // 5
		r := runAt(t, testConfig(), v.Cap.Packets)
		wantLines(t, r,
			"close: gap c1> off=0 len="+itoa(len(f0)),
			"close: frame c1> off=30 size=20 pk=[4]",
			"close: frame c1> off=50 size=20 pk=[5]",
			"close: "+endC1,
		)
	})
}
