package reassembly

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// recLayer is a toy Layer: each direction is a sequence of records, a
// 5-byte header (0x17, 3, 3, int16 length) and a payload; its output is the
// payloads. It reports the first bytes of each direction and the end as
// events, and gives its output the packet number it was fed plus 100, so
// that a test sees which numbers frames take. After a gap it loses the
// record being read and expects the next bytes to start a record.
type recLayer struct {
	buf    [2][]byte
	outOff [2]int64
	seen   [2]bool
}

func record(payload []byte) []byte {
	return append([]byte{0x17, 3, 3, byte(len(payload) >> 8), byte(len(payload))}, payload...)
}

func (l *recLayer) Feed(fromClient bool, off int64, data []byte, pkt int, ts time.Time, out LayerOutput) {
	d := dir(fromClient)
	if !l.seen[d] {
		l.seen[d] = true
		out.Event(fromClient, ts, fmt.Sprintf("first at %d", off))
	}
	l.buf[d] = append(l.buf[d], data...)
	for len(l.buf[d]) >= 5 {
		n := int(binary.BigEndian.Uint16(l.buf[d][3:]))
		if len(l.buf[d]) < 5+n {
			break
		}
		out.Data(fromClient, l.outOff[d], l.buf[d][5:5+n], pkt+100, ts)
		l.outOff[d] += int64(n)
		l.buf[d] = l.buf[d][5+n:]
	}
}

func (l *recLayer) Gap(fromClient bool, off, n int64, ts time.Time, out LayerOutput) {
	d := dir(fromClient)
	l.buf[d] = nil
	out.Gap(fromClient, l.outOff[d], -1, ts)
}

func (l *recLayer) End(reason string, ts time.Time, out LayerOutput) {
	out.Event(true, ts, "end: "+reason)
}

// layerConfig is testConfig with recLayer on connections whose client
// starts with a record header; asked records what NewLayer was given.
func layerConfig(asked *[]string) Config {
	cfg := testConfig()
	cfg.NewLayer = func(f Flow, first []byte) Layer {
		*asked = append(*asked, fmt.Sprintf("c%d %s>%s client=%v % x", f.ConnID, f.Src, f.Dst, f.FromClient, first))
		if len(first) < 3 || !bytes.Equal(first[:3], []byte{0x17, 3, 3}) {
			return nil
		}
		return new(recLayer)
	}
	return cfg
}

func wantAsked(t *testing.T, asked []string, want ...string) {
	t.Helper()
	if fmt.Sprint(asked) != fmt.Sprint(want) {
		t.Errorf("NewLayer asked:\n%q\nwant:\n%q", asked, want)
	}
}

func TestLayerOutputIsFramed(t *testing.T) {
	v := opened()
	req := kreq(30, 3, 7, "adm", 20) // 37 bytes
	rec1, rec2 := record(req[:20]), record(req[20:])
	v.Send(true, rec1) // 4: 25 bytes, enough for NewLayer
	v.Send(true, rec2) // 5
	resp := kresp(7, 10)
	v.Send(false, record(resp)) // 6
	req2 := kreq(31, 3, 8, "adm", 3)
	v.Send(true, cat(record(req2[:2]), record(req2[2:]))) // 7: two records, one packet
	var asked []string
	r, _ := runWith(t, layerConfig(&asked), v.Cap.Packets, nil, true)
	wantAsked(t, asked, fmt.Sprintf("c1 %s>%s client=true % x", cli, srv, rec1))
	// Offsets count the layer's output; packet numbers are those the layer
	// gave with its output; the record headers are never Unparseable.
	wantLines(t, r,
		"4: layer c1> 10.0.0.1:40000>10.0.0.2:9092 first at 0",
		"5: frame c1> off=0 size=37 pk=[104 105]",
		"6: layer c1< 10.0.0.2:9092>10.0.0.1:40000 first at 0",
		"6: frame c1< off=0 size=18 pk=[106]",
		"7: frame c1> off=37 size=20 pk=[107]",
		"close: layer c1> 10.0.0.1:40000>10.0.0.2:9092 end: end of capture",
		"close: "+endC1,
	)
	wantFrames(t, r, req, resp, req2)
}

