package reassembly

import (
	"bytes"
	"net/netip"
	"slices"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

func TestInOrderManyFramesPerSegmentAndOneByteSegments(t *testing.T) {
	v := opened()
	r1, r2, r3 := kreq(30, 3, 7, "adm", 20), kreq(31, 3, 8, "adm", 3), kreq(0, 9, 9, "p", 100)
	v.Send(true, cat(r1, r2)) // pkt 4: two whole frames
	for _, b := range r3 {    // pkts 5..: one byte each
		v.Send(true, []byte{b})
	}
	resp := kresp(7, 10)
	v.Send(false, resp)
	r := run(t, testConfig(), v.Cap.Packets, nil)
	last := 4 + len(r3)
	var pks []int
	for i := 5; i <= last; i++ {
		pks = append(pks, i)
	}
	wantLines(t, r,
		"frame c1> off=0 size=37 pk=[4]",
		"frame c1> off=37 size=20 pk=[4]",
		"frame c1> off=57 size=115 pk="+fmtInts(pks),
		"frame c1< off=0 size=18 pk=["+itoa(last+1)+"]",
		endC1,
	)
	wantFrames(t, r, r1, r2, r3, resp)
}

func TestOutOfOrderAndRetransmissions(t *testing.T) {
	v := opened()
	f := kreq(30, 3, 1, "c", 40) // 55 bytes
	g := kreq(31, 3, 2, "c", 10) // 25 bytes
	all := cat(f, g)
	s := uint32(1001)
	v.Raw(true, s, "A", all[:20], -1)      // 4
	v.Raw(true, s+40, "A", all[40:60], -1) // 5 out of order
	v.Raw(true, s+40, "A", all[40:60], -1) // 6 duplicate of held data
	v.Raw(true, s+30, "A", all[30:50], -1) // 7 overlaps held data
	v.Raw(true, s+20, "A", all[20:30], -1) // 8 fills the hole
	v.Raw(true, s, "A", all[:25], -1)      // 9 old data
	v.Raw(true, s+60, "A", all[60:], -1)   // 10
	v.Raw(true, s+50, "A", all[50:70], -1) // 11 overlaps the stream position
	r := expect(t, v,
		"retrans c1> off=40 len=20",
		"retrans c1> off=30 len=10",
		"frame c1> off=0 size=55 pk=[4 8 7 5]",
		"retrans c1> off=0 len=25",
		"frame c1> off=55 size=25 pk=[5 10]",
		"retrans c1> off=50 len=20",
		endC1,
	)
	wantFrames(t, r, f, g)
}

func TestGapMidFrameAndSwallowedPrefix(t *testing.T) {
	v := opened()
	a, b, c, d := kreq(30, 3, 1, "c", 100), kreq(30, 3, 2, "c", 100), kreq(30, 3, 3, "c", 100), kreq(31, 3, 4, "c", 5)
	all := cat(a, b, c, d) // 115 each, then 20
	s := uint32(1001)
	v.Raw(true, s, "A", all[:30], -1)       // 4: first 30 bytes of a
	v.Raw(true, s+40, "A", all[40:225], -1) // 5: after a 10-byte gap inside a, up to 5 bytes before c
	v.Raw(true, s+232, "A", all[232:], -1)  // 6: the 7-byte gap swallows c's prefix
	// The 10-byte gap ends inside a, whose size is known: a's bytes after
	// it are counted (105 of 115 captured) and b starts at a's end.
	r := expect(t, v,
		"gap c1> off=30 len=10",
		"incomplete c1> off=0 have=105 want=115 gap",
		"incomplete c1> off=115 have=110 want=115 gap",
		"gap c1> off=225 len=7",
		"unparseable c1> off=232 len=113",
		"frame c1> off=345 size=20 pk=[6]",
		endC1,
	)
	wantFrames(t, r, d)
}

func TestMidStreamStartAndResponseResync(t *testing.T) {
	v := newConv(cli, srv, 77, 900)
	q1, q2 := kreq(30, 3, 41, "cc", 30), kreq(31, 3, 42, "cc", 8)
	p0, p1 := kresp(40, 20), kresp(42, 12)
	v.Send(true, q1[17:])          // 1: tail of a frame: no SYN
	v.Send(true, q2)               // 2
	v.Send(false, cat(p0[9:], p1)) // 3: tail of a response to an uncaptured request, then p1
	v.Raw(true, v.CSeq, "R", nil, -1)
	r := expect(t, v,
		"unparseable c1> off=0 len="+itoa(len(q1)-17)+" leading",
		"frame c1> off="+itoa(len(q1)-17)+" size="+itoa(len(q2))+" pk=[2]",
		"unparseable c1< off=0 len="+itoa(len(p0)-9)+" leading",
		"frame c1< off="+itoa(len(p0)-9)+" size="+itoa(len(p1))+" pk=[3]",
		"end c1 10.0.0.1:40000>10.0.0.2:9092 reset=true",
	)
	wantFrames(t, r, q2, p1)
}

// Only the bytes before the first frame boundary of a direction captured
// without its SYN are "leading": damage after that boundary is not.
func TestLeadingBytesOnlyBeforeFirstBoundary(t *testing.T) {
	v := newConv(cli, srv, 77, 900)
	q1, q2 := kreq(30, 3, 41, "cc", 30), kreq(31, 3, 42, "cc", 8)
	v.Send(true, q1[5:])                                      // 1: tail of a frame: no SYN
	v.Send(true, cat(q2, []byte{0x7f, 0xff, 0xff, 0xff}, q2)) // 2: a frame, a corrupt prefix, a frame
	v.Raw(true, v.CSeq, "R", nil, -1)
	tail := len(q1) - 5
	expect(t, v,
		"unparseable c1> off=0 len="+itoa(tail)+" leading",
		"frame c1> off="+itoa(tail)+" size="+itoa(len(q2))+" pk=[2]",
		"unparseable c1> off="+itoa(tail+len(q2))+" len=4",
		"frame c1> off="+itoa(tail+len(q2)+4)+" size="+itoa(len(q2))+" pk=[2]",
		"end c1 10.0.0.1:40000>10.0.0.2:9092 reset=true",
	)
}

// Leading bytes that no frame boundary follows before the direction ends
// are "unframed": no tail of a frame, but bytes of unknown meaning (TLS
// picked up inside a record, say). A gap before the end does not end them.
func TestUnframedLeadingBytes(t *testing.T) {
	v := newConv(cli, srv, 77, 900)
	junk := bytes.Repeat([]byte{0x9c, 0x41, 0xe3, 0x07}, 300)
	v.Send(true, junk[:500]) // 1: no SYN, nothing Kafka
	v.CSeq += 100            // 100 bytes never captured
	v.Send(true, junk[600:])
	v.Raw(true, v.CSeq, "R", nil, -1)
	expect(t, v,
		"unparseable c1> off=0 len=500 leading",
		"gap c1> off=500 len=100",
		"unparseable c1> off=600 len=600 leading unframed",
		"end c1 10.0.0.1:40000>10.0.0.2:9092 reset=true",
	)
}

func TestHostileSizePrefixes(t *testing.T) {
	v := opened()
	ok := kreq(30, 3, 5, "c", 4)
	v.Send(true, []byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3})
	v.Send(true, ok)
	v.Send(true, []byte{0xff, 0xff, 0xff, 0xf0})
	v.Send(true, ok)
	expect(t, v,
		"unparseable c1> off=0 len=7",
		"frame c1> off=7 size=19 pk=[5]",
		"unparseable c1> off=26 len=4",
		"frame c1> off=30 size=19 pk=[7]",
		endC1,
	)
}

