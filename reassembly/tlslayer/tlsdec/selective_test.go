package tlsdec

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// sealRecord makes the body of a record of rc's suite under seq: plain,
// then (TLS 1.3) the real type typ and pad zero bytes.
func sealRecord(rc *recordCipher, seq uint64, plain []byte, typ byte, pad int) (hdr [5]byte, body []byte) {
	over := rc.aead.Overhead()
	put := func(n int) { hdr = [5]byte{typ, 3, 3, byte(n >> 8), byte(n)} }
	if rc.tls13 {
		inner := append(append(append([]byte(nil), plain...), typ), make([]byte, pad)...)
		put(len(inner) + over)
		hdr[0] = typeAppData
		nonce := rc.iv
		for i := 0; i < 8; i++ {
			nonce[4+i] ^= byte(seq >> (56 - 8*i))
		}
		return hdr, rc.aead.Seal(nil, nonce[:], inner, hdr[:])
	}
	var aad [13]byte
	binary.BigEndian.PutUint64(aad[:], seq)
	aad[8], aad[9], aad[10] = typ, 3, 3
	binary.BigEndian.PutUint16(aad[11:], uint16(len(plain)))
	if rc.s.bulk == bulkGCM {
		explicit := binary.BigEndian.AppendUint64(nil, seq^0x5a5a)
		var nonce [12]byte
		copy(nonce[:4], rc.iv[:4])
		copy(nonce[4:], explicit)
		body = rc.aead.Seal(explicit, nonce[:], plain, aad[:])
		put(len(body))
		return hdr, body
	}
	nonce := rc.iv
	for i := 0; i < 8; i++ {
		nonce[4+i] ^= byte(seq >> (56 - 8*i))
	}
	body = rc.aead.Seal(nil, nonce[:], plain, aad[:])
	put(len(body))
	return hdr, body
}

// testCiphers are a record cipher of every AEAD suite, TLS 1.3 and 1.2,
// under random keys.
func testCiphers(t *testing.T) map[string]*recordCipher {
	out := map[string]*recordCipher{}
	for _, id := range []uint16{0x1301, 0x1302, 0x1303, 0xc02b, 0xc02c, 0xcca9} {
		s := suites[id]
		secret := make([]byte, s.prf().Size())
		rand.Read(secret)
		var rc *recordCipher
		var err error
		if s.tls13 {
			rc, err = newCipher13(s, secret)
		} else {
			cr, sr := make([]byte, 32), make([]byte, 32)
			rand.Read(cr)
			rand.Read(sr)
			rc, _, err = newCiphers12(s, secret[:32], cr, sr, false)
		}
		if err != nil || !rc.partialOK() {
			t.Fatalf("%s: %v", s.name, err)
		}
		out[s.name] = rc
	}
	return out
}

// Every range of a record decrypted by its offset is what opening the whole
// record gives, at every offset of consecutive records (each under its own
// sequence number, keystreams restarting at each), in every AEAD suite.
func TestXorAtEveryOffset(t *testing.T) {
	for name, rc := range testCiphers(t) {
		t.Run(name, func(t *testing.T) {
			for seq, n := range []int{1, 200, 1000, 1 << 14} {
				plain := payload(uint64(seq+1), n)
				hdr, body := sealRecord(rc, uint64(seq), plain, typeAppData, 0)
				got, typ, err := rc.open(&hdr, body, append([]byte(nil), body...), uint64(seq))
				if err != nil || typ != typeAppData || !bytes.Equal(got, plain) {
					t.Fatalf("record %d does not open: %v", seq, err)
				}
				ct, pl, ok := rc.plainLen(&hdr, body, uint64(seq))
				if !ok || pl != n {
					t.Fatalf("record %d: plainLen = %d %v, want %d", seq, pl, ok, n)
				}
				step := 1
				if n > 2000 {
					step = 7 // every offset of the large record takes long under -race
				}
				for off := 0; off < n; off += step {
					for _, k := range []int{1, 15, 16, 17, 63, 64, 65, 100, smallXor, smallXor + 1, n - off} {
						k = min(k, n-off)
						dst := make([]byte, k)
						rc.xorAt(ct, off, dst)
						if !bytes.Equal(dst, plain[off:off+k]) {
							t.Fatalf("record %d, %d bytes at %d: decrypted % x, want % x", seq, k, off, dst[:min(k, 8)], plain[off:off+min(k, 8)])
						}
					}
				}
			}
		})
	}
}

