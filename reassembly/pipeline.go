package reassembly

import (
	"cmp"
	"iter"
	"maps"
	"net/netip"
	"slices"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxFrame       = 64 << 20
	DefaultMaxConnBuffer  = 8 << 20
	DefaultMaxTotalBuffer = 64 << 20
	DefaultReorderWait    = 3 * time.Second
	DefaultIdleTimeout    = 5 * time.Minute
	DefaultMaxConns       = 1_000_000
)

// Framing constants; see the package documentation.
const (
	// HeadLen is how many bytes after the size prefix a head holds, as
	// FrameRules sees it (fewer when the frame is shorter).
	HeadLen = 64
	// RecentRequests is how many request keys (FrameRules.Key) a
	// connection remembers, for re-synchronising its responses and for
	// what to keep of them.
	RecentRequests = 64
	// MaxFramePackets caps Frame.Packets so 1-byte segments cannot make the
	// list outgrow the frame.
	MaxFramePackets = 4096
	// FarAway is the sequence distance beyond which a segment is taken to
	// belong to a new connection on the same 4-tuple.
	FarAway = 1 << 28
)

// A Sniffer is shown the bytes a direction starts with, in order: found
// says they are TLS records, done that more bytes will not change that.
type Sniffer interface {
	Feed(data []byte) (found, done bool)
}

// Config tunes a Pipeline. Zero values mean the defaults above.
type Config struct {
	// BrokerPorts says which side of a connection is the broker.
	BrokerPorts PortSet
	// DetectPorts also follows connections on other ports: the side whose
	// segment starts with a plausible request is the client (or, with
	// NewLayer, a connection whose client bytes NewLayer accepts).
	DetectPorts bool
	// MaxFrame: a size prefix above it is corruption, never an allocation.
	MaxFrame int
	// MaxConnBuffer and MaxTotalBuffer cap the bytes held for frame bodies
	// and out-of-order segments, per connection (both directions together)
	// and overall.
	MaxConnBuffer, MaxTotalBuffer int
	// Framing holds what the framer knows of the protocol: how a frame's
	// size prefix reads, how small a frame can be, what a request's head
	// looks like, how a response names its request, and which bodies to
	// keep. It must be set.
	Framing FrameRules
	// NewLayer is asked, once per connection, for a Layer to put between TCP
	// ordering and framing. first holds the first captured in-order bytes of
	// the client direction (at least 16 bytes, or fewer when the direction
	// ends sooner); the connection's flow is f (client to broker). It returns
	// nil to frame the plain bytes. With DetectPorts, a connection on an unknown
	// port whose client starts with bytes NewLayer accepts is followed too (its
	// side is decided by who sent the SYN-ACK, or by who sent the first bytes).
	NewLayer func(f Flow, first []byte) Layer
	// LeadingTLS, when set, makes a Sniffer for each direction whose first
	// bytes the framer cannot frame (a capture begun mid-connection): it
	// is shown them in order and says whether they are TLS records
	// (Unparseable.TLS).
	LeadingTLS func() Sniffer
	// ReorderWait is how long (capture time) an out-of-order segment waits
	// for the hole before it to be filled.
	ReorderWait time.Duration
	// IdleTimeout ends connections without packets for that long.
	IdleTimeout time.Duration
	// MaxConns caps the connections followed at once. A new connection
	// beyond it ends the least recently active one, which is reported
	// Evicted. Connections already ended but still remembered (for
	// ReorderWait, so that their late packets are not taken for new
	// connections) are forgotten first, silently.
	MaxConns int
}

// Stats counts what the Pipeline saw.
type Stats struct {
	Packets, Bytes   int64 // fed packets and their captured bytes
	NonTCP           int64 // not IPv4/IPv6 TCP, or a later IP fragment
	UnknownLink      int64 // link type not decoded
	Malformed        int64 // inconsistent header fields
	Truncated        int64 // snaplen cut the headers or the TCP payload
	Snapped          int64 // of those, packets of followed connections with TCP payload cut
	Ignored          int64 // TCP not on a Kafka port, after the connection ended, or bare ACK/FIN/RST of no known connection
	Connections      int64 // Kafka connections followed
	Frames           int64
	Gaps, GapBytes   int64 // GapBytes counts gaps of known length
	Retransmissions  int64
	UnparseableBytes int64
	BufferLimits     int64
	Evicted          int64 // connections ended by MaxConns
}

