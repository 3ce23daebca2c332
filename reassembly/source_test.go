package reassembly

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

func TestOpenFileErrors(t *testing.T) {
	dir := t.TempDir()
	var ok bytes.Buffer
	w := pcapgo.NewWriter(&ok)
	w.WriteFileHeader(65535, layers.LinkTypeEthernet)
	w.WritePacket(gopacket.CaptureInfo{CaptureLength: 60, Length: 60}, make([]byte, 60))
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "nope.pcap"), filepath.Join(dir, "nope.pcap") + ": no such file"},
		{dir, dir + ": is a directory, not a capture file"},
		{writeFile(t, "empty.pcap", nil), filepath.Join("", "") + "EMPTY"},
		{writeFile(t, "x.txt", []byte("Hello, world")), "x.txt: not a pcap or pcapng file (starts with 48 65 6c 6c)"},
		{writeFile(t, "short.pcap", ok.Bytes()[:10]), "short.pcap: truncated pcap header"},
	} {
		_, err := OpenFile(tc.path)
		want := tc.want
		if want == "EMPTY" {
			want = tc.path + ": empty file"
		} else if !filepath.IsAbs(want) {
			want = filepath.Join(filepath.Dir(tc.path), want)
		}
		if err == nil || err.Error() != want {
			t.Errorf("OpenFile(%s) = %v, want %q", tc.path, err, want)
		}
	}
	trunc := writeFile(t, "trunc.pcap", ok.Bytes()[:len(ok.Bytes())-5])
	if _, err := readAll(t, trunc); err == nil || err.Error() != trunc+": truncated: the file ends inside packet 1" {
		t.Errorf("truncated file: %v", err)
	}
}

// TestLinkTypesThroughFiles writes the same conversation on every link type
// (pcap micro/nano, both byte orders, pcapng with two interfaces) and
// expects identical frames.
func TestLinkTypesThroughFiles(t *testing.T) {
	c6, s6 := netipMust("[2001:db8::1]:40000"), netipMust("[2001:db8::2]:9092")
	q := kreq(30, 3, 1, "c", 30)
	for _, tc := range []struct {
		name string
		link layers.LinkType
		tmpl testkit.Segment
		v6   bool
		nano bool
	}{
		{"ethernet", layers.LinkTypeEthernet, testkit.Segment{}, false, false},
		{"vlan", layers.LinkTypeEthernet, testkit.Segment{VLANs: 1}, false, true},
		{"qinq", layers.LinkTypeEthernet, testkit.Segment{VLANs: 2}, true, false},
		{"sll", layers.LinkTypeLinuxSLL, testkit.Segment{}, false, false},
		{"sll2", LinkTypeLinuxSLL2, testkit.Segment{}, true, false},
		{"null", layers.LinkTypeNull, testkit.Segment{}, false, false},
		{"null-be-v6", layers.LinkTypeNull, testkit.Segment{NullBigEndian: true}, true, false},
		{"raw", layers.LinkTypeRaw, testkit.Segment{}, false, false},
		{"ipv4", layers.LinkTypeIPv4, testkit.Segment{}, false, false},
		{"ipv6-ext", layers.LinkTypeIPv6, testkit.Segment{V6Ext: true}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newConv(cli, srv, 1, 2)
			if tc.v6 {
				v = newConv(c6, s6, 1, 2)
			}
			v.Cap.Link, v.Template = tc.link, tc.tmpl
			v.Handshake()
			v.Send(true, q[:20])
			v.Send(true, q[20:])
			var buf bytes.Buffer
			w := pcapgo.NewWriter(&buf)
			if tc.nano {
				w = pcapgo.NewWriterNanos(&buf)
			}
			link := tc.link
			if link == LinkTypeLinuxSLL2 {
				link = 0 // patched below: pcapgo writes only the low byte's type
			}
			w.WriteFileHeader(65535, link)
			for _, p := range v.Cap.Packets {
				w.WritePacket(p.CI, p.Data)
			}
			b := buf.Bytes()
			if tc.link == LinkTypeLinuxSLL2 {
				b[20], b[21] = 0x14, 0x01 // 276 little-endian
			}
			r, err := readAll(t, writeFile(t, "x.pcap", b))
			if err != nil {
				t.Fatal(err)
			}
			wantFrames(t, r, q)
			if len(r.lines) == 0 || r.lines[0] != "frame c1> off=0 size=45 pk=[4 5]" {
				t.Errorf("events %q", r.lines)
			}
		})
	}
}

