package reassembly

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// Issue 7: packets lost by the capture (never retransmitted), captures that
// start mid-connection, and frames cut by gaps.

// A hole the peer has acknowledged is declared at once, before the
// acknowledging segment's own bytes: the request behind the hole comes out
// before the response that answers it, not ReorderWait later.
func TestAckedHoleIsAGapAtOnce(t *testing.T) {
	v := opened()
	v.Acking = true
	q1, q2, p2 := kreq(30, 3, 1, "c", 20), kreq(31, 3, 2, "c", 10), kresp(2, 6)
	v.CSeq += uint32(len(q1)) // 4: q1 is lost
	v.Send(true, q2)          // 4: held behind the hole
	v.Send(false, p2)         // 5: acknowledges q1 and q2
	r := runAt(t, testConfig(), v.Cap.Packets)
	wantLines(t, r,
		"5: gap c1> off=0 len="+itoa(len(q1)),
		"5: frame c1> off="+itoa(len(q1))+" size="+itoa(len(q2))+" pk=[4]",
		"5: frame c1< off=0 size="+itoa(len(p2))+" pk=[5]",
		"close: "+endC1,
	)
	if f := eventsOf[*Frame](r)[1]; f.PeerPending {
		t.Error("the response is marked PeerPending though its request came out")
	}
}

// Without an acknowledgement beyond it a hole waits (ReorderWait); a
// response arriving meanwhile says that the request direction still holds
// bytes (Frame.PeerPending). An ACK of the next byte alone proves nothing:
// it may be for a FIN the capture missed.
func TestUnackedHoleWaitsAndMarksResponses(t *testing.T) {
	v := opened()
	q1, q2, p2 := kreq(30, 3, 1, "c", 20), kreq(31, 3, 2, "c", 10), kresp(2, 6)
	s := v.CSeq
	v.Raw(true, s+uint32(len(q1)), "A", q2, -1) // 4: q1 not captured yet
	v.Raw(false, v.SSeq, "A", p2, -1)           // 5: acknowledges nothing new
	v.Raw(true, s, "A", q1, -1)                 // 6: q1, late
	r := runAt(t, testConfig(), v.Cap.Packets)
	wantLines(t, r,
		"5: frame c1< off=0 size="+itoa(len(p2))+" pk=[5]",
		"6: frame c1> off=0 size="+itoa(len(q1))+" pk=[6]",
		"6: frame c1> off="+itoa(len(q1))+" size="+itoa(len(q2))+" pk=[4]",
		"close: "+endC1,
	)
	if f := eventsOf[*Frame](r)[0]; !f.PeerPending {
		t.Error("the response is not marked PeerPending while its request is held")
	}
}

// Issue 7 §2: a 330-byte request with a 90-byte hole has 240 bytes
// captured; the Incomplete event comes at the frame's known end with the
// header the capture holds, and the next frame starts right there.
func TestIncompleteCountsBytesAfterTheGap(t *testing.T) {
	v := opened()
	v.Acking = true
	q := kreq(30, 3, 7, "client", 330-20)
	q2 := kreq(31, 3, 8, "client", 4)
	if len(q) != 330 {
		t.Fatalf("request of %d bytes", len(q))
	}
	v.Send(true, q[:120])
	v.CSeq += 90
	v.Send(true, cat(q[210:], q2))
	v.Send(false, kresp(7, 10))
	r := runAt(t, testConfig(), v.Cap.Packets)
	wantLines(t, r,
		"6: gap c1> off=120 len=90",
		"6: incomplete c1> off=0 have=240 want=330 gap",
		"6: frame c1> off=330 size="+itoa(len(q2))+" pk=[5]",
		"6: frame c1< off=0 size=18 pk=[6]",
		"close: "+endC1,
	)
	inc := eventsOf[*Incomplete](r)[0]
	// The recorder keeps the event, not a copy of Head: it was valid
	// during the emit call only, so only its length is checked here; the
	// bytes are checked through the CLI's output.
	if len(inc.Head) != 4+HeadLen {
		t.Errorf("Head holds %d bytes, want %d", len(inc.Head), 4+HeadLen)
	}
}

// Incomplete.Head holds the captured first bytes, the size prefix included.
func TestIncompleteHeadBytes(t *testing.T) {
	v := opened()
	q := kreq(30, 3, 7, "client", 100)
	v.Send(true, q[:40])
	var head []byte
	p := NewPipeline(testConfig(), func(e Event) {
		if inc, ok := e.(*Incomplete); ok {
			head = bytes.Clone(inc.Head)
		}
	})
	for _, pk := range v.Cap.Packets {
		p.Packet(pk.Data, pk.CI, pk.Link)
	}
	p.Close()
	if !bytes.Equal(head, q[:40]) {
		t.Errorf("Head\n% x\nwant\n% x", head, q[:40])
	}
}