func TestRSTMidFrameAndPortReuse(t *testing.T) {
	v := opened()
	q := kreq(30, 3, 1, "c", 40)
	v.Send(true, q[:20])
	v.Raw(false, v.SSeq, "RA", nil, -1)
	w := newConv(cli, srv, 0xfffffff0, 7) // same 4-tuple, sequence numbers wrap
	w.Handshake()
	w.Send(true, q[:10])
	w.Send(true, q[10:])
	v.Cap.Packets = append(v.Cap.Packets, w.Cap.Packets...)
	expect(t, v,
		"incomplete c1> off=0 have=20 want=55 connection reset",
		"end c1 10.0.0.1:40000>10.0.0.2:9092 reset=true",
		"frame c2> off=0 size=55 pk=[9 10]",
		"end c2 10.0.0.1:40000>10.0.0.2:9092 reset=false",
	)
}

func TestSnaplenTruncatedPayloadIsAGap(t *testing.T) {
	v := opened()
	a, b := kreq(30, 3, 1, "c", 100), kreq(31, 3, 2, "c", 3)
	v.Raw(true, v.CSeq, "A", a, 50)
	v.CSeq += uint32(len(a))
	v.Send(true, b)
	expect(t, v,
		"gap c1> off=50 len=65",
		"incomplete c1> off=0 have=50 want=115 gap",
		"frame c1> off=115 size=18 pk=[5]",
		endC1,
	)
	// The packet is counted, as cut in a connection followed, so that the
	// run can say why its bytes are missing; one of another port is not.
	w := testkit.NewCapture(t0).NewConn(netip.MustParseAddrPort("10.0.0.1:40001"), netip.MustParseAddrPort("10.0.0.2:8080"), 1, 2)
	w.Handshake()
	w.Raw(true, w.CSeq, "A", a, 50)
	_, p := runWith(t, testConfig(), append(v.Cap.Packets, w.Cap.Packets...), nil, false)
	if st := p.Stats(); st.Snapped != 1 || st.Truncated != 2 {
		t.Errorf("snapped %d, truncated %d; want 1 and 2", st.Snapped, st.Truncated)
	}
}

