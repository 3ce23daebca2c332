package tlslayer

import (
	"testing"
	"time"

	"github.com/kdissect/kdissect/reassembly"
)

// A connection is TLS when its client begins with a ClientHello, proven so
// on any port; or with another TLS record (no Kafka frame begins so): a
// capture begun after the handshake, or a client that gave up with an
// alert, which prove nothing on a port not given.
func TestFactoryTakesTLSRecords(t *testing.T) {
	nl := NewFactory(nil)
	hello := []byte{22, 3, 1, 0, 200, 1, 0, 0, 196, 3, 3, 0, 0, 0, 0, 0}
	for _, tc := range []struct {
		name              string
		first             []byte
		proven, midstream bool
	}{
		{"a ClientHello", hello, true, false},
		{"a ClientHello cut short", hello[:10], false, false},
		{"application data", []byte{23, 3, 3, 0x40, 0x11, 0xde, 0xad}, false, true},
		{"a handshake record that is no ClientHello", []byte{22, 3, 3, 0, 40, 0x14, 0, 0, 36}, false, true},
		{"an alert in the clear", []byte{21, 3, 1, 0, 2, 2, 80}, false, false},
		{"an encrypted alert", []byte{21, 3, 3, 0, 26, 0x9a}, false, true},
	} {
		l, _ := nl(reassembly.Flow{}, tc.first).(*layer)
		if l == nil || l.Proven() != tc.proven || l.midstream != tc.midstream {
			t.Errorf("%s: layer %v; want proven %v, midstream %v", tc.name, l, tc.proven, tc.midstream)
		}
	}
	kafka := []byte{0, 0, 0, 20, 0, 18, 0, 3, 0, 0, 0, 1, 0, 4, 'k', 'a'}
	for _, first := range [][]byte{kafka, nil, hello[:4], {23, 3, 3, 0, 0}, {23, 3, 3, 0x48, 0x01}} {
		if nl(reassembly.Flow{}, first) != nil {
			t.Errorf("% x gets a layer", first)
		}
	}
}

// A packet is remembered while tlsdec holds bytes it carried, up to marks
// packets: a record completed by bytes held (waiting for the other
// direction's hello) is named by the packet that carried its last byte.
func TestPacketAtNamesTheCarryingPacket(t *testing.T) {
	var d dir
	t0 := time.Unix(0, 0)
	// Packets 10, 11, ... of 100 bytes each, more than are remembered, all
	// of them held.
	for i := 0; i < marks+8; i++ {
		d.fed(mark{int64(100 * i), 10 + i, t0.Add(time.Duration(i)).UnixNano()}, i > 0)
		d.settle(int64(100*(i+1)), 100*(i+1))
	}
	for _, c := range []struct {
		off  int64
		want int
	}{
		{100*(marks+7) + 99, 10 + marks + 7}, // the last byte of the last packet
		{100 * (marks + 7), 10 + marks + 7},
		{100*10 + 50, 20},
		{100 * 7, 17}, // the oldest packet remembered
		{0, 17},       // older than those: the oldest
	} {
		if got, _ := d.packetAt(c.off); got != c.want {
			t.Errorf("packetAt(%d) = %d, want %d", c.off, got, c.want)
		}
	}
	// Once tlsdec holds only the last 150 bytes, the packets before the one
	// carrying the first of them are forgotten; once it holds nothing, all
	// but the last.
	end := int64(100 * (marks + 8))
	d.settle(end, 150)
	if len(d.held) != 1 || d.held[0].pkt != 10+marks+6 {
		t.Errorf("holding 150 bytes, remembers %v", d.held)
	}
	d.settle(end, 0)
	if len(d.held) != 0 || d.last.pkt != 10+marks+7 {
		t.Errorf("holding nothing, remembers %v and %v", d.held, d.last)
	}
}
