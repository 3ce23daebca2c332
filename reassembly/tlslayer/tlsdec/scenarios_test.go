package tlsdec

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
	"testing"
)

// records splits a recorded direction into its records: start offset, type and full bytes.
type wireRecord struct {
	pos int
	typ byte
	raw []byte
}

func splitRecords(b []byte) []wireRecord {
	var out []wireRecord
	pos := 0
	for len(b) >= 5 {
		n := 5 + int(binary.BigEndian.Uint16(b[3:]))
		out = append(out, wireRecord{pos, b[0], b[:n]})
		b, pos = b[n:], pos+n
	}
	return out
}

// secretFor finds a key log line's secret.
func secretFor(t testing.TB, keyLog, label string, clientRandom []byte) []byte {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(keyLog))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == label && f[1] == hex.EncodeToString(clientRandom) {
			return unhex(t, f[2])
		}
	}
	t.Fatalf("no %s in the key log", label)
	return nil
}

// clientRandomOf reads the random of the ClientHello a direction starts with.
func clientRandomOf(client []byte) []byte { return client[11:43] }

func TestHelloRetryRequest(t *testing.T) {
	// The client sends key shares for X25519MLKEM768 and X25519 only: a server that accepts P-256
	// alone must ask again.
	cp := exchange(t, &tls.Config{MinVersion: tls.VersionTLS13},
		&tls.Config{CurvePreferences: []tls.CurveID{tls.CurveP256}}, testSends(), payload(9, 3000), nil)
	if cp.state.CurveID != tls.CurveP256 {
		t.Fatalf("negotiated group %v", cp.state.CurveID)
	}
	info := decryptAll(t, cp, cp.keyLog)
	if !info.HelloRetry || info.Version != "1.3" || !info.Decrypted {
		t.Errorf("info = %+v", info)
	}
	// Two ClientHellos on the wire, one random.
	if n := bytes.Count(cp.client, clientRandomOf(cp.client)); n != 2 {
		t.Errorf("client random appears %d times on the wire, want 2 (two ClientHellos)", n)
	}
}

// serverWithTicketKey returns a server configuration whose clones (one per connection) share a
// session ticket key, so that a second connection can resume the first.
func serverWithTicketKey() *tls.Config {
	cfg := &tls.Config{}
	cfg.SetSessionTicketKeys([][32]byte{{1, 2, 3}})
	return cfg
}

func TestResumptionTLS13(t *testing.T) {
	cache := tls.NewLRUClientSessionCache(4)
	ccfg := &tls.Config{MinVersion: tls.VersionTLS13, ClientSessionCache: cache}
	scfg := serverWithTicketKey()
	first := exchange(t, ccfg, scfg, testSends(), payload(9, 3000), nil)
	second := exchange(t, ccfg, scfg, testSends(), payload(10, 3000), nil)
	if first.state.DidResume || !second.state.DidResume {
		t.Fatalf("resumed: first %v, second %v; want false, true", first.state.DidResume, second.state.DidResume)
	}
	if info := decryptAll(t, first, first.keyLog); info.Resumed || info.Tickets == 0 {
		t.Errorf("first: info = %+v", info)
	}
	if info := decryptAll(t, second, second.keyLog); !info.Resumed || !info.Decrypted {
		t.Errorf("second: info = %+v", info)
	}
}

