package dissect

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// chunk is bytes one side of a recorded connection sent, in the order
// the client saw them.
type chunk struct {
	request bool
	b       []byte
}

// recorder keeps, per connection, what a client wrote and read: a
// capture without pcap, with the order a request-response protocol
// guarantees (an answer is read after its question was written).
type recorder struct {
	mu    sync.Mutex
	conns [][]chunk
}

type recConn struct {
	net.Conn
	r *recorder
	i int
}

func (c *recConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.r.add(c.i, true, b[:n])
	return n, err
}

func (c *recConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.r.add(c.i, false, b[:n])
	return n, err
}

func (r *recorder) add(i int, req bool, b []byte) {
	if len(b) == 0 {
		return
	}
	r.mu.Lock()
	r.conns[i] = append(r.conns[i], chunk{req, bytes.Clone(b)})
	r.mu.Unlock()
}

func (r *recorder) dial(ctx context.Context, network, host string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conns = append(r.conns, nil)
	return &recConn{c, r, len(r.conns) - 1}, nil
}

// frames cuts connection i's recorded bytes into Kafka frames, in the
// order their first bytes travelled.
func (r *recorder) frames(i int) []capFrame {
	r.mu.Lock()
	defer r.mu.Unlock()
	type cut struct {
		at int
		f  capFrame
	}
	var out []cut
	var buf [2][]byte
	var first [2]int
	for ci, c := range r.conns[i] {
		d := 0
		if c.request {
			d = 1
		}
		if len(buf[d]) == 0 {
			first[d] = ci
		}
		buf[d] = append(buf[d], c.b...)
		for len(buf[d]) >= 4 {
			n := 4 + int(binary.BigEndian.Uint32(buf[d]))
			if len(buf[d]) < n {
				break
			}
			out = append(out, cut{first[d], capFrame{i, c.request, bytes.Clone(buf[d][:n])}})
			buf[d] = buf[d][n:]
			first[d] = ci
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].at < out[b].at })
	var fs []capFrame
	for _, c := range out {
		fs = append(fs, c.f)
	}
	return fs
}

// TestSASLAgainstKfake authenticates franz-go's PLAIN and SCRAM clients
// against kfake's broker (neither of them ours), records the connections,
// and checks that every SASL message decodes without a problem, that the
// identity is the user that logged in (or failed, with a wrong password),
// and that neither the password nor the SCRAM proof shows in any output.
func TestSASLAgainstKfake(t *testing.T) {
	const (
		pwAlice = "alice-Secret-256"
		pwBob   = "bob-Secret-512!!"
		pwCarol = "carol-Plain-pw"
	)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-256", "alice", pwAlice),
		kfake.Superuser("SCRAM-SHA-512", "bo,b=", pwBob), // a name SCRAM must escape
		kfake.Superuser("PLAIN", "carol", pwCarol))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		name, mech string
		m          sasl.Mechanism
		secret     string
		want       Identity
	}{
		{"SCRAM-SHA-256", "SCRAM-SHA-256", scram.Auth{User: "alice", Pass: pwAlice}.AsSha256Mechanism(), pwAlice,
			Identity{Principal: "User:alice", Mechanism: "SCRAM-SHA-256", Source: "sasl", Authenticated: true}},
		{"SCRAM-SHA-512", "SCRAM-SHA-512", scram.Auth{User: "bo,b=", Pass: pwBob}.AsSha512Mechanism(), pwBob,
			Identity{Principal: "User:bo,b=", Mechanism: "SCRAM-SHA-512", Source: "sasl", Authenticated: true}},
		{"PLAIN", "PLAIN", plain.Auth{User: "carol", Pass: pwCarol}.AsMechanism(), pwCarol,
			Identity{Principal: "User:carol", Mechanism: "PLAIN", Source: "sasl", Authenticated: true}},
		{"SCRAM-SHA-256 wrong password", "SCRAM-SHA-256", scram.Auth{User: "alice", Pass: "not-" + pwAlice}.AsSha256Mechanism(), "not-" + pwAlice,
			Identity{Principal: "User:alice", Mechanism: "SCRAM-SHA-256", Source: "sasl", Failed: true}},
		{"PLAIN wrong password", "PLAIN", plain.Auth{User: "carol", Pass: "not-" + pwCarol}.AsMechanism(), "not-" + pwCarol,
			Identity{Principal: "User:carol", Mechanism: "PLAIN", Source: "sasl", Failed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.SASL(tc.m), kgo.Dialer(rec.dial),
				kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, reqErr := cl.Request(ctx, kmsg.NewPtrMetadataRequest())
			cl.Close()
			if (reqErr != nil) != tc.want.Failed {
				t.Fatalf("request error %v", reqErr)
			}
			if len(rec.conns) == 0 {
				t.Fatal("no connection recorded")
			}
			msgs, ids := decodeCapture(t, rec.frames(0), Options{}, true, true)
			if got := ids[0]; got != tc.want {
				t.Errorf("identity\n got %+v\nwant %+v", got, tc.want)
			}
			// The proof as the wire has it, read with ShowSecrets.
			shown, _ := decodeCapture(t, rec.frames(0), Options{ShowSecrets: true}, true, true)
			secrets := []string{tc.secret}
			var sasls int
			for i, d := range shown {
				if d.m.APIKey == saslAuthenticateKey || d.m.APIKey == saslHandshakeKey {
					sasls++
					if len(d.m.Problems) > 0 || len(msgs[i].m.Problems) > 0 {
						t.Errorf("%s: problems %v", d.m.Summary, d.m.Problems)
					}
				}
				d.m.Tree.Walk(func(n *Node, _ int) {
					if n.Name == "proof" {
						secrets = append(secrets, n.Str)
					}
				})
			}
			if want := map[string]int{"PLAIN": 4, "SCRAM-SHA-256": 6, "SCRAM-SHA-512": 6}[tc.mech]; sasls != want && !tc.want.Failed {
				t.Errorf("%d SASL messages, want %d", sasls, want)
			}
			if tc.mech != "PLAIN" && len(secrets) != 2 {
				t.Fatalf("no SCRAM proof found")
			}
			for _, d := range msgs {
				hexCol, asciiCol := layoutBytes(t, AppendHexDump(nil, d.frame, d.m.Tree))
				for _, s := range secrets {
					for _, out := range [][]byte{AppendText(nil, d.m.Tree), AppendJSON(nil, d.m), []byte(d.m.Summary), hexCol, asciiCol} {
						if bytes.Contains(out, []byte(s)) || bytes.Contains(out, []byte(hex.EncodeToString([]byte(s)))) {
							t.Errorf("%s shows the secret %q", d.m.Summary, s)
						}
					}
				}
			}
		})
	}
}

