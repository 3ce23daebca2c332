package tlsdec

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// Go's crypto/tls does not send 0-RTT data, so this TLS 1.3 PSK connection with early data is built
// here, sealed with crypto/cipher under made-up traffic secrets.
type synth13 struct {
	random         [32]byte
	secrets        map[string][]byte
	seqs           map[string]uint64
	client, server []byte
}

func newSynth13() *synth13 {
	x := &synth13{secrets: map[string][]byte{}, seqs: map[string]uint64{}}
	for i := range x.random {
		x.random[i] = byte(200 + i)
	}
	for i, label := range []string{"CLIENT_EARLY_TRAFFIC_SECRET", "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
		"SERVER_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0"} {
		x.secrets[label] = bytes.Repeat([]byte{byte(i + 1)}, 32)
	}
	return x
}

func (x *synth13) seal(fromClient bool, label string, typ byte, p []byte) {
	key, iv := trafficKey(sha256.New, x.secrets[label], 16)
	b, _ := aes.NewCipher(key)
	g, _ := cipher.NewGCM(b)
	seq := x.seqs[label]
	x.seqs[label]++
	for i := 0; i < 8; i++ {
		iv[4+i] ^= byte(seq >> (56 - 8*i))
	}
	inner := append(bytes.Clone(p), typ)
	n := len(inner) + g.Overhead()
	hdr := []byte{typeAppData, 3, 3, byte(n >> 8), byte(n)}
	r := g.Seal(hdr, iv, inner, hdr)
	if fromClient {
		x.client = append(x.client, r...)
	} else {
		x.server = append(x.server, r...)
	}
}

func (x *synth13) keyLog(skip string) string {
	var b strings.Builder
	for label, s := range x.secrets {
		if label != skip {
			b.WriteString(label + " " + hex.EncodeToString(x.random[:]) + " " + hex.EncodeToString(s) + "\n")
		}
	}
	return b.String()
}

func TestEarlyData(t *testing.T) {
	for _, accepted := range []bool{true, false} {
		x := newSynth13()
		ch := append([]byte{3, 3}, x.random[:]...)
		ch = append(ch, 0, 0, 2, 0x13, 0x01, 1, 0, 0, 4, 0, extEarlyData, 0, 0)
		x.client = rec(typeHandshake, 0x0301, handshakeMsg(1, ch))
		sh := append([]byte{3, 3}, bytes.Repeat([]byte{9}, 32)...)
		sh = append(sh, 0, 0x13, 0x01, 0, 0, 12, 0, extSupportedVersion, 0, 2, 3, 4, 0, extPreSharedKey, 0, 2, 0, 0)
		x.server = rec(typeHandshake, 0x0303, handshakeMsg(2, sh))

		early1, early2 := payload(1, 300), payload(2, 5000)
		x.seal(true, "CLIENT_EARLY_TRAFFIC_SECRET", typeAppData, early1)
		x.seal(true, "CLIENT_EARLY_TRAFFIC_SECRET", typeAppData, early2)
		ee := []byte{0, 0}
		if accepted {
			x.seal(true, "CLIENT_EARLY_TRAFFIC_SECRET", typeHandshake, handshakeMsg(5, nil)) // EndOfEarlyData
			ee = []byte{0, 4, 0, extEarlyData, 0, 0}
		}
		x.seal(false, "SERVER_HANDSHAKE_TRAFFIC_SECRET", typeHandshake,
			append(handshakeMsg(8, ee), handshakeMsg(20, make([]byte, 32))...))
		x.seal(true, "CLIENT_HANDSHAKE_TRAFFIC_SECRET", typeHandshake, handshakeMsg(20, make([]byte, 32)))
		app, reply := payload(3, 2000), payload(4, 700)
		x.seal(true, "CLIENT_TRAFFIC_SECRET_0", typeAppData, app)
		x.seal(false, "SERVER_TRAFFIC_SECRET_0", typeAppData, reply)

		cp := &capture{client: x.client, server: x.server, sent: app, replied: reply}
		keys := x.keyLog("CLIENT_EARLY_TRAFFIC_SECRET")
		if accepted {
			cp.sent = append(append(bytes.Clone(early1), early2...), app...)
			keys = x.keyLog("")
		}
		info := decryptAll(t, cp, keys)
		if !info.Resumed || !info.Decrypted || info.Version != "1.3" {
			t.Errorf("accepted %v: info %+v", accepted, info)
		}
	}
}