func TestResumptionTLS12(t *testing.T) {
	cache := tls.NewLRUClientSessionCache(4)
	ccfg := &tls.Config{MaxVersion: tls.VersionTLS12, ClientSessionCache: cache}
	scfg := serverWithTicketKey()
	first := exchange(t, ccfg, scfg, testSends(), payload(9, 3000), nil)
	second := exchange(t, ccfg, scfg, testSends(), payload(10, 3000), nil)
	if first.state.DidResume || !second.state.DidResume {
		t.Fatalf("resumed: first %v, second %v; want false, true", first.state.DidResume, second.state.DidResume)
	}
	// Go writes no key log line for an abbreviated handshake.
	if second.keyLog != "" {
		t.Fatalf("key log of the resumed connection: %q", second.keyLog)
	}
	master := secretFor(t, first.keyLog, "CLIENT_RANDOM", clientRandomOf(first.client))

	t.Run("CLIENT_RANDOM line for the new random", func(t *testing.T) {
		// What OpenSSL, NSS and Java agents write for a resumed session.
		line := "CLIENT_RANDOM " + hex.EncodeToString(clientRandomOf(second.client)) + " " + hex.EncodeToString(master) + "\n"
		if info := decryptAll(t, second, line); !info.Resumed || !info.Decrypted || info.Version != "1.2" {
			t.Errorf("info = %+v", info)
		}
	})
	t.Run("master secret learnt from the first connection's ticket", func(t *testing.T) {
		kl, _ := ParseKeyLog(strings.NewReader(first.keyLog))
		c1 := NewConn(kl)
		var col1 collector
		feed(c1, first.client, first.server, "random", 3, col1.out)
		if !bytes.Equal(col1.data[true], first.sent) || c1.Info().Tickets != 1 {
			t.Fatalf("first connection: %d bytes, info %+v", len(col1.data[true]), c1.Info())
		}
		c2 := NewConn(kl)
		var col2 collector
		feed(c2, second.client, second.server, "random", 4, col2.out)
		if !bytes.Equal(col2.data[true], second.sent) || !bytes.Equal(col2.data[false], second.replied) ||
			!c2.Info().Resumed || !c2.Info().Decrypted || len(col2.problems) != 0 {
			t.Errorf("second connection: %d/%d bytes, problems %v, info %+v", len(col2.data[true]),
				len(col2.data[false]), col2.problems, c2.Info())
		}
	})
}

// Go's tls.Conn sends a KeyUpdate only in answer to one that asks for it, and has no API to start
// one. So the test plays the client's part: with the client's traffic secret from the key log it
// seals a KeyUpdate(update_requested) and then application data under the next secret, and writes
// them on the client's socket. Go's server decrypting them checks the test's key derivation; its
// answer is a genuine KeyUpdate of its own, which the client's tls.Conn then follows.
func TestKeyUpdate(t *testing.T) {
	forceTLS13Suite(t, tls.TLS_AES_128_GCM_SHA256)
	after := payload(20, 5000)
	answer := payload(21, 700)
	cp := exchange(t, &tls.Config{MinVersion: tls.VersionTLS13}, &tls.Config{}, testSends(), payload(9, 3000),
		func(raw *recConn, tc *tls.Conn, kl *syncBuf, srv chan<- []byte, srvGot <-chan []byte) {
			wire := raw.bytes()
			secret := secretFor(t, kl.String(), "CLIENT_TRAFFIC_SECRET_0", clientRandomOf(wire))
			seq := uint64(0)
			for _, r := range splitRecords(wire) {
				if r.typ == typeAppData {
					seq++
				}
			}
			seq-- // the first was the Finished, under the handshake key
			seal := func(secret []byte, seq uint64, inner []byte) {
				key, iv := trafficKey(sha256.New, secret, 16)
				b, _ := aes.NewCipher(key)
				g, _ := cipher.NewGCM(b)
				for i := 0; i < 8; i++ {
					iv[4+i] ^= byte(seq >> (56 - 8*i))
				}
				n := len(inner) + g.Overhead()
				hdr := []byte{typeAppData, 3, 3, byte(n >> 8), byte(n)}
				if _, err := raw.Write(g.Seal(hdr, iv, inner, hdr)); err != nil {
					t.Fatal(err)
				}
			}
			seal(secret, seq, []byte{24, 0, 0, 1, 1, typeHandshake}) // KeyUpdate, update_requested
			seal(nextTrafficSecret(sha256.New, secret), 0, append(bytes.Clone(after), typeAppData))
			cmd := binary.BigEndian.AppendUint32(nil, uint32(len(after)))
			srv <- append(cmd, answer...)
			if got := <-srvGot; !bytes.Equal(got, after) {
				t.Fatal("the server read something else after the key update")
			}
			buf := make([]byte, len(answer))
			if _, err := io.ReadFull(tc, buf); err != nil || !bytes.Equal(buf, answer) {
				t.Fatalf("client read after the server's key update: %v", err)
			}
		})
	cp.sent = append(cp.sent, after...)
	cp.replied = append(cp.replied, answer...)
	info := decryptAll(t, cp, cp.keyLog)
	if info.KeyUpdates != 2 || !info.Decrypted {
		t.Errorf("info = %+v", info)
	}
}