// Add adds o's counters to s: the totals of several pipelines, one a file.
func (s *Stats) Add(o Stats) {
	s.Packets += o.Packets
	s.Bytes += o.Bytes
	s.NonTCP += o.NonTCP
	s.UnknownLink += o.UnknownLink
	s.Malformed += o.Malformed
	s.Truncated += o.Truncated
	s.Snapped += o.Snapped
	s.Ignored += o.Ignored
	s.Connections += o.Connections
	s.Frames += o.Frames
	s.Gaps += o.Gaps
	s.GapBytes += o.GapBytes
	s.Retransmissions += o.Retransmissions
	s.UnparseableBytes += o.UnparseableBytes
	s.BufferLimits += o.BufferLimits
	s.Evicted += o.Evicted
}

type tuple struct{ src, dst netip.AddrPort }

// Pipeline reassembles Kafka frames from packets. Not safe for concurrent use.
type Pipeline struct {
	cfg  Config
	emit func(Event)
	// What the framer reads of Config.Framing once: the prefix length and
	// the size bounds (minSize in sync, the others while re-synchronising).
	prefix                           int
	minSize, minRequest, minResponse int64
	minSynced                        [2]int64 // by dir: client, server
	// layers holds the Layer state of connections while NewLayer is
	// awaited and once it gave one (conn.layered); see layer.go.
	layers map[*conn]*connLayer
	preSeq uint64 // numbers what layers hold, in delivery order

	conns    connTable
	last     tuple // one-entry cache: consecutive packets mostly share a flow
	lastConn *conn
	detected map[netip.AddrPort]bool
	nextID   uint64
	num      int // packet number
	now      time.Time
	loc      *time.Location // of the capture's timestamps, to rebuild them from nanoseconds
	nextTick time.Time
	buffered int // bytes held across all connections
	seg      segment
	stats    Stats
	other    portTally // connections on other ports; see OtherPorts
	// known and knownListed are scratch space of half.swallowsKnown.
	known       []int
	knownListed bool

	// Every connection is in exactly one of active (least recently active
	// first: idle timeouts and eviction take from the front) or ended
	// (remembered for ReorderWait after its end, oldest first). waits holds
	// connections with a hole or a FIN waiting for ReorderWait. Together
	// they keep the work of a tick proportional to what is due, not to the
	// number of connections.
	active, ended connList
	waits         wakeups
	due           []*conn
	pk            []int    // Frame.Packets, reused
	fr            Frame    // the Frame event, reused: one per frame would be most of what reading allocates
	big           [][]byte // buffers for wanted frame bodies; see pool.go
	spareConn     *conn    // the last one evicted, for the next new one
	spareHalves   []*half
	slabs         []*slab    // memory for held segments; see pool.go
	free          []chunkRef // chunks of slabs not in use
	freeLow       int        // fewest free chunks since the last tick
}

// NewPipeline returns a Pipeline that reports to emit.
func NewPipeline(cfg Config, emit func(Event)) *Pipeline {
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = DefaultMaxFrame
	}
	if cfg.MaxConnBuffer <= 0 {
		cfg.MaxConnBuffer = DefaultMaxConnBuffer
	}
	if cfg.MaxTotalBuffer <= 0 {
		cfg.MaxTotalBuffer = DefaultMaxTotalBuffer
	}
	if cfg.ReorderWait <= 0 {
		cfg.ReorderWait = DefaultReorderWait
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.Framing == nil {
		panic("reassembly: Config.Framing is nil")
	}
	fr := cfg.Framing
	minReq, minResp := fr.MinSize(true, false), fr.MinSize(false, false)
	return &Pipeline{
		cfg:         cfg,
		emit:        emit,
		prefix:      fr.PrefixLen(),
		minSize:     min(minReq, minResp),
		minSynced:   [2]int64{fr.MinSize(true, true), fr.MinSize(false, true)},
		minRequest:  minReq,
		minResponse: minResp,
		detected:    make(map[netip.AddrPort]bool),
		loc:         time.UTC,
	}
}

// Stats returns the counters so far.
func (p *Pipeline) Stats() Stats { return p.stats }

// Buffered is how many bytes the Pipeline holds now against
// Config.MaxTotalBuffer: out-of-order segments, frame bodies being
// collected, and what Layers hold.
func (p *Pipeline) Buffered() int { return p.buffered }

