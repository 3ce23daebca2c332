package reassembly

import "time"

// What every consumer of an Event needs, without a type switch: when it
// was captured and which connection and direction it is of. The methods
// are named for the interface because the structs' own fields are Time
// and Flow.

// EventTime is when the event's first byte (or the event) was captured.
func (e *Frame) EventTime() time.Time          { return e.First }
func (e *Gap) EventTime() time.Time            { return e.Time }
func (e *Unparseable) EventTime() time.Time    { return e.Time }
func (e *Incomplete) EventTime() time.Time     { return e.Time }
func (e *Retransmission) EventTime() time.Time { return e.Time }
func (e *BufferLimit) EventTime() time.Time    { return e.Time }
func (e *PortDetected) EventTime() time.Time   { return e.Time }
func (e *Evicted) EventTime() time.Time        { return e.Time }
func (e *ConnEnd) EventTime() time.Time        { return e.Time }
func (e *LayerEvent) EventTime() time.Time     { return e.Time }

// EventFlow is the direction the event is of; an event of a whole
// connection (Evicted, ConnEnd) gives its client→broker direction, and
// PortDetected, which is of no connection, the zero Flow.
func (e *Frame) EventFlow() Flow          { return e.Flow }
func (e *Gap) EventFlow() Flow            { return e.Flow }
func (e *Unparseable) EventFlow() Flow    { return e.Flow }
func (e *Incomplete) EventFlow() Flow     { return e.Flow }
func (e *Retransmission) EventFlow() Flow { return e.Flow }
func (e *BufferLimit) EventFlow() Flow    { return e.Flow }
func (e *PortDetected) EventFlow() Flow   { return Flow{} }
func (e *Evicted) EventFlow() Flow        { return clientFlow(e.Conn) }
func (e *ConnEnd) EventFlow() Flow        { return clientFlow(e.Conn) }
func (e *LayerEvent) EventFlow() Flow     { return e.Flow }

func clientFlow(k ConnKey) Flow {
	return Flow{Conn: k, ConnID: k.ID, FromClient: true, Src: k.Client, Dst: k.Server}
}