func TestKeepSkipsUninterestingBodies(t *testing.T) {
	v := opened()
	produce, acl := kreq(0, 9, 1, "c", 3000), kreq(30, 3, 2, "c", 3000)
	v.Send(true, produce[:1000])
	v.Send(true, produce[1000:])
	v.Send(true, acl[:1000])
	v.Send(true, acl[1000:])
	cfg := testConfig()
	cfg.Framing = testRules{keep: func(key int16) bool { return key == 30 }}
	r := run(t, cfg, v.Cap.Packets, nil)
	wantLines(t, r,
		"frame c1> off=0 size=3015 pk=[4 5] truncated(68)",
		"frame c1> off=3015 size=3015 pk=[6 7]",
		endC1,
	)
	wantFrames(t, r, produce[:68], acl)
}

// A response keeps its body as its request's Keep said; one whose request
// is unknown, or was answered already, keeps it. Whole in one packet or
// collected from several, and cut by a gap, a response answers its request.
func TestResponseBodyFollowsItsRequest(t *testing.T) {
	v := opened()
	v.Send(true, kreq(30, 3, 1, "c", 200))
	v.Send(true, kreq(0, 9, 2, "c", 200))
	v.Send(true, kreq(0, 9, 3, "c", 200))
	v.Send(true, kreq(0, 9, 4, "c", 200))
	r2 := kresp(2, 200)
	v.Send(false, r2[:100])
	v.Send(false, r2[100:])
	v.Send(false, kresp(1, 200))
	v.Send(false, kresp(7, 200)) // no such request
	v.Send(false, kresp(2, 200)) // answered already
	r3 := kresp(3, 200)
	v.Send(false, r3[:100])
	v.Drop(false, 108)           // the rest of r3 is lost
	v.Send(false, kresp(3, 200)) // r3 answered request 3, cut as it was
	v.Send(false, kresp(4, 200))
	cfg := testConfig()
	cfg.Framing = testRules{keep: func(key int16) bool { return key == 30 }}
	r := run(t, cfg, v.Cap.Packets, nil)
	wantLines(t, r,
		"frame c1> off=0 size=215 pk=[4]",
		"frame c1> off=215 size=215 pk=[5] truncated(68)",
		"frame c1> off=430 size=215 pk=[6] truncated(68)",
		"frame c1> off=645 size=215 pk=[7] truncated(68)",
		"frame c1< off=0 size=208 pk=[8 9] truncated(68)",
		"frame c1< off=208 size=208 pk=[10]",
		"frame c1< off=416 size=208 pk=[11]",
		"frame c1< off=624 size=208 pk=[12]",
		"gap c1< off=932 len=108",
		"incomplete c1< off=832 have=100 want=208 gap",
		"frame c1< off=1040 size=208 pk=[14]",
		"frame c1< off=1248 size=208 pk=[15] truncated(68)",
		endC1,
	)
}

