package tlslayer

import (
	"testing"
	"time"

	"github.com/kdissect/kdissect/reassembly"
)

func TestFactoryTakesOnlyClientHellos(t *testing.T) {
	nl := NewFactory(nil)
	hello := []byte{22, 3, 1, 0, 200, 1, 0, 0, 196, 3, 3, 0, 0, 0, 0, 0}
	if nl(reassembly.Flow{}, hello) == nil {
		t.Error("a ClientHello record gets no layer")
	}
	kafka := []byte{0, 0, 0, 20, 0, 18, 0, 3, 0, 0, 0, 1, 0, 4, 'k', 'a'}
	for _, first := range [][]byte{kafka, nil, hello[:10]} {
		if nl(reassembly.Flow{}, first) != nil {
			t.Errorf("% x gets a layer", first)
		}
	}
}

func TestPacketAtNamesTheCarryingPacket(t *testing.T) {
	var d dir
	t0 := time.Unix(0, 0)
	// Packets 10, 11, ... of 100 bytes each, more than the ring holds.
	for i := 0; i < marks+8; i++ {
		d.ring[d.n%marks] = mark{int64(100 * i), 10 + i, t0.Add(time.Duration(i))}
		d.n++
	}
	for _, c := range []struct {
		off  int64
		want int
	}{
		{100*(marks+7) + 99, 10 + marks + 7}, // the last byte of the last packet
		{100 * (marks + 7), 10 + marks + 7},
		{100*10 + 50, 20},
		{100 * 8, 18}, // the oldest mark kept
		{0, 18},       // older than the ring: its oldest packet
	} {
		if got, _ := d.packetAt(c.off); got != c.want {
			t.Errorf("packetAt(%d) = %d, want %d", c.off, got, c.want)
		}
	}
}
