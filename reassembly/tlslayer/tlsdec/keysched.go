package tlsdec

import (
	"crypto/hkdf"
	"crypto/hmac"
	"hash"
)

// expandLabel is TLS 1.3's HKDF-Expand-Label (RFC 8446, section 7.1).
func expandLabel(h func() hash.Hash, secret []byte, label string, context []byte, length int) []byte {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full)+len(context))
	info = append(info, byte(length>>8), byte(length), byte(len(full)))
	info = append(info, full...)
	info = append(info, byte(len(context)))
	info = append(info, context...)
	out, err := hkdf.Expand(h, secret, string(info), length)
	if err != nil {
		// Only a length above 255 hash blocks fails, which no caller asks for.
		panic("tlsdec: HKDF-Expand-Label: " + err.Error())
	}
	return out
}

// deriveSecret is TLS 1.3's Derive-Secret over an already computed transcript hash.
func deriveSecret(h func() hash.Hash, secret []byte, label string, transcriptHash []byte) []byte {
	return expandLabel(h, secret, label, transcriptHash, h().Size())
}

// extract is HKDF-Extract; a nil secret stands for a string of zeros of the hash length, as the key
// schedule uses when there is no PSK or no (EC)DHE.
func extract(h func() hash.Hash, secret, salt []byte) []byte {
	if secret == nil {
		secret = make([]byte, h().Size())
	}
	out, err := hkdf.Extract(h, secret, salt)
	if err != nil {
		panic("tlsdec: HKDF-Extract: " + err.Error())
	}
	return out
}

// nextTrafficSecret is the secret after a KeyUpdate (RFC 8446, section 7.2).
func nextTrafficSecret(h func() hash.Hash, secret []byte) []byte {
	return expandLabel(h, secret, "traffic upd", nil, h().Size())
}

// trafficKey derives the AEAD key and IV of a TLS 1.3 traffic secret.
func trafficKey(h func() hash.Hash, secret []byte, keyLen int) (key, iv []byte) {
	return expandLabel(h, secret, "key", nil, keyLen), expandLabel(h, secret, "iv", nil, 12)
}

// prf12 is the TLS 1.2 PRF (RFC 5246, section 5): P_hash over label+seed.
func prf12(h func() hash.Hash, secret []byte, label string, seed []byte, n int) []byte {
	labelSeed := make([]byte, 0, len(label)+len(seed))
	labelSeed = append(labelSeed, label...)
	labelSeed = append(labelSeed, seed...)
	mac := hmac.New(h, secret)
	out := make([]byte, 0, n+mac.Size())
	mac.Write(labelSeed)
	a := mac.Sum(nil) // A(1)
	for len(out) < n {
		mac.Reset()
		mac.Write(a)
		mac.Write(labelSeed)
		out = mac.Sum(out)
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(a[:0])
	}
	return out[:n]
}

// keyBlock12 expands a TLS 1.2 master secret into the key block (RFC 5246, section 6.3): note the
// seed is server random then client random, the reverse of the master secret's.
func keyBlock12(h func() hash.Hash, master []byte, clientRandom, serverRandom []byte, n int) []byte {
	seed := make([]byte, 0, 64)
	seed = append(seed, serverRandom...)
	seed = append(seed, clientRandom...)
	return prf12(h, master, "key expansion", seed, n)
}
