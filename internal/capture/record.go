package capture

import (
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

// Kind says what a Record holds.
type Kind uint8

const (
	// KindMessage is a decoded Kafka message: Exchange and Message.
	KindMessage Kind = iota
	// KindUnmatched is a complete response whose request was not
	// captured: Unmatched.
	KindUnmatched
	// KindIncomplete is a frame cut short: Event is its
	// *reassembly.Incomplete, Cut what the session knows of its header.
	KindIncomplete
	// KindEvent is anything else the capture says: Event is one of
	// reassembly's events (a gap, skipped bytes, a retransmission, a buffer
	// limit, a port found, an eviction) or a *reassembly.LayerEvent of the
	// TLS layer (its Value a *tlslayer.Session or *tlslayer.Problem).
	KindEvent
)

// AlertPrincipal is whom a client certificate a TLS alert refused names,
// "" when the client sent none that could be read.
func AlertPrincipal(a *tlslayer.Alert) string {
	if a.Offered != "sent" {
		return ""
	}
	return dissect.TLSPrincipal(a.DN)
}

// TLS is a decrypted connection's TLS session.
type TLS struct {
	Version, Cipher, SNI string
}

// Record is one output of a run, in capture order. It is valid only during
// the listener's call: the run reuses the memory of Message and Packets.
type Record struct {
	Kind Kind
	// File is the capture file as given on the command line; "" live.
	File string
	// Flow is the connection and direction (for a connection's events;
	// zero for a port found).
	Flow reassembly.Flow
	// Time is when its first byte (or the event) was captured.
	Time time.Time
	// Offset is its first byte's offset in its direction's stream
	// (plaintext offsets on a decrypted connection).
	Offset int64
	// Packets are the numbers of the packets that carried a message.
	Packets []int
	// TLS is the connection's session when the message was decrypted.
	TLS *TLS

	Exchange  dissect.Exchange
	Message   *dissect.Message
	Unmatched dissect.Unmatched
	Cut       dissect.Incomplete
	Event     reassembly.Event

	// Malformed is Malformed(r), set by the run.
	Malformed bool
}

// Malformed is the run's one answer to "is this damage?": a message the
// decoder found problems in (an inferred one is a guess, not damage), bytes
// skipped looking for a frame (but not those before a connection's first
// frame boundary, the tail of what was sent before the capture began), and
// a TLS record that could not be decoded. The exit status, the explorer's
// marks and the audit all read it.
func Malformed(r *Record) bool {
	switch r.Kind {
	case KindMessage:
		return len(r.Message.Problems) > 0 && !r.Exchange.Inferred
	case KindEvent:
		switch e := r.Event.(type) {
		case *reassembly.Unparseable:
			return !e.Leading
		case *reassembly.LayerEvent:
			_, bad := e.Value.(*tlslayer.Problem)
			return bad
		}
	}
	return false
}

// eventPlace is where and when a pipeline event happened, and the stream
// offset of the bytes it is about.
func eventPlace(e reassembly.Event) (reassembly.Flow, time.Time, int64) {
	var off int64
	switch e := e.(type) {
	case *reassembly.Gap:
		off = e.StreamOffset
	case *reassembly.Unparseable:
		off = e.StreamOffset
	case *reassembly.Incomplete:
		off = e.StreamOffset
	case *reassembly.Retransmission:
		off = e.StreamOffset
	case *reassembly.BufferLimit:
		off = e.StreamOffset
	case *reassembly.LayerEvent:
		if p, ok := e.Value.(*tlslayer.Problem); ok {
			off = p.StreamOffset
		}
	}
	return e.EventFlow(), e.EventTime(), off
}
