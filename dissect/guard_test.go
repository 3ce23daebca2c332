package dissect

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// saslAuthFrame is a SaslAuthenticate v1 request of AuthBytes tok whose
// length prefix says n, at key and version ver.
func saslAuthFrame(key, ver int16, n int32, tok string) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(ver))
	b = binary.BigEndian.AppendUint32(b, 2)
	b = binary.BigEndian.AppendUint16(b, 1)
	b = append(b, 'x')
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = append(b, tok...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// A damaged SaslAuthenticate (a lying length, a version that reads it
// as another layout) shows its PLAIN password nowhere, not in its
// trailing bytes nor in those no node accounts for; the same frames of a
// connection that chose SASL with a flipped API key neither. With
// ShowSecrets they are as on the wire.
func TestDamagedSASLHidesThePassword(t *testing.T) {
	tok := "\x00admin\x00" + samplePassword
	for _, c := range []struct {
		name  string
		frame []byte
		o     Options
	}{
		{"a length past the frame", saslAuthFrame(36, 1, 100, tok), Options{Mechanism: "PLAIN"}},
		{"a length short of the token", saslAuthFrame(36, 1, 5, tok), Options{Mechanism: "PLAIN"}},
		{"v3, read as flexible v2", saslAuthFrame(36, 3, int32(len(tok)), tok), Options{Mechanism: "PLAIN"}},
		{"an unknown API key on a SASL connection", saslAuthFrame(236, 1, int32(len(tok)), tok), Options{SASL: true}},
		{"another API while authenticating", saslAuthFrame(37, 1, int32(len(tok)), tok), Options{Authenticating: true}},
	} {
		for _, show := range []bool{false, true} {
			o := c.o
			o.Direction, o.ShowSecrets = Request, show
			m := saslReg.Decode(c.frame, o)
			if len(m.Problems) == 0 {
				t.Fatalf("%s: no problem", c.name)
			}
			out := AppendText(nil, m.Tree)
			out = append(out, AppendJSON(nil, m)...)
			out = append(out, AppendHexDump(nil, m.Raw, m.Tree)...)
			out = append(out, m.Summary...)
			pw := []byte(samplePassword)
			if show {
				// the byte layout at least shows it as it is
				if !bytes.Contains(out, []byte("hunter")) {
					t.Errorf("%s --show-secrets: the password is not shown:\n%s", c.name, out)
				}
				continue
			}
			for _, needle := range [][]byte{pw, []byte(hex.EncodeToString(pw)), []byte("hunter"), []byte("68 75 6e 74")} {
				if bytes.Contains(out, needle) {
					t.Errorf("%s: %q shown:\n%s", c.name, needle, out)
					break
				}
			}
		}
	}
	// A frame cut short in its header is no sign of a token: its client
	// id stays readable.
	m := saslReg.Decode(saslAuthFrame(3, 1, 0, "")[:14], Options{Direction: Request, SASL: true})
	if got := string(AppendText(nil, m.Tree)); bytes.Contains([]byte(got), []byte("redacted")) {
		t.Errorf("a cut Metadata request is hidden:\n%s", got)
	}
}
