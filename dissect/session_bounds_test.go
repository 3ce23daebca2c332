package dissect

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// produceReq is a Produce request frame at version v with acks, an
// optional transactional id and records of size bytes.
func produceReq(v, acks int16, txn *string, corr int32, clientID *string, size int) []byte {
	p := kmsg.NewPtrProduceRequest()
	p.SetVersion(v)
	p.Acks, p.TimeoutMillis, p.TransactionID = acks, 1000, txn
	if size > 0 {
		t := kmsg.NewProduceRequestTopic()
		t.Topic = "t"
		pt := kmsg.NewProduceRequestTopicPartition()
		pt.Records = make([]byte, size)
		t.Partitions = append(t.Partitions, pt)
		p.Topics = append(p.Topics, t)
	}
	return testkit.KmsgRequest(p, corr, clientID)
}

// A Produce request with acks=0 asks for no response, at every version
// and whatever comes before Acks; any other acks does. A head too short
// to hold Acks, or a frame that lies about the transactional id's length,
// is taken to ask for one.
func TestUnansweredProduce(t *testing.T) {
	long := strings.Repeat("c", 60)
	for v := int16(0); v <= 13; v++ {
		for _, acks := range []int16{0, 1, -1} {
			for _, txn := range []*string{nil, testkit.Ptr("tx-1")} {
				f := produceReq(v, acks, txn, 7, testkit.Ptr("kgo"), 100)
				h, _ := PeekRequest(f)
				if got := unanswered(h, f); got != (acks == 0) {
					t.Errorf("v%d acks=%d txn=%v: unanswered %v", v, acks, txn != nil, got)
				}
			}
			f := produceReq(v, acks, nil, 7, &long, 100)[:64]
			h, _ := PeekRequest(f)
			if unanswered(h, f) {
				t.Errorf("v%d acks=%d: a 64-byte head with a 60-byte client id read as unanswered", v, acks)
			}
		}
	}
	f := produceReq(3, 0, testkit.Ptr("tx"), 7, nil, 0)
	f[15] = 0x7f // the id's int16 length runs past the frame
	h, _ := PeekRequest(f)
	if unanswered(h, f) {
		t.Error("a lying transactional id length read as unanswered")
	}
	f = produceReq(3, 0, nil, 7, nil, 0)
	f[14], f[15] = 0xff, 0xfe // -2 for the null id: no length a string has
	if unanswered(h, f) {
		t.Error("a negative transactional id length other than -1 read as unanswered")
	}
	meta := testkit.KmsgRequest(kmsg.NewPtrMetadataRequest(), 1, nil)
	h, _ = PeekRequest(meta)
	if unanswered(h, meta) {
		t.Error("a Metadata request read as unanswered")
	}
}

// An acks=0 Produce is not held for a response that never comes: it is
// handed out at once, and the request after it waits for its own.
func TestSessionDoesNotHoldAcksZero(t *testing.T) {
	r := &sessionLog{}
	s := NewSession[string](NewRegistry(), r)
	s.Hold = true
	s.Frame("p0", client(1, 0, produceReq(9, 0, nil, 1, nil, 0)))
	checkLines(t, r.lines, "p0 #1 Produce request peer=0")
	s.Frame("p1", client(1, 1, produceReq(9, 1, nil, 2, nil, 0)))
	s.Frame("p0", client(1, 2, produceReq(9, 0, nil, 3, nil, 0)))
	if len(r.lines) != 1 {
		t.Fatalf("an acks=1 Produce was not held: %q", r.lines)
	}
	resp := kmsg.NewPtrProduceResponse()
	resp.SetVersion(9)
	s.Frame("r1", broker(1, 3, testkit.KmsgResponse(resp, 2)))
	s.Flush()
	checkLines(t, r.lines, "p0 #1 Produce request peer=0", "p1 #2 Produce request peer=4", "p0 #3 Produce request peer=0", "r1 #4 Produce response peer=2 2ms")
}

