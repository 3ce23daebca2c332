package tlsdec

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"testing"
	"time"
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
