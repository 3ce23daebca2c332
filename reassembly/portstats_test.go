package reassembly

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// Connections on ports that are not broker ports are counted once each, by
// server port: the SYN's destination, the SYN-ACK's source, else the lower
// port. Kafka connections are not counted; with DetectPorts on or off.
func TestOtherPortsTally(t *testing.T) {
	at := func(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
	var pkts []testkit.Packet
	add := func(v *testkit.Conn) { pkts = append(pkts, v.Cap.Packets...) }
	for i := range 3 { // three HTTPS connections with a handshake
		v := newConv(at(fmt.Sprintf("10.0.0.1:%d", 50000+i)), at("10.0.0.9:443"), 1, 2)
		v.Handshake()
		v.Send(true, []byte("\x16\x03\x01 hello"))
		v.Send(false, []byte("\x16\x03\x03 hello"))
		add(v)
	}
	v := newConv(at("10.0.0.1:40001"), at("10.0.0.9:22"), 1, 2) // SSH seen from its SYN-ACK on
	v.Handshake()
	v.Cap.Packets = v.Cap.Packets[1:]
	v.Send(false, []byte("SSH-2.0-x\r\n"))
	add(v)
	v = newConv(at("10.0.0.1:8080"), at("10.0.0.9:60000"), 1, 2) // mid-stream: the lower port
	v.Send(false, []byte("GET / HTTP/1.1\r\n"))
	v.Send(true, []byte("HTTP/1.1 200 OK\r\n"))
	add(v)
	k := opened() // Kafka on 9092: not another port
	k.Send(true, kreq(30, 3, 1, "c", 30))
	add(k)
	for _, detect := range []bool{true, false} {
		cfg := testConfig()
		cfg.DetectPorts = detect
		_, p := runWith(t, cfg, pkts, nil, false)
		got, more := p.OtherPorts()
		// Most connections first, ties in port order.
		if fmt.Sprint(got, more) != "[{443 3} {22 1} {8080 1}] false" {
			t.Errorf("detect=%v: %v %v", detect, got, more)
		}
		if st := p.Stats(); st.Connections != 1 || st.Frames != 1 {
			t.Errorf("detect=%v: %d Kafka connections, %d frames", detect, st.Connections, st.Frames)
		}
	}
}

// The tally is bounded: past maxTallied connections it stops telling them
// apart and says there were more.
func TestOtherPortsTallyIsBounded(t *testing.T) {
	var pt portTally
	srvAt := netip.MustParseAddrPort("10.0.0.9:80")
	for i := range maxTallied + 10 {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 50000)
		pt.add(tuple{c, srvAt}, flagSYN)
		pt.add(tuple{srvAt, c}, flagSYN|flagACK) // the same connection
	}
	if len(pt.seen) != maxTallied || pt.ports[80] != maxTallied || !pt.more {
		t.Errorf("%d told apart, %d counted, more=%v", len(pt.seen), pt.ports[80], pt.more)
	}
}