// In TLS 1.3 the length is found past the padding, within tailScan bytes
// of the end (the last tailFirst tried first); longer padding, or a record
// that is not application data, is left to opening it whole.
func TestPlainLenPadding(t *testing.T) {
	for name, rc := range testCiphers(t) {
		if !rc.tls13 {
			continue
		}
		for _, c := range []struct {
			n, pad int
			typ    byte
			ok     bool
		}{{100, 0, typeAppData, true}, {100, 5, typeAppData, true},
			{100, tailFirst - 1, typeAppData, true}, {100, tailFirst, typeAppData, true}, {100, tailFirst + 1, typeAppData, true},
			{10, tailFirst, typeAppData, true}, {100, tailScan - 1, typeAppData, true}, {100, tailScan, typeAppData, false}, {100, 300, typeAppData, false}, {10, 0, typeHandshake, false},
			{10, 0, typeAlert, false}, {1, 0, typeAppData, true}} {
			hdr, body := sealRecord(rc, 3, payload(1, c.n), c.typ, c.pad)
			_, n, ok := rc.plainLen(&hdr, body, 3)
			if ok != c.ok || ok && n != c.n {
				t.Errorf("%s: %d bytes, padding %d, type %d: plainLen = %d %v", name, c.n, c.pad, c.typ, n, ok)
			}
		}
	}
}

// miniFramer is a Reader over the client's plaintext as a framer would be:
// frames of a 4-byte size prefix, judged from their first headLen bytes,
// kept when the byte after the prefix is 'K', others passed over.
type miniFramer struct {
	pos, start, size int64
	head             []byte
	kept, touched    bool
	heads            [][]byte // of the frames passed over
	keptFrames       [][]byte
	cur              []byte
}

const headLen = 12

func (f *miniFramer) Unread(fromClient bool) (skip, head int64) {
	if !fromClient {
		return 0, 0
	}
	rel := f.pos - f.start
	switch {
	case rel < headLen:
		return 0, headLen - rel
	case !f.kept:
		return f.start + f.size - f.pos, 0
	}
	return 0, 0
}

func (f *miniFramer) Settled(fromClient bool) bool {
	t := f.touched
	f.touched = false
	skip, _ := f.Unread(fromClient)
	return !t && (skip > 0 || f.pos == f.start)
}

func (f *miniFramer) data(b []byte) {
	for len(b) > 0 {
		rel := f.pos - f.start
		if rel < headLen {
			k := min(int(headLen-rel), len(b))
			f.head = append(f.head, b[:k]...)
			f.cur = append(f.cur, b[:k]...)
			f.pos += int64(k)
			b = b[k:]
			if f.pos-f.start == headLen {
				f.size = 4 + int64(binary.BigEndian.Uint32(f.head))
				f.kept = f.head[4] == 'K'
				f.touched = f.touched || f.kept
				if !f.kept {
					f.heads = append(f.heads, f.head)
				}
			}
			continue
		}
		// A record opened whole may give a body passed over all the same.
		k := min(int(f.start+f.size-f.pos), len(b))
		f.cur = append(f.cur, b[:k]...)
		f.pos += int64(k)
		b = b[k:]
		f.next()
	}
}

func (f *miniFramer) skip(n int) {
	if s, _ := f.Unread(true); int64(n) > s {
		panic(fmt.Sprintf("skips %d, %d skippable", n, s))
	}
	f.pos += int64(n)
	f.next()
}

func (f *miniFramer) next() {
	if f.pos == f.start+f.size {
		if f.kept {
			f.keptFrames = append(f.keptFrames, f.cur)
		}
		f.start, f.head, f.cur, f.kept = f.pos, nil, nil, false
	}
}

// frames are six 16 KiB frames, the fourth kept ('K').
func testFrames() [][]byte {
	var fs [][]byte
	for i := range 6 {
		f := binary.BigEndian.AppendUint32(nil, 16380)
		f = append(f, payload(uint64(50+i), 16380)...)
		f[4] = 'S'
		if i == 3 {
			f[4] = 'K'
		}
		fs = append(fs, f)
	}
	return fs
}

