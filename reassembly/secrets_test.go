package reassembly

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"testing/iotest"
)

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// ngBlock is a pcapng block of type typ around body (padded to 32 bits).
func ngBlock(order byteOrder, typ uint32, body []byte) []byte {
	body = append(body, make([]byte, (4-len(body)%4)%4)...)
	n := uint32(12 + len(body))
	b := order.AppendUint32(nil, typ)
	b = order.AppendUint32(b, n)
	b = append(b, body...)
	return order.AppendUint32(b, n)
}

func ngSection(order byteOrder) []byte {
	shb := order.AppendUint32(nil, ngByteOrder)
	shb = order.AppendUint16(shb, 1)
	shb = order.AppendUint16(shb, 0)
	shb = order.AppendUint64(shb, ^uint64(0)) // section length unknown
	idb := order.AppendUint16(nil, 1)         // Ethernet
	idb = order.AppendUint16(idb, 0)
	idb = order.AppendUint32(idb, 0) // no snap length
	return append(ngBlock(order, ngSectionHeader, shb), ngBlock(order, 1, idb)...)
}

// ngSecretsBlock is a Decryption Secrets Block; n is its secrets length
// as written (len(data) unless a test lies).
func ngSecretsBlock(order byteOrder, kind uint32, data []byte, n int) []byte {
	b := order.AppendUint32(nil, kind)
	b = order.AppendUint32(b, uint32(n))
	return ngBlock(order, ngSecrets, append(b, data...))
}

func ngPacket(order byteOrder, data []byte) []byte {
	b := order.AppendUint32(nil, 0) // interface 0
	b = order.AppendUint32(b, 0)
	b = order.AppendUint32(b, 1000)
	b = order.AppendUint32(b, uint32(len(data)))
	b = order.AppendUint32(b, uint32(len(data)))
	return ngBlock(order, 6, append(b, data...))
}

type secret struct {
	kind uint32
	data string
}

