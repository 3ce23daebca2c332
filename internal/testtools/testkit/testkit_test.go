package testkit

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestFrames(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want []byte
	}{
		{"request v1", Request(3, 1, 7, Ptr("cli"), false, []byte{0xff, 0xff, 0xff, 0xff}),
			[]byte{0, 0, 0, 17, 0, 3, 0, 1, 0, 0, 0, 7, 0, 3, 'c', 'l', 'i', 0xff, 0xff, 0xff, 0xff}},
		{"request v2, null client id", Request(30, 3, 9, nil, true, []byte{1, 0}),
			[]byte{0, 0, 0, 13, 0, 30, 0, 3, 0, 0, 0, 9, 0xff, 0xff, 0, 1, 0}},
		{"response v1", Response(9, true, []byte{0xab}), []byte{0, 0, 0, 6, 0, 0, 0, 9, 0, 0xab}},
		{"response v0", Response(-1, false, nil), []byte{0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff}},
		{"kmsg request", KmsgRequest(&kmsg.CreateACLsRequest{Version: 3}, 9, nil),
			[]byte{0, 0, 0, 13, 0, 30, 0, 3, 0, 0, 0, 9, 0xff, 0xff, 0, 1, 0}},
		{"kmsg request v1", KmsgRequest(&kmsg.DeleteACLsRequest{Version: 1}, 2, Ptr("a")),
			[]byte{0, 0, 0, 15, 0, 31, 0, 1, 0, 0, 0, 2, 0, 1, 'a', 0, 0, 0, 0}},
		{"kmsg response", KmsgResponse(&kmsg.CreateACLsResponse{Version: 2}, 5),
			[]byte{0, 0, 0, 11, 0, 0, 0, 5, 0, 0, 0, 0, 0, 1, 0}},
		{"with corr", WithCorr(Request(3, 1, 7, nil, false, nil), 0x01020304, true),
			[]byte{0, 0, 0, 10, 0, 3, 0, 1, 1, 2, 3, 4, 0xff, 0xff}},
		{"set size", SetSize([]byte{0, 0, 0, 0, 1, 2}), []byte{0, 0, 0, 2, 1, 2}},
		{"counting", Counting(3, 0xfe), []byte{0xfe, 0xff, 0}},
	} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s: % x, want % x", c.name, c.got, c.want)
		}
	}
}

