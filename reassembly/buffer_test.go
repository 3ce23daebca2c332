package reassembly

import (
	"fmt"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// bufConfig caps buffering at 1000 bytes a connection, 1500 in all.
func bufConfig(conn, total int) Config {
	cfg := testConfig()
	cfg.MaxConnBuffer, cfg.MaxTotalBuffer = conn, total
	return cfg
}

// wantHeld checks Pipeline.buffered after each packet.
func wantHeld(t *testing.T, r *recorder, want ...int) {
	t.Helper()
	if fmt.Sprint(r.held) != fmt.Sprint(want) {
		t.Errorf("buffered after each packet %v, want %v", r.held, want)
	}
}

// A wanted body larger than MaxConnBuffer is not buffered: BufferLimit,
// then the frame Truncated to its head; the next frame is whole again.
func TestBufferLimitConnByBody(t *testing.T) {
	v := opened()
	f, g := kreq(30, 3, 1, "c", 1185), kreq(31, 3, 2, "c", 5) // 1200, 20 bytes
	v.Send(true, f[:500])
	v.Send(true, f[500:1000])
	v.Send(true, f[1000:])
	v.Send(true, g)
	r := runAt(t, bufConfig(1000, 1500), v.Cap.Packets)
	wantLines(t, r,
		"4: limit c1> off=0 len=1200",
		"6: frame c1> off=0 size=1200 pk=[4 5 6] truncated(68)",
		"7: frame c1> off=1200 size=20 pk=[7]",
		"close: "+endC1,
	)
	wantFrames(t, r, f[:68], g)
	wantHeld(t, r, 0, 0, 0, 0, 0, 0, 0)
}

// Two connections' wanted bodies: the second does not fit MaxTotalBuffer
// next to the first one's reservation; once that frame is out, the next
// body fits again.
func TestBufferLimitTotalByBody(t *testing.T) {
	cli2 := netipMust("10.0.0.1:40001")
	v, w := opened(), newConv(cli2, srv, 70000, 80000)
	w.Handshake()
	g := kreq(30, 3, 1, "c", 885)                                // 900 bytes
	h1, h2 := kreq(31, 3, 2, "d", 785), kreq(31, 3, 3, "d", 785) // 800 bytes each
	v.Send(true, g[:500])                                        // 7
	w.Send(true, h1[:500])                                       // 8
	v.Send(true, g[500:])                                        // 9
	w.Send(true, h1[500:])                                       // 10
	w.Send(true, h2[:500])                                       // 11
	w.Send(true, h2[500:])                                       // 12
	pkts := append(append(append([]testkit.Packet(nil), v.Cap.Packets[:3]...), w.Cap.Packets[:3]...),
		v.Cap.Packets[3], w.Cap.Packets[3], v.Cap.Packets[4], w.Cap.Packets[4], w.Cap.Packets[5], w.Cap.Packets[6])
	r := runAt(t, bufConfig(1000, 1500), pkts)
	wantLines(t, r,
		"8: limit c2> off=0 len=800",
		"9: frame c1> off=0 size=900 pk=[7 9]",
		"10: frame c2> off=0 size=800 pk=[8 10] truncated(68)",
		"12: frame c2> off=800 size=800 pk=[11 12]",
		"close: "+endC1,
		"close: "+endLine(2, cli2, srv, false),
	)
	wantFrames(t, r, g, h1[:68], h2)
	wantHeld(t, r, 0, 0, 0, 0, 0, 0, 900, 900, 0, 0, 800, 0)
}

// quads returns four 300-byte request frames and their concatenation.
func quads(clientID string) (all []byte, k [4][]byte) {
	for i := range k {
		k[i] = kreq(30, 3, int32(10+i), clientID, 285)
	}
	return cat(k[:]...), k
}

// Out-of-order data past MaxConnBuffer: BufferLimit, the hole becomes a Gap
// (cutting the frame in progress), held data is delivered at once, and the
// late segment is a retransmission of bytes given up on.
func TestBufferLimitConnByOutOfOrder(t *testing.T) {
	v := opened()
	all, k := quads("c")
	s := v.CSeq
	v.Raw(true, s, "A", all[:100], -1)        // 4: K1 starts, body reserved
	v.Raw(true, s+200, "A", all[200:700], -1) // 5: held
	v.Raw(true, s+700, "A", all[700:], -1)    // 6: held: 300+500+500 > 1000
	v.Raw(true, s+100, "A", all[100:200], -1) // 7: too late
	r := runAt(t, bufConfig(1000, 1500), v.Cap.Packets)
	wantLines(t, r,
		"6: limit c1> off=200 len=1000",
		"6: gap c1> off=100 len=100",
		"6: incomplete c1> off=0 have=200 want=300 gap",
		"6: frame c1> off=300 size=300 pk=[5]",
		"6: frame c1> off=600 size=300 pk=[5 6]",
		"6: frame c1> off=900 size=300 pk=[6]",
		"7: retrans c1> off=100 len=100",
		"close: "+endC1,
	)
	wantFrames(t, r, k[1], k[2], k[3])
	wantHeld(t, r, 0, 0, 0, 300, 800, 0, 0)
}

// Out-of-order data of two connections past MaxTotalBuffer: the
// connection whose segment crossed the cap gives up its hole, the other
// keeps its data until its hole is filled.
func TestBufferLimitTotalByOutOfOrder(t *testing.T) {
	cli2 := netipMust("10.0.0.1:40001")
	v, w := opened(), newConv(cli2, srv, 70000, 80000)
	w.Handshake()
	a, ka := quads("a")
	b, kb := quads("b")
	v.Raw(true, v.CSeq+100, "A", a[100:900], -1) // 7: held 800
	w.Raw(true, w.CSeq+100, "A", b[100:900], -1) // 8: held 800: 1600 > 1500
	v.Raw(true, v.CSeq, "A", a[:100], -1)        // 9: fills c1's hole
	pkts := append(append(append([]testkit.Packet(nil), v.Cap.Packets[:3]...), w.Cap.Packets[:3]...), v.Cap.Packets[3], w.Cap.Packets[3], v.Cap.Packets[4])
	r := runAt(t, bufConfig(1200, 1500), pkts)
	wantLines(t, r,
		"8: limit c2> off=100 len=800",
		"8: gap c2> off=0 len=100",
		"8: unparseable c2> off=100 len=200",
		"8: frame c2> off=300 size=300 pk=[8]",
		"8: frame c2> off=600 size=300 pk=[8]",
		"9: frame c1> off=0 size=300 pk=[9 7]",
		"9: frame c1> off=300 size=300 pk=[7]",
		"9: frame c1> off=600 size=300 pk=[7]",
		"close: "+endC1,
		"close: "+endLine(2, cli2, srv, false),
	)
	wantFrames(t, r, kb[1], kb[2], ka[0], ka[1], ka[2])
	wantHeld(t, r, 0, 0, 0, 0, 0, 0, 800, 800, 0)
}

// MaxConnBuffer counts both directions of a connection: each holds 600
// bytes out of order, together over the cap of 1000, so the server side
// gives up its hole; then the response body reserved on the server side
// leaves no room for the client's next body.
func TestBufferLimitCountsBothDirections(t *testing.T) {
	v := opened()
	q := kreq(30, 3, 7, "c", 5) // 20 bytes, in order: the response's request
	v.Send(true, q)
	all, k := quads("c")
	resp := [3][]byte{kresp(7, 292), kresp(7, 292), kresp(7, 292)} // 300 bytes each
	rall := cat(resp[:]...)
	v.Raw(true, v.CSeq+100, "A", all[100:700], -1)   // 5: client holds 600
	v.Raw(false, v.SSeq+100, "A", rall[100:700], -1) // 6: server holds 600: 1200 > 1000
	v.Raw(true, v.CSeq, "A", all[:100], -1)          // 7: client hole filled
	r := runAt(t, bufConfig(1000, 5000), v.Cap.Packets)
	wantLines(t, r,
		"4: frame c1> off=0 size=20 pk=[4]",
		"6: limit c1< off=100 len=600",
		"6: gap c1< off=0 len=100",
		"6: unparseable c1< off=100 len=200",
		"6: frame c1< off=300 size=300 pk=[6]",
		"7: limit c1> off=20 len=300",
		"7: frame c1> off=20 size=300 pk=[7 5] truncated(68)",
		"7: frame c1> off=320 size=300 pk=[5]",
		"close: incomplete c1> off=620 have=100 want=300 end of capture",
		"close: incomplete c1< off=600 have=100 want=300 end of capture",
		"close: "+endC1,
	)
	wantFrames(t, r, q, resp[1], k[0][:68], k[1])
	wantHeld(t, r, 0, 0, 0, 0, 600, 900, 600)
}
