package reassembly

import (
	"net/netip"
	"time"
)

// Event is one of *Frame, *Gap, *Unparseable, *Incomplete, *Retransmission,
// *BufferLimit, *PortDetected, *Evicted, *ConnEnd, *LayerEvent. An event may be kept, except a
// *Frame, and the slices inside events (Frame.Data, Frame.Packets, Incomplete.Head) are valid
// only during the emit call: the Pipeline reuses their memory, and the Frame itself.
type Event interface {
	isEvent()
	// EventTime and EventFlow say when and where, whatever the type.
	EventTime() time.Time
	EventFlow() Flow
}

// ConnKey identifies one TCP connection. ID numbers connections from 1 in the
// order they are first seen, so a reused 4-tuple gets a new key.
type ConnKey struct {
	Client, Server netip.AddrPort
	ID             uint64
}

// Flow says which connection and direction an event belongs to.
type Flow struct {
	Conn       ConnKey
	ConnID     uint64 // == Conn.ID
	FromClient bool
	Src, Dst   netip.AddrPort
}

// Frame is one complete frame.
type Frame struct {
	Flow
	StreamOffset int64
	// Size is the frame length including the size prefix.
	Size int
	// Data is the whole frame including the prefix, or only the prefix and
	// the first HeadLen bytes when Truncated.
	Data []byte
	// Truncated is set when the frame rules did not keep the body
	// (FrameRules.Keep) or the body did not fit the buffer caps (a
	// BufferLimit event says so).
	Truncated bool
	// Packets are the 1-based numbers of the packets that carried the
	// frame's bytes, in stream order, each once; at most MaxFramePackets.
	Packets     []int
	First, Last time.Time
	// PeerPending is set on a broker→client frame when the client→broker
	// direction still holds bytes not released as frames or events (held
	// out of order, or a frame still being collected): the request this
	// response answers may yet come out.
	PeerPending bool
	// Opened: the direction was captured from its SYN, so StreamOffset 0
	// is its first byte, not only the first one captured.
	Opened bool
}

// Gap reports bytes that were never captured. Length is -1 when unknown.
type Gap struct {
	Flow
	StreamOffset, Length int64
	Time                 time.Time
}

// Unparseable reports bytes skipped while looking for a frame boundary.
// Leading is set for bytes before the first frame boundary of a direction
// captured without its SYN: the rest of frames sent before the capture
// started (a capture begun mid-connection), not malformed data. Unframed
// is set, with Leading, when the direction ended before any frame boundary
// came: then nothing shows what its bytes were (say TLS picked up inside a
// record, or another protocol), and they are no tail of one frame. TLS is
// set, with Leading, when the bytes are TLS records (Config.LeadingTLS
// found them so): a connection picked up inside a record, after its
// handshake, which no key log opens.
type Unparseable struct {
	Flow
	StreamOffset, Length   int64
	Time                   time.Time
	Leading, Unframed, TLS bool
}

// Incomplete reports a frame cut short. Want is the frame size including
// the prefix, or -1 when not even the prefix was complete. Have counts every
// captured byte of the frame, those after a gap inside it included: when a
// gap ends before the end of a frame whose size is known, the frame's
// remaining bytes are counted and the event comes at its end. Reason is one
// of "gap", "end of capture", "connection reset", "connection closed",
// "idle timeout", "evicted". Head holds the frame's first captured bytes (size prefix
// included, at most the prefix and HeadLen bytes, only those before the first gap) so that a
// caller can read a request's header; it is valid only during the emit call.
type Incomplete struct {
	Flow
	StreamOffset, Have, Want int64
	Reason                   string
	Time                     time.Time
	Head                     []byte
}

// Retransmission reports a segment carrying Length bytes that had already
// been received (or given up on) starting at StreamOffset.
type Retransmission struct {
	Flow
	StreamOffset, Length int64
	Time                 time.Time
}

// BufferLimit reports that a cap (Config.MaxConnBuffer or MaxTotalBuffer)
// stopped buffering: for a frame body (the frame is then emitted Truncated)
// or for out-of-order data (the hole before it is then declared a Gap).
type BufferLimit struct {
	Flow
	StreamOffset, Length int64
	Time                 time.Time
}

// PortDetected says the DetectPorts heuristic found Kafka at Server. It is
// reported once per address and port. TLS: its client started a TLS
// handshake (a Layer took the connection), not a Kafka request: what it
// carries is Kafka only once decrypted frames say so.
type PortDetected struct {
	Server netip.AddrPort
	Time   time.Time
	TLS    bool
}

// Evicted says the connection table was full (Config.MaxConns) when a new
// connection came, so Conn, the least recently active one, was ended: what
// it held is flushed as at its end (a cut frame is Incomplete with reason
// "evicted") and a ConnEnd follows. A later packet of it starts a new
// connection, picked up mid-stream.
type Evicted struct {
	Conn     ConnKey
	ConnID   uint64
	Time     time.Time // of the packet that needed the room
	LastSeen time.Time // of Conn's last packet
	MaxConns int
}

// ConnEnd says no more events will come for Conn: FIN both ways, RST, idle
// timeout, a new connection on the same 4-tuple, or end of input.
type ConnEnd struct {
	Conn   ConnKey
	ConnID uint64
	Time   time.Time
	Reset  bool
}

func (*Frame) isEvent()          {}
func (*Gap) isEvent()            {}
func (*Unparseable) isEvent()    {}
func (*Incomplete) isEvent()     {}
func (*Retransmission) isEvent() {}
func (*BufferLimit) isEvent()    {}
func (*PortDetected) isEvent()   {}
func (*Evicted) isEvent()        {}
func (*ConnEnd) isEvent()        {}
