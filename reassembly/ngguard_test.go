package reassembly

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// ngInterface is an Interface Description Block of Ethernet with snap
// length snap and the options given (code, value pairs).
func ngInterface(order byteOrder, snap uint32, opts ...[]byte) []byte {
	b := order.AppendUint16(nil, 1)
	b = order.AppendUint16(b, 0)
	b = order.AppendUint32(b, snap)
	for _, o := range opts {
		b = append(b, o...)
	}
	return ngBlock(order, 1, b)
}

// ngOption is an option, its value padded; end is the end of options.
func ngOption(order byteOrder, code uint16, v []byte) []byte {
	b := order.AppendUint16(nil, code)
	b = order.AppendUint16(b, uint16(len(v)))
	return append(append(b, v...), make([]byte, (4-len(v)%4)%4)...)
}

// ngShortPacket is an Enhanced Packet Block that says it captured caplen
// bytes and holds data.
func ngShortPacket(order byteOrder, data []byte, caplen uint32) []byte {
	b := ngPacket(order, data)
	order.PutUint32(b[20:], caplen)
	return b
}

// ngHeader is a Section Header Block alone.
func ngHeader(order byteOrder) []byte {
	shb := order.AppendUint32(nil, ngByteOrder)
	shb = order.AppendUint16(shb, 1)
	shb = order.AppendUint16(shb, 0)
	shb = order.AppendUint64(shb, ^uint64(0))
	return ngBlock(order, ngSectionHeader, shb)
}

// readAllocating reads every packet of file and returns the packets, the
// error that ended them (nil at a clean end) and the bytes allocated.
func readAllocating(t *testing.T, file []byte) (pkts []string, err error, alloc uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	src, err := OpenReaderWith("f", bytes.NewReader(file), FileOptions{})
	if err == nil {
		for {
			var data []byte
			data, _, _, err = src.Next()
			if err != nil {
				break
			}
			pkts = append(pkts, string(data))
		}
		src.Close()
	}
	runtime.ReadMemStats(&after)
	if err == io.EOF {
		err = nil
	}
	return pkts, err, after.TotalAlloc - before.TotalAlloc
}