func TestPcapngTwoLinkTypes(t *testing.T) {
	q := kreq(30, 3, 1, "c", 30)
	v := newConv(cli, srv, 1, 2)
	v.Handshake()
	v.Send(true, q[:20])
	v.Cap.Link = layers.LinkTypeLinuxSLL
	v.Send(true, q[20:])
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := w.AddInterface(pcapgo.NgInterface{LinkType: layers.LinkTypeLinuxSLL, SnapLength: 65535})
	for _, p := range v.Cap.Packets {
		ci := p.CI
		if p.Link == layers.LinkTypeLinuxSLL {
			ci.InterfaceIndex = id
		}
		if err := w.WritePacket(ci, p.Data); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	r, err := readAll(t, writeFile(t, "x.pcapng", buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	wantFrames(t, r, q)
}

// TestBigEndianPcap reads classic pcap files written on a big-endian host
// (magic a1 b2 c3 d4 or a1 b2 3c 4d on disk), with microsecond and
// nanosecond timestamps, one of them with the 32-bit link type 276.
func TestBigEndianPcap(t *testing.T) {
	q, a := kreq(30, 3, 1, "c", 30), kresp(1, 9)
	for _, tc := range []struct {
		name string
		nano bool
		link layers.LinkType
		file uint32
	}{
		{"micro", false, layers.LinkTypeEthernet, 1},
		{"nano", true, layers.LinkTypeEthernet, 1},
		{"nano-sll2", true, LinkTypeLinuxSLL2, 276},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newConv(cli, srv, 1000, 5000)
			v.Cap.Link = tc.link
			v.Handshake()
			v.Send(true, q[:20])
			v.Send(true, q[20:])
			v.Send(false, a)
			for i := range v.Cap.Packets {
				// Sub-microsecond parts that a µs file must drop.
				v.Cap.Packets[i].CI.Timestamp = v.Cap.Packets[i].CI.Timestamp.Add(time.Duration(100*i+789) * time.Nanosecond)
			}
			b := testkit.PcapFile(binary.BigEndian, tc.nano, 0, tc.file, v.Cap.Packets)
			magic := []byte{0xa1, 0xb2, 0xc3, 0xd4}
			if tc.nano {
				magic = []byte{0xa1, 0xb2, 0x3c, 0x4d}
			}
			if !bytes.Equal(b[:4], magic) {
				t.Fatalf("magic % x", b[:4])
			}
			r, err := readAll(t, writeFile(t, "be.pcap", b))
			if err != nil {
				t.Fatal(err)
			}
			wantLines(t, r,
				"frame c1> off=0 size=45 pk=[4 5]",
				"frame c1< off=0 size=17 pk=[6]",
				endC1,
			)
			wantFrames(t, r, q, a)
			ts := func(i int) time.Time {
				x := v.Cap.Packets[i].CI.Timestamp
				if !tc.nano {
					x = x.Truncate(time.Microsecond)
				}
				return x
			}
			fs := eventsOf[*Frame](r)
			if len(fs) != 2 || !fs[0].First.Equal(ts(3)) || !fs[0].Last.Equal(ts(4)) || !fs[1].First.Equal(ts(5)) {
				t.Fatalf("frame times wrong: %v; packets at %v %v %v", fs, ts(3), ts(4), ts(5))
			}
		})
	}
}