func TestMutualTLS(t *testing.T) {
	testPKI(t)
	for _, v := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		t.Run(versionName(v), func(t *testing.T) {
			ccfg := &tls.Config{MinVersion: v, MaxVersion: v, Certificates: []tls.Certificate{clientCert}}
			scfg := &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: rootPool}
			cp := exchange(t, ccfg, scfg, testSends(), payload(9, 3000), nil)
			info := decryptAll(t, cp, cp.keyLog)
			if len(info.ClientCertDER) != 1 || !bytes.Equal(info.ClientCertDER[0], clientCert.Certificate[0]) {
				t.Fatalf("client certificates: %d", len(info.ClientCertDER))
			}
			dn, err := SubjectDN(info.ClientCertDER[0])
			if err != nil || dn != "CN=svc-payments,OU=payments,O=Example Corp,L=Zurich,C=CH" {
				t.Errorf("SubjectDN = %q, %v", dn, err)
			}
		})
	}
}

func TestMissingKey(t *testing.T) {
	for _, v := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		t.Run(versionName(v), func(t *testing.T) {
			cfg := &tls.Config{MinVersion: v, MaxVersion: v}
			cp := exchange(t, cfg, cfg, testSends(), payload(9, 3000), nil)
			kl, _ := ParseKeyLog(strings.NewReader(rfcKeyLog)) // another connection's secrets
			for i, mode := range feedModes {
				c := NewConn(kl)
				var col collector
				feed(c, cp.client, cp.server, mode, uint64(i), col.out)
				info := c.Info()
				want := "no key for client random " + hex.EncodeToString(clientRandomOf(cp.client))[:16] + "…"
				if info.Decrypted || info.Reason != want || info.Version != versionName(v) {
					t.Errorf("%s: info = %+v", mode, info)
				}
				if n := countRecords(cp.client) + countRecords(cp.server); info.Records != n {
					t.Errorf("%s: Records = %d, want %d", mode, info.Records, n)
				}
				if len(col.problems) != 0 || len(col.data) != 0 || col.sessions != 1 {
					t.Errorf("%s: problems %v, data %d, sessions %d", mode, col.problems, len(col.data), col.sessions)
				}
			}
		})
	}
}

func TestWrongKey(t *testing.T) {
	for _, v := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		t.Run(versionName(v), func(t *testing.T) {
			cfg := &tls.Config{MinVersion: v, MaxVersion: v}
			cp := exchange(t, cfg, cfg, testSends(), payload(9, 3000), nil)
			// Every secret with its last byte changed.
			var bad strings.Builder
			for _, line := range strings.Split(strings.TrimSpace(cp.keyLog), "\n") {
				f := strings.Fields(line)
				s := unhex(t, f[2])
				s[len(s)-1] ^= 1
				bad.WriteString(f[0] + " " + f[1] + " " + hex.EncodeToString(s) + "\n")
			}
			kl, _ := ParseKeyLog(strings.NewReader(bad.String()))
			c := NewConn(kl)
			var col collector
			feed(c, cp.client, cp.server, "random", 1, col.out)
			firstEncrypted := func(b []byte) int64 {
				ccs := false
				for _, r := range splitRecords(b) {
					if r.typ == typeAppData || ccs && v == tls.VersionTLS12 {
						return int64(r.pos)
					}
					ccs = ccs || r.typ == typeCCS
				}
				return -1
			}
			want := map[bool]int64{true: firstEncrypted(cp.client), false: firstEncrypted(cp.server)}
			if len(col.problems) != 2 {
				t.Fatalf("problems: %+v", col.problems)
			}
			for _, p := range col.problems {
				if p.Problem != ProblemAuth || p.Pos != want[p.FromClient] {
					t.Errorf("problem %+v, want ProblemAuth at %d", p, want[p.FromClient])
				}
			}
			if len(col.data) != 0 || c.Info().Decrypted ||
				!strings.HasPrefix(c.Info().Reason, "records fail authentication with the key log's secret") {
				t.Errorf("data %d, info %+v", len(col.data), c.Info())
			}
		})
	}
}