func TestLayerGapResyncsTheFramer(t *testing.T) {
	v := opened()
	req := kreq(30, 3, 7, "adm", 20) // 37 bytes
	req2 := kreq(31, 3, 8, "adm", 3) // 20 bytes
	rec1, rec2 := record(req[:20]), record(req[20:])
	v.Send(true, rec1)          // 4
	v.CSeq += uint32(len(rec2)) // never captured
	v.Send(true, record(req2))  // 5: held out of order
	var asked []string
	r, _ := runWith(t, layerConfig(&asked), v.Cap.Packets, nil, true)
	wantAsked(t, asked, fmt.Sprintf("c1 %s>%s client=true % x", cli, srv, rec1))
	// The TCP gap is reported in TCP offsets; the layer's gap makes the
	// framer give up the cut frame and find the next one in its output.
	wantLines(t, r,
		"4: layer c1> 10.0.0.1:40000>10.0.0.2:9092 first at 0",
		"close: gap c1> off=25 len=22",
		"close: incomplete c1> off=0 have=20 want=37 gap",
		"close: frame c1> off=20 size=20 pk=[105]",
		"close: layer c1> 10.0.0.1:40000>10.0.0.2:9092 end: end of capture",
		"close: "+endC1,
	)
	wantFrames(t, r, req2)
}

func TestLayerDeclinedFramesPlainBytes(t *testing.T) {
	v := opened()
	req, resp := kreq(30, 3, 7, "adm", 20), kresp(7, 10)
	v.Send(true, req[:10]) // 4: too few bytes to ask
	v.Send(false, resp)    // 5: held until NewLayer answers
	v.Send(true, req[10:]) // 6
	var asked []string
	r, _ := runWith(t, layerConfig(&asked), v.Cap.Packets, nil, true)
	wantAsked(t, asked, fmt.Sprintf("c1 %s>%s client=true % x", cli, srv, req))
	// Held bytes go out in the order they came, as without the hold: the
	// response was whole before the request's end came.
	wantLines(t, r,
		"6: frame c1< off=0 size=18 pk=[5]",
		"6: frame c1> off=0 size=37 pk=[4 6]",
		"close: "+endC1,
	)
	wantFrames(t, r, resp, req)
}

func TestLayerAskedWithFewerBytesAtTheEnd(t *testing.T) {
	v := opened()
	v.Send(true, []byte{0x17, 3, 3, 0}) // 4: the client sends 4 bytes only
	v.Fin(true)                         // 5
	var asked []string
	r, _ := runWith(t, layerConfig(&asked), v.Cap.Packets, nil, true)
	wantAsked(t, asked, fmt.Sprintf("c1 %s>%s client=true 17 03 03 00", cli, srv))
	// The layer holds an unfinished record: no frame, no Unparseable.
	wantLines(t, r,
		"5: layer c1> 10.0.0.1:40000>10.0.0.2:9092 first at 0",
		"close: layer c1> 10.0.0.1:40000>10.0.0.2:9092 end: end of capture",
		"close: "+endC1,
	)
}

