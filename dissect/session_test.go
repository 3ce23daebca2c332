package dissect

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// sessionLog writes what a Session hands out as one line each.
type sessionLog struct {
	lines   []string
	secrets bool // a PLAIN password reached a rendering
}

func (r *sessionLog) Message(meta string, x Exchange, m *Message) {
	if bytes.Contains(AppendText(nil, m.Tree), []byte(samplePassword)) {
		r.secrets = true
	}
	l := fmt.Sprintf("%s #%d %s %s peer=%d", meta, x.Index, m.APIName, m.Direction, x.Peer)
	if x.HasLatency {
		l += " " + x.Latency.String()
	}
	if x.Inferred {
		l += " inferred"
	}
	if who := x.Identity.String(); who != "" {
		l += " by " + who
	}
	r.lines = append(r.lines, l)
}

func (r *sessionLog) Unmatched(meta string, u Unmatched) {
	r.lines = append(r.lines, fmt.Sprintf("%s unmatched #%d corr=%d size=%d", meta, u.Index, u.CorrelationID, u.Size))
}

func (r *sessionLog) Incomplete(meta string, c Incomplete) {
	r.lines = append(r.lines, fmt.Sprintf("%s incomplete #%d api=%d peer=%d", meta, c.Index, c.APIKey, c.Peer))
}

func (r *sessionLog) Event(meta string) { r.lines = append(r.lines, meta) }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func client(conn uint64, ms int, frame []byte) FrameInfo {
	return FrameInfo{Conn: conn, FromClient: true, Data: frame, First: at(ms), Last: at(ms)}
}

func broker(conn uint64, ms int, frame []byte) FrameInfo {
	return FrameInfo{Conn: conn, Data: frame, First: at(ms), Last: at(ms)}
}

func checkLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestSessionMatchesAndHolds: a held request comes out with its response's
// index, in capture order with the events between; a request of an API
// not shown still counts; a response without its request is Unmatched,
// and decoded as an ACL response with Guess.
func TestSessionMatchesAndHolds(t *testing.T) {
	create := testkit.KmsgRequest(sampleCreateReq(3, 0), 5, testkit.Ptr("c"))
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(1)
	resp := kmsg.NewPtrCreateACLsResponse()
	resp.SetVersion(3)
	resp.Results = append(resp.Results, kmsg.NewCreateACLsResponseResult())
	for _, guess := range []bool{false, true} {
		r := &sessionLog{}
		s := NewSession[string](NewRegistry(), r)
		s.Wants = func(k int16) bool { return k == 30 || k == 31 }
		s.Hold, s.Guess = true, guess
		s.Frame("a", client(1, 0, create))
		s.Frame("b", client(1, 1, testkit.KmsgRequest(meta, 6, testkit.Ptr("c"))))
		s.Pass("gap", at(2))
		s.Frame("c", broker(1, 3, testkit.KmsgResponse(resp, 5)))
		s.Frame("d", broker(1, 4, testkit.KmsgResponse(resp, 99)))
		s.Flush()
		want := []string{"a #1 CreateAcls request peer=3", "gap", "c #3 CreateAcls response peer=1 3ms", "d unmatched #4 corr=99 size=19"}
		if guess {
			want = append(want, "d #4 CreateAcls response peer=0 inferred")
		}
		checkLines(t, r.lines, want...)
	}
}

// TestSessionRawTokensAndIdentity: after a SaslHandshake v0 the client's
// token is decoded as a raw PLAIN token with the handshake's mechanism,
// its password redacted; the next request ends the exchange, and carries
// the principal as accepted.
func TestSessionRawTokensAndIdentity(t *testing.T) {
	for _, show := range []bool{false, true} {
		r := &sessionLog{}
		s := NewSession[string](NewRegistry(), r)
		s.ShowSecrets = show
		s.Frame("hs", client(1, 0, saslHandshakeReq(0, 1, "PLAIN")))
		s.Frame("hs", broker(1, 1, saslHandshakeResp(0, 1, 0, "PLAIN")))
		s.Frame("tok", client(1, 2, rawToken("\x00alice\x00"+samplePassword)))
		s.Frame("acl", client(1, 3, testkit.KmsgRequest(sampleCreateReq(3, 0), 2, testkit.Ptr("c"))))
		s.Flush()
		checkLines(t, r.lines,
			"hs #1 SaslHandshake request peer=0 by a PLAIN user (not yet accepted)", // not held: printed before its response
			"hs #2 SaslHandshake response peer=1 1ms by a PLAIN user (not yet accepted)",
			"tok #3 SaslToken request peer=0 by User:alice (not yet accepted)",
			"acl #4 CreateAcls request peer=0 by User:alice",
		)
		if r.secrets != show {
			t.Errorf("show=%v: password shown %v", show, r.secrets)
		}
	}
}