type selResult struct {
	fr       *miniFramer
	problems []Output
	data     []Output // the client's, Data dropped
	info     Info
}

func runSelective(t *testing.T, cp *capture, client []byte, reader bool) selResult {
	kl, err := ParseKeyLog(strings.NewReader(cp.keyLog))
	if err != nil {
		t.Fatal(err)
	}
	var r selResult
	r.fr = new(miniFramer)
	c := NewConn(kl)
	if reader {
		c.SetReader(r.fr)
	}
	out := func(o Output) {
		switch {
		case o.Kind == KindProblem:
			r.problems = append(r.problems, o)
		case o.Kind == KindData && o.FromClient:
			r.fr.data(o.Data)
			o.Data = nil
			r.data = append(r.data, o)
		case o.Kind == KindSkip:
			r.fr.skip(o.Len)
		}
	}
	c.Feed(true, client, out)
	c.Feed(false, cp.server, out)
	c.End(out)
	r.info = c.Info()
	return r
}

// appRecords are the client's full-sized application data records (after
// its Finished): one for each of testFrames. (A TLS 1.2 Finished is not an
// application data record.)
func appRecords(client []byte, tls13 bool) []wireRecord {
	start := 0
	if tls13 {
		start = handshakeEnd(client)
	}
	var out []wireRecord
	for _, r := range splitRecords(client) {
		if r.pos >= start && r.typ == typeAppData && len(r.raw) > 1<<14 {
			out = append(out, r)
		}
	}
	return out
}

// A record read only in part is never reported authentic; a record that is
// read beyond a head still fails its tag or MAC; what comes of the parts
// read is marked unverified. In TLS 1.3 and TLS 1.2, AEAD and CBC.
func TestSelectiveTampering(t *testing.T) {
	for _, c := range []struct {
		id    uint16
		tls13 bool
		lead  int // bytes of a record body before its ciphertext: TLS 1.2 GCM's explicit nonce
	}{
		{tls.TLS_AES_128_GCM_SHA256, true, 0},
		{tls.TLS_CHACHA20_POLY1305_SHA256, true, 0},
		{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, false, 0}, // the IV: its byte 6 is the plaintext's
		{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256, false, 0},
		{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, false, 8},
	} {
		t.Run(tls.CipherSuiteName(c.id), func(t *testing.T) {
			ccfg := &tls.Config{MinVersion: tls.VersionTLS13, DynamicRecordSizingDisabled: true}
			scfg := &tls.Config{}
			if c.tls13 {
				forceTLS13Suite(t, c.id)
			} else {
				ccfg = &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{c.id}, DynamicRecordSizingDisabled: true}
				scfg = &tls.Config{CipherSuites: []uint16{c.id}}
			}
			cp := exchange(t, ccfg, scfg, testFrames(), payload(9, 100), nil)
			recs := appRecords(cp.client, c.tls13)
			if len(recs) != 6 {
				t.Fatalf("%d application records, want one a frame", len(recs))
			}
			// The first record under the key is opened whole: in TLS 1.3 the
			// first application record, in TLS 1.2 the Finished before them.
			first := recs[0]
			if !c.tls13 {
				all := splitRecords(cp.client)
				for i, r := range all {
					if r.typ == typeCCS {
						first = all[i+1]
						break
					}
				}
			}
			wantPartial := 4 // frames 2, 3, 5 and 6 (TLS 1.3)
			if !c.tls13 {
				wantPartial = 5 // and frame 1
			}

			// Untouched: the kept frame whole, the heads of the others, nothing
			// reported, the records read in part counted.
			r := runSelective(t, cp, cp.client, true)
			fs := testFrames()
			if len(r.problems) > 0 || len(r.fr.keptFrames) != 1 || !bytes.Equal(r.fr.keptFrames[0], fs[3]) {
				t.Fatalf("problems %v, kept %d frames", r.problems, len(r.fr.keptFrames))
			}
			if len(r.fr.heads) != 5 || !bytes.Equal(r.fr.heads[4], fs[5][:headLen]) {
				t.Errorf("heads passed over: %d", len(r.fr.heads))
			}
			// The kept one is opened whole too, once its head has said it is
			// kept (the head comes first, decrypted by its offset).
			if r.info.Unverified != wantPartial {
				t.Errorf("Unverified = %d, want %d", r.info.Unverified, wantPartial)
			}
			for _, o := range r.data {
				partial := o.Pos != int64(first.pos) && !(o.Pos == int64(recs[3].pos) && o.Offset >= r.data[0].Offset+3*16384+headLen)
				if o.Unverified != partial {
					t.Errorf("record at %d: Unverified %v", o.Pos, o.Unverified)
				}
			}

			tamper := func(rec wireRecord, at int) []byte {
				b := append([]byte(nil), cp.client...)
				b[rec.pos+5+at] ^= 0x40
				return b
			}
			// A byte of a body passed over: not detected, and not claimed: the
			// record counts as unverified, nothing of it is handed out as
			// authentic. Opened whole, it fails.
			for _, at := range []int{5000, c.lead + 6} {
				b := tamper(recs[2], at)
				whole := runSelective(t, cp, b, false)
				if len(whole.problems) != 1 || whole.problems[0].Problem != ProblemAuth {
					t.Errorf("decrypted whole, tampered at %d: problems %v", at, whole.problems)
				}
				r := runSelective(t, cp, b, true)
				if len(r.problems) != 0 || r.info.Unverified != wantPartial {
					t.Errorf("tampered at %d: problems %v, Unverified %d", at, r.problems, r.info.Unverified)
				}
				for _, o := range r.data {
					if o.Pos == int64(recs[2].pos) && !o.Unverified {
						t.Errorf("tampered at %d: the record's head is reported authentic", at)
					}
				}
				if at < 5000 && bytes.Equal(r.fr.heads[1], fs[2][:headLen]) {
					t.Error("a tampered head decrypts as sent")
				}
			}
			// A byte of the kept frame's record: its tag fails, as decrypted
			// whole, and nothing of the frame is handed out.
			r = runSelective(t, cp, tamper(recs[3], 9000), true)
			if len(r.problems) != 1 || r.problems[0].Problem != ProblemAuth || r.problems[0].Pos != int64(recs[3].pos) {
				t.Errorf("tampered kept record: problems %v", r.problems)
			}
			if len(r.fr.keptFrames) != 0 {
				t.Error("the tampered frame was handed out")
			}
			// The first record under the key is opened whole: a tampered one
			// fails, as a wrong key does.
			r = runSelective(t, cp, tamper(first, min(9000, len(first.raw)-6)), true)
			if len(r.problems) != 1 || r.problems[0].Problem != ProblemAuth || r.problems[0].Pos != int64(first.pos) {
				t.Errorf("tampered first record: problems %v", r.problems)
			}
		})
	}
}