// Packet feeds one captured packet. data may be reused by the caller after
// the call returns. Packets are numbered from 1 in feed order.
func (p *Pipeline) Packet(data []byte, ci gopacket.CaptureInfo, link layers.LinkType) {
	p.num++
	p.stats.Packets++
	p.stats.Bytes += int64(len(data))
	ts := ci.Timestamp
	if ts.After(p.now) {
		p.now = ts
	}
	p.loc = ts.Location()
	if !p.nextTick.After(p.now) {
		p.tick()
	}
	s := &p.seg
	switch decodePacket(data, link, s) {
	case decOK:
	case decUnknownLink:
		p.stats.UnknownLink++
		return
	case decNonTCP, decFragment:
		p.stats.NonTCP++
		return
	case decMalformed:
		p.stats.Malformed++
		return
	case decTruncatedHeader:
		p.stats.Truncated++
		return
	}
	if len(s.payload) < s.claimed {
		p.stats.Truncated++
	}
	t := tuple{s.src, s.dst}
	c := p.lastConn
	if c == nil || t != p.last {
		c = p.conns.get(t.src, t.dst)
		if c == nil {
			if s.flags&flagSYN == 0 && s.claimed == 0 {
				// A bare ACK, FIN or RST starts nothing: typically the
				// last ACK or a late FIN of a connection already ended
				// and dropped, which must not come back as a new one.
				p.stats.Ignored++
				return
			}
			if c = p.newConn(t, s, ts); c == nil {
				return
			}
		}
		p.last, p.lastConn = t, c
	}
	h := c.half(s.src)
	if c.replacedBy(h, s) {
		p.endConn(c, "connection closed", ts, false)
		p.removeConn(c)
		if c = p.newConn(t, s, ts); c == nil {
			return
		}
		p.last, p.lastConn = t, c
		h = c.half(s.src)
	}
	if c.ended {
		p.stats.Ignored++
		return
	}
	if len(s.payload) < s.claimed {
		p.stats.Snapped++
	}
	c.lastSeen = p.now.UnixNano()
	p.active.touch(c)
	if o := h.other(); o != nil && s.flags&flagACK != 0 {
		// Before this segment's own bytes: a response must find the
		// request its ACK proves lost or released (see half.acked). A
		// direction not seen yet has nothing to acknowledge.
		o.acked(s.ack, ts)
	}
	h.segment(s, p.num, ts)
	if c.swap {
		c.swapRoles()
	}
	switch {
	case s.flags&flagRST != 0:
		p.endConn(c, "connection reset", ts, true)
	case c.ended:
	case c.closed():
		p.endConn(c, "connection closed", ts, false)
	default:
		p.scheduleWake(c)
	}
}

// Close flushes all connections as at the end of input: held out-of-order
// data is delivered after Gaps, cut frames become Incomplete events. It
// goes through them in creation order, so that its events are
// deterministic.
func (p *Pipeline) Close() {
	list := make([]*conn, 0, p.conns.len())
	for c := range p.conns.all() {
		list = append(list, c)
	}
	slices.SortFunc(list, func(a, b *conn) int { return cmp.Compare(a.key.ID, b.key.ID) })
	for i, c := range list {
		p.endConn(c, "end of capture", p.now, false)
		p.removeConn(c)
		list[i] = nil // let the garbage collector have it now
	}
	p.freeAll()
}

// newConn decides whether t is Kafka and which side is the broker.
func (p *Pipeline) newConn(t tuple, s *segment, ts time.Time) *conn {
	srcBroker := p.cfg.BrokerPorts.Has(t.src.Port()) || p.detected[t.src]
	dstBroker := p.cfg.BrokerPorts.Has(t.dst.Port()) || p.detected[t.dst]
	if !srcBroker && !dstBroker {
		p.other.add(t, s.flags)
	}
	synAck := s.flags&(flagSYN|flagACK) == flagSYN|flagACK
	client, server := t.src, t.dst
	decided := true
	switch {
	case dstBroker && !srcBroker:
	case srcBroker && !dstBroker:
		client, server = t.dst, t.src
	case srcBroker && dstBroker:
		if synAck {
			client, server = t.dst, t.src
		}
	case p.cfg.DetectPorts:
		decided = false
		if synAck {
			client, server = t.dst, t.src
		}
	default:
		p.stats.Ignored++
		return nil
	}
	if p.conns.len() >= p.cfg.MaxConns {
		p.makeRoom(ts)
	}
	p.nextID++
	c := p.spareConn
	p.spareConn = nil
	if c == nil {
		c = new(conn)
	}
	*c = conn{p: p, key: ConnKey{Client: client, Server: server, ID: p.nextID}, decided: decided, lastSeen: p.now.UnixNano()}
	if p.cfg.NewLayer != nil {
		c.layered = true
		if p.layers == nil {
			p.layers = make(map[*conn]*connLayer)
		}
	}
	p.conns.put(c)
	p.active.pushBack(c)
	if decided {
		p.stats.Connections++
	}
	return c
}