// A connection read back with pcapgo and gopacket: every segment's flags,
// numbers, payload, time and captured length as written.
func TestCaptureReadsBack(t *testing.T) {
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	c := NewCapture(start)
	c.SnapLen = 1500
	v := c.NewConn(netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:9092"), 1000, 5000)
	v.Acking, v.Push = true, true
	v.Template.EthPad = true
	v.Handshake()                                  // 1-3
	v.Send(true, []byte("hello"))                  // 4
	v.Drop(false, 10)                              // never captured
	c.Wait(time.Second)                            // later packets 1 s later
	v.Raw(false, v.SSeq, "A", []byte("abcdef"), 2) // 5: 2 of 6 bytes captured
	v.Fin(true)                                    // 6
	v.Rst(false)                                   // 7
	type seg struct {
		flags    string
		sport    uint16
		seq, ack uint32
		payload  string
		length   int
		caplen   int
	}
	want := []seg{
		{"S", 40000, 1000, 5000, "", 60, 60},
		{"SA", 9092, 5000, 1001, "", 60, 60},
		{"A", 40000, 1001, 5001, "", 60, 60},
		{"AP", 40000, 1001, 5001, "hello", 60, 60},
		{"AP", 9092, 5011, 1006, "ab", 60, 56},
		{"FA", 40000, 1006, 5011, "", 60, 60},
		{"RA", 9092, 5011, 1007, "", 60, 60},
	}
	r, err := pcapgo.NewReader(bytes.NewReader(c.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if r.Snaplen() != 1500 || r.LinkType() != layers.LinkTypeEthernet {
		t.Errorf("snaplen %d link %v", r.Snaplen(), r.LinkType())
	}
	for i, w := range want {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			t.Fatalf("packet %d: %v", i+1, err)
		}
		ts := start.Add(time.Duration(i) * time.Millisecond)
		if i >= 4 {
			ts = ts.Add(time.Second)
		}
		if !ci.Timestamp.Equal(ts) || ci.Length != w.length || ci.CaptureLength != w.caplen || len(data) != w.caplen {
			t.Errorf("packet %d: %v len %d caplen %d (%d bytes), want %v %d %d", i+1, ci.Timestamp, ci.Length, ci.CaptureLength, len(data), ts, w.length, w.caplen)
		}
		p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
		tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if tcp == nil {
			t.Fatalf("packet %d: no TCP", i+1)
		}
		flags := ""
		for _, f := range []struct {
			on bool
			c  string
		}{{tcp.SYN, "S"}, {tcp.FIN, "F"}, {tcp.RST, "R"}, {tcp.ACK, "A"}, {tcp.PSH, "P"}} {
			if f.on {
				flags += f.c
			}
		}
		got := seg{flags, uint16(tcp.SrcPort), tcp.Seq, tcp.Ack, string(tcp.Payload), w.length, w.caplen}
		if got != w {
			t.Errorf("packet %d: %+v, want %+v", i+1, got, w)
		}
	}
	if _, _, err := r.ReadPacketData(); err == nil {
		t.Error("more packets than written")
	}
}

// PcapFile writes either byte order and both timestamp resolutions.
func TestPcapFileHeader(t *testing.T) {
	pkts := []Packet{{Data: []byte{1, 2, 3}, CI: gopacket.CaptureInfo{Timestamp: time.Unix(7, 123456789), Length: 9}}}
	b := PcapFile(binary.BigEndian, true, 0, uint32(layers.LinkTypeRaw), pkts)
	want := []byte{
		0xa1, 0xb2, 0x3c, 0x4d, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 101,
		0, 0, 0, 7, 0x07, 0x5b, 0xcd, 0x15, 0, 0, 0, 3, 0, 0, 0, 9, 1, 2, 3,
	}
	if !bytes.Equal(b, want) {
		t.Errorf("% x\nwant % x", b, want)
	}
	b = PcapFile(binary.LittleEndian, false, 96, uint32(layers.LinkTypeRaw), pkts)
	if binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 || binary.LittleEndian.Uint32(b[16:]) != 96 || binary.LittleEndian.Uint32(b[28:]) != 123456 {
		t.Errorf("% x", b)
	}
}

// Segment frames IPv6 with an options header on the other links.
func TestSegmentLinks(t *testing.T) {
	s := Segment{Src: netip.MustParseAddrPort("[2001:db8::1]:40000"), Dst: netip.MustParseAddrPort("[2001:db8::2]:9092"), Flags: "A", Payload: []byte("x"), V6Ext: true}
	for _, c := range []struct {
		link layers.LinkType
		hdr  []byte
	}{
		{layers.LinkTypeNull, []byte{30, 0, 0, 0}},
		{layers.LinkTypeRaw, nil},
		{layers.LinkTypeLinuxSLL, append(make([]byte, 14), 0x86, 0xdd)},
		{LinkTypeLinuxSLL2, append([]byte{0x86, 0xdd}, make([]byte, 18)...)},
	} {
		s.Link = c.link
		b := s.Bytes()
		if len(b) != len(c.hdr)+40+8+20+1 || !bytes.Equal(b[:len(c.hdr)], c.hdr) || b[len(c.hdr)]>>4 != 6 || b[len(c.hdr)+6] != byte(layers.IPProtocolIPv6Destination) {
			t.Errorf("link %v: % x", c.link, b)
		}
	}
}

func TestGoldenMatches(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.golden")
	was := *update
	defer func() { *update = was }()
	*update = true
	Golden(t, p, []byte("a\x1b[1mb\r\n"))
	*update = false
	Golden(t, p, []byte("a\x1b[1mb\r\n"))
}
