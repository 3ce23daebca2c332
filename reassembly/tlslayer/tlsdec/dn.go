package tlsdec

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"strings"
	"unicode/utf8"
)

// rfc2253Keywords are the attribute names Java's X500Principal.getName() (RFC 2253 form, what Kafka's
// default principal builder prints) uses; any other attribute is written as its OID and the hex of
// its DER value.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.9":                    "STREET",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// rdnSET and rawATV read a Name keeping each value's own encoding, which the hex form of an attribute
// without a keyword shows as it was (an IA5String stays one).
type rawATV struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

type rdnSET []rawATV

// SubjectDN returns the subject of a DER certificate as an RFC 2253 distinguished name, the way
// Kafka names an mTLS client: the RDNs in reverse order of the encoding (most specific first), e.g.
// "CN=svc-payments,OU=payments,O=Example Corp,L=Zurich,C=CH".
func SubjectDN(der []byte) (string, error) {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return "", err
	}
	var rdns []rdnSET
	rest, err := asn1.Unmarshal(cert.RawSubject, &rdns)
	if err != nil {
		return "", err
	}
	if len(rest) != 0 {
		return "", errors.New("trailing bytes after the certificate subject")
	}
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		if i != len(rdns)-1 {
			b.WriteByte(',')
		}
		for j, atv := range rdns[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			oid := atv.Type.String()
			var s string
			if kw, ok := rfc2253Keywords[oid]; ok {
				if _, err := asn1.Unmarshal(atv.Value.FullBytes, &s); err == nil {
					b.WriteString(kw)
					b.WriteByte('=')
					b.WriteString(escapeDNValue(s))
					continue
				}
			}
			b.WriteString(oid)
			b.WriteString("=#")
			b.WriteString(hex.EncodeToString(atv.Value.FullBytes))
		}
	}
	return b.String(), nil
}

// escapeDNValue escapes as RFC 2253 section 2.4 asks: the special characters, a leading '#' or space
// and a trailing space.
func escapeDNValue(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case strings.IndexByte(",+\"\\<>;", ch) >= 0,
			i == 0 && (ch == '#' || ch == ' '),
			i == len(s)-1 && ch == ' ':
			b.WriteByte('\\')
		}
		b.WriteByte(ch)
	}
	return b.String()
}
