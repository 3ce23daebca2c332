package tlsdec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex: %v", err)
	}
	return b
}

func checkHex(t *testing.T, name string, got []byte, want string) {
	t.Helper()
	if g := hex.EncodeToString(got); g != want {
		t.Errorf("%s = %s, want %s", name, g, want)
	}
}

// The key schedule, step by step, against RFC 8448's simple 1-RTT handshake.
func TestKeyScheduleRFC8448(t *testing.T) {
	h := sha256.New
	ch, sh := unhex(t, rfcClientHello), unhex(t, rfcServerHello)
	th := sha256.Sum256(append(append([]byte{}, ch...), sh...))
	checkHex(t, "transcript(CH..SH)", th[:], "860c06edc07858ee8e78f0e7428c58edd6b43f2ca3e6e95f02ed063cf0e1cad8")

	early := extract(h, nil, nil)
	checkHex(t, "early secret", early, "33ad0a1c607ec03b09e6cd9893680ce210adf300aa1f2660e1b22e10f170f92a")
	empty := sha256.Sum256(nil)
	derived := deriveSecret(h, early, "derived", empty[:])
	checkHex(t, "derived", derived, "6f2615a108c702c5678f54fc9dbab69716c076189c48250cebeac3576c3611ba")
	shared := unhex(t, "8bd4054fb55b9d63fdfbacf9f04b9f0d35e6d63f537563efd46272900f89492d")
	hs := extract(h, shared, derived)
	checkHex(t, "handshake secret", hs, "1dc826e93606aa6fdc0aadc12f741b01046aa6b99f691ed221a9f0ca043fbeac")
	chts := deriveSecret(h, hs, "c hs traffic", th[:])
	checkHex(t, "client handshake traffic secret", chts, "b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21")
	shts := deriveSecret(h, hs, "s hs traffic", th[:])
	checkHex(t, "server handshake traffic secret", shts, "b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38")
	derived2 := deriveSecret(h, hs, "derived", empty[:])
	checkHex(t, "derived (master)", derived2, "43de77e0c77713859a944db9db2590b53190a65b3ee2e4f12dd7a0bb7ce254b4")
	master := extract(h, nil, derived2)
	checkHex(t, "master secret", master, "18df06843d13a08bf2a449844c5f8a478001bc4d4c627984d5a41da8d0402919")
	// Transcript ClientHello..server Finished, as the trace gives it.
	thSF := unhex(t, "9608102a0f1ccc6db6250b7b7e417b1a000eaada3daae4777a7686c9ff83df13")
	cats := deriveSecret(h, master, "c ap traffic", thSF)
	checkHex(t, "client application traffic secret", cats, "9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5")
	sats := deriveSecret(h, master, "s ap traffic", thSF)
	checkHex(t, "server application traffic secret", sats, "a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643")
	exp := deriveSecret(h, master, "exp master", thSF)
	checkHex(t, "exporter master secret", exp, "fe22f881176eda18eb8f44529e6792c50c9a3f89452f68d8ae311b4309d3cf50")

	for _, c := range []struct {
		name, secret, key, iv string
	}{
		{"server handshake", hex.EncodeToString(shts), "3fce516009c21727d0f2e4e86ee403bc", "5d313eb2671276ee13000b30"},
		{"client handshake", hex.EncodeToString(chts), "dbfaa693d1762c5b666af5d950258d01", "5bd3c71b836e0b76bb73265f"},
		{"server application", hex.EncodeToString(sats), "9f02283b6c9c07efc26bb9f2ac92e356", "cf782b88dd83549aadf1e984"},
		{"client application", hex.EncodeToString(cats), "17422dda596ed5d9acd890e3c63f5051", "5b78923dee08579033e523d9"},
	} {
		key, iv := trafficKey(h, unhex(t, c.secret), 16)
		checkHex(t, c.name+" key", key, c.key)
		checkHex(t, c.name+" iv", iv, c.iv)
	}

	// The client's application record of the trace, opened by the record layer alone.
	rc, err := newCipher13(suites[0x1301], cats)
	if err != nil {
		t.Fatal(err)
	}
	hdr := [5]byte{0x17, 0x03, 0x03, 0x00, 0x43}
	ct := unhex(t, rfcClientAppRecord)
	p, typ, err := rc.open(&hdr, ct, make([]byte, len(ct)), 0)
	if err != nil {
		t.Fatalf("open client application record: %v", err)
	}
	if typ != typeAppData || !bytes.Equal(p, seq50()) {
		t.Errorf("client application record = type %d %x, want type 23 and bytes 00..31", typ, p)
	}
}