// TestOAuthBearerFromFranzGo decodes franz-go's OAUTHBEARER initial
// response (kfake has no OAUTHBEARER broker): the sub claim and the
// extensions are shown, the token is not, and the identity is the sub.
func TestOAuthBearerFromFranzGo(t *testing.T) {
	m := oauth.Auth{Zid: "ops", Token: sampleJWT, Extensions: map[string]string{"traceId": "42", "logicalCluster": "lkc-1"}}.AsMechanism()
	_, tok, err := m.Authenticate(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	tr := newIdentityTracker(true)
	tr.Observe(saslReg.Decode(saslHandshakeReq(1, 1, "OAUTHBEARER"), Options{}))
	tr.Observe(saslReg.Decode(saslHandshakeResp(1, 1, 0, "OAUTHBEARER"), Options{Direction: Response, APIKey: 17, APIVersion: 1}))
	frame := saslAuthReq(2, 2, string(tok))
	msg := saslReg.Decode(frame, Options{Mechanism: tr.Mechanism()})
	tr.Observe(msg)
	tr.Observe(saslReg.Decode(saslAuthResp(2, 2, 0, nil, ""), Options{Direction: Response, APIKey: 36, APIVersion: 2, Mechanism: tr.Mechanism()}))
	if len(msg.Problems) > 0 {
		t.Fatal(msg.Problems)
	}
	ab := msg.Tree.Find("SaslAuthenticateRequest", "AuthBytes")
	want := []string{
		`gs2_header [29,8] = "n,a=ops,"`, // the token starts after 28 bytes of frame and header and a 1-byte length
		`scheme [43,6] = "Bearer"`,
		`token [50,64] = <redacted, 64 bytes>`,
		` sub [70,31] = "alice"`,
		`logicalCluster [130,5] = "lkc-1"`,
		`traceId [144,2] = "42"`,
	}
	if got := flat(ab); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("children\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if id := tr.Identity(); id != (Identity{Principal: "User:alice", Mechanism: "OAUTHBEARER", Source: "sasl", Authenticated: true}) {
		t.Errorf("identity %+v", id)
	}
	for _, out := range [][]byte{AppendText(nil, msg.Tree), AppendJSON(nil, msg), AppendHexDump(nil, frame, msg.Tree)} {
		if bytes.Contains(out, []byte(sampleJWT[20:40])) || bytes.Contains(out, []byte("c2lnbmF0dXJl")) {
			t.Errorf("token shown:\n%s", out)
		}
	}
}
