package reassembly

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll runs a file through OpenFile and a Pipeline.
func readAll(t *testing.T, path string) (*recorder, error) {
	t.Helper()
	src, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r := &recorder{}
	p := NewPipeline(testConfig(), r.emit)
	for {
		data, ci, link, err := src.Next()
		if err != nil {
			p.Close()
			if err == io.EOF {
				err = nil
			}
			return r, err
		}
		p.Packet(data, ci, link)
	}
}

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
		tmpl tcpSpec
		v6   bool
		nano bool
	}{
		{"ethernet", layers.LinkTypeEthernet, tcpSpec{}, false, false},
		{"vlan", layers.LinkTypeEthernet, tcpSpec{vlans: 1}, false, true},
		{"qinq", layers.LinkTypeEthernet, tcpSpec{vlans: 2}, true, false},
		{"sll", layers.LinkTypeLinuxSLL, tcpSpec{}, false, false},
		{"sll2", LinkTypeLinuxSLL2, tcpSpec{}, true, false},
		{"null", layers.LinkTypeNull, tcpSpec{}, false, false},
		{"null-be-v6", layers.LinkTypeNull, tcpSpec{nullBigEnd: true}, true, false},
		{"raw", layers.LinkTypeRaw, tcpSpec{}, false, false},
		{"ipv4", layers.LinkTypeIPv4, tcpSpec{}, false, false},
		{"ipv6-ext", layers.LinkTypeIPv6, tcpSpec{v6ext: true}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newConv(t, cli, srv, 1, 2)
			if tc.v6 {
				v = newConv(t, c6, s6, 1, 2)
			}
			v.link, v.template = tc.link, tc.tmpl
			v.handshake()
			v.send(true, q[:20])
			v.send(true, q[20:])
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
			for _, p := range v.pkts {
				w.WritePacket(p.ci, p.data)
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
	v := newConv(t, cli, srv, 1, 2)
	v.handshake()
	v.send(true, q[:20])
	v.link = layers.LinkTypeLinuxSLL
	v.send(true, q[20:])
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := w.AddInterface(pcapgo.NgInterface{LinkType: layers.LinkTypeLinuxSLL, SnapLength: 65535})
	for _, p := range v.pkts {
		ci := p.ci
		if p.link == layers.LinkTypeLinuxSLL {
			ci.InterfaceIndex = id
		}
		if err := w.WritePacket(ci, p.data); err != nil {
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

func FuzzPipeline(f *testing.F) {
	v := newConv(&testing.T{}, cli, srv, 1, 2)
	v.handshake()
	v.send(true, kreq(30, 3, 1, "c", 30))
	for _, p := range v.pkts {
		f.Add(p.data, uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, link uint8) {
		p := NewPipeline(Config{BrokerPorts: testConfig().BrokerPorts, DetectPorts: link&0x80 != 0, PlausibleRequest: plausible,
			MaxFrame: 1 << 16, MaxConnBuffer: 1 << 12, MaxTotalBuffer: 1 << 14}, func(Event) {})
		// Feed the input as one packet and as a series of packets cut from it.
		p.Packet(data, gopacket.CaptureInfo{Timestamp: t0}, layers.LinkType(link&0x7f))
		for i := 0; i+2 < len(data); i += int(data[i]%61) + 1 {
			p.Packet(data[i:], gopacket.CaptureInfo{Timestamp: t0}, layers.LinkType(data[i+1]))
		}
		p.Close()
	})
}
