package render

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/filter"
)

// Wire text reaches the terminal escaped, also between quotes; each kind
// of occurrence is written as tshark's columns write it.
func TestFieldsValueText(t *testing.T) {
	p := NewFieldsPrinter(nil, nil, FieldsOptions{}, false)
	if got := string(p.quoted(nil, "evil\x1b[2J\tname\n")); strings.ContainsAny(got, "\x1b\t\n") {
		t.Errorf("unquoted: %q holds a raw control character", got)
	}
	q := NewFieldsPrinter(nil, nil, FieldsOptions{Quote: '"'}, false)
	if got, want := string(q.quoted(nil, `say "hi" \ `)), `"say \"hi\" \\ "`; got != want {
		t.Errorf("quoted: %s, want %s", got, want)
	}
	when := time.Date(2026, 11, 29, 18, 24, 47, 883450000, time.UTC)
	for _, c := range []struct {
		v    filter.Value
		want string
	}{
		{filter.Int(30, "CreateAcls"), "30"},
		{filter.Bool(true), "1"},
		{filter.Bool(false), "0"},
		{filter.String("User:alice"), "User:alice"},
		{filter.Value{Kind: filter.KindBytes, Bytes: []byte("hi")}, "6869"},
		{filter.Time(when), "2026-11-29T18:24:47.88345Z"},
		{filter.Addr(netip.MustParseAddrPort("192.0.2.10:50500")), "192.0.2.10:50500"},
		{filter.Addr(netip.MustParseAddrPort("[2001:db8::1]:9092")), "[2001:db8::1]:9092"},
		{filter.Addr(netip.AddrPortFrom(netip.MustParseAddr("192.0.2.10"), 0)), "192.0.2.10"},
		{filter.Value{}, ""},
	} {
		if got := valueText(&c.v); got != c.want {
			t.Errorf("%+v: %q, want %q", c.v, got, c.want)
		}
	}
}

func TestParseFieldsOption(t *testing.T) {
	var o FieldsOptions
	for _, opt := range []string{"header=y", "separator=/s", "aggregator=;", "occurrence=l", "quote=s"} {
		if err := ParseFieldsOption(&o, opt); err != nil {
			t.Fatalf("%s: %v", opt, err)
		}
	}
	if want := (FieldsOptions{Header: true, Separator: " ", Aggregator: ";", Occurrence: -1, Quote: '\''}); o != want {
		t.Errorf("%+v, want %+v", o, want)
	}
	for _, bad := range []string{"header=yes", "separator=ab", "separator=\x01", "occurrence=-2", "quote=x", "nosuch=1", "header"} {
		if err := ParseFieldsOption(&o, bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