// After a request whose Keep says all, every frame is kept whole both ways
// (they may not be requests and responses at all) until the client sends a
// plausible request, which is judged as any.
func TestKeepAllUntilARequest(t *testing.T) {
	token := func(fill byte) []byte { return cat([]byte{0, 0, 0, 100}, bytes.Repeat([]byte{fill}, 100)) }
	v := opened()
	v.Send(true, kreq(17, 0, 1, "c", 100))
	v.Send(false, kresp(1, 100))
	v.Send(true, token(0xff)) // api key -1: no request
	v.Send(false, token(0xee))
	v.Send(true, kreq(0, 9, 2, "c", 100))
	v.Send(false, kresp(2, 100))
	v.Send(false, token(0xee))
	cfg := testConfig()
	cfg.Framing = testRules{keep: func(key int16) bool { return key == 30 }, keepAll: func(key int16) bool { return key == 17 }}
	r := run(t, cfg, v.Cap.Packets, nil)
	wantLines(t, r,
		"frame c1> off=0 size=115 pk=[4] truncated(68)",
		"frame c1< off=0 size=108 pk=[5]",
		"frame c1> off=115 size=104 pk=[6]",
		"frame c1< off=108 size=104 pk=[7]",
		"frame c1> off=219 size=115 pk=[8] truncated(68)",
		"frame c1< off=212 size=108 pk=[9] truncated(68)",
		"frame c1< off=320 size=104 pk=[10]", // its key names no request
		endC1,
	)
}

func TestDetectPorts(t *testing.T) {
	s := netip.MustParseAddrPort("10.0.0.9:7777")
	v := newConv(cli, s, 1000, 5000)
	v.Send(false, []byte("junk from the server side"))
	v.Send(true, kreq(30, 3, 1, "c", 5))
	v.Send(false, kresp(1, 5))
	cfg := testConfig()
	cfg.DetectPorts = true
	r := run(t, cfg, v.Cap.Packets, nil)
	wantLines(t, r,
		"port 10.0.0.9:7777",
		"frame c1> off=0 size=20 pk=[2]",
		"frame c1< off=25 size=13 pk=[3]",
		"end c1 10.0.0.1:40000>10.0.0.9:7777 reset=false",
	)
}

// A broker may send an empty frame where a frame starts (the empty SASL
// token after SaslHandshake v0): it is a frame of its own, not corruption.
// A client's empty frame stays corruption, and so does one found while
// re-synchronising.
func TestEmptyBrokerFrameInSync(t *testing.T) {
	v := opened()
	q, a := kreq(17, 0, 1, "c", 6), kresp(1, 4)
	v.Send(true, q)
	v.Send(false, cat([]byte{0, 0, 0, 0}, a))
	v.Send(true, []byte{0, 0, 0, 0})
	expect(t, v,
		"frame c1> off=0 size="+itoa(len(q))+" pk=[4]",
		"frame c1< off=0 size=4 pk=[5]",
		"frame c1< off=4 size="+itoa(len(a))+" pk=[5]",
		"unparseable c1> off="+itoa(len(q))+" len=4",
		endC1,
	)
}

