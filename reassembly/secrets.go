package reassembly

import (
	"encoding/binary"
	"io"
)

// SecretsTLSKeyLog is the secrets type of a pcapng Decryption Secrets
// Block holding an NSS key log (what `editcap --inject-secrets tls,FILE`
// writes, and Wireshark decrypts with).
const SecretsTLSKeyLog = 0x544c534b

// maxSecrets caps what the Decryption Secrets Blocks of one file may hand
// over, all together: a key log is a few hundred bytes per connection, and
// a block's length is the file's word.
const maxSecrets = 16 << 20

const (
	ngSectionHeader = 0x0a0d0d0a
	ngSecrets       = 0x0000000a
	ngByteOrder     = 0x1a2b3c4d
)

// secretsTap passes a pcapng stream through and finds its Decryption
// Secrets Blocks on the way, by the blocks' own lengths; pcapgo's reader,
// which reads behind it, skips them. It reads them as they pass, before
// the reader parses the packets after them, as Wireshark requires of a
// file: secrets come before the packets they decrypt. Once the blocks'
// lengths make no sense it stops looking, and the reader behind says what
// is wrong with the file.
type secretsTap struct {
	r         io.Reader
	onSecrets func(kind uint32, data []byte)
	order     binary.ByteOrder
	hdr       [12]byte // a block's type, length and first word
	nh        int
	left      int64  // of the current block after hdr
	body      []byte // a Decryption Secrets Block's, after hdr
	keep      bool   // the current block is one
	given     int    // secrets handed over so far
	lost      bool
}

func (t *secretsTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.scan(p[:n])
	return n, err
}

func (t *secretsTap) scan(b []byte) {
	for len(b) > 0 && !t.lost {
		if t.left > 0 {
			k := int(min(t.left, int64(len(b))))
			if t.keep {
				t.body = append(t.body, b[:k]...)
			}
			t.left -= int64(k)
			b = b[k:]
			if t.left == 0 && t.keep {
				t.secrets()
			}
			continue
		}
		k := copy(t.hdr[t.nh:], b)
		t.nh += k
		b = b[k:]
		if t.nh < len(t.hdr) {
			return
		}
		t.nh = 0
		t.block()
	}
}

// block starts the block whose first 12 bytes are in hdr (every block has
// as many: type, length, and the length again at its end).
func (t *secretsTap) block() {
	if binary.LittleEndian.Uint32(t.hdr[:4]) == ngSectionHeader {
		switch {
		case binary.LittleEndian.Uint32(t.hdr[8:]) == ngByteOrder:
			t.order = binary.LittleEndian
		case binary.BigEndian.Uint32(t.hdr[8:]) == ngByteOrder:
			t.order = binary.BigEndian
		default:
			t.lost = true
			return
		}
	}
	if t.order == nil {
		t.lost = true
		return
	}
	n := t.order.Uint32(t.hdr[4:8])
	if n < 12 || n%4 != 0 {
		t.lost = true
		return
	}
	t.left = int64(n) - 12
	t.keep = t.order.Uint32(t.hdr[:4]) == ngSecrets && t.given+int(n) <= maxSecrets
	t.body = t.body[:0]
	if t.keep {
		t.body = append(t.body, t.hdr[8:]...) // the secrets type
		if t.left == 0 {
			t.secrets()
		}
	}
}

// secrets hands over the block in body: secrets type, secrets length, the
// secrets, padding, options, the block's length.
func (t *secretsTap) secrets() {
	t.keep = false
	b := t.body
	if len(b) < 8 {
		return
	}
	kind, n := t.order.Uint32(b), t.order.Uint32(b[4:])
	if int64(n) > int64(len(b)-8) {
		return // a secrets length beyond the block: not a block to trust
	}
	t.given += int(n)
	t.onSecrets(kind, b[8:8+n])
	if cap(t.body) > 64<<10 {
		t.body = nil
	}
}