func TestOversizeRecord(t *testing.T) {
	cp := exchange(t, &tls.Config{MinVersion: tls.VersionTLS13}, &tls.Config{}, testSends(), payload(9, 3000), nil)
	recs := splitRecords(cp.client)
	at := recs[5].pos // a boundary between two application data records
	client := append(append(bytes.Clone(cp.client[:at]), 0x17, 0x03, 0x03, 0xff, 0xff), cp.client[at:]...)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	for i, mode := range feedModes {
		c := NewConn(kl)
		var col collector
		feed(c, client, cp.server, mode, uint64(i), col.out)
		if len(col.problems) != 1 || col.problems[0].Problem != ProblemOversize || col.problems[0].Pos != int64(at) ||
			col.problems[0].Message != "TLS record of 65535 bytes exceeds the 16640-byte limit" {
			t.Errorf("%s: problems %+v", mode, col.problems)
		}
		if len(col.resyncs) != 1 || col.resyncs[0].Pos != int64(at+5) || col.resyncs[0].Skipped != 5 {
			t.Errorf("%s: resyncs %+v", mode, col.resyncs)
		}
		// No record was lost: all the plaintext is there.
		if !bytes.Equal(col.data[true], cp.sent) || !bytes.Equal(col.data[false], cp.replied) {
			t.Errorf("%s: plaintext %d/%d bytes", mode, len(col.data[true]), len(col.data[false]))
		}
	}
}

// plaintextByRecord decrypts a capture and returns each client record's plaintext by position.
func plaintextByRecord(t *testing.T, cp *capture, kl *KeyLog) map[int64][]byte {
	c := NewConn(kl)
	m := map[int64][]byte{}
	out := func(o Output) {
		if o.Kind == KindData && o.FromClient {
			m[o.Pos] = append(m[o.Pos], o.Data...)
		}
	}
	c.Feed(true, cp.client, out)
	c.Feed(false, cp.server, out)
	return m
}

func TestGap(t *testing.T) {
	cases := []struct {
		name string
		cfg  *tls.Config
	}{
		{"TLS 1.3", &tls.Config{MinVersion: tls.VersionTLS13}},
		{"TLS 1.2 GCM", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}},
		{"TLS 1.2 ChaCha20", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256}}},
		{"TLS 1.2 CBC", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cp := exchange(t, tc.cfg, tc.cfg, testSends(), payload(9, 3000), nil)
			kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
			perRecord := plaintextByRecord(t, cp, kl)
			recs := splitRecords(cp.client)
			// Records k and k+1 are application data, k at least 200 bytes long (it is cut 100 bytes
			// in), and more follow.
			k := 3
			for k+3 < len(recs) && (len(recs[k].raw) < 200 || recs[k+1].typ != typeAppData) {
				k++
			}
			if k+3 >= len(recs) || recs[k].typ != typeAppData {
				t.Fatalf("no long application data record to cut")
			}
			for _, mid := range []bool{true, false} {
				cut := recs[k].pos
				if mid {
					cut += 100
				}
				resume := recs[k+2].pos
				c := NewConn(kl)
				var col collector
				c.Feed(true, cp.client[:cut], col.out)
				c.Feed(false, cp.server, col.out)
				c.Gap(true, int64(resume-cut), col.out)
				c.Feed(true, cp.client[resume:], col.out)

				var want []byte
				for _, r := range recs {
					if r.pos != recs[k].pos && r.pos != recs[k+1].pos {
						want = append(want, perRecord[int64(r.pos)]...)
					}
				}
				if !bytes.Equal(col.data[true], want) || !bytes.Equal(col.data[false], cp.replied) {
					t.Errorf("mid-record %v: plaintext %d bytes, want %d", mid, len(col.data[true]), len(want))
				}
				if mid {
					p := Output{Kind: KindProblem, FromClient: true, Pos: int64(recs[k].pos), Problem: ProblemTruncated,
						Have: 100, Want: len(recs[k].raw),
						Message: "TLS record cut by a gap after 100 of " + strconv.Itoa(len(recs[k].raw)) + " bytes"}
					if len(col.problems) != 1 || !equalOutput(col.problems[0], p) {
						t.Errorf("problems %+v, want %+v", col.problems, p)
					}
				} else if len(col.problems) != 0 {
					t.Errorf("gap at a record boundary: problems %+v", col.problems)
				}
				if len(col.resyncs) != 1 || col.resyncs[0].Pos != int64(resume) || col.resyncs[0].Skipped != 0 {
					t.Errorf("mid-record %v: resyncs %+v, want one at %d", mid, col.resyncs, resume)
				}
			}
		})
	}
}

func equalOutput(a, b Output) bool {
	return a.Kind == b.Kind && a.FromClient == b.FromClient && a.Pos == b.Pos && a.Problem == b.Problem &&
		a.Have == b.Have && a.Want == b.Want && a.Message == b.Message
}

