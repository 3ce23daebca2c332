package tlsdec

import (
	"bytes"

	"golang.org/x/crypto/cryptobyte"
)

// helloRetryRandom is the ServerHello.random that marks a HelloRetryRequest (RFC 8446, section 4.1.3):
// SHA-256 of "HelloRetryRequest".
var helloRetryRandom = []byte{
	0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
	0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
}

const (
	extServerName       = 0
	extALPN             = 16
	extEncryptThenMAC   = 22
	extSessionTicket    = 35
	extPreSharedKey     = 41
	extEarlyData        = 42
	extSupportedVersion = 43
)

// clientHello is what a connection keeps of its ClientHello until its keys are set up: it may
// wait for the ServerHello as long as the connection lasts, so it holds no more than that.
type clientHello struct {
	random    [32]byte
	sessionID []byte
	ticket    []byte // TLS 1.2 session ticket offered for resumption
	earlyData bool
	etm       bool
}

// parseClientHello reads the body of a ClientHello (after the 4-byte handshake header), and the
// server name (SNI) and protocols (ALPN) it names.
func parseClientHello(body []byte) (_ *clientHello, sni string, alpn []string, _ bool) {
	s := cryptobyte.String(body)
	var ch clientHello
	var vers uint16
	var random, sid, suites, comp cryptobyte.String
	if !s.ReadUint16(&vers) || !s.ReadBytes((*[]byte)(&random), 32) ||
		!s.ReadUint8LengthPrefixed(&sid) || !s.ReadUint16LengthPrefixed(&suites) ||
		!s.ReadUint8LengthPrefixed(&comp) {
		return nil, "", nil, false
	}
	copy(ch.random[:], random)
	ch.sessionID = bytes.Clone(sid)
	ok := extensions(&s, func(typ uint16, data cryptobyte.String) bool {
		switch typ {
		case extServerName:
			var list cryptobyte.String
			if !data.ReadUint16LengthPrefixed(&list) {
				return false
			}
			for !list.Empty() {
				var nameType uint8
				var name cryptobyte.String
				if !list.ReadUint8(&nameType) || !list.ReadUint16LengthPrefixed(&name) {
					return false
				}
				if nameType == 0 && sni == "" {
					sni = string(name)
				}
			}
		case extALPN:
			var list cryptobyte.String
			if !data.ReadUint16LengthPrefixed(&list) {
				return false
			}
			for !list.Empty() {
				var proto cryptobyte.String
				if !list.ReadUint8LengthPrefixed(&proto) {
					return false
				}
				alpn = append(alpn, string(proto))
			}
		case extEarlyData:
			ch.earlyData = true
		case extEncryptThenMAC:
			ch.etm = true
		case extSessionTicket:
			ch.ticket = bytes.Clone(data)
		}
		return true
	})
	if !ok {
		return nil, "", nil, false
	}
	return &ch, sni, alpn, true
}

// extensions calls fn with each extension of a hello's optional extension
// block (absent before TLS 1.0 extensions: s is then empty). It reports
// false when the block or fn finds it malformed.
func extensions(s *cryptobyte.String, fn func(typ uint16, data cryptobyte.String) bool) bool {
	if s.Empty() {
		return true
	}
	var exts cryptobyte.String
	if !s.ReadUint16LengthPrefixed(&exts) {
		return false
	}
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) || !fn(typ, data) {
			return false
		}
	}
	return true
}

type serverHello struct {
	version   uint16 // negotiated: supported_versions if present, else legacy_version
	random    [32]byte
	sessionID []byte
	suite     uint16
	hrr       bool
	psk       bool
	etm       bool
}

func parseServerHello(body []byte) (*serverHello, bool) {
	s := cryptobyte.String(body)
	var sh serverHello
	var random, sid cryptobyte.String
	var comp uint8
	if !s.ReadUint16(&sh.version) || !s.ReadBytes((*[]byte)(&random), 32) ||
		!s.ReadUint8LengthPrefixed(&sid) || !s.ReadUint16(&sh.suite) || !s.ReadUint8(&comp) {
		return nil, false
	}
	copy(sh.random[:], random)
	sh.hrr = bytes.Equal(random, helloRetryRandom)
	sh.sessionID = bytes.Clone(sid)
	ok := extensions(&s, func(typ uint16, data cryptobyte.String) bool {
		switch typ {
		case extSupportedVersion:
			return data.ReadUint16(&sh.version)
		case extPreSharedKey:
			sh.psk = true
		case extEncryptThenMAC:
			sh.etm = true
		}
		return true
	})
	if !ok {
		return nil, false
	}
	return &sh, true
}

// parseCertificate returns the DER certificates of a Certificate message body; TLS 1.3 adds a
// request context before the list and extensions after each certificate.
func parseCertificate(body []byte, tls13 bool) ([][]byte, bool) {
	s := cryptobyte.String(body)
	if tls13 {
		var ctx cryptobyte.String
		if !s.ReadUint8LengthPrefixed(&ctx) {
			return nil, false
		}
	}
	var list cryptobyte.String
	if !s.ReadUint24LengthPrefixed(&list) {
		return nil, false
	}
	var certs [][]byte
	for !list.Empty() {
		var cert cryptobyte.String
		if !list.ReadUint24LengthPrefixed(&cert) {
			return nil, false
		}
		certs = append(certs, bytes.Clone(cert))
		if tls13 {
			var exts cryptobyte.String
			if !list.ReadUint16LengthPrefixed(&exts) {
				return nil, false
			}
		}
	}
	return certs, true
}

// parseTicket12 returns the ticket of a TLS 1.2 NewSessionTicket (RFC 5077).
func parseTicket12(body []byte) ([]byte, bool) {
	s := cryptobyte.String(body)
	var lifetime uint32
	var ticket cryptobyte.String
	if !s.ReadUint32(&lifetime) || !s.ReadUint16LengthPrefixed(&ticket) || len(ticket) == 0 {
		return nil, false
	}
	return bytes.Clone(ticket), true
}