// Issue 7 §3: a capture that starts mid-connection with complete responses
// whose requests were not captured. They are accepted because their chain
// of size prefixes holds: each ends exactly where the next starts, the
// last of them where a response to a known request starts.
func TestResponseChainWithoutRequests(t *testing.T) {
	v := newConv(cli, srv, 77, 900)
	p7, p8 := kresp(7, 30), kresp(8, 11)
	q9, p9 := kreq(30, 3, 9, "cc", 12), kresp(9, 5)
	v.Send(false, cat(p7[20:], p7, p8)) // 1: a cut response, then two whole ones
	v.Send(true, q9)                    // 2
	v.Send(false, p9)                   // 3
	r := runAt(t, testConfig(), v.Cap.Packets)
	wantLines(t, r,
		"2: frame c1> off=0 size="+itoa(len(q9))+" pk=[2]",
		"3: unparseable c1< off=0 len=18 leading",
		"3: frame c1< off=18 size=38 pk=[1]",
		"3: frame c1< off=56 size=19 pk=[1]",
		"3: frame c1< off=75 size=13 pk=[3]",
		"close: "+endC1,
	)
	wantFrames(t, r, q9, p7, p8, p9)
}

// At the end of the direction (or before a gap) a chain may end with the
// captured bytes; a candidate whose size runs past them is not a frame.
func TestResponseChainEndsAtTheEnd(t *testing.T) {
	v := newConv(cli, srv, 77, 900)
	p7, p8 := kresp(7, 30), kresp(8, 11)
	v.Send(false, cat([]byte{0, 0, 1}, p7, p8))
	v.Raw(false, v.SSeq, "FA", nil, -1)
	r := expect(t, v,
		"unparseable c1< off=0 len=3 leading",
		"frame c1< off=3 size=38 pk=[1]",
		"frame c1< off=41 size=19 pk=[1]",
		"end c1 10.0.0.1:40000>10.0.0.2:9092 reset=false",
	)
	wantFrames(t, r, p7, p8)
}

// With DetectPorts, a connection whose first request was lost is found to
// be Kafka by its second; the broker's answer to the first, which came
// before and reads like a Produce v0 request (correlation id 0), is still
// framed as a response, and the sides stay as the handshake set them.
func TestDetectedAfterALostFirstRequest(t *testing.T) {
	other := netipMust("10.0.0.2:19000")
	v := newConv(cli, other, 1000, 5000)
	v.Handshake()
	v.Acking = true
	q0, p0 := kreq(18, 3, 0, "c", 10), kresp(0, 20)
	p0[12], p0[13] = 0xff, 0xff // with correlation id 0: reads as a Produce v0 request, client id null
	q1, p1 := kreq(17, 1, 1, "c", 4), kresp(1, 6)
	v.CSeq += uint32(len(q0)) // 4: lost
	v.Send(false, p0)         // 4
	v.Send(true, q1)          // 5
	v.Send(false, p1)         // 6
	cfg := testConfig()
	cfg.DetectPorts = true
	if !plausible(p0) {
		t.Fatal("the response does not read as a request")
	}
	r := runAt(t, cfg, v.Cap.Packets)
	wantLines(t, r,
		"5: port 10.0.0.2:19000",
		"5: frame c1< off=0 size="+itoa(len(p0))+" pk=[4]",
		"5: frame c1> off="+itoa(len(q0))+" size="+itoa(len(q1))+" pk=[5]",
		"6: frame c1< off="+itoa(len(p0))+" size="+itoa(len(p1))+" pk=[6]",
		"close: "+endLine(1, cli, other, false),
	)
}

