package testkit

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// LinkTypeLinuxSLL2 is LINKTYPE_LINUX_SLL2 (276) as gopacket's 8-bit
// LinkType holds it (the low byte), as reassembly.LinkTypeLinuxSLL2 does.
const LinkTypeLinuxSLL2 layers.LinkType = 276 & 0xff

// Segment is one TCP segment and how it is framed on the link.
type Segment struct {
	Src, Dst netip.AddrPort
	Seq, Ack uint32
	Flags    string // any of "SAFRP"
	Payload  []byte
	// V6Ext puts an IPv6 destination options header before TCP.
	V6Ext bool
	Link  layers.LinkType
	// VLANs is the number of 802.1Q/802.1ad tags, for Ethernet.
	VLANs int
	// EthSrc, EthDst are the Ethernet addresses (zero when nil), the same
	// in both directions: nothing reads them.
	EthSrc, EthDst net.HardwareAddr
	// EthPad pads Ethernet frames to the 60 bytes of a minimum frame, as
	// a sending NIC (and gopacket's Ethernet layer) does.
	EthPad bool
	// NullBigEndian writes a BSD loopback header in big-endian order.
	NullBigEndian bool
}

// Bytes is the segment as the link carries it, with lengths and checksums
// filled in. A link type it cannot frame is a mistake in the test: it
// panics.
func (s Segment) Bytes() []byte {
	f, _ := s.bytes()
	return f
}

// bytes is Bytes and the number of padding bytes at its end.
func (s Segment) bytes() (f []byte, pad int) {
	ip, et := s.ipBytes()
	var hdr []byte
	switch s.Link {
	case layers.LinkTypeEthernet:
		hdr = make([]byte, 12, 32)
		copy(hdr, s.EthDst)
		copy(hdr[6:], s.EthSrc)
		tpids := []uint16{0x88a8, 0x8100}
		for i := 0; i < s.VLANs; i++ {
			hdr = binary.BigEndian.AppendUint16(hdr, tpids[(i+len(tpids)-s.VLANs%2)%2])
			hdr = binary.BigEndian.AppendUint16(hdr, uint16(100+i))
		}
		hdr = binary.BigEndian.AppendUint16(hdr, et)
	case layers.LinkTypeLinuxSLL:
		hdr = make([]byte, 14, 16)
		hdr = binary.BigEndian.AppendUint16(hdr, et)
	case LinkTypeLinuxSLL2:
		hdr = binary.BigEndian.AppendUint16(nil, et)
		hdr = append(hdr, make([]byte, 18)...)
	case layers.LinkTypeNull:
		fam := uint32(2)
		if et == 0x86dd {
			fam = 30
		}
		if s.NullBigEndian {
			hdr = binary.BigEndian.AppendUint32(nil, fam)
		} else {
			hdr = binary.LittleEndian.AppendUint32(nil, fam)
		}
	case layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6:
	default:
		panic(fmt.Sprintf("testkit: no link header for %v", s.Link))
	}
	f = append(hdr, ip...)
	if s.Link == layers.LinkTypeEthernet && s.EthPad && len(f) < 60 {
		pad = 60 - len(f)
		f = append(f, make([]byte, pad)...)
	}
	return f, pad
}

// ipBytes serialises the IP and TCP part of the segment.
func (s Segment) ipBytes() (ip []byte, etherType uint16) {
	tcp := &layers.TCP{
		SrcPort: layers.TCPPort(s.Src.Port()), DstPort: layers.TCPPort(s.Dst.Port()),
		Seq: s.Seq, Ack: s.Ack, Window: 65535,
		SYN: strings.Contains(s.Flags, "S"), ACK: strings.Contains(s.Flags, "A"),
		FIN: strings.Contains(s.Flags, "F"), RST: strings.Contains(s.Flags, "R"),
		PSH: strings.Contains(s.Flags, "P"),
	}
	var ls []gopacket.SerializableLayer
	if s.Src.Addr().Is4() {
		ip4 := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP,
			SrcIP: net.IP(s.Src.Addr().AsSlice()), DstIP: net.IP(s.Dst.Addr().AsSlice())}
		tcp.SetNetworkLayerForChecksum(ip4)
		ls = append(ls, ip4)
		etherType = 0x0800
	} else {
		ip6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP,
			SrcIP: net.IP(s.Src.Addr().AsSlice()), DstIP: net.IP(s.Dst.Addr().AsSlice())}
		tcp.SetNetworkLayerForChecksum(ip6)
		ls = append(ls, ip6)
		if s.V6Ext {
			// 8 bytes: next header TCP, length 0, one PadN option.
			ip6.NextHeader = layers.IPProtocolIPv6Destination
			ls = append(ls, gopacket.Payload{byte(layers.IPProtocolTCP), 0, 1, 4, 0, 0, 0, 0})
		}
		etherType = 0x86dd
	}
	ls = append(ls, tcp, gopacket.Payload(s.Payload))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		panic("testkit: " + err.Error()) // only a malformed spec gets here
	}
	return buf.Bytes(), etherType
}