// TestSessionClosedDuringAuthentication: a broker that closes the
// connection instead of answering a SASL token refused it; the held
// request that carried the token says so.
func TestSessionClosedDuringAuthentication(t *testing.T) {
	r := &sessionLog{}
	s := NewSession[string](NewRegistry(), r)
	s.Hold = true
	s.Frame("hs", client(7, 0, saslHandshakeReq(1, 1, "PLAIN")))
	s.Frame("hs", broker(7, 1, saslHandshakeResp(1, 1, 0, "PLAIN")))
	s.Frame("auth", client(7, 2, saslAuthReq(2, 2, "\x00mallory\x00"+samplePassword)))
	s.ConnEnd(7)
	s.Flush()
	checkLines(t, r.lines,
		"hs #1 SaslHandshake request peer=2 by a PLAIN user (not yet accepted)",
		"hs #2 SaslHandshake response peer=1 1ms by a PLAIN user (not yet accepted)",
		"auth #3 SaslAuthenticate request peer=0 by User:mallory (failed)",
	)
}

// softwareLog keeps the client software each message carries.
type softwareLog struct {
	sessionLog
	soft []*ClientSoftware
}

func (r *softwareLog) Message(meta string, x Exchange, m *Message) {
	r.soft = append(r.soft, x.Software)
}

// Every message of a connection carries the client software its
// ApiVersions v3+ request named, whatever APIs are shown; before it, none.
func TestSessionNamesTheClientSoftware(t *testing.T) {
	av := kmsg.NewApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "kafka-acls", "4.1.0\x1b"
	apiVersions := testkit.KmsgRequest(&av, 2, testkit.Ptr("adminclient-1"))
	log := &softwareLog{}
	s := NewSession[string](NewRegistry(), log)
	s.Wants = func(k int16) bool { return k == 30 } // ApiVersions is not shown
	s.Frame("a", client(1, 1, testkit.KmsgRequest(sampleCreateReq(3, 0), 1, nil)))
	s.Frame("b", client(1, 2, apiVersions))
	s.Frame("c", client(1, 3, testkit.KmsgRequest(sampleCreateReq(3, 0), 3, nil)))
	s.Flush()
	want := ClientSoftware{"kafka-acls", "4.1.0\x1b"}
	if len(log.soft) != 2 || log.soft[0] != nil || log.soft[1] == nil || *log.soft[1] != want {
		t.Fatalf("software per message: %v", log.soft)
	}
	// A cut or lying frame names nothing.
	for _, bad := range [][]byte{apiVersions[:20], {0, 0, 0, 10, 0, 18, 0, 3, 0, 0, 0, 1, 0x7f, 0xff}} {
		if cs, ok := readClientSoftware(bad); ok {
			t.Errorf("%x: read %v", bad, cs)
		}
	}
}

// TestSessionReusesEntriesOnlyWhenFree: a request handed out by its hold
// timeout is still named by its pending request, and its response writes
// to it when it comes. Its entry must not be reused meanwhile: the request
// after it (made once it was handed out) keeps its own peer and waits for
// its own response. A reused correlation id and a closed connection take
// their requests back without touching a later entry either.
func TestSessionReusesEntriesOnlyWhenFree(t *testing.T) {
	req := func(corr int32) []byte { return testkit.KmsgRequest(sampleCreateReq(3, 0), corr, testkit.Ptr("c")) }
	resp := kmsg.NewPtrCreateACLsResponse()
	resp.SetVersion(3)
	resp.Results = append(resp.Results, kmsg.NewCreateACLsResponseResult())
	r := &sessionLog{}
	s := NewSession[string](NewRegistry(), r)
	s.Hold = true
	const late = 31_000 // ms: past holdFor
	s.Frame("a", client(1, 0, req(1)))
	s.Pass("tick", at(late)) // a is handed out, unanswered
	s.Frame("b", client(1, late+1, req(2)))
	s.Frame("ra", broker(1, late+2, testkit.KmsgResponse(resp, 1)))
	s.Frame("c", client(1, late+3, req(3)))
	s.Frame("c2", client(1, late+4, req(3))) // the id again, c unanswered
	s.Frame("rb", broker(1, late+5, testkit.KmsgResponse(resp, 2)))
	s.Frame("d", client(2, late+6, req(7)))
	s.ConnEnd(2)
	s.Frame("e", client(1, late+7, req(8)))
	s.Frame("rc2", broker(1, late+8, testkit.KmsgResponse(resp, 3)))
	s.Frame("re", broker(1, late+9, testkit.KmsgResponse(resp, 8)))
	s.Flush()
	checkLines(t, r.lines,
		"a #1 CreateAcls request peer=0",
		"tick",
		"b #2 CreateAcls request peer=6",
		"ra #3 CreateAcls response peer=1 31.002s",
		"c #4 CreateAcls request peer=0",
		"c2 #5 CreateAcls request peer=9",
		"rb #6 CreateAcls response peer=2 4ms",
		"d #7 CreateAcls request peer=0",
		"e #8 CreateAcls request peer=10",
		"rc2 #9 CreateAcls response peer=5 4ms",
		"re #10 CreateAcls response peer=8 2ms",
	)
}
