package tlsdec

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"
)

// Go's crypto/tls has neither the SHA-384 CBC suites nor encrypt_then_mac (RFC 7366), which OpenSSL
// and recent JDKs negotiate, so these connections are built here: hellos, ChangeCipherSpec and records
// sealed by an encoder written from RFC 5246 section 6.2.3.2 and RFC 7366, sharing nothing with the
// decoder but the key block (whose PRF the crypto/tls tests check).
type synth12 struct {
	s                   *suite
	etm                 bool
	clientRandom        [32]byte
	serverRandom        [32]byte
	master              []byte
	cMac, sMac, cK, sK  []byte
	client, server      []byte
	clientSeq, serverSq uint64
	padBlocks           int // whole blocks of padding seal adds to the least it needs
}

func newSynth12(t *testing.T, id uint16, etm bool, serverFlight ...[]byte) *synth12 {
	x := &synth12{s: suites[id], etm: etm}
	for i := range x.clientRandom {
		x.clientRandom[i], x.serverRandom[i] = byte(i), byte(100+i)
	}
	x.master = bytes.Repeat([]byte{0x42}, 48)
	kb := keyBlock12(x.s.prf, x.master, x.clientRandom[:], x.serverRandom[:], 2*x.s.macLen+2*x.s.keyLen)
	x.cMac, kb = kb[:x.s.macLen], kb[x.s.macLen:]
	x.sMac, kb = kb[:x.s.macLen], kb[x.s.macLen:]
	x.cK, x.sK = kb[:x.s.keyLen], kb[x.s.keyLen:2*x.s.keyLen]

	var exts []byte
	if etm {
		exts = []byte{0, 4, 0, extEncryptThenMAC, 0, 0}
	}
	ch := append([]byte{3, 3}, x.clientRandom[:]...)
	ch = append(ch, 0, 0, 2, byte(id>>8), byte(id), 1, 0)
	ch = append(ch, exts...)
	sh := append([]byte{3, 3}, x.serverRandom[:]...)
	sh = append(sh, 0, byte(id>>8), byte(id), 0)
	sh = append(sh, exts...)
	x.client = rec(typeHandshake, 0x0301, handshakeMsg(1, ch))
	x.server = rec(typeHandshake, 0x0303, handshakeMsg(2, sh))
	for _, m := range serverFlight {
		for len(m) > 0 { // in records of at most 2^14 bytes
			n := min(len(m), 1<<14)
			x.server = append(x.server, rec(typeHandshake, 0x0303, m[:n])...)
			m = m[n:]
		}
	}
	x.server = append(x.server, rec(typeHandshake, 0x0303, handshakeMsg(14, nil))...) // ServerHelloDone
	x.client = append(x.client, rec(typeCCS, 0x0303, []byte{1})...)
	x.server = append(x.server, rec(typeCCS, 0x0303, []byte{1})...)
	x.seal(true, typeHandshake, handshakeMsg(20, bytes.Repeat([]byte{7}, 12)))
	x.seal(false, typeHandshake, handshakeMsg(20, bytes.Repeat([]byte{8}, 12)))
	return x
}

