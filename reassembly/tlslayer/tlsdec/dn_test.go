package tlsdec

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"testing"
	"time"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

func certWithSubject(t *testing.T, rdns pkix.RDNSequence) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := asn1.Marshal(rdns)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(3), RawSubject: raw,
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func atv(oid asn1.ObjectIdentifier, v any) pkix.AttributeTypeAndValue {
	return pkix.AttributeTypeAndValue{Type: oid, Value: v}
}

func TestSubjectDN(t *testing.T) {
	var (
		c     = asn1.ObjectIdentifier{2, 5, 4, 6}
		o     = asn1.ObjectIdentifier{2, 5, 4, 10}
		ou    = asn1.ObjectIdentifier{2, 5, 4, 11}
		cn    = asn1.ObjectIdentifier{2, 5, 4, 3}
		dc    = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
		email = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	)
	for _, tc := range []struct {
		rdns pkix.RDNSequence
		want string
	}{
		// Encoded order C, O, OU, CN: printed most specific first, as Java's X500Principal does.
		{pkix.RDNSequence{{atv(c, "CH")}, {atv(o, "Example Corp")}, {atv(ou, "payments")}, {atv(cn, "svc-payments")}},
			"CN=svc-payments,OU=payments,O=Example Corp,C=CH"},
		// Special characters, a leading '#' and space, a trailing space.
		{pkix.RDNSequence{{atv(cn, `a,b+c"d\e<f>g;h`)}, {atv(ou, "#x")}, {atv(ou, " y ")}},
			`OU=\ y\ ,OU=\#x,CN=a\,b\+c\"d\\e\<f\>g\;h`},
		// A multi-valued RDN, DC, and an attribute without an RFC 2253 keyword (hex of its DER value).
		{pkix.RDNSequence{{atv(dc, "com")}, {atv(dc, "example")}, {atv(cn, "bob"), atv(email, asn1.RawValue{Tag: asn1.TagIA5String, Bytes: []byte("b@x")})}},
			"CN=bob+1.2.840.113549.1.9.1=#1603624078,DC=example,DC=com"},
	} {
		got, err := SubjectDN(certWithSubject(t, tc.rdns))
		if err != nil || got != tc.want {
			t.Errorf("SubjectDN = %q, %v; want %q", got, err, tc.want)
		}
	}
	if _, err := SubjectDN([]byte{0x30, 0x03, 1, 2, 3}); err == nil {
		t.Error("no error for a broken certificate")
	}
}

// rawName encodes a subject whose values are given as (tag, bytes), unchecked: what a hostile or
// sloppy CA may sign.
func rawName(rdns ...[]rawValue) []byte {
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		for _, rdn := range rdns {
			b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) {
				for _, v := range rdn {
					b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
						b.AddASN1ObjectIdentifier(v.oid)
						b.AddASN1(v.tag, func(b *cryptobyte.Builder) { b.AddBytes([]byte(v.val)) })
					})
				}
			})
		}
	})
	return b.BytesOrPanic()
}

type rawValue struct {
	oid asn1.ObjectIdentifier
	tag cbasn1.Tag
	val string
}

// Subjects Go's x509 parser refuses but Java, and so Kafka, reads: SubjectDN must name them as
// Kafka does, not fail (the client would pass for anonymous).
func TestSubjectDNOfCertificatesGoRefuses(t *testing.T) {
	var (
		c  = asn1.ObjectIdentifier{2, 5, 4, 6}
		o  = asn1.ObjectIdentifier{2, 5, 4, 10}
		cn = asn1.ObjectIdentifier{2, 5, 4, 3}
		sn = asn1.ObjectIdentifier{2, 5, 4, 5} // serialNumber: no RFC 2253 keyword
	)
	for _, tc := range []struct {
		name      string
		rdns      [][]rawValue
		want      string
		goRefuses bool // Go's parser refuses the certificate: the case SubjectDN must not leave to it
	}{
		{"PrintableString with _", [][]rawValue{{{c, cbasn1.PrintableString, "CH"}}, {{cn, cbasn1.PrintableString, "svc_payments"}}},
			"CN=svc_payments,C=CH", true},
		{"PrintableString with a DDE formula", [][]rawValue{{{cn, cbasn1.PrintableString, "=cmd|/C!A0"}}},
			"CN==cmd|/C!A0", true},
		{"UTF8String not UTF-8", [][]rawValue{{{o, cbasn1.UTF8String, "Ex\xffmple\xc3"}}, {{cn, cbasn1.UTF8String, "bob"}}},
			"CN=bob,O=Ex\uFFFDmple\uFFFD", true},
		{"Latin-1 bytes in an IA5String", [][]rawValue{{{cn, cbasn1.IA5String, "Zo\xeb"}}}, "CN=Zoë", true},
		{"BMPString with a lone surrogate", [][]rawValue{{{cn, cbasn1.Tag(30), "\x00Z\x00o\x00\xeb\xd8\x00"}}}, "CN=Zoë\uFFFD", true},
		// Text from the wire is kept as it is (escaped where it is shown).
		{"bidi and escapes", [][]rawValue{{{cn, cbasn1.UTF8String, "\u202eadmin\u202c\x1b[2J,x"}}},
			"CN=\u202eadmin\u202c\x1b[2J\\,x", false},
		{"a value type Java writes as hex", [][]rawValue{{{cn, cbasn1.Tag(18), "123"}}}, "CN=#1203313233", false},
		{"an attribute without a keyword", [][]rawValue{{{sn, cbasn1.PrintableString, "a_b"}}}, "2.5.4.5=#1303615f62", true},
		{"an empty subject", nil, "", false},
	} {
		der := certWithRawSubject(t, rawName(tc.rdns...))
		if _, err := x509.ParseCertificate(der); (err != nil) != tc.goRefuses {
			t.Errorf("%s: Go's parser says %v, want refused %v", tc.name, err, tc.goRefuses)
		}
		got, err := SubjectDN(der)
		if err != nil || got != tc.want {
			t.Errorf("%s: SubjectDN = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// DER from which no subject can be read is an error, never a name.
func TestSubjectDNUnreadable(t *testing.T) {
	good := certWithRawSubject(t, rawName([]rawValue{{asn1.ObjectIdentifier{2, 5, 4, 3}, cbasn1.PrintableString, "bob"}}))
	subj := rawName([]rawValue{{asn1.ObjectIdentifier{2, 5, 4, 3}, cbasn1.PrintableString, "bob"}})
	at := bytes.LastIndex(good, subj) // the issuer, before it, is the same name
	if at < 0 {
		t.Fatal("subject not found in the certificate")
	}
	mangle := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b[at : at+len(subj)])
		return b
	}
	for name, der := range map[string][]byte{
		"nothing":               nil,
		"not a sequence":        {0x04, 0x00},
		"cut":                   good[:at+4],
		"an RDN not a SET":      mangle(func(s []byte) { s[2] = 0x30 }),
		"an OID not an OID":     mangle(func(s []byte) { s[6] = 0x04 }),
		"an OID's arc cut":      mangle(func(s []byte) { s[10] |= 0x80 }),
		"a length past the end": mangle(func(s []byte) { s[1] = 0x7f }),
	} {
		if dn, err := SubjectDN(der); err == nil {
			t.Errorf("%s: SubjectDN = %q, no error", name, dn)
		}
	}
}

// certWithRawSubject signs a certificate with the subject bytes as they are, which x509.CreateCertificate
// does not check.
func certWithRawSubject(t *testing.T, subject []byte) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), RawSubject: subject,
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}