// Packet is one captured packet.
type Packet struct {
	Data []byte
	CI   gopacket.CaptureInfo
	Link layers.LinkType
}

// Capture collects the packets of one pcap file. Packet n (0-based) is
// stamped Start + Skew + n*Step, Skew being what Wait added before it.
type Capture struct {
	Start   time.Time
	Step    time.Duration
	Skew    time.Duration
	SnapLen uint32 // the file header's snap length; 0 is 65535
	Link    layers.LinkType
	Packets []Packet
}

// NewCapture is an empty Ethernet capture starting at start, one packet a
// millisecond.
func NewCapture(start time.Time) *Capture {
	return &Capture{Start: start, Step: time.Millisecond, Link: layers.LinkTypeEthernet}
}

// Wait shifts the timestamps of the packets added after it by d.
func (c *Capture) Wait(d time.Duration) { c.Skew += d }

// Add appends a packet of data, of which only snap bytes were captured
// when 0 <= snap < len(data); it returns the packet's 1-based number.
func (c *Capture) Add(data []byte, snap int) int {
	ci := gopacket.CaptureInfo{Timestamp: c.Start.Add(c.Skew + time.Duration(len(c.Packets))*c.Step), Length: len(data), CaptureLength: len(data)}
	if snap >= 0 && snap < len(data) {
		data = data[:snap]
		ci.CaptureLength = snap
	}
	c.Packets = append(c.Packets, Packet{data, ci, c.Link})
	return len(c.Packets)
}

// Bytes is the capture as a little-endian, microsecond pcap file.
func (c *Capture) Bytes() []byte {
	return PcapFile(binary.LittleEndian, false, c.SnapLen, uint32(c.Link), c.Packets)
}

