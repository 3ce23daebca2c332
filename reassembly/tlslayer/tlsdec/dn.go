package tlsdec

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/crypto/cryptobyte"
	"golang.org/x/crypto/cryptobyte/asn1"
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

// errNoSubject is what SubjectDN says of bytes from which no subject can be read.
var errNoSubject = errors.New("no subject can be read from the certificate's DER")

// SubjectDN returns the subject of a DER certificate as an RFC 2253 distinguished name, the way
// Kafka names an mTLS client: the RDNs in reverse order of the encoding (most specific first), e.g.
// "CN=svc-payments,OU=payments,O=Example Corp,L=Zurich,C=CH".
//
// The subject is read from the DER itself, not through crypto/x509: Go refuses certificates that
// Java accepts (a PrintableString holding '_' or '|', a UTF8String that is not UTF-8, an extension
// it finds malformed), and Kafka names such a client all the same. Only the structure up to the
// subject must be DER; the values are decoded as Java does (UTF8String as UTF-8 with U+FFFD for
// bad bytes, PrintableString, T61String, IA5String and GeneralString byte by byte as Latin-1,
// BMPString as UTF-16), other value types, and every value of an attribute without a keyword, as #
// and the hex of their DER. The result is text from the wire: it may hold any character, and is escaped where
// it is shown.
func SubjectDN(der []byte) (string, error) {
	s := cryptobyte.String(der)
	var cert, tbs, subject cryptobyte.String
	if !s.ReadASN1(&cert, asn1.SEQUENCE) || !cert.ReadASN1(&tbs, asn1.SEQUENCE) ||
		!tbs.SkipOptionalASN1(asn1.Tag(0).Constructed().ContextSpecific()) || // version
		!tbs.SkipASN1(asn1.INTEGER) || // serialNumber
		!tbs.SkipASN1(asn1.SEQUENCE) || // signature
		!tbs.SkipASN1(asn1.SEQUENCE) || // issuer
		!tbs.SkipASN1(asn1.SEQUENCE) || // validity
		!tbs.ReadASN1(&subject, asn1.SEQUENCE) {
		return "", errNoSubject
	}
	var rdns []cryptobyte.String
	for !subject.Empty() {
		var set cryptobyte.String
		if !subject.ReadASN1(&set, asn1.SET) {
			return "", errors.New("the certificate's subject is not a sequence of RDN sets")
		}
		rdns = append(rdns, set)
	}
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		if i != len(rdns)-1 {
			b.WriteByte(',')
		}
		set := rdns[i]
		if set.Empty() {
			return "", errors.New("the certificate's subject has an empty RDN")
		}
		for j := 0; !set.Empty(); j++ {
			var atv, oidBytes, value cryptobyte.String
			var tag asn1.Tag
			if !set.ReadASN1(&atv, asn1.SEQUENCE) || !atv.ReadASN1(&oidBytes, asn1.OBJECT_IDENTIFIER) ||
				!atv.ReadAnyASN1Element(&value, &tag) {
				return "", errors.New("the certificate's subject has a malformed attribute")
			}
			oid, ok := dottedOID(oidBytes)
			if !ok {
				return "", errors.New("the certificate's subject has a malformed attribute type")
			}
			if j > 0 {
				b.WriteByte('+')
			}
			kw, ok := rfc2253Keywords[oid]
			if !ok {
				kw = oid
			} else if text, ok := decodeDNString(value, tag); ok {
				b.WriteString(kw)
				b.WriteByte('=')
				b.WriteString(escapeDNValue(text))
				continue
			}
			b.WriteString(kw)
			b.WriteString("=#")
			b.WriteString(hex.EncodeToString(value))
		}
	}
	return b.String(), nil
}

// dottedOID writes the content of an OBJECT IDENTIFIER in dotted form. Arcs beyond 64 bits are not
// read (no attribute type has one).
func dottedOID(b []byte) (string, bool) {
	var out strings.Builder
	var v uint64
	first, started := true, false
	for i, c := range b {
		if !started && c == 0x80 {
			return "", false // a padded arc is not DER
		}
		started = true
		if v > (1<<64-1)>>7 {
			return "", false
		}
		v = v<<7 | uint64(c&0x7f)
		if c&0x80 != 0 {
			if i == len(b)-1 {
				return "", false // the last arc is cut
			}
			continue
		}
		if first {
			// The first arc packs two: 40*X+Y, X at most 2.
			x := min(v/40, 2)
			out.WriteString(strconv.FormatUint(x, 10))
			out.WriteByte('.')
			out.WriteString(strconv.FormatUint(v-40*x, 10))
			first = false
		} else {
			out.WriteByte('.')
			out.WriteString(strconv.FormatUint(v, 10))
		}
		v, started = 0, false
	}
	return out.String(), !first
}

// decodeDNString decodes an attribute value of a string type that Java's X500Principal writes as a
// string in RFC 2253 form; ok is false for the other types, written as hex.
func decodeDNString(elem cryptobyte.String, tag asn1.Tag) (string, bool) {
	var content cryptobyte.String
	if !elem.ReadASN1(&content, tag) {
		return "", false
	}
	switch tag {
	case asn1.UTF8String:
		return strings.ToValidUTF8(string(content), "\uFFFD"), true
	case asn1.PrintableString, asn1.T61String, asn1.IA5String, asn1.GeneralString:
		if isASCII(content) {
			return string(content), true
		}
		var b strings.Builder
		for _, c := range content {
			b.WriteRune(rune(c)) // Latin-1: each byte is the code point
		}
		return b.String(), true
	case asn1.Tag(30): // BMPString
		units := make([]uint16, 0, len(content)/2)
		for i := 0; i+1 < len(content); i += 2 {
			units = append(units, uint16(content[i])<<8|uint16(content[i+1]))
		}
		var b strings.Builder
		for _, r := range utf16.Decode(units) {
			b.WriteRune(r)
		}
		if len(content)%2 == 1 {
			b.WriteRune(utf8.RuneError)
		}
		return b.String(), true
	}
	return "", false
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// escapeDNValue escapes as RFC 2253 section 2.4 asks: the special characters, a leading '#' or space
// and a trailing space.
func escapeDNValue(s string) string {
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
