package traffic

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"sort"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// SynthMSS is the largest TCP payload of a synthesized segment: what Linux
// sends on an Ethernet-sized MTU with TCP timestamps on.
const SynthMSS = 1448

// Synth turns recorded wire events into the packets a capture on the
// loopback interface would have held: Ethernet/IPv4/TCP with the three-way
// handshake, data in segments of at most SynthMSS bytes with correct
// sequence and acknowledgement numbers, an ACK from the receiver after each
// write, and FIN both ways when the client closes. It is a WireSink, so it
// can write a capture while the traffic runs.
type Synth struct {
	w     *pcapgo.Writer
	conns map[int]*synthConn
	ipID  uint16
	buf   gopacket.SerializeBuffer
	last  time.Time // timestamp of the last packet: they never go backwards
	// Packets counts the packets written.
	Packets int
}

type synthConn struct {
	info              WireConnInfo
	cseq, sseq        uint32 // next sequence number of each side
	open, closed      bool
	client, server    net.IP
	cport, sport      uint16
	clientMAC, srvMAC net.HardwareAddr
}

// NewSynth writes the pcap file header (Ethernet, microsecond timestamps)
// to out and returns a synthesizer writing there.
func NewSynth(out io.Writer) (*Synth, error) {
	w := pcapgo.NewWriter(out)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		return nil, err
	}
	return &Synth{w: w, conns: map[int]*synthConn{}, buf: gopacket.NewSerializeBuffer()}, nil
}

// isn derives an initial sequence number from the connection's ports, so a
// regenerated capture of the same ports has the same numbers and the two
// sides differ. Values close to 2^32 make some connections wrap around.
func isn(a, b uint16, salt byte) uint32 {
	h := fnv.New32a()
	h.Write([]byte{byte(a >> 8), byte(a), byte(b >> 8), byte(b), salt})
	return h.Sum32()
}

// WireEvent implements WireSink.
func (s *Synth) WireEvent(info WireConnInfo, ev WireEvent) error {
	c := s.conns[ev.Conn]
	if c == nil {
		c = &synthConn{info: info, client: ipv4(info.Client.IP), server: ipv4(info.Server.IP),
			cport: uint16(info.Client.Port), sport: uint16(info.Server.Port),
			clientMAC: net.HardwareAddr{0, 0, 0, 0, 0, 0}, srvMAC: net.HardwareAddr{0, 0, 0, 0, 0, 0}}
		c.cseq = isn(c.cport, c.sport, 'c')
		c.sseq = isn(c.cport, c.sport, 's')
		s.conns[ev.Conn] = c
	}
	t := ev.Time
	tick := func() time.Time { t = t.Add(time.Microsecond); return t }
	switch ev.Kind {
	case WireOpen:
		if c.open {
			return fmt.Errorf("connection %d opened twice", ev.Conn)
		}
		c.open = true
		if err := s.packet(c, true, t, flags{syn: true}, c.cseq, 0, nil); err != nil {
			return err
		}
		c.cseq++
		if err := s.packet(c, false, tick(), flags{syn: true, ack: true}, c.sseq, c.cseq, nil); err != nil {
			return err
		}
		c.sseq++
		return s.packet(c, true, tick(), flags{ack: true}, c.cseq, c.sseq, nil)
	case WireData:
		if !c.open || c.closed {
			return fmt.Errorf("connection %d: data outside the connection", ev.Conn)
		}
		data := ev.Data
		for len(data) > 0 {
			n := min(len(data), SynthMSS)
			var err error
			if ev.FromClient {
				err = s.packet(c, true, t, flags{ack: true, psh: n == len(data)}, c.cseq, c.sseq, data[:n])
				c.cseq += uint32(n)
			} else {
				err = s.packet(c, false, t, flags{ack: true, psh: n == len(data)}, c.sseq, c.cseq, data[:n])
				c.sseq += uint32(n)
			}
			if err != nil {
				return err
			}
			data = data[n:]
			if len(data) > 0 {
				tick()
			}
		}
		// The receiver acknowledges the write.
		if ev.FromClient {
			return s.packet(c, false, tick(), flags{ack: true}, c.sseq, c.cseq, nil)
		}
		return s.packet(c, true, tick(), flags{ack: true}, c.cseq, c.sseq, nil)
	case WireClose:
		if !c.open || c.closed {
			return nil
		}
		c.closed = true
		if err := s.packet(c, true, t, flags{fin: true, ack: true}, c.cseq, c.sseq, nil); err != nil {
			return err
		}
		c.cseq++
		if err := s.packet(c, false, tick(), flags{fin: true, ack: true}, c.sseq, c.cseq, nil); err != nil {
			return err
		}
		c.sseq++
		return s.packet(c, true, tick(), flags{ack: true}, c.cseq, c.sseq, nil)
	}
	return fmt.Errorf("unknown wire event kind %d", ev.Kind)
}