// Requests that get no response do not push out those that will: a
// CreateAcls is still answered after more acks=0 Produce requests than a
// connection keeps pending. Past that bound, the oldest request still
// pending is the one forgotten, also when others were answered between.
func TestSessionPendingBound(t *testing.T) {
	acl := testkit.KmsgRequest(sampleCreateReq(3, 0), 1, nil)
	aclResp := testkit.KmsgResponse(sampleCreateResp(3, 0), 1)
	r := &sessionLog{}
	s := NewSession[string](NewRegistry(), r)
	s.Wants = func(k int16) bool { return k == 30 }
	s.Frame("a", client(1, 0, acl))
	for i := range maxPendingPerConn + 10 {
		s.Frame("", client(1, 1, produceReq(9, 0, nil, int32(i+2), nil, 0)))
	}
	s.Frame("b", broker(1, 2, aclResp))
	s.Flush()
	if got := r.lines[len(r.lines)-1]; !strings.HasPrefix(got, "b #4108 CreateAcls response peer=1") {
		t.Errorf("after acks=0 Produce requests: %q", got)
	}

	r = &sessionLog{}
	s = NewSession[string](NewRegistry(), r)
	s.Wants = func(k int16) bool { return k == 30 }
	produceResp := kmsg.NewPtrProduceResponse()
	produceResp.SetVersion(9)
	s.Frame("old", client(1, 0, produceReq(9, 1, nil, 100000, nil, 0)))
	s.Frame("a", client(1, 0, testkit.WithCorr(acl, 100001, true)))
	for i := range maxPendingPerConn + 5 {
		corr := int32(i)
		s.Frame("", client(1, 1, produceReq(9, 1, nil, corr, nil, 0)))
		if i%2 == 0 { // answered: stale in the connection's order
			s.Frame("", broker(1, 1, testkit.KmsgResponse(produceResp, corr)))
		}
	}
	// 2 + 2050 unanswered: under the bound, both old ones are pending;
	// then the bound is reached after 2045 more.
	s.Frame("b", broker(1, 2, testkit.WithCorr(aclResp, 100001, false)))
	for i := range maxPendingPerConn {
		s.Frame("", client(1, 3, produceReq(9, 1, nil, int32(200000+i), nil, 0)))
	}
	s.Frame("old", broker(1, 4, testkit.KmsgResponse(produceResp, 100000)))
	s.Flush()
	var got []string
	for _, l := range r.lines {
		if strings.HasPrefix(l, "b ") || strings.HasPrefix(l, "old ") {
			got = append(got, l)
		}
	}
	// The CreateAcls was answered in time; the first Produce, the oldest
	// pending, was forgotten when the bound was reached: its response
	// comes unmatched.
	// Indexes: 2 + 4101 requests and 2051 responses, then 4096 requests.
	checkLines(t, got, "b #6155 CreateAcls response peer=2 2ms", fmt.Sprintf("old unmatched #%d corr=100000 size=15", 6156+maxPendingPerConn))
}

// A request waiting for its response holds what comes after it only up to
// maxQueuedBytes: past that it is handed out without its peer, before the
// capture ends.
func TestSessionHoldsBoundedBytes(t *testing.T) {
	r := &sessionLog{}
	s := NewSession[string](NewRegistry(), r)
	s.Hold = true
	s.Frame("acl", client(1, 0, testkit.KmsgRequest(sampleCreateReq(3, 0), 1, nil)))
	big := 1 << 20
	n := 0
	for ; n < 2*maxQueuedBytes/big && len(r.lines) == 0; n++ {
		// Another connection's Produce requests, each waiting too.
		s.Frame("p", client(2, n+1, produceReq(9, 1, nil, int32(n), nil, big)))
	}
	if len(r.lines) == 0 || r.lines[0] != "acl #1 CreateAcls request peer=0" {
		t.Fatalf("after %d MiB held: %q", n, r.lines)
	}
	if n < maxQueuedBytes/big-1 || n > maxQueuedBytes/big+1 {
		t.Errorf("the request was handed out after %d MiB held, want %d", n, maxQueuedBytes/big)
	}
	s.Flush()
	if s.held != 0 {
		t.Errorf("%d bytes counted held after Flush", s.held)
	}
}

// franz-go producing with acks=0 to kfake: the broker sends no response
// to those Produce requests, and the session hands each out as soon as it
// is seen, not at the connection's end.
func TestAcksZeroAgainstKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker")
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(1, "fire"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := &recorder{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.Dialer(rec.dial),
		kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite(), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 20 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fire", Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// A Metadata round trip after the last Produce: its bytes are in the
	// recording once it returns.
	if _, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest()); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	var produced, handedOut, responses int
	for i := range rec.conns {
		r := &sessionLog{}
		s := NewSession[string](NewRegistry(), r)
		s.Hold = true
		for j, f := range rec.frames(i) {
			if h, ok := PeekRequest(f.data); ok && f.request && h.APIKey == produceKey {
				produced++
			}
			fi := client(uint64(i), j, f.data)
			fi.FromClient = f.request
			s.Frame("", fi)
		}
		for _, l := range r.lines {
			if strings.Contains(l, "Produce request peer=0") {
				handedOut++
			}
			if strings.Contains(l, "Produce response") || strings.Contains(l, "unmatched") {
				responses++
			}
		}
		s.Flush()
	}
	if produced < 20 || handedOut != produced || responses != 0 {
		t.Fatalf("%d Produce requests, %d handed out before the end, %d responses or unmatched", produced, handedOut, responses)
	}
}