// Only the client's direction was captured: its records wait for a ServerHello that never comes, and
// End counts them, reports the session once, and the record the capture cut in the middle.
func TestEndWithoutServerHello(t *testing.T) {
	cp := exchange(t, &tls.Config{MinVersion: tls.VersionTLS13}, &tls.Config{}, testSends(), payload(9, 3000), nil)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	recs := splitRecords(cp.client)
	last := recs[len(recs)-1]
	c := NewConn(kl)
	var col collector
	c.Feed(true, cp.client[:len(cp.client)-3], col.out)
	if col.sessions != 0 || c.Info().Records != 1 {
		t.Fatalf("before End: %d session events, %d records", col.sessions, c.Info().Records)
	}
	c.End(col.out)
	info := c.Info()
	if col.sessions != 1 || info.Decrypted || info.Reason != "the ServerHello was not captured" || info.Records != len(recs) {
		t.Errorf("sessions %d, info %+v, want %d records", col.sessions, info, len(recs))
	}
	want := Output{Kind: KindProblem, FromClient: true, Pos: int64(last.pos), Problem: ProblemTruncated,
		Have: len(last.raw) - 3, Want: len(last.raw),
		Message: "TLS record cut by the end of the stream after " + strconv.Itoa(len(last.raw)-3) + " of " +
			strconv.Itoa(len(last.raw)) + " bytes"}
	if len(col.problems) != 1 || !equalOutput(col.problems[0], want) || len(col.data) != 0 {
		t.Errorf("problems %+v, want %+v; data %d", col.problems, want, len(col.data))
	}
}

// A server that accepts none of the client's suites answers its ClientHello with a fatal alert in
// the clear and closes: the session is not decrypted because the handshake was refused, which is
// no capture loss. Once records come after the alert it is no longer a bare refusal.
func TestHandshakeRefused(t *testing.T) {
	cp := exchange(t, &tls.Config{MaxVersion: tls.VersionTLS12}, &tls.Config{}, testSends(), payload(9, 30), nil)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	hello := splitRecords(cp.client)[0]
	if hello.typ != typeHandshake {
		t.Fatalf("the client's first record is of type %d", hello.typ)
	}
	alert := []byte{typeAlert, 3, 3, 0, 2, alertFatal, 40}
	for _, tc := range []struct {
		name    string
		after   []byte // client bytes after the alert
		refused bool
	}{
		{"bare", nil, true},
		{"records after", cp.client[len(hello.raw):], false},
	} {
		c := NewConn(kl)
		var col collector
		c.Feed(true, hello.raw, col.out)
		c.Feed(false, alert, col.out)
		c.Feed(true, tc.after, col.out)
		c.End(col.out)
		info := c.Info()
		want := "the server refused the handshake: fatal alert handshake_failure (40)"
		if col.sessions != 1 || info.Decrypted || info.Reason != want || info.Refused != tc.refused {
			t.Errorf("%s: sessions %d, info %+v; want reason %q, refused %v", tc.name, col.sessions, info, want, tc.refused)
		}
		if len(col.alerts) != 1 || col.alerts[0].FromClient || col.alerts[0].AlertDesc != 40 {
			t.Errorf("%s: alerts %+v", tc.name, col.alerts)
		}
	}
	// A warning alert is no refusal: without a ServerHello the reason stays what it was.
	c := NewConn(kl)
	var col collector
	c.Feed(true, hello.raw, col.out)
	c.Feed(false, []byte{typeAlert, 3, 3, 0, 2, 1, 0}, col.out)
	c.End(col.out)
	if info := c.Info(); info.Reason != "the ServerHello was not captured" || info.Refused {
		t.Errorf("after a warning alert: info %+v", info)
	}
}

// A gap that swallowed more records than the resynchronisation tries: the direction is given up,
// once, with an event, and the other direction goes on.
func TestGapTooLong(t *testing.T) {
	var sends [][]byte
	for i := 0; i < resyncWindow+20; i++ {
		sends = append(sends, payload(uint64(i), 10))
	}
	cp := exchange(t, &tls.Config{MinVersion: tls.VersionTLS13}, &tls.Config{}, sends, payload(9, 3000), nil)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	recs := splitRecords(cp.client)
	first := handshakeEnd(cp.client)
	resume := recs[len(recs)-maxResyncFails-2].pos // more than resyncWindow records later
	c := NewConn(kl)
	var col collector
	c.Feed(false, cp.server, col.out)
	c.Feed(true, cp.client[:first], col.out)
	c.Gap(true, int64(resume-first), col.out)
	c.Feed(true, cp.client[resume:], col.out)
	if len(col.problems) != 1 || col.problems[0].Problem != ProblemNoResync || !col.problems[0].FromClient {
		t.Errorf("problems %+v", col.problems)
	}
	if len(col.data[true]) != 0 || !bytes.Equal(col.data[false], cp.replied) || len(col.resyncs) != 0 {
		t.Errorf("plaintext %d/%d bytes, resyncs %v", len(col.data[true]), len(col.data[false]), col.resyncs)
	}
}

