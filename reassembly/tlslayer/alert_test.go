package tlslayer

import (
	"crypto/tls"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
	"github.com/kdissect/kdissect/reassembly/tlslayer/tlsdec"
)

func alerts(out *collector) []Alert {
	var as []Alert
	for _, e := range out.events {
		if a, ok := e.(*Alert); ok {
			as = append(as, *a)
		}
	}
	return as
}

// A broker that requires a client certificate refuses a client without one,
// or with one from a CA it does not trust, with a fatal alert: the layer
// names the alert and whom it refused. The TLS 1.3 client has sent a
// request by then (its handshake ends before the server's verdict); the
// alert is encrypted, the TLS 1.2 ones are in the clear.
func TestRefusedClientCertificates(t *testing.T) {
	request := []byte("an ApiVersions request")
	dn := traffic.ClientCertDN
	for _, tc := range []struct {
		name     string
		version  uint16
		withCert bool
		want     Alert
	}{
		{"TLS 1.3 without a certificate", tls.VersionTLS13, false, Alert{Code: 116, Name: "certificate_required", Offered: "none"}},
		{"TLS 1.3 with an untrusted certificate", tls.VersionTLS13, true, Alert{Code: 48, Name: "unknown_ca", Offered: "sent", DN: dn}},
		{"TLS 1.2 without a certificate", tls.VersionTLS12, false, Alert{Code: 40, Name: "handshake_failure", Offered: "none"}},
		{"TLS 1.2 with an untrusted certificate", tls.VersionTLS12, true, Alert{Code: 48, Name: "unknown_ca", Offered: "sent", DN: dn}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := traffic.RecordRefusedClientCert(tc.version, tc.withCert, request)
			if err != nil {
				t.Fatal(err)
			}
			out := run(t, rec)
			as := alerts(out)
			if len(as) != 1 {
				t.Fatalf("alerts %+v, want one", as)
			}
			tc.want.StreamOffset = as[0].StreamOffset
			if as[0] != tc.want || as[0].StreamOffset <= 0 {
				t.Errorf("alert %+v\nwant  %+v", as[0], tc.want)
			}
			if tc.version == tls.VersionTLS13 && string(out.plain[0]) != string(request) {
				t.Errorf("client plaintext %q, want the request", out.plain[0])
			}
		})
	}
}

// Only fatal alerts are reported, the first of them, and only a server's
// alert after it asked for a certificate and before it served anything
// refuses the client.
func TestAlertsReported(t *testing.T) {
	// An accepted mTLS session ends with close_notify, a warning: nothing.
	rec, err := traffic.RecordMTLS12(subjectCN(0x13, "bob"), [][2][]byte{{[]byte("req"), []byte("resp")}})
	if err != nil {
		t.Fatal(err)
	}
	l, out := feed(t, rec)
	if as := alerts(out); len(as) != 0 {
		t.Errorf("an accepted session reports %+v", as)
	}
	// TLS 1.2 has warnings: no_renegotiation ends nothing.
	l.output(tlsdec.Output{Kind: tlsdec.KindAlert, AlertLevel: 1, AlertDesc: 100, Pos: 4900})
	// The server has served data: a fatal alert now is no refusal.
	l.output(tlsdec.Output{Kind: tlsdec.KindAlert, AlertLevel: 2, AlertDesc: 80, Pos: 5000})
	l.output(tlsdec.Output{Kind: tlsdec.KindAlert, AlertLevel: 2, AlertDesc: 10, Pos: 5100})
	if as := alerts(out); len(as) != 1 || as[0] != (Alert{StreamOffset: 5000, Code: 80, Name: "internal_error"}) {
		t.Errorf("alerts %+v, want one internal_error, not refusing", as)
	}

	// A refusal before any ServerHello asked for no certificate.
	rec, err = traffic.RecordRefusedTLS12()
	if err != nil {
		t.Fatal(err)
	}
	if as := alerts(run(t, rec)); len(as) != 1 || as[0].Code != 40 || as[0].RefusedCert() || as[0].Offered != "" {
		t.Errorf("alerts %+v, want one handshake_failure, not refusing a certificate", as)
	}

	// In TLS 1.3 the level does not count: any alert but close_notify and
	// user_canceled is fatal.
	rec, err = traffic.RecordRefusedClientCert(tls.VersionTLS13, false, []byte("req"))
	if err != nil {
		t.Fatal(err)
	}
	l, out = feed(t, rec)
	out.events, l.fatal = nil, false
	for _, desc := range []uint8{0, 90, 116} {
		l.output(tlsdec.Output{Kind: tlsdec.KindAlert, FromClient: true, AlertLevel: 1, AlertDesc: desc, Pos: 7000})
	}
	if as := alerts(out); len(as) != 1 || as[0] != (Alert{StreamOffset: 7000, Code: 116, Name: "certificate_required"}) {
		t.Errorf("TLS 1.3 warning-level alerts %+v, want certificate_required from the client, not refusing", as)
	}
}
