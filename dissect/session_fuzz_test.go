package dissect

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// handout is one thing a Session handed out, as FuzzSession checks it.
type handout struct {
	kind     string // "message", "unmatched", "incomplete", "event"
	index    int
	peer     int
	request  bool
	inferred bool
}

type handoutLog struct{ out []handout }

func (l *handoutLog) Message(_ int, x Exchange, m *Message) {
	l.out = append(l.out, handout{"message", x.Index, x.Peer, m.Direction == Request, x.Inferred})
}

func (l *handoutLog) Unmatched(_ int, u Unmatched) {
	l.out = append(l.out, handout{kind: "unmatched", index: u.Index})
}

func (l *handoutLog) Incomplete(_ int, c Incomplete) {
	// A cut request's own peer; a cut response names its request.
	l.out = append(l.out, handout{kind: "incomplete", index: c.Index, peer: c.Peer})
}

func (l *handoutLog) Event(int) { l.out = append(l.out, handout{kind: "event"}) }

// FuzzSession drives a holding Session with an arbitrary sequence of
// requests (acks=0 and acks=1 Produce, CreateAcls, Metadata, SASL),
// responses, cut frames, connection ends, events and jumps in capture
// time on three connections, with correlation ids from a small range so
// that they collide. Whatever the sequence: no panic; after every step the
// bytes counted held are those of the queue and every pending request is
// in its connection's eviction order, which stays within twice the most
// requests it has had pending; what is handed
// out comes in index order, each index once (a guessed response after its
// Unmatched aside); a request that names its response is named back; and
// Flush leaves nothing held.
func FuzzSession(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0, 5, 1, 1, 0, 1, 1, 1, 2, 3, 0, 0, 6, 2, 7, 0, 4, 1})
	f.Add([]byte{0, 0, 1, 0, 0, 2, 0, 0, 3, 1, 0, 2, 6, 9, 0, 1, 0, 3, 2, 1, 0, 4, 0, 0})
	f.Add([]byte{0, 4, 1, 1, 4, 1, 0, 3, 1, 2, 0, 0, 3, 0, 1, 5, 0, 0, 6, 200, 0, 0, 0, 1})
	reqs := fuzzSessionRequests()
	resps := fuzzSessionResponses()
	f.Fuzz(func(t *testing.T, ops []byte) {
		log := &handoutLog{}
		s := NewSession[int](NewRegistry(), log)
		s.Hold = true
		s.Guess = len(ops)%2 == 0
		now := t0
		peak := map[uint64]int{} // most requests each connection has had pending at once
		next := func() int {
			if len(ops) == 0 {
				return 0
			}
			b := ops[0]
			ops = ops[1:]
			return int(b)
		}
		for step := 0; len(ops) > 0; step++ {
			op, conn, a := next()%7, uint64(next()%3), next()
			corr := int32(a % 8)
			switch op {
			case 0:
				r := reqs[a/8%len(reqs)]
				s.Frame(step, FrameInfo{Conn: conn, FromClient: true, Data: testkit.WithCorr(r, corr, true), First: now, Last: now})
			case 1:
				r := resps[a/8%len(resps)]
				s.Frame(step, FrameInfo{Conn: conn, Data: testkit.WithCorr(r, corr, false), PeerPending: a&0x80 != 0, First: now, Last: now})
			case 2:
				r := testkit.WithCorr(reqs[a/8%len(reqs)], corr, true)
				s.Cut(step, CutInfo{Conn: conn, FromClient: true, Head: r[:min(len(r), 14+a%40)], Time: now})
			case 3:
				r := testkit.WithCorr(resps[a/8%len(resps)], corr, false)
				s.Cut(step, CutInfo{Conn: conn, Head: r[:min(len(r), a%12)], Time: now})
			case 4:
				s.ConnEnd(conn)
			case 5:
				s.Pass(step, now)
			case 6:
				now = now.Add(time.Duration(a) * time.Second)
			}
			if err := checkSessionState(s, peak); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		s.Flush()
		if s.held != 0 || len(s.queue) != 0 {
			t.Fatalf("after Flush: %d bytes held, %d queued", s.held, len(s.queue))
		}
		if err := checkHandouts(log.out); err != nil {
			t.Fatal(err)
		}
	})
}

func fuzzSessionRequests() [][]byte {
	id := testkit.Ptr("fuzz")
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(1)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "PLAIN"
	return [][]byte{
		produceReq(9, 0, nil, 0, id, 0),
		produceReq(9, 1, nil, 0, id, 0),
		produceReq(3, 0, nil, 0, id, 0),
		testkit.KmsgRequest(sampleCreateReq(3, 0), 0, id),
		testkit.KmsgRequest(meta, 0, id),
		testkit.KmsgRequest(hs, 0, id),
	}
}

func fuzzSessionResponses() [][]byte {
	produce := kmsg.NewPtrProduceResponse()
	produce.SetVersion(9)
	meta := kmsg.NewPtrMetadataResponse()
	meta.SetVersion(1)
	return [][]byte{
		testkit.KmsgResponse(sampleCreateResp(3, 0), 0),
		testkit.KmsgResponse(produce, 0),
		testkit.KmsgResponse(meta, 0),
	}
}

// checkSessionState checks what a Session's bounds rely on. A
// connection's eviction order is compacted when a request is added to it,
// so it stays within twice the most requests pending at once (peak, kept
// here per connection) and a few; answers alone do not shrink it.
func checkSessionState(s *Session[int], peak map[uint64]int) error {
	held := 0
	for _, e := range s.queue {
		held += len(e.frame)
	}
	if held != s.held {
		return fmt.Errorf("%d bytes counted held, the queue holds %d", s.held, held)
	}
	for id := range peak {
		if s.conns[id] == nil {
			delete(peak, id) // ended: a new connection starts afresh
		}
	}
	for id, c := range s.conns {
		peak[id] = max(peak[id], len(c.pending))
		if len(c.order) > 2*peak[id]+17 {
			return fmt.Errorf("conn %d: %d in order for at most %d pending", id, len(c.order), peak[id])
		}
		in := map[pendingRef]bool{}
		for _, r := range c.order {
			in[r] = true
		}
		for corr, p := range c.pending {
			if !in[pendingRef{corr, p.index}] {
				return fmt.Errorf("conn %d: pending corr %d (#%d) is not in the eviction order", id, corr, p.index)
			}
		}
	}
	return nil
}

// checkHandouts checks the order and the peers of what was handed out.
func checkHandouts(out []handout) error {
	last := 0
	byIndex := map[int]handout{}
	for i, h := range out {
		if h.kind == "event" || h.kind == "incomplete" && h.index == 0 {
			continue // an event, or a cut frame whose header was not captured
		}
		guess := h.inferred && i > 0 && out[i-1].kind == "unmatched" && out[i-1].index == h.index
		if h.index < last || h.index == last && !guess {
			return fmt.Errorf("#%d (%s) handed out after #%d", h.index, h.kind, last)
		}
		last = h.index
		if !guess {
			byIndex[h.index] = h
		}
	}
	for _, h := range out {
		if h.kind != "message" || !h.request || h.peer == 0 {
			continue
		}
		if r, ok := byIndex[h.peer]; ok && r.peer != h.index {
			return fmt.Errorf("request #%d names #%d, which names #%d", h.index, h.peer, r.peer)
		}
	}
	return nil
}