// Seeded random losses and reorderings of a conversation cut into random
// segments: whatever is lost, every frame that comes out is one the
// conversation sent, at its own offset, every Incomplete counts no more than
// it wants, the buffer accounting holds (run checks it after each packet)
// and a request none of whose bytes were lost always comes out, as does such
// a response whose request's header was captured. (A response to a lost
// request is found only when its chain can be checked: it may not be, when
// the frames around it are cut by gaps.) Run with 20,000 iterations and two
// seeds while it was written; 500 keep it fast.
func TestRandomLossNeverInventsFrames(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := 0; iter < 500; iter++ {
		v := opened()
		v.Acking = true
		type sent struct {
			fromClient bool
			off        int64
			f          []byte
		}
		var frames []sent
		var offs [2]int64
		type seg struct {
			fromClient bool
			lo, hi     int64
		}
		var segs []seg
		for corr := int32(1); corr <= 6; corr++ {
			// Bodies of 0xff bytes: no position inside them reads as a size
			// prefix (it would be negative), so what is checked is the
			// reassembly and framing, not how often the plausibility tests
			// take body bytes for a frame start (they can: a request whose
			// header was lost may end in bytes that, with the next frame's
			// prefix, read as a plausible header).
			q := kreq(int16(rng.IntN(2)+30), 3, corr, "client", rng.IntN(300))
			p := kresp(corr, rng.IntN(300))
			for i := 20; i < len(q); i++ {
				q[i] = 0xff
			}
			for i := 8; i < len(p); i++ {
				p[i] = 0xff
			}
			for _, x := range []sent{{true, offs[0], q}, {false, offs[1], p}} {
				frames = append(frames, x)
				side := 1
				if x.fromClient {
					side = 0
				}
				for at := 0; at < len(x.f); {
					n := min(len(x.f)-at, 1+rng.IntN(200))
					segs = append(segs, seg{x.fromClient, offs[side] + int64(at), offs[side] + int64(at+n)})
					v.Send(x.fromClient, x.f[at:at+n])
					at += n
				}
				offs[side] += int64(len(x.f))
			}
		}
		pkts := append([]testkit.Packet(nil), v.Cap.Packets[:3]...)
		data := v.Cap.Packets[3:]
		lost := map[int]bool{}
		order := []int{}
		for i := range data {
			switch r := rng.IntN(10); {
			case r == 0:
				lost[i] = true
			case r == 1 && len(order) > 0 && segs[order[len(order)-1]].fromClient == segs[i].fromClient:
				// Reordered within a direction: a capture that shows an
				// ACK before the data it acknowledges loses that data
				// (see the package documentation).
				order = append(order[:len(order)-1], i, order[len(order)-1])
			default:
				order = append(order, i)
			}
		}
		for _, i := range order {
			pkts = append(pkts, data[i])
		}
		r := run(t, testConfig(), pkts, nil)
		got := map[string]bool{}
		for _, f := range eventsOf[*Frame](r) {
			ok := false
			for _, x := range frames {
				if x.fromClient == f.FromClient && x.off == f.StreamOffset && bytes.Equal(x.f, f.Data) {
					ok = true
				}
			}
			if !ok {
				r2 := runAt(t, testConfig(), pkts)
				for i, f := range frames {
					t.Log(i, f.fromClient, f.off, len(f.f))
				}
				t.Fatalf("iteration %d: invented frame %v off=%d size=%d\n%s\n%v\nlost %v order %v\n% x", iter, f.FromClient, f.StreamOffset, f.Size, strings.Join(r2.lines, "\n"), segs, lost, order, f.Data[:16])
			}
			got[fmt.Sprint(f.FromClient, f.StreamOffset)] = true
		}
		for _, inc := range eventsOf[*Incomplete](r) {
			if inc.Want >= 0 && inc.Have > inc.Want {
				t.Fatalf("iteration %d: incomplete have %d want %d", iter, inc.Have, inc.Want)
			}
		}
		captured := func(fromClient bool, lo, hi int64) bool {
			for i, s := range segs {
				if lost[i] && s.fromClient == fromClient && s.lo < hi && s.hi > lo {
					return false
				}
			}
			return true
		}
		for k, x := range frames {
			// A response is only sure to be found when the header of its
			// request (the frame before it in frames) was captured.
			whole := captured(x.fromClient, x.off, x.off+int64(len(x.f)))
			if q := frames[k-k%2]; !x.fromClient && !captured(true, q.off, q.off+int64(min(len(q.f), 4+HeadLen))) {
				whole = false
			}
			if whole && !got[fmt.Sprint(x.fromClient, x.off)] {
				t.Fatalf("iteration %d: frame %v off=%d size=%d lost though all its bytes were captured\n%s\nsegs %v\nlost %v order %v", iter, x.fromClient, x.off, len(x.f), strings.Join(r.lines, "\n"), segs, lost, order)
			}
		}
	}
}

// The bytes before a FIN that the peer acknowledged were lost by the
// capture: the direction closes at once, not ReorderWait later.
func TestAckedFinHole(t *testing.T) {
	v := opened()
	v.Acking = true
	q := kreq(30, 3, 1, "c", 40)
	v.Send(true, q[:30])
	v.CSeq += uint32(len(q) - 30) // lost
	v.Fin(true)                   // 5
	v.Fin(false)                  // 6: acknowledges the lost bytes and the FIN
	wantLines(t, runAt(t, testConfig(), v.Cap.Packets),
		"6: gap c1> off=30 len=25",
		"6: incomplete c1> off=0 have=30 want=55 gap",
		"6: "+endC1,
	)
}