// File writes the capture into a temporary directory of t and returns its
// path.
func (c *Capture) File(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.pcap")
	if err := os.WriteFile(p, c.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// PcapFile is packets as a classic pcap file in the given byte order and
// timestamp resolution (pcapgo.Writer writes little-endian microsecond
// files only). snapLen 0 is 65535.
func PcapFile(order binary.AppendByteOrder, nano bool, snapLen, link uint32, pkts []Packet) []byte {
	magic := uint32(0xa1b2c3d4)
	if nano {
		magic = 0xa1b23c4d
	}
	if snapLen == 0 {
		snapLen = 65535
	}
	b := order.AppendUint32(nil, magic)
	b = order.AppendUint16(b, 2)
	b = order.AppendUint16(b, 4)
	b = order.AppendUint32(b, 0) // thiszone
	b = order.AppendUint32(b, 0) // sigfigs
	b = order.AppendUint32(b, snapLen)
	b = order.AppendUint32(b, link)
	for _, p := range pkts {
		frac := uint32(p.CI.Timestamp.Nanosecond())
		if !nano {
			frac /= 1000
		}
		b = order.AppendUint32(b, uint32(p.CI.Timestamp.Unix()))
		b = order.AppendUint32(b, frac)
		b = order.AppendUint32(b, uint32(len(p.Data)))
		b = order.AppendUint32(b, uint32(p.CI.Length))
		b = append(b, p.Data...)
	}
	return b
}

// Conn writes the segments of one TCP connection into a capture and keeps
// each side's next sequence number.
type Conn struct {
	Cap            *Capture
	Client, Server netip.AddrPort
	CSeq, SSeq     uint32 // next sequence number of each side
	CISN, SISN     uint32
	// Acking makes each segment acknowledge everything the other side has
	// sent so far, as a peer that received it all would; otherwise every
	// segment acknowledges the other side's initial sequence number, which
	// proves nothing lost.
	Acking bool
	// Push sets PSH on every segment that carries data.
	Push bool
	// Template holds the link framing (VLANs, IPv6 options, MACs, ...)
	// of every segment; its addresses, numbers and payload are ignored.
	Template Segment
}

// NewConn is a connection from client to server with the given initial
// sequence numbers; nothing is written until a segment is.
func (c *Capture) NewConn(client, server netip.AddrPort, cisn, sisn uint32) *Conn {
	return &Conn{Cap: c, Client: client, Server: server, CSeq: cisn, SSeq: sisn, CISN: cisn, SISN: sisn}
}

// ack is what a segment from one side acknowledges.
func (v *Conn) ack(fromClient bool) uint32 {
	switch {
	case fromClient && v.Acking:
		return v.SSeq
	case fromClient:
		return v.SISN
	case v.Acking:
		return v.CSeq
	}
	return v.CISN
}

// Raw appends a segment with an explicit sequence number and flags, of
// whose payload only snap bytes were captured when 0 <= snap < len(payload);
// it returns the packet's number in the capture.
func (v *Conn) Raw(fromClient bool, seq uint32, flags string, payload []byte, snap int) int {
	return v.RawAck(fromClient, seq, v.ack(fromClient), flags, payload, snap)
}

// RawAck is Raw with an explicit acknowledgement number.
func (v *Conn) RawAck(fromClient bool, seq, ack uint32, flags string, payload []byte, snap int) int {
	s := v.Template
	s.Src, s.Dst, s.Seq, s.Ack, s.Flags, s.Payload, s.Link = v.Client, v.Server, seq, ack, flags, payload, v.Cap.Link
	if !fromClient {
		s.Src, s.Dst = v.Server, v.Client
	}
	if v.Push && len(payload) > 0 && !strings.Contains(flags, "P") {
		s.Flags += "P"
	}
	data, pad := s.bytes()
	if snap >= 0 && snap < len(payload) {
		return v.Cap.Add(data, len(data)-pad-len(payload)+snap)
	}
	return v.Cap.Add(data, -1)
}

func (v *Conn) seq(fromClient bool) *uint32 {
	if fromClient {
		return &v.CSeq
	}
	return &v.SSeq
}

// Send appends an in-order data segment and advances that side's sequence.
func (v *Conn) Send(fromClient bool, payload []byte) int {
	s := v.seq(fromClient)
	n := v.Raw(fromClient, *s, "A", payload, -1)
	*s += uint32(len(payload))
	return n
}

// Drop advances a side's sequence over n bytes that were sent but never
// captured.
func (v *Conn) Drop(fromClient bool, n int) { *v.seq(fromClient) += uint32(n) }

// Syn appends the client's SYN, which takes one sequence number.
func (v *Conn) Syn() int {
	n := v.Raw(true, v.CSeq, "S", nil, -1)
	v.CSeq++
	return n
}

// SynAck appends the server's SYN-ACK, which takes one sequence number.
func (v *Conn) SynAck() int {
	n := v.Raw(false, v.SSeq, "SA", nil, -1)
	v.SSeq++
	return n
}

// Handshake appends SYN, SYN-ACK and ACK.
func (v *Conn) Handshake() {
	v.Syn()
	v.SynAck()
	v.Raw(true, v.CSeq, "A", nil, -1)
}

// Fin appends a FIN from one side; the FIN takes one sequence number.
func (v *Conn) Fin(fromClient bool) int {
	s := v.seq(fromClient)
	n := v.Raw(fromClient, *s, "FA", nil, -1)
	*s++
	return n
}

// Rst appends a reset from one side.
func (v *Conn) Rst(fromClient bool) int {
	return v.Raw(fromClient, *v.seq(fromClient), "RA", nil, -1)
}

// Gzip is b gzip-compressed, as a compressed capture file holds it.
func Gzip(b []byte) []byte {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b) // a bytes.Buffer takes every write
	w.Close()
	return z.Bytes()
}