func readSecrets(t *testing.T, file []byte, oneByte bool) ([]secret, int, error) {
	t.Helper()
	var got []secret
	var r io.Reader = bytes.NewReader(file)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	src, err := OpenReaderWith("x.pcapng", r, FileOptions{Secrets: func(kind uint32, data []byte) {
		got = append(got, secret{kind, string(data)})
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n := 0
	for {
		if _, _, _, err = src.Next(); err != nil {
			break
		}
		n++
	}
	if err == io.EOF {
		err = nil
	}
	return got, n, err
}

// The secrets blocks of a pcapng file reach FileOptions.Secrets, in both
// byte orders and however the reads are cut, and the packets around them
// are read as before.
func TestSecretsBlocks(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	pkt := bytes.Repeat([]byte{0xab}, 60)
	keys := "CLIENT_RANDOM 0102 0304\n"
	var f []byte
	f = append(f, ngSection(le)...)
	f = append(f, ngSecretsBlock(le, SecretsTLSKeyLog, []byte(keys), len(keys))...)
	f = append(f, ngPacket(le, pkt)...)
	f = append(f, ngSecretsBlock(le, 0x57474b4c, []byte("wireguard"), 9)...)
	f = append(f, ngSecretsBlock(le, SecretsTLSKeyLog, nil, 0)...)
	f = append(f, ngSection(be)...)
	f = append(f, ngPacket(be, pkt)...)
	f = append(f, ngSecretsBlock(be, SecretsTLSKeyLog, []byte("SERVER_TRAFFIC_SECRET_0 aa bb"), 29)...)
	f = append(f, ngPacket(be, pkt)...)
	want := []secret{{SecretsTLSKeyLog, keys}, {0x57474b4c, "wireguard"}, {SecretsTLSKeyLog, ""},
		{SecretsTLSKeyLog, "SERVER_TRAFFIC_SECRET_0 aa bb"}}
	for _, oneByte := range []bool{false, true} {
		got, n, err := readSecrets(t, f, oneByte)
		if err != nil || n != 3 {
			t.Errorf("one byte a read %v: %d packets, %v; want 3", oneByte, n, err)
		}
		if len(got) != len(want) {
			t.Fatalf("one byte a read %v: secrets %+v, want %+v", oneByte, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("one byte a read %v: secrets %d: %+v, want %+v", oneByte, i, got[i], want[i])
			}
		}
	}
}

// A secrets block that lies is passed over, and a file whose block lengths
// make no sense is left to pcapgo's reader to refuse.
func TestSecretsBlocksThatLie(t *testing.T) {
	le := binary.LittleEndian
	pkt := bytes.Repeat([]byte{1}, 60)
	var f []byte
	f = append(f, ngSection(le)...)
	f = append(f, ngSecretsBlock(le, SecretsTLSKeyLog, []byte("CLIENT_RANDOM 01 02\n"), 1<<30)...) // beyond its block
	f = append(f, ngPacket(le, pkt)...)
	got, n, err := readSecrets(t, f, false)
	if len(got) != 0 || n != 1 || err != nil {
		t.Errorf("a secrets length beyond the block: secrets %+v, %d packets, %v; want none, 1, nil", got, n, err)
	}
	// A block of 6 bytes: the tap stops looking; whatever follows is not
	// taken for secrets, and reading ends with the reader's error.
	bad := append(append([]byte{}, ngSection(le)...), le.AppendUint32(le.AppendUint32(nil, 6), 6)...)
	bad = append(bad, make([]byte, 8)...)
	bad = append(bad, ngSecretsBlock(le, SecretsTLSKeyLog, []byte("x"), 1)...)
	got, _, err = readSecrets(t, bad, false)
	if len(got) != 0 || err == nil {
		t.Errorf("a broken file: secrets %+v, error %v; want none and an error", got, err)
	}
	// The blocks together hand over at most maxSecrets.
	big := bytes.Repeat([]byte("#"), maxSecrets/2+1)
	f = append(append([]byte{}, ngSection(le)...), ngSecretsBlock(le, SecretsTLSKeyLog, big, len(big))...)
	f = append(f, ngSecretsBlock(le, SecretsTLSKeyLog, big, len(big))...)
	f = append(f, ngPacket(le, pkt)...)
	got, n, err = readSecrets(t, f, false)
	if len(got) != 1 || n != 1 || err != nil {
		t.Errorf("two blocks beyond the cap together: %d handed over, %d packets, %v; want 1, 1, nil", len(got), n, err)
	}
}

// The tap only watches: whatever the bytes, the packets and the error read
// through it are those read without it, and what it hands over fits the
// cap.
func FuzzSecretsTap(f *testing.F) {
	le, be := binary.LittleEndian, binary.BigEndian
	pkt := bytes.Repeat([]byte{7}, 40)
	f.Add(append(append(ngSection(le), ngSecretsBlock(le, SecretsTLSKeyLog, []byte("CLIENT_RANDOM 01 02\n"), 20)...), ngPacket(le, pkt)...))
	f.Add(append(append(ngSection(be), ngPacket(be, pkt)...), ngSecretsBlock(be, 1, []byte("x"), 1)...))
	f.Add(append(ngSection(le), ngSecretsBlock(le, SecretsTLSKeyLog, []byte("ab"), 1<<20)...))
	f.Fuzz(func(t *testing.T, file []byte) {
		type read struct {
			data string
			ts   int64
			err  string
		}
		all := func(o FileOptions) ([]read, error) {
			src, err := OpenReaderWith("f", bytes.NewReader(file), o)
			if err != nil {
				return nil, err
			}
			defer src.Close()
			var out []read
			for len(out) < 10000 {
				data, ci, _, err := src.Next()
				r := read{data: string(data), ts: ci.Timestamp.UnixNano()}
				if err != nil {
					r.err = err.Error()
					out = append(out, r)
					break
				}
				out = append(out, r)
			}
			return out, nil
		}
		given := 0
		with, err1 := all(FileOptions{Secrets: func(_ uint32, data []byte) { given += len(data) }})
		without, err2 := all(FileOptions{})
		if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
			t.Fatalf("open: %v with the tap, %v without", err1, err2)
		}
		if len(with) != len(without) {
			t.Fatalf("%d reads with the tap, %d without", len(with), len(without))
		}
		for i := range with {
			if with[i] != without[i] {
				t.Fatalf("read %d: %+v with the tap, %+v without", i, with[i], without[i])
			}
		}
		if given > maxSecrets {
			t.Fatalf("%d bytes of secrets handed over", given)
		}
	})
}
