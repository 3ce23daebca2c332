package tlsdec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

type bulk uint8

const (
	bulkGCM bulk = iota + 1
	bulkChaCha
	bulkCBC
)

// suite is what the record layer needs to know of a cipher suite.
type suite struct {
	id     uint16
	name   string
	tls13  bool
	bulk   bulk
	keyLen int
	prf    func() hash.Hash // TLS 1.2 PRF hash, TLS 1.3 HKDF hash
	mac    func() hash.Hash // CBC suites only
	macLen int
}

var suites = func() map[uint16]*suite {
	s256, s384, s1 := sha256.New, sha512.New384, sha1.New
	list := []suite{
		{0x1301, "TLS_AES_128_GCM_SHA256", true, bulkGCM, 16, s256, nil, 0},
		{0x1302, "TLS_AES_256_GCM_SHA384", true, bulkGCM, 32, s384, nil, 0},
		{0x1303, "TLS_CHACHA20_POLY1305_SHA256", true, bulkChaCha, 32, s256, nil, 0},

		{0xc02f, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", false, bulkGCM, 16, s256, nil, 0},
		{0xc030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", false, bulkGCM, 32, s384, nil, 0},
		{0xc02b, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", false, bulkGCM, 16, s256, nil, 0},
		{0xc02c, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", false, bulkGCM, 32, s384, nil, 0},
		{0x009c, "TLS_RSA_WITH_AES_128_GCM_SHA256", false, bulkGCM, 16, s256, nil, 0},
		{0x009d, "TLS_RSA_WITH_AES_256_GCM_SHA384", false, bulkGCM, 32, s384, nil, 0},
		{0x009e, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", false, bulkGCM, 16, s256, nil, 0},
		{0x009f, "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", false, bulkGCM, 32, s384, nil, 0},
		{0xcca8, "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", false, bulkChaCha, 32, s256, nil, 0},
		{0xcca9, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", false, bulkChaCha, 32, s256, nil, 0},
		{0xccaa, "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256", false, bulkChaCha, 32, s256, nil, 0},

		{0x002f, "TLS_RSA_WITH_AES_128_CBC_SHA", false, bulkCBC, 16, s256, s1, 20},
		{0x0035, "TLS_RSA_WITH_AES_256_CBC_SHA", false, bulkCBC, 32, s256, s1, 20},
		{0x003c, "TLS_RSA_WITH_AES_128_CBC_SHA256", false, bulkCBC, 16, s256, s256, 32},
		{0x003d, "TLS_RSA_WITH_AES_256_CBC_SHA256", false, bulkCBC, 32, s256, s256, 32},
		{0x0033, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA", false, bulkCBC, 16, s256, s1, 20},
		{0x0039, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA", false, bulkCBC, 32, s256, s1, 20},
		{0x0067, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256", false, bulkCBC, 16, s256, s256, 32},
		{0x006b, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256", false, bulkCBC, 32, s256, s256, 32},
		{0xc013, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", false, bulkCBC, 16, s256, s1, 20},
		{0xc014, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", false, bulkCBC, 32, s256, s1, 20},
		{0xc009, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", false, bulkCBC, 16, s256, s1, 20},
		{0xc00a, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", false, bulkCBC, 32, s256, s1, 20},
		{0xc027, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", false, bulkCBC, 16, s256, s256, 32},
		{0xc028, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", false, bulkCBC, 32, s384, s384, 48},
		{0xc023, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", false, bulkCBC, 16, s256, s256, 32},
		{0xc024, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", false, bulkCBC, 32, s384, s384, 48},
	}
	m := make(map[uint16]*suite, len(list))
	for i := range list {
		m[list[i].id] = &list[i]
	}
	return m
}()

// suiteName names a suite, known or not.
func suiteName(id uint16) string {
	if s := suites[id]; s != nil {
		return s.name
	}
	if n, ok := ccmSuites[id]; ok {
		return n
	}
	return fmt.Sprintf("0x%04X", id)
}

// ccmSuites are the AES-CCM suites (IANA's registry), which OpenSSL offers
// and neither Go's TLS nor golang.org/x/crypto implements: named, so that
// a connection not decrypted for its suite says which.
var ccmSuites = map[uint16]string{
	0x1304: "TLS_AES_128_CCM_SHA256",
	0x1305: "TLS_AES_128_CCM_8_SHA256",
	0xc09c: "TLS_RSA_WITH_AES_128_CCM",
	0xc09d: "TLS_RSA_WITH_AES_256_CCM",
	0xc09e: "TLS_DHE_RSA_WITH_AES_128_CCM",
	0xc09f: "TLS_DHE_RSA_WITH_AES_256_CCM",
	0xc0a0: "TLS_RSA_WITH_AES_128_CCM_8",
	0xc0a1: "TLS_RSA_WITH_AES_256_CCM_8",
	0xc0a2: "TLS_DHE_RSA_WITH_AES_128_CCM_8",
	0xc0a3: "TLS_DHE_RSA_WITH_AES_256_CCM_8",
	0xc0ac: "TLS_ECDHE_ECDSA_WITH_AES_128_CCM",
	0xc0ad: "TLS_ECDHE_ECDSA_WITH_AES_256_CCM",
	0xc0ae: "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8",
	0xc0af: "TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8",
}

var (
	errAuth    = errors.New("authentication failed")
	errTooLong = errors.New("plaintext longer than 2^14 bytes")
)

// recordCipher decrypts the records of one direction under one key. Every buffer it needs is a field,
// so opening a record allocates nothing.
type recordCipher struct {
	s     *suite
	tls13 bool
	seq   uint64
	aead  cipher.AEAD
	iv    [12]byte // TLS 1.3 and ChaCha: the full nonce mask; TLS 1.2 GCM: the 4-byte salt
	nonce [12]byte
	aad   [13]byte

	// verified: a record opened under this key: the key is right. Until
	// then every record is opened whole, so that a wrong key is found at
	// the first record as it always was.
	verified bool
	// For decrypting part of a record by its offset (xorAt): the AES block
	// of GCM or CBC, or ChaCha20's key.
	block   cipher.Block
	chacha  []byte
	ctrIV   [16]byte
	scratch [tailScan]byte // the end of the record plainLen decrypted, from plaintext offset tailOff on (-1: none)
	tailOff int
	discard [64]byte // keystream before the offset
	pad     [16]byte // one block of AES-CTR keystream, or of a CBC block decrypted

	// CBC
	cbc    cipher.BlockMode
	mac    hash.Hash
	macSum [64]byte
	etm    bool // encrypt_then_mac (RFC 7366)
}

type ivSetter interface{ SetIV([]byte) }

// setAEAD gives rc its AEAD, and what xorAt needs of the same key.
func (rc *recordCipher) setAEAD(s *suite, key []byte) error {
	if s.bulk == bulkChaCha {
		a, err := chacha20poly1305.New(key)
		rc.aead, rc.chacha = a, append([]byte(nil), key...)
		return err
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return err
	}
	rc.block = b
	rc.aead, err = cipher.NewGCM(b)
	return err
}

// newCipher13 makes a TLS 1.3 record cipher from a traffic secret.
func newCipher13(s *suite, secret []byte) (*recordCipher, error) {
	key, iv := trafficKey(s.prf, secret, s.keyLen)
	rc := &recordCipher{s: s, tls13: true}
	if err := rc.setAEAD(s, key); err != nil {
		return nil, err
	}
	copy(rc.iv[:], iv)
	return rc, nil
}

// newCiphers12 makes the client's and the server's TLS 1.2 record ciphers from the master secret.
func newCiphers12(s *suite, master, clientRandom, serverRandom []byte, etm bool) (client, server *recordCipher, err error) {
	ivLen := 4
	switch s.bulk {
	case bulkChaCha:
		ivLen = 12
	case bulkCBC:
		ivLen = 0 // explicit IVs; RFC 5246 generates no fixed IV for block ciphers
	}
	n := 2*s.macLen + 2*s.keyLen + 2*ivLen
	kb := keyBlock12(s.prf, master, clientRandom, serverRandom, n)
	cMac, kb := kb[:s.macLen], kb[s.macLen:]
	sMac, kb := kb[:s.macLen], kb[s.macLen:]
	cKey, kb := kb[:s.keyLen], kb[s.keyLen:]
	sKey, kb := kb[:s.keyLen], kb[s.keyLen:]
	cIV, sIV := kb[:ivLen], kb[ivLen:2*ivLen]
	mk := func(key, mac, iv []byte) (*recordCipher, error) {
		rc := &recordCipher{s: s, etm: etm}
		copy(rc.iv[:], iv)
		if s.bulk == bulkCBC {
			b, err := aes.NewCipher(key)
			if err != nil {
				return nil, err
			}
			var zero [16]byte
			rc.block = b
			rc.cbc = cipher.NewCBCDecrypter(b, zero[:])
			if _, ok := rc.cbc.(ivSetter); !ok {
				return nil, errors.New("CBC decrypter cannot reset its IV")
			}
			rc.mac = hmac.New(s.mac, mac)
			return rc, nil
		}
		if err := rc.setAEAD(s, key); err != nil {
			return nil, err
		}
		return rc, nil
	}
	if client, err = mk(cKey, cMac, cIV); err != nil {
		return nil, nil, err
	}
	if server, err = mk(sKey, sMac, sIV); err != nil {
		return nil, nil, err
	}
	return client, server, nil
}

// open decrypts and authenticates the body of one record sent under sequence number seq. The
// plaintext goes to dst, which must have room for len(in) bytes and either be in itself (in place) or
// not overlap it; in is never written to unless it is dst. It returns the plaintext (a part of dst)
// and the real content type.
func (rc *recordCipher) open(hdr *[5]byte, in, dst []byte, seq uint64) ([]byte, uint8, error) {
	dst = dst[:len(in)]
	switch {
	case rc.tls13:
		rc.nonce = rc.iv
		for i := 0; i < 8; i++ {
			rc.nonce[4+i] ^= byte(seq >> (56 - 8*i))
		}
		if len(in) < rc.aead.Overhead() {
			return nil, 0, errAuth
		}
		p, err := rc.aead.Open(dst[:0], rc.nonce[:], in, hdr[:])
		if err != nil {
			return nil, 0, errAuth
		}
		// TLSInnerPlaintext: content, the real type, then zero padding.
		i := len(p) - 1
		for i >= 0 && p[i] == 0 {
			i--
		}
		if i < 0 {
			return nil, 0, errAuth
		}
		if i > 1<<14 {
			return nil, 0, errTooLong
		}
		rc.verified = true
		return p[:i], p[i], nil
	case rc.aead != nil:
		ct := in
		if rc.s.bulk == bulkGCM {
			if len(in) < 8 {
				return nil, 0, errAuth
			}
			copy(rc.nonce[:4], rc.iv[:4])
			copy(rc.nonce[4:], in[:8])
			ct = in[8:]
			dst = dst[8:]
		} else {
			rc.nonce = rc.iv
			for i := 0; i < 8; i++ {
				rc.nonce[4+i] ^= byte(seq >> (56 - 8*i))
			}
		}
		if len(ct) < rc.aead.Overhead() {
			return nil, 0, errAuth
		}
		rc.setAAD(hdr, seq, len(ct)-rc.aead.Overhead())
		p, err := rc.aead.Open(dst[:0], rc.nonce[:], ct, rc.aad[:])
		if err != nil {
			return nil, 0, errAuth
		}
		if len(p) > 1<<14 {
			return nil, 0, errTooLong
		}
		rc.verified = true
		return p, hdr[0], nil
	default:
		return rc.openCBC(hdr, in, dst, seq)
	}
}

func (rc *recordCipher) setAAD(hdr *[5]byte, seq uint64, n int) {
	binary.BigEndian.PutUint64(rc.aad[:8], seq)
	rc.aad[8], rc.aad[9], rc.aad[10] = hdr[0], hdr[1], hdr[2]
	binary.BigEndian.PutUint16(rc.aad[11:], uint16(n))
}

func (rc *recordCipher) openCBC(hdr *[5]byte, in, dst []byte, seq uint64) ([]byte, uint8, error) {
	const bs = aes.BlockSize
	macLen := rc.s.macLen
	if rc.etm {
		if len(in) < 2*bs+macLen {
			return nil, 0, errAuth
		}
		data, tag := in[:len(in)-macLen], in[len(in)-macLen:]
		if !rc.checkMAC(hdr, seq, data, tag) {
			return nil, 0, errAuth
		}
		in = data
	}
	if len(in) < 2*bs || len(in)%bs != 0 {
		return nil, 0, errAuth
	}
	rc.cbc.(ivSetter).SetIV(in[:bs]) // copies the IV before an in-place decryption overwrites it
	ct := dst[bs:len(in)]
	rc.cbc.CryptBlocks(ct, in[bs:])
	pad := int(ct[len(ct)-1])
	if pad+1 > len(ct) {
		return nil, 0, errAuth
	}
	for _, b := range ct[len(ct)-1-pad:] {
		if int(b) != pad {
			return nil, 0, errAuth
		}
	}
	p := ct[:len(ct)-1-pad]
	if !rc.etm {
		if len(p) < macLen {
			return nil, 0, errAuth
		}
		tag := p[len(p)-macLen:]
		p = p[:len(p)-macLen]
		if !rc.checkMAC(hdr, seq, p, tag) {
			return nil, 0, errAuth
		}
	}
	if len(p) > 1<<14 {
		return nil, 0, errTooLong
	}
	rc.verified = true
	return p, hdr[0], nil
}

func (rc *recordCipher) checkMAC(hdr *[5]byte, seq uint64, data, tag []byte) bool {
	rc.setAAD(hdr, seq, len(data))
	rc.mac.Reset()
	rc.mac.Write(rc.aad[:])
	rc.mac.Write(data)
	sum := rc.mac.Sum(rc.macSum[:0])
	return hmac.Equal(sum, tag)
}

// The AEAD suites encrypt with a counter-mode keystream, so any range of a
// record's plaintext can be decrypted by starting the keystream at its
// offset: AES-GCM's counter block for plaintext byte i is J0+1+i/16, J0 =
// nonce||0^31||1 (NIST SP 800-38D, 96-bit nonces), and ChaCha20-Poly1305's
// block counter is 1+i/64 (RFC 8439, 2.8; block 0 makes the Poly1305 key).
// A CBC block is the block cipher's decryption of its ciphertext XORed with
// the ciphertext before it (the record's explicit IV before the first), so
// any block decrypts from the two (RFC 5246, 6.2.3.2).
// Nothing decrypted this way is authenticated: only open checks the tag
// or the MAC.

// partialOK reports whether rc can decrypt parts of records (xorAt).
func (rc *recordCipher) partialOK() bool { return rc.block != nil || rc.chacha != nil }

// sealed splits a record body of an AEAD suite into its nonce for seq and
// its ciphertext without the tag; ok is false when it is too short.
func (rc *recordCipher) sealed(in []byte, seq uint64) (ct []byte, ok bool) {
	over := rc.aead.Overhead()
	if !rc.tls13 && rc.s.bulk == bulkGCM {
		if len(in) < 8+over {
			return nil, false
		}
		copy(rc.nonce[:4], rc.iv[:4])
		copy(rc.nonce[4:], in[:8])
		return in[8 : len(in)-over], true
	}
	if len(in) < over {
		return nil, false
	}
	rc.nonce = rc.iv
	for i := 0; i < 8; i++ {
		rc.nonce[4+i] ^= byte(seq >> (56 - 8*i))
	}
	return in[:len(in)-over], true
}

// xorAt decrypts len(dst) bytes of plaintext starting at byte off of a
// record, without authenticating them, from ct as plainLen returned it: the
// ciphertext (from sealed, whose nonce it uses), or a CBC record's explicit
// IV and blocks.
func (rc *recordCipher) xorAt(ct []byte, off int, dst []byte) {
	if rc.cbc != nil {
		rc.cbcAt(ct, off, dst)
		return
	}
	src := ct[off : off+len(dst)]
	if rc.chacha != nil {
		c, err := chacha20.NewUnauthenticatedCipher(rc.chacha, rc.nonce[:])
		if err != nil {
			panic("tlsdec: chacha20 key or nonce of a wrong size") // set up by setAEAD
		}
		c.SetCounter(uint32(1 + off/64))
		if k := off % 64; k > 0 {
			c.XORKeyStream(rc.discard[:k], rc.discard[:k])
		}
		c.XORKeyStream(dst, src)
		return
	}
	copy(rc.ctrIV[:12], rc.nonce[:])
	ctr := uint32(2 + off/16)
	if len(dst) <= smallXor {
		// A frame's head or a record's tail: a few blocks, encrypted one
		// by one with the block cipher, as counter mode does. NewCTR
		// would allocate its stream and a 512-byte buffer for each, for
		// every record of a capture.
		for k := off % 16; len(dst) > 0; k = 0 {
			binary.BigEndian.PutUint32(rc.ctrIV[12:], ctr)
			rc.block.Encrypt(rc.pad[:], rc.ctrIV[:])
			n := subtle.XORBytes(dst, src, rc.pad[k:])
			dst, src = dst[n:], src[n:]
			ctr++
		}
		return
	}
	binary.BigEndian.PutUint32(rc.ctrIV[12:], ctr)
	s := cipher.NewCTR(rc.block, rc.ctrIV[:])
	if k := off % 16; k > 0 {
		s.XORKeyStream(rc.discard[:k], rc.discard[:k])
	}
	s.XORKeyStream(dst, src)
}

// cbcAt is xorAt for CBC: each block of plaintext from its ciphertext
// block and the one before, ivct starting with the IV.
func (rc *recordCipher) cbcAt(ivct []byte, off int, dst []byte) {
	const bs = aes.BlockSize
	for j, k := off/bs, off%bs; len(dst) > 0; j, k = j+1, 0 {
		rc.block.Decrypt(rc.pad[:], ivct[bs+j*bs:2*bs+j*bs])
		n := min(len(dst), bs-k)
		subtle.XORBytes(dst[:n], rc.pad[k:k+n], ivct[j*bs+k:j*bs+k+n])
		dst = dst[n:]
	}
}

// smallXor is the longest range xorAt decrypts block by block.
const smallXor = 256

// tailScan is how many bytes at the end of a TLS 1.3 record are decrypted
// to find its content type, after the zero padding.
const tailScan = 64

// tailFirst is the block of the tail decrypted first: AES's block, so that it takes one.
const tailFirst = 16

func lastNonZero(b []byte) int {
	i := len(b) - 1
	for i >= 0 && b[i] == 0 {
		i--
	}
	return i
}

// plainLen finds, without authenticating, the length of the application
// data in record body in sent under seq, leaving ct its ciphertext (sealed).
// ok is false when that takes more than a few bytes (a TLS 1.3 record whose
// padding is longer than tailScan), the record is not application data or
// is malformed: opening it whole then tells.
func (rc *recordCipher) plainLen(hdr *[5]byte, in []byte, seq uint64) (ct []byte, n int, ok bool) {
	rc.tailOff = -1
	if rc.cbc != nil {
		return rc.plainLenCBC(hdr, in)
	}
	ct, ok = rc.sealed(in, seq)
	if !ok || len(ct) == 0 {
		return nil, 0, false
	}
	if !rc.tls13 {
		return ct, len(ct), hdr[0] == typeAppData && len(ct) <= 1<<14
	}
	// The last block first, from its start in the keystream (1 to 16
	// bytes): records are seldom padded, and one block of keystream is
	// cheaper than the two an unaligned 16 bytes take, or the whole
	// tail's four or five.
	k := len(ct) - (len(ct)-1)/tailFirst*tailFirst
	tail := rc.scratch[:k]
	rc.xorAt(ct, len(ct)-k, tail)
	i := lastNonZero(tail)
	if i < 0 && k < len(ct) {
		k = min(tailScan, len(ct))
		tail = rc.scratch[:k]
		rc.xorAt(ct, len(ct)-k, tail)
		i = lastNonZero(tail)
	}
	if i < 0 || tail[i] != typeAppData {
		return nil, 0, false
	}
	n = len(ct) - k + i
	rc.tailOff = len(ct) - k
	return ct, n, n > 0 && n <= 1<<14
}

// plainLenCBC is plainLen for a CBC record: its last block, decrypted,
// ends in the padding length, and the plaintext is what comes before the
// padding and (MAC-then-encrypt) the MAC. A record whose padding is longer
// than that block, or is malformed, is left to opening it whole. ct is the
// explicit IV and the blocks, without an encrypt-then-MAC tag.
func (rc *recordCipher) plainLenCBC(hdr *[5]byte, in []byte) (ct []byte, n int, ok bool) {
	const bs = aes.BlockSize
	ct, mac := in, rc.s.macLen
	if rc.etm {
		if len(in) < mac {
			return nil, 0, false
		}
		ct, mac = in[:len(in)-mac], 0
	}
	if hdr[0] != typeAppData || len(ct) < 2*bs || len(ct)%bs != 0 {
		return nil, 0, false
	}
	last := len(ct) - 2*bs // the last block's plaintext offset
	tail := rc.scratch[:bs]
	rc.cbcAt(ct, last, tail)
	pad := int(tail[bs-1])
	if pad >= bs {
		return nil, 0, false
	}
	for _, b := range tail[bs-1-pad:] {
		if int(b) != pad {
			return nil, 0, false
		}
	}
	n = len(ct) - bs - pad - 1 - mac
	rc.tailOff = last
	return ct, n, n > 0 && n <= 1<<14
}
