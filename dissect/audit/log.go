package audit

import (
	"slices"

	"github.com/kdissect/kdissect/dissect"
)

// Log pairs the ACL requests of a capture with their responses and turns
// each exchange into rows: the one pairing behind `kdissect audit` and the
// explorer's audit view. Messages come in capture order, a request before
// its response (a dissect.Session hands them out so). The decoder may reuse
// a message's tree after Add returns: what a row needs is copied at once.
type Log struct {
	reqs map[int]*Request // by message index, awaiting a response
	rows []Row
	// Stream, when set, takes each exchange's rows as its response comes
	// instead of the log keeping them; Finish then returns only the
	// unanswered requests' rows.
	Stream func([]Row)
}

// NewLog returns an empty log.
func NewLog() *Log { return &Log{reqs: map[int]*Request{}} }

// Add takes a decoded message. meta is where it was captured, its Client
// and Broker already the connection's two sides; peer is the index of its
// counterpart (Exchange.Peer), 0 when there is none.
func (l *Log) Add(m *dissect.Message, meta Meta, peer int) {
	if m == nil {
		return
	}
	if m.Direction == dissect.Request {
		if r := ReadRequest(m, meta); r != nil {
			l.reqs[meta.Index] = r
		}
		return
	}
	resp := ReadResponse(m, meta)
	if resp == nil {
		return
	}
	req := l.reqs[peer]
	delete(l.reqs, peer)
	if req == nil {
		// Its request was not read whole (a frame cut after its header,
		// or not captured): the response's own bindings are what is known.
		resp.RequestIndex = peer
	}
	rows := Rows(req, resp)
	if l.Stream != nil {
		l.Stream(rows)
		return
	}
	l.rows = append(l.rows, rows...)
}

// Finish adds the rows of the requests no response answered and returns
// every row kept, in capture order. The log is empty afterwards.
func (l *Log) Finish() []Row {
	idx := make([]int, 0, len(l.reqs))
	for i := range l.reqs {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	rows := l.rows
	for _, i := range idx {
		rows = append(rows, Rows(l.reqs[i], nil)...)
	}
	clear(l.reqs)
	l.rows = nil
	Sort(rows)
	return rows
}

// Principal names who made a change: the principal the connection
// authenticated as, marked when the broker refused it or had not accepted
// it yet; nil when the wire does not say (a GSSAPI user, a capture begun
// mid-connection).
func Principal(id dissect.Identity) *string {
	if id.Principal == "" {
		return nil
	}
	s := id.Principal + id.Qualifier()
	return &s
}