// CloseAll ends every connection still open (FIN both ways) at time t, so
// the capture holds whole connections.
func (s *Synth) CloseAll(t time.Time) error {
	ids := make([]int, 0, len(s.conns))
	for id := range s.conns {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		c := s.conns[id]
		if err := s.WireEvent(c.info, WireEvent{Conn: id, Kind: WireClose, Time: t}); err != nil {
			return err
		}
	}
	return nil
}

func ipv4(ip net.IP) net.IP {
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return net.IPv4(127, 0, 0, 1).To4()
}

type flags struct{ syn, ack, psh, fin bool }

func (s *Synth) packet(c *synthConn, fromClient bool, t time.Time, f flags, seq, ack uint32, payload []byte) error {
	src, dst := c.client, c.server
	sport, dport := c.cport, c.sport
	smac, dmac := c.clientMAC, c.srvMAC
	if !fromClient {
		src, dst, sport, dport, smac, dmac = dst, src, dport, sport, dmac, smac
	}
	s.ipID++
	eth := &layers.Ethernet{SrcMAC: smac, DstMAC: dmac, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: src, DstIP: dst,
		Id: s.ipID, Flags: layers.IPv4DontFragment}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport), Seq: seq,
		SYN: f.syn, ACK: f.ack, PSH: f.psh, FIN: f.fin, Window: 65483}
	if f.ack {
		tcp.Ack = ack
	}
	if f.syn {
		// The MSS the segments keep to (1448 + 12 bytes of timestamps).
		mss := make([]byte, 2)
		binary.BigEndian.PutUint16(mss, SynthMSS+12)
		tcp.Options = []layers.TCPOption{{OptionType: layers.TCPOptionKindMSS, OptionLength: 4, OptionData: mss}}
	}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		return err
	}
	if err := s.buf.Clear(); err != nil {
		return err
	}
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(s.buf, opts, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		return err
	}
	// gopacket pads Ethernet frames to the 60-byte minimum; a capture on
	// lo holds them unpadded.
	b := s.buf.Bytes()
	if n := 14 + int(ip.Length); n < len(b) {
		b = b[:n]
	}
	if t.Before(s.last) {
		t = s.last
	}
	s.last = t
	ci := gopacket.CaptureInfo{Timestamp: t, CaptureLength: len(b), Length: len(b)}
	if err := s.w.WritePacket(ci, b); err != nil {
		return err
	}
	s.Packets++
	return nil
}

// WritePcap writes the connections recorded by w as a pcap to out. Every
// connection still open at the end is closed after the last event.
func WritePcap(out io.Writer, w *Wire) (packets int, err error) {
	s, err := NewSynth(out)
	if err != nil {
		return 0, err
	}
	conns := w.Conns()
	var last time.Time
	for _, ev := range w.Events() {
		if err := s.WireEvent(conns[ev.Conn], ev); err != nil {
			return s.Packets, err
		}
		last = ev.Time
	}
	if err := s.CloseAll(last.Add(time.Millisecond)); err != nil {
		return s.Packets, err
	}
	return s.Packets, nil
}
