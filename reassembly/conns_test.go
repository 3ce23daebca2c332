package reassembly

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// planned is one conversation of TestInterleavedConnectionsWithPortReuse
// with the events its packets must produce, by local packet index.
type planned struct {
	v      *testkit.Conn
	want   map[int][]plannedEvent
	frames map[int][][]byte
	id     int // ConnKey.ID, known once the first packet is scheduled
}

// plannedEvent is a frame (local packet indexes, direction, offset, size) or,
// when end is set, the ConnEnd.
type plannedEvent struct {
	end        bool
	fromClient bool
	off, size  int
	pkts       []int
}

// plan builds a conversation: handshake, n request/response pairs (every
// other request in two segments), FIN both ways and a last ACK.
func plan(t *testing.T, c netip.AddrPort, isn uint32, n int, corr int32) *planned {
	v := newConv(c, srv, isn, ^isn)
	v.Handshake()
	pl := &planned{v: v, want: map[int][]plannedEvent{}, frames: map[int][][]byte{}}
	add := func(at int, e plannedEvent, b []byte) {
		pl.want[at] = append(pl.want[at], e)
		if b != nil {
			pl.frames[at] = append(pl.frames[at], b)
		}
	}
	var coff, soff int
	for i := 0; i < n; i++ {
		q := kreq(30+int16(i%3), 3, corr+int32(i), fmt.Sprint("client-", c.Port()), 10+i*17)
		first := len(v.Cap.Packets)
		if i%2 == 1 {
			v.Send(true, q[:9])
			v.Send(true, q[9:])
		} else {
			v.Send(true, q)
		}
		var pk []int
		for j := first; j < len(v.Cap.Packets); j++ {
			pk = append(pk, j)
		}
		add(len(v.Cap.Packets)-1, plannedEvent{fromClient: true, off: coff, size: len(q), pkts: pk}, q)
		coff += len(q)
		a := kresp(corr+int32(i), 5+i)
		v.Send(false, a)
		add(len(v.Cap.Packets)-1, plannedEvent{off: soff, size: len(a), pkts: []int{len(v.Cap.Packets) - 1}}, a)
		soff += len(a)
	}
	v.Fin(true)
	v.Fin(false)
	add(len(v.Cap.Packets)-1, plannedEvent{end: true}, nil)
	v.Raw(true, v.CSeq, "A", nil, -1) // after the end: ignored
	return pl
}

// TestInterleavedConnectionsWithPortReuse runs 50 connections from 30
// client ports, packets interleaved round-robin across the ports; on 20
// ports a second connection starts right after the first one's FINs. Every
// frame must land on its own connection with exact offsets and packets, and
// every connection must end once, at its second FIN.
func TestInterleavedConnectionsWithPortReuse(t *testing.T) {
	const ports, reused = 30, 20
	slots := make([][]*planned, ports)
	n := 0
	for s := range slots {
		c := netip.AddrPortFrom(netip.MustParseAddr("10.0.1.1"), uint16(41000+s))
		for j := 0; j < 1+btoi(s < reused); j++ {
			isn := uint32(s)*0x08000000 + uint32(j)*0x01234567 // some wrap
			slots[s] = append(slots[s], plan(t, c, isn, 1+(s+2*j)%4, int32(1000*s+100*j)))
			n++
		}
	}
	if n != 50 {
		t.Fatalf("%d connections", n)
	}

	// Round-robin over the ports: one packet of each port per round; a
	// port's second connection follows its first.
	type ref struct {
		pl  *planned
		loc int
	}
	var order []ref
	pos := make([]int, ports) // packets taken from each slot
	for more := true; more; {
		more = false
		for s := range slots {
			k := pos[s]
			for _, pl := range slots[s] {
				if k < len(pl.v.Cap.Packets) {
					order = append(order, ref{pl, k})
					pos[s]++
					more = true
					break
				}
				k -= len(pl.v.Cap.Packets)
			}
		}
	}

	// Feed order, packet numbers and connection IDs; the expected events in
	// the order the packets that complete them are fed.
	var pkts []testkit.Packet
	num := map[*planned]map[int]int{}
	var want []string
	var wantBytes [][]byte
	var wantEnds []time.Time
	ids := 0
	client := map[int]netip.AddrPort{}
	for g, rf := range order {
		p := rf.pl.v.Cap.Packets[rf.loc]
		p.CI.Timestamp = t0.Add(time.Duration(g) * 5 * time.Millisecond)
		pkts = append(pkts, p)
		if num[rf.pl] == nil {
			num[rf.pl] = map[int]int{}
			ids++
			rf.pl.id = ids
			client[ids] = rf.pl.v.Client
		}
		num[rf.pl][rf.loc] = g + 1
		for _, e := range rf.pl.want[rf.loc] {
			if e.end {
				want = append(want, endLine(rf.pl.id, rf.pl.v.Client, srv, false))
				wantEnds = append(wantEnds, p.CI.Timestamp)
				continue
			}
			var pk []int
			for _, l := range e.pkts {
				pk = append(pk, num[rf.pl][l])
			}
			dir := "<"
			if e.fromClient {
				dir = ">"
			}
			want = append(want, fmt.Sprintf("frame c%d%s off=%d size=%d pk=%v", rf.pl.id, dir, e.off, e.size, pk))
		}
		wantBytes = append(wantBytes, rf.pl.frames[rf.loc]...)
	}

	cfg := testConfig()
	cfg.ReorderWait = 50 * time.Millisecond // ended connections are dropped before some reuses
	r := run(t, cfg, pkts, nil)
	wantLines(t, r, want...)
	wantFrames(t, r, wantBytes...)

	// Keys, directions and addresses of every event.
	ends := 0
	for _, e := range r.events {
		switch e := e.(type) {
		case *Frame:
			key := ConnKey{Client: client[int(e.ConnID)], Server: srv, ID: e.ConnID}
			src, dst := key.Client, key.Server
			if !e.FromClient {
				src, dst = dst, src
			}
			if e.Conn != key || e.Src != src || e.Dst != dst || e.Truncated {
				t.Errorf("frame %+v: want key %v", e.Flow, key)
			}
		case *ConnEnd:
			key := ConnKey{Client: client[int(e.ConnID)], Server: srv, ID: e.ConnID}
			if e.Conn != key || e.Reset || !e.Time.Equal(wantEnds[ends]) {
				t.Errorf("ConnEnd %+v: want %v at %v", e, key, wantEnds[ends])
			}
			ends++
		default:
			t.Errorf("unexpected %T %+v", e, e)
		}
	}
	if ends != 50 {
		t.Errorf("%d ConnEnds, want 50", ends)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
