package tlsdec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"

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
	return fmt.Sprintf("0x%04X", id)
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

	// CBC
	cbc    cipher.BlockMode
	mac    hash.Hash
	macSum [64]byte
	etm    bool // encrypt_then_mac (RFC 7366)
}

type ivSetter interface{ SetIV([]byte) }

func newAEAD(s *suite, key []byte) (cipher.AEAD, error) {
	if s.bulk == bulkChaCha {
		return chacha20poly1305.New(key)
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// newCipher13 makes a TLS 1.3 record cipher from a traffic secret.
func newCipher13(s *suite, secret []byte) (*recordCipher, error) {
	key, iv := trafficKey(s.prf, secret, s.keyLen)
	a, err := newAEAD(s, key)
	if err != nil {
		return nil, err
	}
	rc := &recordCipher{s: s, tls13: true, aead: a}
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
			rc.cbc = cipher.NewCBCDecrypter(b, zero[:])
			if _, ok := rc.cbc.(ivSetter); !ok {
				return nil, errors.New("CBC decrypter cannot reset its IV")
			}
			rc.mac = hmac.New(s.mac, mac)
			return rc, nil
		}
		a, err := newAEAD(s, key)
		if err != nil {
			return nil, err
		}
		rc.aead = a
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
