package reassembly

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/klauspost/compress/zstd"
)

// compressedConv is one request carried by two segments, as a pcap and as a
// pcapng file.
func compressedConv(t *testing.T) (req, pcap, pcapng []byte) {
	req = kreq(30, 3, 1, "c", 30)
	v := newConv(cli, srv, 1, 2)
	v.Handshake()
	v.Send(true, req[:20])
	v.Send(true, req[20:])
	pcap = v.Cap.Bytes()
	var ng bytes.Buffer
	w, err := pcapgo.NewNgWriter(&ng, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range v.Cap.Packets {
		if err := w.WritePacket(p.CI, p.Data); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return req, pcap, ng.Bytes()
}

func gzipped(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstded(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gzip and zstd, around pcap and pcapng, are recognised by their magic
// numbers (not the file's name) and give the frames the plain files give.
func TestCompressedCaptures(t *testing.T) {
	req, pcap, pcapng := compressedConv(t)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"pcap.gz", gzipped(t, pcap)},
		{"pcapng.gz", gzipped(t, pcapng)},
		{"pcap.zst", zstded(t, pcap)},
		{"pcapng.zst", zstded(t, pcapng)},
		{"pcapng.gz-two-members", append(gzipped(t, pcapng[:40]), gzipped(t, pcapng[40:])...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := readAll(t, writeFile(t, "capture", tc.data))
			if err != nil {
				t.Fatal(err)
			}
			wantFrames(t, r, req)
			if len(r.lines) == 0 || r.lines[0] != "frame c1> off=0 size=45 pk=[4 5]" {
				t.Errorf("events %q", r.lines)
			}
		})
	}
}

// A damaged compressed file gives one sentence saying what is wrong where:
// after the packets it could read, or at once when the header is damaged.
func TestCompressedCaptureDamage(t *testing.T) {
	_, pcap, pcapng := compressedConv(t)
	gz, zs := gzipped(t, pcapng), zstded(t, pcap)
	corruptGz := bytes.Clone(gz)
	corruptGz[len(corruptGz)-6] ^= 0xff // the CRC-32 of the trailer
	for _, tc := range []struct {
		name, atOpen, atRead string
		data                 []byte
	}{
		{"cut.gz", "", "cut.gz: truncated: the gzip data ends inside packet 5", gz[:len(gz)-30]},
		{"crc.gz", "", "crc.gz: corrupt gzip data after packet 5: gzip: invalid checksum", corruptGz},
		{"head.gz", "head.gz: truncated: the gzip data ends inside its header", "", gz[:5]},
		// One zstd block holds the whole file: cut, it yields no byte.
		{"cut.zst", "cut.zst: truncated: the zstd data ends inside the capture's header", "", zs[:len(zs)-20]},
		{"bad.zst", "bad.zst: corrupt zstd data in the capture's header: reserved bit set on frame header", "", flip(zs, 4)},
		{"window.zst", "window.zst: the zstd data needs a window above 128 MiB, more than kdissect allows", "", flip(zs, 5)},
		{"empty.zst", "empty.zst: the zstd data holds nothing", "", zstded(t, nil)},
		{"text.gz", "text.gz: not a pcap or pcapng file inside the gzip data (starts with 48 65 6c 6c)", "", gzipped(t, []byte("Hello, world"))},
	} {
		path := writeFile(t, tc.name, tc.data)
		src, err := OpenFile(path)
		if tc.atOpen != "" {
			if err == nil || err.Error() != dirOf(path)+tc.atOpen {
				t.Errorf("%s: open: %v, want %q", tc.name, err, tc.atOpen)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: open: %v", tc.name, err)
			continue
		}
		for err == nil {
			_, _, _, err = src.Next()
		}
		src.Close()
		if err.Error() != dirOf(path)+tc.atRead {
			t.Errorf("%s: %v\nwant %q", tc.name, err, tc.atRead)
		}
	}
}

func dirOf(path string) string { return path[:len(path)-len(lastElem(path))] }

func lastElem(path string) string { return path[bytes.LastIndexByte([]byte(path), '/')+1:] }

func flip(b []byte, i int) []byte {
	b = bytes.Clone(b)
	b[i] ^= 0xff
	return b
}

// Progress of a compressed file is measured in its own bytes: at the end,
// all of them, though the packets inside add up to more.
func TestCompressedCaptureConsumed(t *testing.T) {
	_, _, pcapng := compressedConv(t)
	gz := gzipped(t, pcapng)
	src, err := OpenFile(writeFile(t, "x.pcapng.gz", gz))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var inside int
	for {
		data, _, _, err := src.Next()
		if err != nil {
			break
		}
		inside += len(data)
	}
	if got := src.(*fileSource).Consumed(); got != int64(len(gz)) || inside <= len(gz) {
		t.Errorf("consumed %d of %d compressed bytes (%d packet bytes inside)", got, len(gz), inside)
	}
}
