package reassembly

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// helloLayer is a Layer for tests: the client's first 16 bytes (starting
// "HELO") are its handshake, dropped; everything else passes unchanged, so
// the client's output offsets are its TCP offsets minus 16. It reports
// what it is told as LayerEvent strings.
type helloLayer struct{ fed []string }

const helloLen = 16

func hello() []byte { return append([]byte("HELO"), make([]byte, helloLen-4)...) }

func newHelloLayer(f Flow, first []byte) Layer {
	if !bytes.HasPrefix(first, []byte("HELO")) {
		return nil
	}
	return &helloLayer{}
}

func (l *helloLayer) Feed(fromClient bool, off int64, data []byte, pkt int, ts time.Time, out LayerOutput) {
	if fromClient {
		if off < helloLen {
			cut := min(int64(len(data)), helloLen-off)
			data, off = data[cut:], off+cut
		}
		off -= helloLen
	}
	if len(data) > 0 {
		out.Data(fromClient, off, data, pkt, ts)
	}
}

func (l *helloLayer) Gap(fromClient bool, off, n int64, ts time.Time, out LayerOutput) {
	if fromClient {
		off -= helloLen
	}
	out.Event(fromClient, ts, fmt.Sprintf("gap at %d", off))
	out.Gap(fromClient, off, n, ts)
}

func (l *helloLayer) End(reason string, ts time.Time, out LayerOutput) {
	out.Event(true, ts, "end: "+reason)
}

func layerLines(r *recorder) []string {
	var out []string
	for _, e := range r.events {
		switch e := e.(type) {
		case *LayerEvent:
			out = append(out, fmt.Sprintf("layer c%d fromClient=%v %v", e.ConnID, e.FromClient, e.Value))
		case *Frame:
			out = append(out, fmt.Sprintf("frame fromClient=%v off=%d size=%d pk=%v", e.FromClient, e.StreamOffset, e.Size, e.Packets))
		case *Gap:
			out = append(out, fmt.Sprintf("gap fromClient=%v off=%d len=%d", e.FromClient, e.StreamOffset, e.Length))
		case *Unparseable:
			out = append(out, fmt.Sprintf("unparseable fromClient=%v off=%d len=%d", e.FromClient, e.StreamOffset, e.Length))
		case *Incomplete:
			out = append(out, fmt.Sprintf("incomplete fromClient=%v off=%d %s", e.FromClient, e.StreamOffset, e.Reason))
		case *PortDetected:
			out = append(out, "port "+e.Server.String())
		case *ConnEnd:
			out = append(out, "end")
		}
	}
	return out
}

func wantLayerLines(t *testing.T, r *recorder, want ...string) {
	t.Helper()
	if got := strings.Join(layerLines(r), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

func TestLayerFramesItsOutput(t *testing.T) {
	req1, req2 := kreq(30, 3, 1, "c", 40), kreq(30, 3, 2, "c", 40)
	v := opened(t)
	v.send(true, cat(hello(), req1[:10])) // 4
	v.send(true, req1[10:])               // 5
	v.send(false, kresp(1, 20))           // 6
	v.send(true, req2)                    // 7
	v.fin(true)
	v.fin(false)
	cfg := testConfig()
	cfg.NewLayer = newHelloLayer
	r := run(t, cfg, v.pkts, nil)
	wantLayerLines(t, r,
		fmt.Sprintf("frame fromClient=true off=0 size=%d pk=[4 5]", len(req1)),
		"frame fromClient=false off=0 size=28 pk=[6]",
		fmt.Sprintf("frame fromClient=true off=%d size=%d pk=[7]", len(req1), len(req2)),
		"layer c1 fromClient=true end: connection closed",
		"end")
	wantFrames(t, r, req1, kresp(1, 20), req2)
}

func TestLayerGapResynchronisesTheFramer(t *testing.T) {
	req1, req2, req3 := kreq(30, 3, 1, "c", 40), kreq(30, 3, 2, "c", 40), kreq(30, 3, 3, "c", 40)
	v := opened(t)
	v.send(true, cat(hello(), req1)) // 4
	v.send(true, req2[:20])          // 5: lost
	v.send(true, req2[20:])          // 6
	v.send(true, req3)               // 7, fed as 6
	cfg := testConfig()
	cfg.NewLayer = newHelloLayer
	pk := v.pkts
	r := run(t, cfg, append(pk[:4:4], pk[5:]...), nil)
	tcpGap := int64(helloLen + len(req1))
	wantLayerLines(t, r,
		fmt.Sprintf("frame fromClient=true off=0 size=%d pk=[4]", len(req1)),
		fmt.Sprintf("gap fromClient=true off=%d len=20", tcpGap),
		fmt.Sprintf("layer c1 fromClient=true gap at %d", len(req1)),
		fmt.Sprintf("unparseable fromClient=true off=%d len=%d", len(req1)+20, len(req2)-20),
		fmt.Sprintf("frame fromClient=true off=%d size=%d pk=[6]", len(req1)+len(req2), len(req3)), // renumbered
		"layer c1 fromClient=true end: end of capture",
		"end")
}

func TestLayerNilFramesPlainBytes(t *testing.T) {
	req := kreq(30, 3, 1, "c", 40)
	v := opened(t)
	v.send(true, req)
	cfg := testConfig()
	asked := 0
	cfg.NewLayer = func(f Flow, first []byte) Layer {
		asked++
		if f.Src != cli || f.Dst != srv || !f.FromClient || !bytes.Equal(first, req) {
			t.Errorf("NewLayer(%+v, % x)", f, first)
		}
		return nil
	}
	r := run(t, cfg, v.pkts, nil)
	wantLayerLines(t, r, fmt.Sprintf("frame fromClient=true off=0 size=%d pk=[4]", len(req)), "end")
	if asked != 1 {
		t.Errorf("NewLayer asked %d times, want once", asked)
	}
}

func TestLayerDetectsItsConnections(t *testing.T) {
	req := kreq(30, 3, 1, "c", 40)
	c, s := netip.MustParseAddrPort("192.0.2.10:50000"), netip.MustParseAddrPort("192.0.2.1:7777")
	v := newConv(t, c, s, 1000, 5000)
	v.handshake()
	v.send(true, cat(hello(), req)) // 4
	v.send(false, kresp(1, 20))     // 5
	cfg := testConfig()
	cfg.DetectPorts = true
	cfg.NewLayer = newHelloLayer
	r := run(t, cfg, v.pkts, nil)
	wantLayerLines(t, r,
		"port 192.0.2.1:7777",
		fmt.Sprintf("frame fromClient=true off=0 size=%d pk=[4]", len(req)),
		"frame fromClient=false off=0 size=28 pk=[5]",
		"layer c1 fromClient=true end: end of capture",
		"end")
}
