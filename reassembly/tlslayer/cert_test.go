package tlslayer

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer/tlsdec"
)

// collector is a LayerOutput that keeps the events and the plaintext.
type collector struct {
	events []any
	plain  [2][]byte
}

func (c *collector) Data(fromClient bool, off int64, data []byte, pkt int, ts time.Time) {
	d := 1
	if fromClient {
		d = 0
	}
	c.plain[d] = append(c.plain[d], data...)
}
func (c *collector) Gap(bool, int64, int64, time.Time)     {}
func (c *collector) Event(_ bool, _ time.Time, v any)      { c.events = append(c.events, v) }
func (c *collector) Hold(bool, int64, int, time.Time) bool { return true }

// subjectCN is a Name of one RDN, CN with the given tag and bytes.
func subjectCN(tag cbasn1.Tag, cn string) []byte {
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
				b.AddASN1ObjectIdentifier([]int{2, 5, 4, 3})
				b.AddASN1(tag, func(b *cryptobyte.Builder) { b.AddBytes([]byte(cn)) })
			})
		})
	})
	return b.BytesOrPanic()
}

// run feeds a recorded connection through the layer, a chunk a packet.
func run(t *testing.T, r *traffic.RawTLS) *collector {
	t.Helper()
	_, out := feed(t, r)
	return out
}

// feed is run, which also returns the layer.
func feed(t *testing.T, r *traffic.RawTLS) (*layer, *collector) {
	t.Helper()
	keys, err := tlsdec.ParseKeyLog(bytes.NewReader(r.KeyLog))
	if err != nil {
		t.Fatal(err)
	}
	l, _ := NewFactory(keys)(reassembly.Flow{}, r.Chunks[0].Data).(*layer)
	if l == nil {
		t.Fatal("no layer for the ClientHello")
	}
	out := &collector{}
	var off [2]int64
	for i, ch := range r.Chunks {
		d := 1
		if ch.FromClient {
			d = 0
		}
		l.Feed(ch.FromClient, off[d], ch.Data, i+1, time.Unix(int64(i), 0), out)
		off[d] += int64(len(ch.Data))
	}
	l.End("fin", time.Unix(100, 0), out)
	return l, out
}

// A client certificate Go's x509 refuses is still named by its subject; one
// whose subject cannot be read is reported, and its client is unreadable,
// not anonymous. The capture is a real TLS 1.2 mTLS session whose
// certificate, sent in the clear, is swapped for the hostile one.
func TestClientCertificatesGoRefuses(t *testing.T) {
	const cn = "svc-payments"
	template := subjectCN(cbasn1.PrintableString, cn)
	request, response := []byte("kafka request bytes"), []byte("kafka response")
	for _, tc := range []struct {
		name    string
		subject []byte // same length as template
		dn      string // "" for unreadable
	}{
		{"as signed", template, "CN=svc-payments"},
		{"PrintableString with _", subjectCN(cbasn1.PrintableString, "svc_payments"), "CN=svc_payments"},
		{"PrintableString with a DDE formula", subjectCN(cbasn1.PrintableString, "=cmd|/C!A0xx"), "CN==cmd|/C!A0xx"},
		{"UTF8String not UTF-8", subjectCN(cbasn1.UTF8String, "\xffvc\u202epay\xc3zz"), "CN=\ufffdvc\u202epay\ufffdzz"},
		{"an RDN not a SET", append([]byte{0x30, template[1], 0x04}, template[3:]...), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := traffic.RecordMTLS12(template, [][2][]byte{{request, response}})
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.subject) != len(template) {
				t.Fatalf("subject of %d bytes, template %d", len(tc.subject), len(template))
			}
			der := bytes.Clone(rec.ClientCertDER)
			at := bytes.LastIndex(der, template) // the issuer (the CA) comes before
			copy(der[at:], tc.subject)
			if err := rec.ReplaceClientCert(der); err != nil {
				t.Fatal(err)
			}
			out := run(t, rec)
			if !bytes.Equal(out.plain[0], request) || !bytes.Equal(out.plain[1], response) {
				t.Fatalf("plaintext %q / %q: the session was not decrypted", out.plain[0], out.plain[1])
			}
			var certs []*ClientCert
			var problems []*Problem
			for _, e := range out.events {
				switch v := e.(type) {
				case *ClientCert:
					certs = append(certs, v)
				case *Problem:
					problems = append(problems, v)
				}
			}
			if len(certs) != 1 {
				t.Fatalf("%d ClientCert events", len(certs))
			}
			if tc.dn != "" {
				if *certs[0] != (ClientCert{DN: tc.dn}) || len(problems) != 0 {
					t.Errorf("ClientCert %+v, problems %+v; want DN %q", certs[0], problems, tc.dn)
				}
				return
			}
			if *certs[0] != (ClientCert{Unreadable: true}) {
				t.Errorf("ClientCert %+v, want Unreadable", certs[0])
			}
			if len(problems) != 1 || problems[0].Kind != ProblemUnreadableCert || problems[0].StreamOffset <= 0 {
				t.Errorf("problems %+v, want one %s", problems, ProblemUnreadableCert)
			}
		})
	}
}

// A Certificate message that does not parse may have named anyone: tlsdec
// reports it, and the client is unreadable, not anonymous.
func TestMalformedCertificateMessage(t *testing.T) {
	rec, err := traffic.RecordMTLS12(subjectCN(cbasn1.PrintableString, "bob"), [][2][]byte{{[]byte("req"), []byte("resp")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range rec.Chunks {
		if i := bytes.Index(ch.Data, rec.ClientCertDER); ch.FromClient && i >= 3 {
			ch.Data[i-1]++ // the certificate's 24-bit length now runs past its list
		}
	}
	out := run(t, rec)
	var kinds []string
	var cert *ClientCert
	for _, e := range out.events {
		switch v := e.(type) {
		case *ClientCert:
			cert = v
		case *Problem:
			kinds = append(kinds, v.Kind)
		}
	}
	if cert == nil || *cert != (ClientCert{Unreadable: true}) || len(kinds) == 0 || kinds[0] != "malformed_handshake" {
		t.Errorf("ClientCert %+v, problems %q", cert, kinds)
	}
}