func (p *Pipeline) removeConn(c *conn) {
	p.conns.delete(c)
	if p.lastConn == c {
		p.lastConn = nil
	}
	if c.ended {
		p.ended.remove(c)
	} else {
		p.active.remove(c)
	}
	p.waits.remove(c)
	for _, h := range c.h {
		if h != nil {
			h.release()
		}
	}
	if c.layered {
		p.dropLayer(c)
		c.layered = false
	}
}

// endConn finishes both directions and reports ConnEnd once.
func (p *Pipeline) endConn(c *conn, reason string, ts time.Time, reset bool) {
	if c.ended {
		return
	}
	c.ended = true
	p.active.remove(c)
	c.lastSeen = p.now.UnixNano()
	p.ended.pushBack(c)
	p.waits.remove(c)
	if c.layered {
		p.layerEnd(c, reason, ts)
	}
	for _, h := range c.h {
		if h != nil {
			h.finish(reason, ts)
		}
	}
	if c.layered {
		p.dropLayer(c)
		c.layered = false
	}
	if c.decided {
		p.emit(&ConnEnd{Conn: c.key, ConnID: c.key.ID, Time: ts, Reset: reset})
	}
	// An ended connection is remembered only to ignore its late packets,
	// which needs its key, not its directions.
	c.h = [2]*half{}
}

// Detected returns the servers the DetectPorts heuristic found, in no
// particular order.
func (p *Pipeline) Detected() iter.Seq[netip.AddrPort] { return maps.Keys(p.detected) }

// detectedServer records a port found by the DetectPorts heuristic.
func (p *Pipeline) detectedServer(c *conn, ts time.Time, tls bool) {
	p.stats.Connections++
	if !p.detected[c.key.Server] && !p.cfg.BrokerPorts.Has(c.key.Server.Port()) {
		p.detected[c.key.Server] = true
		p.emit(&PortDetected{Server: c.key.Server, Time: ts, TLS: tls})
	}
}

// conn is kept small: a capture may hold a million of them. A direction
// is allocated when its first packet comes (many never send one), times
// are capture nanoseconds (see Pipeline.timeAt), and what only resyncing
// needs hangs off framer.resyncState.
type conn struct {
	p          *Pipeline
	key        ConnKey
	h          [2]*half // client→server, server→client; nil until a packet comes
	prev, next *conn    // in Pipeline.active or Pipeline.ended
	lastSeen   int64    // capture time of the last packet, or of the end once ended
	heapIdx    int32    // 1-based position in Pipeline.waits, 0 when not there
	decided    bool     // roles known; false while DetectPorts probes
	layered    bool     // NewLayer not asked yet, or gave a Layer; see layer.go
	swap       bool     // roles found reversed; see swapRoles
	ended      bool
}

// half returns the direction sent by src, allocating it on first use.
func (c *conn) half(src netip.AddrPort) *half {
	i := 1
	if src == c.key.Client {
		i = 0
	}
	h := c.h[i]
	if h == nil {
		h = c.p.newHalf()
		*h = half{c: c, fromClient: i == 0}
		h.fr.h = h
		c.h[i] = h
	}
	return h
}

// closed reports whether the connection is over: both directions closed,
// or one that began with its SYN closed while the other sent nothing. The
// other's SYN-ACK comes before any data, so that direction is not being
// captured (a one-sided capture) or never answered: waiting for it would
// keep such connections, and what their requests wait for, until the idle
// timeout. Picked up without its SYN, a direction may close before the
// first packet of the other is seen, which is then waited for.
func (c *conn) closed() bool {
	c0, c1 := c.h[0], c.h[1]
	switch {
	case c0 != nil && c1 != nil:
		return c0.ord.closed && c1.ord.closed
	case c0 != nil:
		return c0.ord.closed && c0.ord.synSeen
	case c1 != nil:
		return c1.ord.closed && c1.ord.synSeen
	}
	return false
}

// replacedBy reports whether s opens a new connection on c's 4-tuple: a SYN
// with another ISN, any SYN after the end, or a sequence number far away.
func (c *conn) replacedBy(h *half, s *segment) bool {
	if s.flags&flagSYN != 0 {
		if c.ended {
			return true
		}
		return h.ord.started && (!h.ord.synSeen || s.seq != h.ord.isn)
	}
	if !h.ord.started || s.flags&flagRST != 0 {
		return false
	}
	d := int64(int32(s.seq - h.ord.nextSeq))
	return d > FarAway || d < -FarAway
}

// swapRoles puts the halves back in client, server order after DetectPorts
// found the client on the side first taken for the broker. It runs after
// the packet is handled: the call chain holds pointers into c.h.
func (c *conn) swapRoles() {
	c.swap = false
	c.h[0], c.h[1] = c.h[1], c.h[0]
}
