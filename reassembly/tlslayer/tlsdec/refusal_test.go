package tlsdec

import (
	"bytes"
	"crypto/tls"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

// feedRaw feeds a recorded connection, chunk by chunk, without End.
func feedRaw(c *Conn, r *traffic.RawTLS, col *collector) {
	for _, ch := range r.Chunks {
		c.Feed(ch.FromClient, ch.Data, col.out)
	}
}

// A TLS 1.2 handshake stays in the clear up to ChangeCipherSpec: without
// keys, a server's refusal of the client's certificate is seen, and the
// session says it carried nothing, so that no one looks for keys to read
// it. Its report waits for the refusal, or for the first application data.
func TestRefusalAfterServerHello(t *testing.T) {
	refused12, err := traffic.RecordRefusedClientCert(tls.VersionTLS12, true, []byte("req"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(nil)
	var col collector
	feedRaw(c, refused12, &col)
	if col.sessions != 0 {
		t.Errorf("the session was reported before the end: %+v", c.Info())
	}
	c.End(col.out)
	want := "the server refused the client certificate: fatal alert unknown_ca (48)"
	if info := c.Info(); col.sessions != 1 || !info.Refused || info.Reason != want || !info.CertRequested || info.Decrypted {
		t.Errorf("sessions %d, info %+v; want refused, %q", col.sessions, info, want)
	}

	// With keys the session is reported at once, decrypted: the refusal is
	// the layer's alert to report.
	kl, _ := ParseKeyLog(bytes.NewReader(refused12.KeyLog))
	c, col = NewConn(kl), collector{}
	feedRaw(c, refused12, &col)
	if info := c.Info(); col.sessions != 1 || info.Refused || !info.Decrypted || len(col.alerts) == 0 || col.alerts[0].AlertDesc != 48 {
		t.Errorf("with keys: sessions %d, alerts %+v, info %+v", col.sessions, col.alerts, info)
	}

	// An accepted session without keys is reported with its first
	// application data record, not refused.
	accepted, err := traffic.RecordMTLS12(nil, [][2][]byte{{[]byte("request"), []byte("response")}})
	if err != nil {
		t.Fatal(err)
	}
	c, col = NewConn(nil), collector{}
	feedRaw(c, accepted, &col)
	if info := c.Info(); col.sessions != 1 || info.Refused || !strings.HasPrefix(info.Reason, "no key for client random") {
		t.Errorf("accepted, no keys: sessions %d before the end, info %+v", col.sessions, info)
	}
	c.End(col.out)
	if col.sessions != 1 {
		t.Errorf("accepted, no keys: %d sessions", col.sessions)
	}

	// TLS 1.3 encrypts the refusal: without keys nothing says it.
	refused13, err := traffic.RecordRefusedClientCert(tls.VersionTLS13, false, []byte("req"))
	if err != nil {
		t.Fatal(err)
	}
	c, col = NewConn(nil), collector{}
	feedRaw(c, refused13, &col)
	c.End(col.out)
	if info := c.Info(); col.sessions != 1 || info.Refused || len(col.alerts) != 0 {
		t.Errorf("TLS 1.3 without keys: sessions %d, alerts %+v, info %+v", col.sessions, col.alerts, info)
	}
}

// A TLS 1.3 client that rejects the server's certificate may send its
// alert before it encrypts anything (OpenSSL does): the client never sent
// a record that may carry data, so the session was refused, with or
// without the server's secrets, which are all such a client logs.
func TestTLS13ClientRefusalInTheClear(t *testing.T) {
	rec, err := traffic.RecordRefusedClientCert(tls.VersionTLS13, false, []byte("req"))
	if err != nil {
		t.Fatal(err)
	}
	var serverOnly []string
	for _, l := range strings.Split(string(rec.KeyLog), "\n") {
		if strings.HasPrefix(l, "SERVER_HANDSHAKE_TRAFFIC_SECRET ") {
			serverOnly = append(serverOnly, l)
		}
	}
	partial, _ := ParseKeyLog(strings.NewReader(strings.Join(serverOnly, "\n") + "\n"))
	alert := []byte{typeAlert, 3, 3, 0, 2, alertFatal, 48}
	for _, tc := range []struct {
		name   string
		keys   *KeyLog
		client []byte // what the client sends after the server's flight
		want   string // the reason; refused unless it is ""
	}{
		{"no keys, alert", nil, alert, "the client refused the handshake: fatal alert unknown_ca (48)"},
		{"server secrets only, alert", partial, alert, "the client refused the handshake: fatal alert unknown_ca (48)"},
		{"no keys, the client's flight", nil, nil, ""},
	} {
		c := NewConn(tc.keys)
		var col collector
		client := tc.client
		for i, ch := range rec.Chunks {
			switch {
			case i == 0 || !ch.FromClient:
				c.Feed(ch.FromClient, ch.Data, col.out)
			case tc.client == nil:
				client = append(client, ch.Data...)
			}
		}
		c.Feed(true, client, col.out)
		if tc.want == "" && col.sessions != 1 {
			t.Errorf("%s: the session waits after the client's encrypted flight", tc.name)
		}
		c.End(col.out)
		info := c.Info()
		if tc.want == "" {
			if info.Refused || !strings.HasPrefix(info.Reason, "no key for client random") {
				t.Errorf("%s: info %+v", tc.name, info)
			}
			continue
		}
		if col.sessions != 1 || !info.Refused || info.Reason != tc.want || info.Decrypted {
			t.Errorf("%s: sessions %d, info %+v; want refused, %q", tc.name, col.sessions, info, tc.want)
		}
	}
}

// In TLS 1.3 an alert's level says nothing: all but close_notify and
// user_canceled end the connection (RFC 8446, section 6).
func TestAlertFatal(t *testing.T) {
	for _, c := range []struct {
		tls13       bool
		level, desc uint8
		want        bool
	}{
		{false, 2, 48, true},
		{false, 1, 48, false},
		{false, 1, 0, false},
		{true, 1, 48, true},
		{true, 2, 0, true},
		{true, 1, 0, false},
		{true, 1, 90, false},
	} {
		if got := AlertFatal(c.tls13, c.level, c.desc); got != c.want {
			t.Errorf("AlertFatal(%v, %d, %d) = %v", c.tls13, c.level, c.desc, got)
		}
	}
}