// A pcapng file's lengths are the file's word: pcapgo would allocate a
// packet buffer of any length a block states, and walk options past
// their block. Each lie ends the packets with a sentence saying where,
// and nothing allocates more than the buffers a file always costs.
func TestNgGuardStopsLyingLengths(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	pkt := bytes.Repeat([]byte{7}, 60)
	huge := make([]byte, maxSnaplen+1)
	spb := func(order byteOrder, orig uint32, data []byte) []byte {
		return ngBlock(order, ngSPB, append(order.AppendUint32(nil, orig), data...))
	}
	tsresol := func(order byteOrder, v byte) []byte {
		return ngInterface(order, 0, ngOption(order, 9, []byte{v}), ngOption(order, 0, nil))
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, c := range []struct {
		name    string
		file    []byte
		packets int
		err     string // "" for a clean end
	}{
		{"a packet longer than its block", cat(ngSection(le), ngPacket(le, pkt), ngShortPacket(le, pkt, 0xfff00000)), 1,
			"bad record after packet 1: byte 140 of the pcapng stream: a packet of 4293918720 captured bytes in a block of 92"},
		{"the same, big-endian", cat(ngSection(be), ngShortPacket(be, pkt, 61)), 0,
			"a packet of 61 captured bytes in a block of 92"},
		{"a packet beyond the snap length cap", cat(ngSection(le), ngPacket(le, huge)), 0,
			"a packet of 4194305 captured bytes, more than the 4194304 kdissect reads"},
		{"a simple packet longer than its block", cat(ngSection(le), spb(le, 0xffffff00, pkt)), 0,
			"a packet of 4294967040 bytes in a simple packet block of 76"},
		{"a simple packet cut to the snap length", cat(ngHeader(le), ngInterface(le, 60), spb(le, 0xffffff00, pkt)), 1, ""},
		{"an interface's snap length of 4 GiB", cat(ngHeader(le), ngInterface(le, 0xffffffff), ngPacket(le, pkt)), 1, ""},
		{"the same, big-endian", cat(ngHeader(be), ngInterface(be, 0xfffffff0), ngPacket(be, pkt), ngPacket(be, pkt)), 2, ""},
		{"an option past its block", cat(ngHeader(le), ngInterface(le, 0, ngOption(le, 2, []byte("eth0"))[:4]), ngPacket(le, pkt)), 0,
			"an option that runs past the end of its block"},
		{"an option that lies about its length", cat(ngHeader(le), ngInterface(le, 0, le.AppendUint32(le.AppendUint16(le.AppendUint16(nil, 2), 400), 0)), ngPacket(le, pkt)), 0,
			"an option that runs past the end of its block"},
		{"a binary timestamp resolution of 2^-64", cat(ngHeader(le), tsresol(le, 0xc0), ngPacket(le, pkt)), 0,
			"an interface of timestamp resolution 0xc0, finer than kdissect reads"},
		{"a decimal timestamp resolution of 10^-20", cat(ngHeader(be), tsresol(be, 20), ngPacket(be, pkt)), 0,
			"timestamp resolution 0x14"},
		{"nanoseconds", cat(ngHeader(le), tsresol(le, 9), ngPacket(le, pkt)), 1, ""},
		// pcapgo keeps the last option's value for one of no bytes, and
		// reads these at fixed lengths: "linux" would be a resolution of
		// 10^-108, which it divides by as 0.
		{"a timestamp resolution of no value", cat(ngHeader(le), ngInterface(le, 0, ngOption(le, 12, []byte("linux")), ngOption(le, 9, nil), ngOption(le, 0, nil)), ngPacket(le, pkt)), 0,
			"byte 56 of the pcapng stream: option 9 of an interface description block with 0 bytes, fewer than the 1 it holds"},
		{"a filter of no value", cat(ngHeader(be), ngInterface(be, 0, ngOption(be, 11, nil), ngOption(be, 0, nil)), ngPacket(be, pkt)), 0,
			"option 11 of an interface description block with 0 bytes"},
		{"a timestamp offset of 4 bytes", cat(ngHeader(le), ngInterface(le, 0, ngOption(le, 14, []byte{1, 2, 3, 4}), ngOption(le, 0, nil)), ngPacket(le, pkt)), 0,
			"option 14 of an interface description block with 4 bytes, fewer than the 8 it holds"},
		{"a timestamp offset of 8 bytes", cat(ngHeader(le), ngInterface(le, 0, ngOption(le, 14, make([]byte, 8)), ngOption(le, 0, nil)), ngPacket(le, pkt)), 1, ""},
		{"statistics with a start time of 1 byte", cat(ngHeader(le), ngInterface(le, 0), ngPacket(le, pkt),
			ngBlock(le, ngISB, append(make([]byte, 12), cat(ngOption(le, 2, []byte{1}), ngOption(le, 0, nil))...)), ngPacket(le, pkt)), 1,
			"option 2 of an interface statistics block with 1 bytes, fewer than the 8 it holds"},
		{"a block of 8 bytes", cat(ngSection(le), le.AppendUint32(le.AppendUint32(nil, 6), 8), ngPacket(le, pkt)), 0,
			"a packet block of 8 bytes, too short for its fields"},
		{"a block of 4 bytes", cat(ngSection(le), le.AppendUint32(le.AppendUint32(nil, 0x0bad), 4), ngPacket(le, pkt)), 0,
			"bad record after packet 0: byte 48 of the pcapng stream: a block of type 0xbad of 4 bytes, too short for its fields"},
		{"a section header of no known byte order", append([]byte{0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 1, 2, 3, 4}, make([]byte, 16)...), 0,
			"f: bad pcapng header: byte 0 of the pcapng stream: a section header of no known byte order"},
	} {
		pkts, err, alloc := readAllocating(t, c.file)
		if len(pkts) != c.packets {
			t.Errorf("%s: %d packets, want %d", c.name, len(pkts), c.packets)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
		}
		// The file's bytes, the 1 MiB read buffer, a packet buffer of at
		// most maxSnaplen: never what a length said.
		if limit := uint64(len(c.file)) + readBufferSize + 2*maxSnaplen + 1<<20; alloc > limit {
			t.Errorf("%s: %d bytes allocated, more than %d", c.name, alloc, limit)
		}
	}
}

// chunkReader returns at most n bytes a read.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// guarded is what a guard passes on of file, read n bytes at a time from
// a reader that gives at most chunk, and the error that ends it. Like
// bufio, it gives up after 100 reads in a row that return nothing.
func guarded(file []byte, chunk, n int) ([]byte, error) {
	g := &ngGuard{r: chunkReader{bytes.NewReader(file), chunk}}
	var out []byte
	buf := make([]byte, n)
	for empty := 0; empty < 100; {
		k, err := g.Read(buf)
		out = append(out, buf[:k]...)
		if err != nil {
			return out, err
		}
		empty++
		if k > 0 {
			empty = 0
		}
	}
	return out, errors.New("no progress")
}

// Where the reads end does not matter: a head cut between two reads is
// checked once it is whole, and the guard passes on the same bytes and
// stops at the same place for any read sizes.
func TestNgGuardAnyReadSize(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	pkt := bytes.Repeat([]byte{9}, 53)
	isb := ngBlock(le, ngISB, append(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 0), 0), 5), ngOption(le, 0, nil)...))
	valid := bytes.Join([][]byte{
		ngHeader(le), ngInterface(le, 0xffffffff, ngOption(le, 2, []byte("eth0")), ngOption(le, 9, []byte{9}), ngOption(le, 0, nil)),
		ngPacket(le, pkt), ngSecretsBlock(le, SecretsTLSKeyLog, []byte("CLIENT_RANDOM 01 02\n"), 20), isb,
		ngBlock(le, ngSPB, append(le.AppendUint32(nil, 53), pkt...)),
		ngHeader(be), ngInterface(be, 262144), ngPacket(be, pkt),
	}, nil)
	want := bytes.Clone(valid)
	le.PutUint32(want[28+12:], 0) // the first interface's snap length, beyond the cap
	lying := append(bytes.Clone(valid), ngShortPacket(be, pkt, 1<<30)...)
	for _, c := range []struct {
		name string
		file []byte
		out  []byte
		err  string
	}{
		{"valid", valid, want, "EOF"},
		{"lying", lying, want, "byte 432 of the pcapng stream: a packet of 1073741824 captured bytes in a block of 88"},
	} {
		for _, chunk := range []int{1, 3, 7, 23, 24, 25, 100, 1 << 20} {
			for _, n := range []int{1, 5, 47, 48, 4096} {
				out, err := guarded(c.file, chunk, n)
				if !bytes.Equal(out, c.out) || err == nil || err.Error() != c.err {
					t.Fatalf("%s, reads of %d from chunks of %d: %d bytes (%v), want %d (%s)", c.name, n, chunk, len(out), err, len(c.out), c.err)
				}
			}
		}
	}
	// Not pcapng: passed on as it is.
	pcap := append([]byte{0xd4, 0xc3, 0xb2, 0xa1}, lying...)
	if out, err := guarded(pcap, 2, 3); !bytes.Equal(out, pcap) || err != io.EOF {
		t.Errorf("a pcap stream: %d bytes (%v), want its %d", len(out), err, len(pcap))
	}
}

