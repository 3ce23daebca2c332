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
	// tokens are the delegation tokens created in the capture, by their
	// HMAC's digest: a renewal or expiry names only the HMAC.
	tokens map[string]tokenInfo
	// Reads keeps the describes (DescribeAcls, ...) as rows; without it
	// they are left out.
	Reads bool
	// Stream, when set, takes each exchange's rows as its response comes
	// instead of the log keeping them; Finish then returns only the
	// unanswered requests' rows.
	Stream func([]Row)
	// Kinds, when set, are the kinds kept of the changes forwarded in an
	// Envelope (the others come only as the APIs asked for).
	Kinds []Kind
}

// NewLog returns an empty log.
func NewLog() *Log { return &Log{reqs: map[int]*Request{}, tokens: map[string]tokenInfo{}} }

// Add takes a decoded message. meta is where it was captured, its Client
// and Broker already the connection's two sides; peer is the index of its
// counterpart (Exchange.Peer), 0 when there is none.
func (l *Log) Add(m *dissect.Message, meta Meta, peer int) {
	if m == nil {
		return
	}
	m, meta, ok := unwrap(m, meta)
	if !ok || IsRead(m.APIKey) && !l.Reads || l.Kinds != nil && !contains(l.Kinds, KindOfAPI(m.APIKey)) {
		return
	}
	if m.Direction == dissect.Request {
		if r := ReadRequest(m, meta); r != nil {
			if t, ok := l.tokens[r.token]; ok && r.token != "" && len(r.Changes) == 1 {
				c := &r.Changes[0].Target
				c.Owner, c.Renewers, c.TokenID = t.owner, t.renewers, t.id
			}
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
	if resp.created != nil && len(rows) == 1 && rows[0].Result == ResultOK && rows[0].Target != nil {
		t := rows[0].Target
		l.tokens[resp.created.hash] = tokenInfo{owner: t.Owner, renewers: t.Renewers, id: t.TokenID}
	}
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