// Frame.Opened says a frame's direction was captured from its SYN, so
// that offset 0 is the connection's first byte; picked up without it, the
// first frame at offset 0 may be any frame of a connection already open.
func TestFrameOpened(t *testing.T) {
	q, p := kreq(3, 1, 0, "cc", 8), kresp(0, 8)
	for _, syn := range []bool{true, false} {
		v := newConv(cli, srv, 1000, 5000)
		if syn {
			v.Handshake()
		}
		v.Send(true, q)
		v.Send(false, p)
		v.Send(true, q)
		frames := eventsOf[*Frame](runAt(t, testConfig(), v.Cap.Packets))
		if len(frames) != 3 {
			t.Fatalf("syn=%v: %d frames, want 3", syn, len(frames))
		}
		for _, f := range frames {
			if f.Opened != syn {
				t.Errorf("syn=%v: frame at %d (client %v): Opened=%v", syn, f.StreamOffset, f.FromClient, f.Opened)
			}
		}
	}
}

// markSniffer finds "TLS!" in the bytes it is shown, and is done after
// limit of them.
type markSniffer struct {
	seen  []byte
	limit int
}

func (s *markSniffer) Feed(b []byte) (bool, bool) {
	s.seen = append(s.seen, b...)
	found := bytes.Contains(s.seen, []byte("TLS!"))
	return found, found || len(s.seen) >= s.limit
}

// Config.LeadingTLS is shown a direction's leading bytes in order, anew
// after a gap, until it is done; what it finds marks their Unparseable.
func TestLeadingTLSSniffer(t *testing.T) {
	var made []*markSniffer
	cfg := testConfig()
	cfg.LeadingTLS = func() Sniffer {
		s := &markSniffer{limit: 700}
		made = append(made, s)
		return s
	}
	junk := bytes.Repeat([]byte{0x9c, 0x41, 0xe3, 0x07}, 300)
	for _, c := range []struct {
		name string
		send func(v *testkit.Conn)
		want []string
		fed  []int // bytes each sniffer was shown
	}{
		{"marked", func(v *testkit.Conn) {
			v.Send(true, junk[:300])
			v.Send(true, append([]byte("TLS!"), junk[:200]...))
		}, []string{"unparseable c1> off=0 len=504 leading unframed tls"}, []int{504}},
		{"unmarked, the sniffer done at its limit", func(v *testkit.Conn) {
			v.Send(true, junk[:600])
			v.Send(true, junk[:600])
		}, []string{"unparseable c1> off=0 len=1200 leading unframed"}, []int{1200}},
		{"split by a gap", func(v *testkit.Conn) {
			v.Send(true, append(junk[:100:100], "TL"...))
			v.CSeq += 10
			v.Send(true, append([]byte("S!"), junk[:100]...))
		}, []string{"unparseable c1> off=0 len=102 leading", "gap c1> off=102 len=10", "unparseable c1> off=112 len=102 leading unframed"}, []int{102, 102}},
	} {
		made = nil
		v := newConv(cli, srv, 77, 900)
		c.send(v)
		v.Raw(true, v.CSeq, "R", nil, -1)
		r := run(t, cfg, v.Cap.Packets, nil)
		wantLines(t, r, append(c.want, "end c1 10.0.0.1:40000>10.0.0.2:9092 reset=true")...)
		var fed []int
		for _, s := range made {
			fed = append(fed, len(s.seen))
		}
		if !slices.Equal(fed, c.fed) {
			t.Errorf("%s: sniffers shown %v bytes, want %v", c.name, fed, c.fed)
		}
	}
	// A direction captured from its SYN is framed from its first byte: no
	// sniffer, also when its bytes go wrong later.
	made = nil
	v := opened()
	v.Send(true, append([]byte("TLS!"), junk[:40]...))
	v.Raw(true, v.CSeq, "R", nil, -1)
	run(t, cfg, v.Cap.Packets, nil)
	if len(made) != 0 {
		t.Errorf("%d sniffers for a stream captured from its start", len(made))
	}
}