// FuzzNgGuard: whatever the bytes, the guard passes on the same ones and
// ends the same way whatever the read sizes, and what it passes on is
// the input but for the snap lengths it set to 0.
func FuzzNgGuard(f *testing.F) {
	le := binary.LittleEndian
	pkt := bytes.Repeat([]byte{7}, 40)
	f.Add(append(ngSection(le), ngPacket(le, pkt)...))
	f.Add(append(append(ngHeader(le), ngInterface(le, 0xffffffff, ngOption(le, 9, []byte{6}), ngOption(le, 0, nil))...), ngShortPacket(le, pkt, 1<<31)...))
	f.Fuzz(func(t *testing.T, file []byte) {
		want, werr := guarded(file, 1<<20, 1<<20)
		if len(want) > len(file) {
			t.Fatalf("%d bytes out of %d", len(want), len(file))
		}
		for i := range want {
			if want[i] != file[i] && want[i] != 0 {
				t.Fatalf("byte %d changed from %#x to %#x", i, file[i], want[i])
			}
		}
		for _, c := range [][2]int{{1, 4096}, {7, 3}, {4096, 47}} {
			got, err := guarded(file, c[0], c[1])
			if !bytes.Equal(got, want) || err.Error() != werr.Error() {
				t.Fatalf("chunks of %d, reads of %d: %d bytes (%v); at once: %d (%v)", c[0], c[1], len(got), err, len(want), werr)
			}
		}
	})
}
