package traffic

import (
	"net"
	"sync"
	"time"
)

// WireEventKind says what happened on a recorded connection.
type WireEventKind uint8

// The kinds of wire events.
const (
	WireOpen  WireEventKind = iota // the client connected (SYN, SYN-ACK, ACK)
	WireData                       // one side wrote bytes
	WireClose                      // the client closed (FIN both ways)
)

// WireEvent is one thing that happened on a recorded TCP connection, in the
// order the client saw it.
type WireEvent struct {
	Conn       int // index into Wire.Conns
	Kind       WireEventKind
	FromClient bool // WireData: the client wrote Data (else it read it)
	Time       time.Time
	Data       []byte
}

// WireConnInfo names the two ends of a recorded connection.
type WireConnInfo struct {
	Client, Server *net.TCPAddr
}

// WireSink receives wire events as they happen, in one global order (the
// Wire's lock is held while it is called). The pcap synthesizer is one.
type WireSink interface {
	WireEvent(info WireConnInfo, ev WireEvent) error
}

// Wire records the raw bytes each side of the client's TCP connections
// carried, with timestamps, in one order across all connections. It sits
// under TLS, so TLS connections are recorded as ciphertext. The order is
// causal: a client write is recorded before it reaches the socket, a read
// after it returned, so every response is recorded after its request.
type Wire struct {
	mu     sync.Mutex
	conns  []WireConnInfo
	events []WireEvent
	keep   bool     // keep events in memory (Events)
	sink   WireSink // also stream them here
	err    error    // the first sink error
	last   time.Time
}

// NewWire returns a recorder that keeps every event in memory.
func NewWire() *Wire { return &Wire{keep: true} }

// NewStreamingWire returns a recorder that hands each event to sink and
// keeps nothing, for captures too large to hold in memory.
func NewStreamingWire(sink WireSink) *Wire { return &Wire{sink: sink} }

// Err returns the first error the sink returned.
func (w *Wire) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Conns returns the recorded connections, by index.
func (w *Wire) Conns() []WireConnInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]WireConnInfo(nil), w.conns...)
}

// Events returns the recorded events in order.
func (w *Wire) Events() []WireEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]WireEvent(nil), w.events...)
}

// record appends an event; the caller holds w.mu. Timestamps never go
// backwards, so the pcap is in time order even if the clock steps.
func (w *Wire) record(ev WireEvent) int {
	ev.Time = time.Now()
	if ev.Time.Before(w.last) {
		ev.Time = w.last
	}
	w.last = ev.Time
	if w.sink != nil && w.err == nil {
		w.err = w.sink.WireEvent(w.conns[ev.Conn], ev)
	}
	if !w.keep {
		return -1
	}
	w.events = append(w.events, ev)
	return len(w.events) - 1
}

// Wrap records conn, a client's TCP connection, from now on.
func (w *Wire) Wrap(conn net.Conn) *WireConn {
	info := WireConnInfo{}
	info.Client, _ = conn.LocalAddr().(*net.TCPAddr)
	info.Server, _ = conn.RemoteAddr().(*net.TCPAddr)
	if info.Client == nil {
		info.Client = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	}
	if info.Server == nil {
		info.Server = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	}
	w.mu.Lock()
	id := len(w.conns)
	w.conns = append(w.conns, info)
	w.record(WireEvent{Conn: id, Kind: WireOpen})
	w.mu.Unlock()
	return &WireConn{Conn: conn, w: w, id: id}
}

// WireConn is a recorded client connection.
type WireConn struct {
	net.Conn
	w      *Wire
	id     int
	closed bool
}

// ID is the connection's index in Wire.Conns.
func (c *WireConn) ID() int { return c.id }

func (c *WireConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return c.Conn.Write(p)
	}
	// Recorded before the bytes leave, so that a reply read on another
	// goroutine can never be recorded ahead of them.
	c.w.mu.Lock()
	idx := -1
	if !c.closed {
		idx = c.w.record(WireEvent{Conn: c.id, Kind: WireData, FromClient: true, Data: append([]byte(nil), p...)})
	}
	c.w.mu.Unlock()
	n, err := c.Conn.Write(p)
	if n < len(p) && idx >= 0 {
		// A short write only happens on an error; the unsent tail never
		// crossed the wire.
		c.w.mu.Lock()
		c.w.events[idx].Data = c.w.events[idx].Data[:n]
		c.w.mu.Unlock()
	}
	return n, err
}

func (c *WireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.w.mu.Lock()
		// Bytes a reader goroutine still gets after Close was recorded
		// would land after the FIN: they are left out.
		if !c.closed {
			c.w.record(WireEvent{Conn: c.id, Kind: WireData, Data: append([]byte(nil), p[:n]...)})
		}
		c.w.mu.Unlock()
	}
	return n, err
}

func (c *WireConn) Close() error {
	c.w.mu.Lock()
	if !c.closed {
		c.closed = true
		c.w.record(WireEvent{Conn: c.id, Kind: WireClose})
	}
	c.w.mu.Unlock()
	return c.Conn.Close()
}

// Streams returns, per connection, the bytes the client wrote and the
// bytes it read, concatenated in order.
func (w *Wire) Streams() (toServer, toClient [][]byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	toServer = make([][]byte, len(w.conns))
	toClient = make([][]byte, len(w.conns))
	for _, ev := range w.events {
		if ev.Kind != WireData {
			continue
		}
		if ev.FromClient {
			toServer[ev.Conn] = append(toServer[ev.Conn], ev.Data...)
		} else {
			toClient[ev.Conn] = append(toClient[ev.Conn], ev.Data...)
		}
	}
	return toServer, toClient
}

// Renumber gives the recorded connections the ports a capture should
// show: the server's becomes serverPort and the clients' ports come from
// clientPort in connection order (0 keeps a port). It returns the old
// client port to new mapping. Call it after the traffic is done.
func (w *Wire) Renumber(serverPort int, clientPort func(i int) int) map[int]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := map[int]int{}
	for i := range w.conns {
		c := w.conns[i]
		cl, sv := *c.Client, *c.Server
		if p := clientPort(i); p != 0 {
			m[cl.Port] = p
			cl.Port = p
		}
		if serverPort != 0 {
			sv.Port = serverPort
		}
		w.conns[i] = WireConnInfo{Client: &cl, Server: &sv}
	}
	return m
}