// headsOnly reads 68 bytes at the start of every 16 KiB and passes the
// rest over, as a framer does for 16 KiB frames nobody is shown.
type headsOnly struct{ pos int64 }

func (h *headsOnly) Unread(fromClient bool) (skip, head int64) {
	if !fromClient {
		return 0, 0
	}
	if r := h.pos % 16384; r < 68 {
		return 0, 68 - r
	} else {
		return 16384 - r, 0
	}
}

func (h *headsOnly) Settled(bool) bool { return true }

// The client's records of the bulk capture decrypted whole, and as heads,
// fed at once and in segments of 1448 bytes as TCP delivers them (records
// then come in pieces and are collected).
func BenchmarkDecryptSelective(b *testing.B) {
	cp := bulkCapture(b)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	for _, seg := range []int{0, 1448} {
		for _, sel := range []bool{false, true} {
			b.Run(fmt.Sprintf("seg=%d/heads=%v", seg, sel), func(b *testing.B) {
				b.SetBytes(int64(len(cp.client)))
				b.ReportAllocs()
				for b.Loop() {
					c := NewConn(kl)
					h := new(headsOnly)
					if sel {
						c.SetReader(h)
					}
					out := func(o Output) {
						if o.FromClient {
							h.pos += int64(len(o.Data) + o.Len)
						}
					}
					c.Feed(false, cp.server, out)
					for rest := cp.client; len(rest) > 0; {
						n := len(rest)
						if seg > 0 {
							n = min(n, seg)
						}
						c.Feed(true, rest[:n], out)
						rest = rest[n:]
					}
				}
			})
		}
	}
}
