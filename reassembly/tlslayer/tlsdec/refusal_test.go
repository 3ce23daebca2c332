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