// seq50 is the application data of the trace: the bytes 0x00 to 0x31.
func seq50() []byte {
	b := make([]byte, 50)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func rec(typ byte, vers uint16, body []byte) []byte {
	out := []byte{typ, byte(vers >> 8), byte(vers), byte(len(body) >> 8), byte(len(body))}
	return append(out, body...)
}

// rfcStreams returns the two directions of the trace's connection as they were on the wire.
func rfcStreams(t testing.TB) (client, server []byte) {
	client = rec(22, 0x0301, unhex(t, rfcClientHello))
	client = append(client, rec(23, 0x0303, unhex(t, rfcClientFinishedRecord))...)
	client = append(client, rec(23, 0x0303, unhex(t, rfcClientAppRecord))...)
	server = rec(22, 0x0303, unhex(t, rfcServerHello))
	server = append(server, rec(23, 0x0303, unhex(t, rfcServerHandshakeRecord))...)
	server = append(server, rec(23, 0x0303, unhex(t, rfcServerTicketRecord))...)
	server = append(server, rec(23, 0x0303, unhex(t, rfcServerAppRecord))...)
	return client, server
}

const rfcKeyLog = `# RFC 8448 simple 1-RTT handshake
CLIENT_HANDSHAKE_TRAFFIC_SECRET cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7 b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21
SERVER_HANDSHAKE_TRAFFIC_SECRET cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7 b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38
CLIENT_TRAFFIC_SECRET_0 cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7 9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5
SERVER_TRAFFIC_SECRET_0 cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7 a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643
EXPORTER_SECRET cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7 fe22f881176eda18eb8f44529e6792c50c9a3f89452f68d8ae311b4309d3cf50
`

// The whole trace through Conn: the server's encrypted handshake (one record holding four
// messages), its ticket and application data, and the client's Finished and application data.
func TestConnRFC8448(t *testing.T) {
	kl, err := ParseKeyLog(strings.NewReader(rfcKeyLog))
	if err != nil {
		t.Fatal(err)
	}
	client, server := rfcStreams(t)
	for _, order := range []string{"interleaved", "server first", "client first"} {
		t.Run(order, func(t *testing.T) {
			c := NewConn(kl)
			var col collector
			switch order {
			case "interleaved":
				c.Feed(true, client[:5+196], col.out)
				c.Feed(false, server, col.out)
				c.Feed(true, client[5+196:], col.out)
			case "server first":
				c.Feed(false, server, col.out)
				c.Feed(true, client, col.out)
			case "client first":
				c.Feed(true, client, col.out)
				c.Feed(false, server, col.out)
			}
			if got := col.data[true]; !bytes.Equal(got, seq50()) {
				t.Errorf("client plaintext = %x", got)
			}
			if got := col.data[false]; !bytes.Equal(got, seq50()) {
				t.Errorf("server plaintext = %x", got)
			}
			if len(col.problems) != 0 {
				t.Errorf("problems: %v", col.problems)
			}
			info := c.Info()
			if info.Version != "1.3" || info.Cipher != "TLS_AES_128_GCM_SHA256" || info.SNI != "server" ||
				!info.Decrypted || info.Reason != "" || info.Tickets != 1 || info.Records != 7 || info.Resumed ||
				info.ClientRandom != "cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece7" {
				t.Errorf("info = %+v", info)
			}
			if col.sessions != 1 {
				t.Errorf("%d session events, want 1", col.sessions)
			}
			// The application records' places on the wire: after CH (5+196) and Finished (5+53); after
			// SH (5+90), the handshake record (5+674) and the ticket (5+222).
			want := map[[3]int64]bool{{1, 259, 72}: true, {0, 1001, 72}: true}
			if len(col.records) != 2 || !want[col.records[0]] || !want[col.records[1]] {
				t.Errorf("data records (client, pos, len) = %v", col.records)
			}
		})
	}
}

// collector gathers a Conn's output for tests.
type collector struct {
	data     map[bool][]byte
	offsets  map[bool][]int64
	problems []Output
	resyncs  []Output
	alerts   []Output
	sessions int
	records  [][3]int64 // KindData: from client (1/0), Pos, RecordLen
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (c *collector) out(o Output) {
	if c.data == nil {
		c.data = map[bool][]byte{}
		c.offsets = map[bool][]int64{}
	}
	switch o.Kind {
	case KindData:
		c.records = append(c.records, [3]int64{boolInt(o.FromClient), o.Pos, int64(o.RecordLen)})
		if int64(len(c.data[o.FromClient])) != o.Offset {
			c.problems = append(c.problems, Output{Kind: KindProblem, Message: "offset out of step"})
		}
		c.data[o.FromClient] = append(c.data[o.FromClient], o.Data...)
		c.offsets[o.FromClient] = append(c.offsets[o.FromClient], o.Offset)
	case KindProblem:
		c.problems = append(c.problems, o)
	case KindResync:
		c.resyncs = append(c.resyncs, o)
	case KindAlert:
		c.alerts = append(c.alerts, o)
	case KindSession:
		c.sessions++
	}
}