func TestLayerDetectsPorts(t *testing.T) {
	other := netip.MustParseAddrPort("10.0.0.2:7000")
	v := newConv(cli, other, 1000, 5000)
	v.Handshake()
	req := kreq(30, 3, 7, "adm", 20)
	v.Send(true, record(req))          // 4
	v.Send(false, record(kresp(7, 2))) // 5
	v2 := newConv(netip.MustParseAddrPort("10.0.0.3:40000"), netip.MustParseAddrPort("10.0.0.4:7001"), 1, 1)
	v2.Handshake()
	v2.Send(true, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")) // not a record, not Kafka
	cfg := layerConfig(new([]string))
	cfg.DetectPorts = true
	r, _ := runWith(t, cfg, append(v.Cap.Packets, v2.Cap.Packets...), nil, true)
	wantLines(t, r,
		"4: port 10.0.0.2:7000",
		"4: layer c1> 10.0.0.1:40000>10.0.0.2:7000 first at 0",
		"4: frame c1> off=0 size=37 pk=[104]",
		"5: layer c1< 10.0.0.2:7000>10.0.0.1:40000 first at 0",
		"5: frame c1< off=0 size=10 pk=[105]",
		"close: layer c1> 10.0.0.1:40000>10.0.0.2:7000 end: end of capture",
		"close: "+endLine(1, cli, other, false),
	)
}

// unproven is a recLayer whose evidence is weak (Prover).
type unproven struct{ recLayer }

func (*unproven) Proven() bool { return false }

// A Layer that is not Proven serves a connection on a given port, but does
// not make a probed port followed.
func TestLayerMustProveItselfOnProbedPorts(t *testing.T) {
	other := netip.MustParseAddrPort("10.0.0.2:7000")
	v := newConv(cli, other, 1000, 5000)
	v.Handshake()
	v.Send(true, record(kreq(30, 3, 7, "adm", 20)))
	w := opened()
	w.Send(true, record(kreq(30, 3, 8, "adm", 20)))
	cfg := testConfig()
	cfg.DetectPorts = true
	cfg.NewLayer = func(Flow, []byte) Layer { return new(unproven) }
	r, _ := runWith(t, cfg, append(v.Cap.Packets, w.Cap.Packets...), nil, false)
	wantLines(t, r,
		"layer c2> 10.0.0.1:40000>10.0.0.2:9092 first at 0",
		"frame c2> off=0 size=37 pk=[108]",
		"layer c2> 10.0.0.1:40000>10.0.0.2:9092 end: end of capture",
		endLine(2, cli, srv, false),
	)
}

func TestLayerHoldIsCapped(t *testing.T) {
	v := opened()
	req := kreq(30, 3, 7, "adm", 20)
	v.Send(true, req[:10]) // 4: too few bytes to ask
	resp := kresp(7, 1392) // 1400 bytes
	for range 47 {         // 5-51: past 64 KiB at the 47th
		v.Send(false, resp)
	}
	v.Send(true, req[10:]) // 52
	var asked []string
	r, _ := runWith(t, layerConfig(&asked), v.Cap.Packets, nil, true)
	wantAsked(t, asked, fmt.Sprintf("c1 %s>%s client=true % x", cli, srv, req[:10]))
	var want []string
	for i := range 47 {
		want = append(want, fmt.Sprintf("51: frame c1< off=%d size=1400 pk=[%d]", i*1400, 5+i))
	}
	want = append(want, "52: frame c1> off=0 size=37 pk=[4 52]", "close: "+endC1)
	wantLines(t, r, want...)
}

// Bytes scanned for a frame start when a layered connection ends are its
// Layer's: they end where the Layer's output ends, not where the TCP
// stream does.
func TestLayeredJunkEndsWithTheLayersBytes(t *testing.T) {
	v := opened()
	var asked []string
	req := kreq(30, 3, 7, "adm", 20) // 37 bytes
	v.Send(true, record(req))
	v.Send(true, record(bytes.Repeat([]byte{0xff}, 50))) // no frame starts in these
	v.Send(true, record(bytes.Repeat([]byte{0xff}, 50)))
	r := run(t, layerConfig(&asked), v.Cap.Packets, nil)
	wantLines(t, r,
		"layer c1> 10.0.0.1:40000>10.0.0.2:9092 first at 0",
		"frame c1> off=0 size=37 pk=[104]",
		"layer c1> 10.0.0.1:40000>10.0.0.2:9092 end: end of capture",
		"unparseable c1> off=37 len=100",
		endC1,
	)
}
