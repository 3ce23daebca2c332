package capture

import (
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

// origin is what the capture says of a session input, handed back with its
// output: where and when, and the pipeline event it came from.
type origin struct {
	flow    reassembly.Flow
	time    time.Time
	offset  int64
	packets []int
	event   reassembly.Event
	tls     *TLS
	file    string
}

// session feeds the pipeline's events to a dissect.Session and its output,
// as Records, to the listener, while the count limit allows.
type session struct {
	lib       *dissect.Session[origin]
	l         Listener
	limit     int
	handed    int // messages handed out
	malformed bool
	refused   int64 // TLS handshakes refused
	// undecrypted counts the TLS connections not decrypted for another
	// reason than a refusal; tlsReason is the first one's reason.
	undecrypted int64
	tlsReason   string
	// refusedConns are the open connections counted in refused: both its
	// session and its alert may say so.
	refusedConns map[uint64]bool
	file         string
	tls          map[uint64]*TLS // decrypted connections
	rec          Record
	// need is the listener as a Needer, nil when it is none; reg reads
	// the headers it is asked about, head is their scratch space.
	need Needer
	reg  *dissect.Registry
	head *head
	// pool, when set, decodes and renders the messages (see Renderer).
	pool *renderPool
}

func newSession(r *Run, l Listener) *session {
	s := &session{l: l, limit: r.opts.Count}
	s.lib = dissect.NewSession[origin](r.reg, sink{s})
	s.lib.Wants = r.opts.wants
	s.lib.Guess = r.opts.Guess
	s.lib.ShowSecrets = r.opts.ShowSecrets
	s.lib.MaxDecompressed = r.opts.MaxDecompressed
	s.lib.MaxNodes = r.opts.MaxNodes
	s.lib.BatchHeaders = r.opts.BatchHeaders
	// A live capture hands each message out at once, without waiting for
	// its response to name it.
	s.lib.Hold = r.opts.Iface == ""
	s.need, _ = l.(Needer)
	s.reg = r.reg
	s.lib.Skip = s.skip
	s.lib.Keep = func(o origin) origin {
		o.packets = append([]int(nil), o.packets...)
		return o
	}
	return s
}

func (s *session) stopped() bool { return s.limit > 0 && s.handed >= s.limit }

func (s *session) flush() { s.lib.Flush() }

// refuse counts a connection whose TLS handshake was refused, once.
func (s *session) refuse(conn uint64) {
	if s.refusedConns[conn] {
		return
	}
	if s.refusedConns == nil {
		s.refusedConns = map[uint64]bool{}
	}
	s.refusedConns[conn] = true
	s.refused++
}

func (s *session) pass(e reassembly.Event) {
	s.lib.Pass(origin{event: e, file: s.file}, e.EventTime())
}

func (s *session) event(e reassembly.Event) {
	switch e := e.(type) {
	case *reassembly.Frame:
		// packets is the event's own slice, reused by the reassembly: Keep
		// copies it for the frames the session keeps.
		o := origin{flow: e.Flow, time: e.First, offset: e.StreamOffset, packets: e.Packets, tls: s.tls[e.ConnID], file: s.file}
		s.lib.Frame(o, dissect.FrameInfo{Conn: e.ConnID, FromClient: e.FromClient, Data: e.Data, Head: e.Truncated,
			Offset: e.StreamOffset, Opened: e.Opened, PeerPending: e.PeerPending, First: e.First, Last: e.Last})
	case *reassembly.ConnEnd:
		s.lib.ConnEnd(e.ConnID)
		delete(s.tls, e.ConnID)
		delete(s.refusedConns, e.ConnID)
	case *reassembly.Incomplete:
		s.lib.Cut(origin{flow: e.Flow, time: e.Time, offset: e.StreamOffset, event: e, file: s.file},
			dissect.CutInfo{Conn: e.ConnID, FromClient: e.FromClient, Head: e.Head, Time: e.Time})
	case *reassembly.LayerEvent:
		switch v := e.Value.(type) {
		case *tlslayer.Session:
			if v.Decrypted {
				if s.tls == nil {
					s.tls = map[uint64]*TLS{}
				}
				s.tls[e.ConnID] = &TLS{Version: v.Version, Cipher: v.Cipher, SNI: v.SNI}
			}
			if v.Refused {
				s.refuse(e.ConnID)
			} else if !v.Decrypted {
				if s.undecrypted++; s.tlsReason == "" {
					s.tlsReason = v.Reason
				}
			}
			s.pass(e)
		case *tlslayer.Alert:
			if v.RefusedCert() {
				s.refuse(e.ConnID)
				s.lib.SetTLSRefused(e.ConnID)
			}
			s.pass(e)
		case *tlslayer.ClientCert:
			if v.Unreadable {
				s.lib.SetTLSIdentityUnknown(e.ConnID)
			} else {
				s.lib.SetTLSIdentity(e.ConnID, v.DN)
			}
		default:
			s.pass(e)
		}
	default:
		s.pass(e)
	}
}

// sink turns the dissect.Session's output into Records.
type sink struct{ s *session }

func (k sink) record(kind Kind, o *origin) *Record {
	r := &k.s.rec
	*r = Record{Kind: kind, File: o.file, Flow: o.flow, Time: o.time, Offset: o.offset, Packets: o.packets, TLS: o.tls, Event: o.event}
	return r
}

func (k sink) hand(r *Record) {
	r.Malformed = Malformed(r)
	if r.Malformed {
		k.s.malformed = true
	}
	if k.s.pool != nil {
		k.s.pool.record(r)
		return
	}
	k.s.l.Record(r)
}

func (k sink) Message(o origin, x dissect.Exchange, m *dissect.Message) {
	if k.s.stopped() {
		return
	}
	r := k.record(KindMessage, &o)
	r.Exchange, r.Message = x, m
	k.hand(r)
	k.s.handed++
}

func (k sink) Unmatched(o origin, u dissect.Unmatched) {
	if k.s.stopped() {
		return
	}
	r := k.record(KindUnmatched, &o)
	r.Unmatched = u
	k.hand(r)
}

func (k sink) Incomplete(o origin, c dissect.Incomplete) {
	if k.s.stopped() {
		return
	}
	r := k.record(KindIncomplete, &o)
	r.Cut = c
	k.hand(r)
}

func (k sink) Event(o origin) {
	if k.s.stopped() {
		return
	}
	r := k.record(KindEvent, &o)
	r.Flow, r.Time, r.Offset = eventPlace(o.event)
	k.hand(r)
}