// Both peers' close_notify come out as alerts at their records.
func TestCloseNotify(t *testing.T) {
	cp := exchange(t, &tls.Config{MinVersion: tls.VersionTLS13}, &tls.Config{}, testSends(), payload(9, 300), nil)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	c := NewConn(kl)
	var col collector
	c.Feed(true, cp.client, col.out)
	c.Feed(false, cp.server, col.out)
	if len(col.alerts) != 2 {
		t.Fatalf("alerts %+v", col.alerts)
	}
	for i, b := range [][]byte{cp.client, cp.server} {
		recs := splitRecords(b)
		last := recs[len(recs)-1]
		a := col.alerts[i]
		if a.FromClient != (i == 0) || a.Pos != int64(last.pos) || a.RecordLen != len(last.raw) ||
			a.AlertLevel != 1 || AlertName(a.AlertDesc) != "close_notify" {
			t.Errorf("alert %+v, want close_notify at %d", a, last.pos)
		}
	}
	if AlertName(250) != "alert 250" || KindAlert.String() != "alert" || ProblemAuth.String() != "authentication_failed" {
		t.Error("names")
	}
}

// A key log with the handshake secrets only: the encrypted handshake, and so the client certificate,
// is still read; the application data is counted, not decoded.
func TestHandshakeSecretsOnly(t *testing.T) {
	testPKI(t)
	ccfg := &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{clientCert}}
	scfg := &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: rootPool}
	cp := exchange(t, ccfg, scfg, testSends(), payload(9, 3000), nil)
	var keys strings.Builder
	for _, line := range strings.Split(cp.keyLog, "\n") {
		if strings.Contains(line, "HANDSHAKE_TRAFFIC_SECRET") {
			keys.WriteString(line + "\n")
		}
	}
	kl, _ := ParseKeyLog(strings.NewReader(keys.String()))
	c := NewConn(kl)
	var col collector
	feed(c, cp.client, cp.server, "random", 2, col.out)
	info := c.Info()
	want := "the key log lacks CLIENT_TRAFFIC_SECRET_0 and SERVER_TRAFFIC_SECRET_0 for client random " +
		hex.EncodeToString(clientRandomOf(cp.client))[:16] + "…"
	if info.Decrypted || info.Reason != want || len(info.ClientCertDER) != 1 {
		t.Errorf("info %+v", info)
	}
	if len(col.problems) != 0 || len(col.data) != 0 || info.Records != countRecords(cp.client)+countRecords(cp.server) {
		t.Errorf("problems %v, data %d, records %d", col.problems, len(col.data), info.Records)
	}
}

// The server's direction was not captured: the client's records wait for a ServerHello, up to 1 MiB,
// then the direction is given up with one event; what was not held back (the ClientHello) counts.
func TestBacklogLimit(t *testing.T) {
	cp := bulkCapture(t)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	recs := splitRecords(cp.client)
	c := NewConn(kl)
	var col collector
	for p := cp.client; len(p) > 0; {
		n := min(len(p), 1<<16)
		c.Feed(true, p[:n], col.out)
		p = p[n:]
	}
	want := Output{Kind: KindProblem, FromClient: true, Pos: int64(recs[1].pos), Problem: ProblemBacklog,
		Message: "gave up on this TLS direction: the other direction's hello never came"}
	if len(col.problems) != 1 || !equalOutput(col.problems[0], want) || c.Info().Records != 1 {
		t.Errorf("problems %+v, records %d", col.problems, c.Info().Records)
	}
	c.Feed(false, cp.server, col.out)
	if len(col.data[true]) != 0 || !bytes.Equal(col.data[false], cp.replied) || len(col.problems) != 1 {
		t.Errorf("after the server's bytes: %d/%d bytes, problems %v", len(col.data[true]), len(col.data[false]), col.problems)
	}
}