func handshakeMsg(typ byte, body []byte) []byte {
	return append([]byte{typ, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
}

func (x *synth12) seal(fromClient bool, typ byte, p []byte) {
	macKey, key, seq, dst := x.sMac, x.sK, &x.serverSq, &x.server
	if fromClient {
		macKey, key, seq, dst = x.cMac, x.cK, &x.clientSeq, &x.client
	}
	mac := func(data []byte) []byte {
		h := hmac.New(x.s.mac, macKey)
		var hdr [13]byte
		binary.BigEndian.PutUint64(hdr[:], *seq)
		hdr[8], hdr[9], hdr[10] = typ, 3, 3
		binary.BigEndian.PutUint16(hdr[11:], uint16(len(data)))
		h.Write(hdr[:])
		h.Write(data)
		return h.Sum(nil)
	}
	iv := bytes.Repeat([]byte{byte(*seq) + 0x30}, 16)
	data := bytes.Clone(p)
	if !x.etm {
		data = append(data, mac(p)...)
	}
	padLen := 15 - len(data)%16 + 16*x.padBlocks
	for i := 0; i <= padLen; i++ {
		data = append(data, byte(padLen))
	}
	b, _ := aes.NewCipher(key)
	cipher.NewCBCEncrypter(b, iv).CryptBlocks(data, data)
	body := append(iv, data...)
	if x.etm {
		body = append(body, mac(body)...)
	}
	*dst = append(*dst, rec(typ, 0x0303, body)...)
	*seq++
}

func (x *synth12) keyLog() string {
	return "CLIENT_RANDOM " + hex.EncodeToString(x.clientRandom[:]) + " " + hex.EncodeToString(x.master) + "\n"
}

func TestCBCSuitesBuiltHere(t *testing.T) {
	for _, c := range []struct {
		id  uint16
		etm bool
	}{
		{0xc028, false}, // TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384
		{0xc028, true},
		{0xc024, false}, // TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384
		{0xc013, true},  // TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, encrypt_then_mac
		{0x003d, true},  // TLS_RSA_WITH_AES_256_CBC_SHA256, encrypt_then_mac
	} {
		name := suiteName(c.id)
		if c.etm {
			name += " encrypt_then_mac"
		}
		t.Run(name, func(t *testing.T) {
			x := newSynth12(t, c.id, c.etm)
			var sent, replied []byte
			for i, n := range []int{1, 15, 16, 17, 1000, 16384} {
				m := payload(uint64(i), n)
				x.seal(true, typeAppData, m)
				sent = append(sent, m...)
				r := payload(uint64(50+i), n/2+1)
				x.seal(false, typeAppData, r)
				replied = append(replied, r...)
			}
			cp := &capture{client: x.client, server: x.server, sent: sent, replied: replied}
			info := decryptAll(t, cp, x.keyLog())
			if info.Cipher != suiteName(c.id) || !info.Decrypted {
				t.Errorf("info = %+v", info)
			}

			// A changed byte in the last block: the padding or the MAC no longer checks out.
			recs := splitRecords(x.client)
			last := recs[len(recs)-1]
			bad := bytes.Clone(x.client)
			bad[last.pos+len(last.raw)-1] ^= 0x80
			kl, _ := ParseKeyLog(strings.NewReader(x.keyLog()))
			conn := NewConn(kl)
			var col collector
			conn.Feed(true, bad, col.out)
			conn.Feed(false, x.server, col.out)
			if len(col.problems) != 1 || col.problems[0].Problem != ProblemAuth || col.problems[0].Pos != int64(last.pos) {
				t.Errorf("problems %+v, want ProblemAuth at %d", col.problems, last.pos)
			}
			if want := sent[:len(sent)-16384]; !bytes.Equal(col.data[true], want) {
				t.Errorf("plaintext before the bad record: %d bytes, want %d", len(col.data[true]), len(want))
			}
		})
	}
}

// A handshake message larger than Conn keeps (a 300 KB certificate chain) is passed over by its
// length, and the messages after it are still found.
func TestHugeHandshakeMessage(t *testing.T) {
	big := handshakeMsg(11, payload(77, 300000))
	ticket := handshakeMsg(4, append([]byte{0, 0, 0, 60, 0, 3}, 1, 2, 3)) // NewSessionTicket
	x := newSynth12(t, 0xc013, false, append(big, ticket...))
	m := payload(1, 5000)
	x.seal(true, typeAppData, m)
	cp := &capture{client: x.client, server: x.server, sent: m}
	info := decryptAll(t, cp, x.keyLog())
	if info.Tickets != 1 || !info.Decrypted {
		t.Errorf("info %+v", info)
	}
}

// Any range of a CBC record's plaintext decrypted by its offset, a block
// from the one before it, is what opening the record whole gives; plainLen
// finds the plaintext's length from the last block alone. Padding longer
// than that block, or padding a changed byte spoils, is left to opening the
// record whole.
func TestCBCPartialEveryOffset(t *testing.T) {
	for _, c := range []struct {
		id  uint16
		etm bool
	}{{0xc013, false}, {0xc013, true}, {0xc028, false}, {0x003d, true}} {
		name := suiteName(c.id)
		if c.etm {
			name += " encrypt_then_mac"
		}
		t.Run(name, func(t *testing.T) {
			x := newSynth12(t, c.id, c.etm)
			rc, _, err := newCiphers12(x.s, x.master, x.clientRandom[:], x.serverRandom[:], c.etm)
			if err != nil || !rc.partialOK() {
				t.Fatalf("cipher: %v", err)
			}
			start := len(splitRecords(x.client)) // the hello, ChangeCipherSpec and Finished
			seq0 := x.clientSeq
			sizes := []int{1, 15, 16, 17, 200, 1000, 1 << 14}
			var sent [][]byte
			for i, n := range sizes {
				sent = append(sent, payload(uint64(i), n))
				x.seal(true, typeAppData, sent[i])
			}
			x.padBlocks = 1
			sent = append(sent, payload(99, 300))
			x.seal(true, typeAppData, sent[len(sizes)])
			for i, r := range splitRecords(x.client)[start:] {
				seq := seq0 + uint64(i)
				var hdr [5]byte
				copy(hdr[:], r.raw)
				body := r.raw[5:]
				want := sent[i]
				got, typ, err := rc.open(&hdr, body, bytes.Clone(body), seq)
				if err != nil || typ != typeAppData || !bytes.Equal(got, want) {
					t.Fatalf("record %d does not open: %v", i, err)
				}
				ct, n, ok := rc.plainLen(&hdr, body, seq)
				if i == len(sizes) {
					if ok {
						t.Errorf("a record padded past its last block: plainLen = %d, true", n)
					}
					continue
				}
				if !ok || n != len(want) {
					t.Fatalf("record %d: plainLen = %d %v, want %d", i, n, ok, len(want))
				}
				step := 1
				if n > 2000 {
					step = 7
				}
				for off := 0; off < n; off += step {
					for _, k := range []int{1, 15, 16, 17, 33, 100, n - off} {
						k = min(k, n-off)
						dst := make([]byte, k)
						rc.xorAt(ct, off, dst)
						if !bytes.Equal(dst, want[off:off+k]) {
							t.Fatalf("record %d, %d bytes at %d: decrypted % x, want % x", i, k, off, dst[:min(k, 8)], want[off:off+min(k, 8)])
						}
					}
				}
				// The padding length's top bit flipped, through the block before it.
				bad := bytes.Clone(body)
				bad[len(ct)-aes.BlockSize-1] ^= 0x80
				if _, n, ok := rc.plainLen(&hdr, bad, seq); ok {
					t.Errorf("record %d with its padding spoiled: plainLen = %d, true", i, n)
				}
				// Cut short: no whole block after the IV, or not whole blocks.
				for _, k := range []int{0, 5, aes.BlockSize, len(body) - 1} {
					if _, n, ok := rc.plainLen(&hdr, body[:k], seq); ok {
						t.Errorf("record %d cut to %d bytes: plainLen = %d, true", i, k, n)
					}
				}
			}
		})
	}
}
