package capture

import "github.com/kdissect/kdissect/dissect"

// Need is what a listener needs of a message, asked before the run
// decodes it.
type Need uint8

const (
	// NeedBody: the decoded message (tree, problems, summary), as every
	// listener gets it that is no Needer.
	NeedBody Need = iota
	// NeedNothing: the message is passed over, not decoded and not
	// handed to the listener; it still counts toward -c.
	NeedNothing
)

// Needer is a Listener that says what it needs of each message before it
// is decoded, so that messages nobody shows cost no decoding (a display
// filter that rejects them by their header).
//
// Need's record is a KindMessage with every field but what the body
// gives: its Message has the header's fields (Direction, API, version,
// correlation id, Raw) and a Tree of the RequestHeader's client_id alone;
// no problems, no summary, and Malformed is false. It is valid during the
// call only. A message whose header cannot be read without decoding it (a
// raw SASL token, a frame cut inside its header) is not asked about: it is
// decoded.
type Needer interface {
	Listener
	Need(r *Record) Need
}

// head is the session's scratch space for Need's records.
type head struct {
	rec        Record
	msg        dissect.Message
	root, hdr  dissect.Node
	clientID   dissect.Node
	rootKids   [1]*dissect.Node
	headerKids [1]*dissect.Node
}

// skip asks the listener about a message before it is decoded: true when
// it needs nothing of it, or when -c has been reached (nothing more is
// handed out).
func (s *session) skip(o origin, x *dissect.Exchange, opts dissect.Options, frame []byte) bool {
	if s.stopped() {
		return true
	}
	if s.need == nil {
		if s.pool == nil {
			return false
		}
		s.pool.message(&Record{Kind: KindMessage, File: o.file, Flow: o.flow, Time: o.time, Offset: o.offset,
			Packets: o.packets, TLS: o.tls, Exchange: *x}, frame)
		s.handed++
		return true
	}
	h, ok := s.reg.PeekHead(frame, opts)
	if !ok {
		return false
	}
	hd := s.head
	if hd == nil {
		hd = &head{}
		hd.root.Kind, hd.hdr.Kind, hd.hdr.Category = dissect.KindGroup, dissect.KindGroup, dissect.CatHeader
		hd.hdr.Name = "RequestHeader"
		hd.clientID.Name, hd.clientID.Kind, hd.clientID.Category = "client_id", dissect.KindString, dissect.CatHeader
		hd.rootKids[0], hd.headerKids[0] = &hd.hdr, &hd.clientID
		hd.root.Children = hd.rootKids[:]
		s.head = hd
	}
	hd.hdr.Children = nil
	if h.HasClientID {
		hd.clientID.Str = h.ClientID
		hd.hdr.Children = hd.headerKids[:]
	}
	hd.msg = dissect.Message{Direction: h.Direction, APIKey: h.APIKey, APIVersion: h.APIVersion, APIName: h.APIName,
		CorrelationID: h.CorrelationID, Raw: frame, Tree: &hd.root}
	r := &hd.rec
	*r = Record{Kind: KindMessage, File: o.file, Flow: o.flow, Time: o.time, Offset: o.offset, Packets: o.packets, TLS: o.tls,
		Exchange: *x, Message: &hd.msg}
	if s.need.Need(r) != NeedNothing {
		return false
	}
	s.handed++
	return true
}
