package dissect

import (
	"encoding/binary"
	"iter"
	"math"
	"time"
)

// Bounds on what a Session holds while it matches responses to requests.
const (
	maxPendingPerConn = 4096             // requests awaiting a response on one connection
	maxQueued         = 1 << 16          // messages held for their peer before they are handed out
	maxQueuedBytes    = 64 << 20         // bytes of the frames they hold
	holdFor           = 30 * time.Second // capture time a request waits for its response
)

// FrameInfo is a frame of a connection as a Session takes it.
type FrameInfo struct {
	Conn       uint64 // the connection, unique over the session
	FromClient bool
	// Data is the frame, size prefix included, or only its first bytes
	// when Head is set (the rest was deliberately not kept).
	Data []byte
	Head bool
	// Offset is the frame's first byte counted from the first byte of its
	// direction that was captured. Opened says that byte followed the
	// direction's SYN: a client frame at Offset 0 of an opened connection
	// is its first, so a connection that never authenticates is anonymous.
	Offset int64
	Opened bool
	// PeerPending: the connection's client direction still holds bytes
	// not handed over, which may hold the request of this response.
	PeerPending bool
	First, Last time.Time // capture times of its first and last byte
}

// CutInfo is a frame cut short (by a gap, a reset, a close or the end of
// the capture): Head holds its first bytes, if any.
type CutInfo struct {
	Conn       uint64
	FromClient bool
	Head       []byte
	Time       time.Time
}

// Exchange is where a decoded message stands in its connection.
type Exchange struct {
	Index int // Kafka message number, 1-based over the session
	// Peer is the index of the matching response (of a request) or
	// request (of a response); 0 when there is none (yet). PeerCut: the
	// peer is a cut frame (an Incomplete), not a message.
	Peer    int
	PeerCut bool
	// Latency, on a response: from its request's last byte to its first.
	Latency    time.Duration
	HasLatency bool
	// Inferred: a response whose request was not captured, decoded as the
	// first ACL response definition that fits it (Session.Guess).
	Inferred bool
	// Options is how the message was decoded: Registry.Decode(m.Raw,
	// x.Options) decodes it again, for a caller that keeps bytes, not trees.
	Options Options
	// Identity is who stood behind the connection when the message was
	// seen: the established identity, else the one an authentication
	// under way claims, else nothing known.
	Identity Identity
	// Software is the client software the connection's ApiVersions
	// request named so far; nil when none did.
	Software *ClientSoftware
}

// Unmatched is a complete response whose request was not captured.
type Unmatched struct {
	Index         int
	CorrelationID int32
	Size          int
	Identity      Identity
}

// Incomplete is what a Session knows of a cut frame. When its header was
// captured (Index > 0) it is a message seen in part: a request, or a
// response whose request is known, has its API (HasAPI), and Peer names
// its counterpart.
type Incomplete struct {
	Index              int
	HasAPI             bool
	APIKey, APIVersion int16
	CorrelationID      int32
	Peer               int
}

// SessionSink receives what a Session hands out, in capture order. Meta
// is what the caller gave with the input. A message is valid only during
// the call.
type SessionSink[M any] interface {
	Message(meta M, x Exchange, m *Message)
	Unmatched(meta M, u Unmatched)
	Incomplete(meta M, c Incomplete)
	// Event is an input given with Session.Pass.
	Event(meta M)
}

// Session follows the Kafka conversations of a capture: it matches each
// response to its request by correlation id on the same connection,
// decodes it with the request's API key and version, tracks each
// connection's identity, and hands messages and the events it derives to
// its sink in capture order. It does no I/O. Meta is the caller's own
// data for each input (where and when it was captured), handed back with
// it.
//
// With Hold, a request is held until its response arrives (or its
// connection ends, or 30 s of capture time pass, or 65536 messages or
// 64 MiB of frames wait) so that it can name the response: output order
// is still the capture's order. Without it (a live capture) each message
// is handed out at once.
type Session[M any] struct {
	// Wants says which APIs are handed out; nil: every API. Frames of
	// other APIs still count in message indexes.
	Wants func(apiKey int16) bool
	Hold  bool
	// Guess decodes a complete response whose request was not captured as
	// the first CreateAcls/DeleteAcls response definition that consumes it
	// exactly, after its Unmatched.
	Guess bool
	// ShowSecrets decodes secrets as they are on the wire.
	ShowSecrets bool
	// MaxDecompressed is Options.MaxDecompressed for the messages handed out.
	MaxDecompressed int
	// MaxNodes is Options.MaxNodes for the messages handed out.
	MaxNodes int
	// BatchHeaders is Options.BatchHeaders for the messages handed out.
	BatchHeaders bool
	// Skip, when set, is asked before a message is decoded for the sink,
	// with its exchange and the options it would be decoded with: true
	// passes it over undecoded (nobody needs it), as if not wanted.
	Skip func(meta M, x *Exchange, o Options, frame []byte) bool
	// Keep, when set, is given the meta of a frame the session keeps past
	// the Frame call (to hand out later), and what it returns is kept: a
	// caller whose meta points into buffers it reuses copies them there,
	// and only for the frames kept, not for the many passed over.
	Keep func(meta M) M

	reg *Registry
	dec *Decoder // hands out each message before the next is decoded
	obs *Decoder // reads SASL messages for the identity trackers
	// spare holds the frames of messages handed out, for the next copies:
	// the sink keeps nothing of a message past its call, and a fresh copy
	// of every Produce and Fetch was most of a capture's garbage.
	spare [][]byte
	sink  SessionSink[M]
	index int
	now   time.Time
	conns map[uint64]*conn[M]
	queue []*entry[M]
	held  int // bytes of the frames in queue
	// stub stands for a request the trackers read by its API alone, so
	// that a Produce or Fetch costs no allocation.
	stub     Message
	stubTree Node
	// freeEntries and freePending are entries handed out and requests
	// answered, for the next ones: a made one for every frame shown and
	// every request was most of what a run over TLS allocated (see free).
	freeEntries []*entry[M]
	freePending []*pending[M]
}

// conn is a connection's state.
type conn[M any] struct {
	pending map[int32]*pending[M] // requests awaiting their response
	// order is pending's requests oldest first, and some answered since
	// (stale: not in pending with that index), for evictOldest.
	order []pendingRef
	// awaiting holds responses that wait for their request (entry.awaiting).
	awaiting map[int32]*entry[M]
	id       *identityTracker
	soft     *ClientSoftware
}

// pendingRef names a pending request: its correlation id, and its index,
// which tells it from a later request reusing the id.
type pendingRef struct {
	corr  int32
	index int
}

// pending is a request awaiting its response.
type pending[M any] struct {
	key, ver int16
	index    int
	last     time.Time // the request's last byte
	held     *entry[M] // the request itself while it waits in the queue
	cut      bool      // the request is an Incomplete, not a message
	// inner is what an Envelope request forwards, for its response.
	inner InnerAPI
}

type entryKind uint8

const (
	entryMessage entryKind = iota
	entryUnmatched
	entryIncomplete
	entryEvent
)

// entry is one output in the making: a message is decoded when it is
// handed out, so the queue holds bytes, not trees.
type entry[M any] struct {
	kind  entryKind
	meta  M
	conn  uint64
	time  time.Time
	frame []byte
	head  bool
	opts  Options
	x     Exchange
	cut   Incomplete
	corr  int32
	size  int
	// waiting: held until its peer shows up. awaiting: an unmatched
	// response held while its connection's request direction still holds
	// bytes its request may be in. drop: matched late to an API that is
	// not handed out.
	waiting, awaiting, drop bool
	// pinned: a pending request's held names it, and may still write to
	// it. emitted: handed out. An entry is reused only when both are
	// over (free).
	pinned, emitted bool
}

// Free lists stay short: they hold what a burst of exchanges in flight
// needs, not the largest burst ever seen.
const maxFree = 64

// reuse takes the last of a free list, or a new zero value when it is
// empty (what it holds was zeroed when freed).
func reuse[T any](free *[]*T) *T {
	n := len(*free)
	if n == 0 {
		return new(T)
	}
	v := (*free)[n-1]
	(*free)[n-1] = nil
	*free = (*free)[:n-1]
	return v
}

// free takes back e once it is handed out and no pending request names
// it: nothing of the session reaches it then (the sink got copies).
func (s *Session[M]) free(e *entry[M]) {
	if !e.emitted || e.pinned || len(s.freeEntries) >= maxFree {
		return
	}
	*e = entry[M]{}
	s.freeEntries = append(s.freeEntries, e)
}

// unpin says that the pending request p, answered, forgotten or
// replaced, no longer names its entry.
func (s *Session[M]) unpin(p *pending[M]) {
	if e := p.held; e != nil {
		p.held = nil
		e.pinned = false
		s.free(e)
	}
}

// dropPending takes back p, out of its connection's pending map.
func (s *Session[M]) dropPending(p *pending[M]) {
	s.unpin(p)
	if len(s.freePending) < maxFree {
		*p = pending[M]{}
		s.freePending = append(s.freePending, p)
	}
}

// NewSession returns a session that decodes with reg and hands out to
// sink.
func NewSession[M any](reg *Registry, sink SessionSink[M]) *Session[M] {
	return &Session[M]{reg: reg, dec: reg.NewDecoder(), obs: reg.NewDecoder(), sink: sink, conns: map[uint64]*conn[M]{}}
}

func (s *Session[M]) wants(key int16) bool { return s.Wants == nil || s.Wants(key) }

// shows says whether a message of key is handed out. An Envelope is, when
// Envelopes are wanted or when the request it forwards is: on a KRaft
// controller's listener, a forwarded CreateAcls is the ACL change itself.
func (s *Session[M]) shows(key int16, in InnerAPI) bool {
	return s.wants(key) || key == envelopeKey && in.Known && s.wants(in.APIKey)
}

func (s *Session[M]) conn(id uint64) *conn[M] {
	c := s.conns[id]
	if c == nil {
		c = &conn[M]{pending: map[int32]*pending[M]{}}
		s.conns[id] = c
	}
	return c
}

// saslKey says whether key's messages feed the identity trackers.
func saslKey(key int16) bool { return key == saslHandshakeKey || key == saslAuthenticateKey }

// Framing is the frame rules that keep the bodies s decodes: those of the
// APIs it hands out (Wants, as set now) that its registry can dissect, and
// the SASL messages that name a connection's identity. That is what lets a
// capture skip large Produce and Fetch frames cheaply.
func (s *Session[M]) Framing(maxFrame int) KafkaFraming {
	return KafkaFraming{MaxFrame: maxFrame, Wants: s.Wants, Registry: s.reg}
}

// Frame takes the next complete frame of a connection.
func (s *Session[M]) Frame(meta M, f FrameInfo) {
	s.now = f.Last
	c := s.conn(f.Conn)
	if c.id == nil {
		c.id = newIdentityTracker(f.FromClient && f.Offset == 0 && (f.Opened || opensConnection(f.Data)))
	}
	if c.id.RawTokens() && !c.isKafka(f) {
		s.token(meta, c, f)
	} else if f.FromClient {
		s.request(meta, c, f)
	} else {
		s.response(meta, c, f)
	}
	s.pump()
}

// opensConnection says whether a client's first frame is one a client
// opens a connection with (ApiVersions, or SaslHandshake for a client
// that does not ask for versions), for a connection captured without its
// SYN: a capture that began mid-connection at a frame boundary also starts
// at offset 0, and the first request tells the two apart. With the SYN
// any first request opens it: kafkajs and librdkafka without
// api.version.request open connections with Fetch or Metadata.
func opensConnection(frame []byte) bool {
	h, ok := PeekRequest(frame)
	return ok && (h.APIKey == 18 || h.APIKey == saslHandshakeKey)
}

// produceKey is Produce, whose requests with acks=0 get no response.
const produceKey = 0

// unanswered says whether the request frame with header h asks for no
// response: a Produce with acks=0, which a broker never answers (on an
// error it closes the connection instead). The first 64 bytes of a frame
// whose body a capture did not keep hold Acks unless the client id is
// long; a transactional producer, whose id comes before Acks, always
// sends acks=-1. A frame that does not show Acks asks for a response.
func unanswered(h RequestHead, frame []byte) bool {
	if h.APIKey != produceKey {
		return false
	}
	b, ok := requestBody(frame, h.APIVersion >= 9)
	if ok && h.APIVersion >= 3 { // TransactionalId, a nullable string
		if h.APIVersion >= 9 {
			n, ok2 := uvarint(&b)
			ok = ok2 && n <= uint64(len(b))+1
			if ok && n > 0 {
				b = b[n-1:]
			}
		} else {
			ok = len(b) >= 2
			if ok {
				n := int(int16(binary.BigEndian.Uint16(b)))
				b = b[2:]
				ok = n >= -1 && n <= len(b)
				if ok && n > 0 {
					b = b[n:]
				}
			}
		}
	}
	return ok && len(b) >= 2 && binary.BigEndian.Uint16(b) == 0
}

// isKafka says whether a frame that comes while c's SASL tokens travel raw
// is a Kafka message after all: a client may send its next request before
// the broker's last token (PLAIN's is empty), and a GSSAPI exchange has no
// end the tokens show. A request is a plausible request header (the tokens
// of PLAIN, SCRAM and OAUTHBEARER start with text, GSSAPI's with a
// negative API key), a response answers a request waiting on c.
func (c *conn[M]) isKafka(f FrameInfo) bool {
	if f.FromClient {
		return plausibleRequest(f.Data, math.MaxInt32)
	}
	corr, ok := peekCorrelationID(f.Data)
	return ok && c.pending[corr] != nil
}

func (s *Session[M]) newEntry(meta M, c *conn[M], f FrameInfo) *entry[M] {
	s.index++
	if s.Keep != nil {
		meta = s.Keep(meta)
	}
	e := reuse(&s.freeEntries)
	e.meta, e.conn, e.time, e.size, e.head = meta, f.Conn, f.First, len(f.Data), f.Head
	e.x.Index, e.x.Software = s.index, c.soft
	return e
}

// identity is what is known of c's identity now.
func (c *conn[M]) identity() Identity {
	if c.id == nil {
		return Identity{}
	}
	if id := c.id.Identity(); id.Known() {
		return id
	}
	return c.id.Pending()
}

// observe feeds a message to c's identity tracker: SASL messages decoded
// whole, others by their API alone, which is all the tracker reads of them.
// It returns the identity the message carries.
func (s *Session[M]) observe(c *conn[M], key int16, frame []byte, o Options) Identity {
	if saslKey(key) || o.RawToken {
		if !o.Head {
			s.obs.d.reset(frame)
			s.obs.d.opts = o
			c.id.Observe(s.obs.d.decode(s.reg, frame, o))
		}
	} else if o.Direction == Request {
		s.stub = Message{APIKey: key, Direction: Request, Tree: &s.stubTree}
		c.id.Observe(&s.stub)
	}
	return c.identity()
}

// token takes a raw SASL token (after SaslHandshake v0).
func (s *Session[M]) token(meta M, c *conn[M], f FrameInfo) {
	e := s.newEntry(meta, c, f)
	dir := Request
	if !f.FromClient {
		dir = Response
	}
	e.frame = s.copyFrame(f.Data)
	e.opts = Options{Direction: dir, RawToken: true, Mechanism: c.id.Mechanism(), ShowSecrets: s.ShowSecrets}
	e.x.Identity = s.observe(c, saslTokenKey, e.frame, e.opts)
	if s.wants(saslTokenKey) {
		s.enqueue(e)
	}
}

func (s *Session[M]) request(meta M, c *conn[M], f FrameInfo) {
	h, ok := PeekRequest(f.Data)
	o := Options{Direction: Request, Head: f.Head, Mechanism: c.id.Mechanism(), ShowSecrets: s.ShowSecrets,
		Authenticating: c.id.Mechanism() != "" && !c.identity().Authenticated, SASL: c.id.Mechanism() != "" || c.id.SASL()}
	if ok && h.APIKey == envelopeKey {
		o.Inner, _ = peekEnvelopeInner(f.Data)
	}
	if ok && h.APIKey == apiVersionsKey && h.APIVersion >= 3 && !f.Head {
		if cs, ok := readClientSoftware(f.Data); ok {
			c.soft = &cs
		}
	}
	if ok && !s.shows(h.APIKey, o.Inner) && c.awaiting[h.CorrelationID] == nil {
		// Not shown, and no response waits for it: only counted and
		// remembered, without an entry (the common Produce and Fetch).
		s.index++
		s.observe(c, h.APIKey, f.Data, o)
		if !unanswered(h, f.Data) {
			s.expectOn(c, h, s.index, f.Last, false)
		}
		return
	}
	e := s.newEntry(meta, c, f)
	e.opts = o
	if ok {
		e.x.Identity = s.observe(c, h.APIKey, f.Data, o)
		if !s.expect(c, h, e, f.Last, unanswered(h, f.Data)) {
			return // not shown: its bytes are not kept
		}
	}
	e.frame = s.copyFrame(f.Data)
	s.enqueue(e)
}

// expect records that the request e (a frame or a cut one) with header h
// awaits its response (unless it is unanswered), or gives it the response
// that was waiting for it. It reports whether e is to be handed out.
func (s *Session[M]) expect(c *conn[M], h RequestHead, e *entry[M], last time.Time, unanswered bool) bool {
	isCut := e.kind == entryIncomplete
	index := e.x.Index
	if isCut {
		index = e.cut.Index
	}
	if r := c.awaiting[h.CorrelationID]; r != nil {
		delete(c.awaiting, h.CorrelationID)
		r.awaiting, r.waiting, r.kind = false, false, entryMessage
		r.opts.Direction, r.opts.APIKey, r.opts.APIVersion = Response, h.APIKey, h.APIVersion
		r.opts.Inner = e.opts.Inner
		r.x.Peer = index
		r.x.Latency, r.x.HasLatency = max(r.time.Sub(last), 0), true
		r.x.PeerCut = isCut
		r.drop = !s.shows(h.APIKey, e.opts.Inner)
		e.setPeer(r.x.Index)
		return !r.drop
	}
	if unanswered {
		return s.shows(h.APIKey, e.opts.Inner)
	}
	p := s.expectOn(c, h, index, last, isCut)
	p.inner = e.opts.Inner
	if !s.shows(h.APIKey, e.opts.Inner) {
		return false
	}
	e.waiting = s.Hold
	p.held, e.pinned = e, true
	return true
}

// expectOn records a request awaiting its response on c.
func (s *Session[M]) expectOn(c *conn[M], h RequestHead, index int, last time.Time, cut bool) *pending[M] {
	if len(c.pending) >= maxPendingPerConn {
		// A client that never reads its responses (or acks=0 producers)
		// must not grow this without bound; forget the oldest.
		s.evictOldest(c)
	}
	p := reuse(&s.freePending)
	*p = pending[M]{key: h.APIKey, ver: h.APIVersion, index: index, last: last, cut: cut}
	if old := c.pending[h.CorrelationID]; old != nil {
		// The client reused the id of a request still unanswered: the
		// older one can no longer be told its response.
		s.dropPending(old)
	}
	c.pending[h.CorrelationID] = p
	if len(c.order) > 2*len(c.pending)+16 {
		// Mostly answered: keep only those still pending, so that order
		// stays as small as pending at the cost of a pass per few requests.
		live := c.order[:0]
		for _, r := range c.order {
			if c.live(r) {
				live = append(live, r)
			}
		}
		clear(c.order[len(live):])
		c.order = live
	}
	c.order = append(c.order, pendingRef{h.CorrelationID, index})
	return p
}

func (c *conn[M]) live(r pendingRef) bool {
	p := c.pending[r.corr]
	return p != nil && p.index == r.index
}

func (e *entry[M]) setPeer(index int) {
	if e.kind == entryIncomplete {
		e.cut.Peer = index
	} else {
		e.x.Peer = index
	}
	e.waiting = false
}

// Cut takes a frame cut short. When its header was captured it is a
// message seen in part: it gets an index, and a request still names its
// response (and the response it) like a complete one.
func (s *Session[M]) Cut(meta M, f CutInfo) {
	e := &entry[M]{kind: entryIncomplete, meta: meta, conn: f.Conn, time: f.Time}
	c := s.conn(f.Conn)
	if f.FromClient {
		if h, ok := PeekRequest(f.Head); ok {
			s.index++
			e.cut = Incomplete{Index: s.index, HasAPI: true, APIKey: h.APIKey, APIVersion: h.APIVersion, CorrelationID: h.CorrelationID}
			s.expect(c, h, e, f.Time, unanswered(h, f.Head))
		}
	} else if corr, ok := peekCorrelationID(f.Head); ok {
		s.index++
		e.cut = Incomplete{Index: s.index, CorrelationID: corr}
		if p := c.pending[corr]; p != nil {
			delete(c.pending, corr)
			e.cut.HasAPI, e.cut.APIKey, e.cut.APIVersion, e.cut.Peer = true, p.key, p.ver, p.index
			if p.held != nil {
				p.held.setPeer(e.cut.Index)
			}
			s.dropPending(p)
		}
	}
	s.enqueue(e)
	s.pump()
}

func (s *Session[M]) evictOldest(c *conn[M]) {
	for len(c.order) > 0 {
		r := c.order[0]
		c.order = c.order[1:]
		if !c.live(r) {
			continue
		}
		old := c.pending[r.corr]
		if old.held != nil {
			old.held.waiting = false
		}
		delete(c.pending, r.corr)
		s.dropPending(old)
		return
	}
}

func (s *Session[M]) response(meta M, c *conn[M], f FrameInfo) {
	corr, _ := peekCorrelationID(f.Data)
	p := c.pending[corr]
	if p != nil && !s.shows(p.key, p.inner) {
		s.index++
		delete(c.pending, corr)
		if p.held != nil {
			p.held.setPeer(s.index)
		}
		s.observe(c, p.key, f.Data, Options{Direction: Response, APIKey: p.key, APIVersion: p.ver, Head: f.Head, Mechanism: c.id.Mechanism()})
		s.dropPending(p)
		return
	}
	e := s.newEntry(meta, c, f)
	if p == nil {
		e.frame = s.copyFrame(f.Data)
		e.kind, e.corr = entryUnmatched, corr
		e.x.Identity = c.identity()
		e.opts = Options{Direction: Response, Head: f.Head, Mechanism: c.id.Mechanism(), ShowSecrets: s.ShowSecrets}
		if f.PeerPending && s.Hold && c.awaiting[corr] == nil {
			// Its request may be in the bytes the other direction still
			// holds: wait for them (as long as a request waits for its
			// response) before calling it unmatched.
			e.awaiting, e.waiting = true, true
			if c.awaiting == nil {
				c.awaiting = map[int32]*entry[M]{}
			}
			c.awaiting[corr] = e
		}
		s.enqueue(e)
		return
	}
	delete(c.pending, corr)
	if p.held != nil {
		p.held.setPeer(e.x.Index)
	}
	e.opts = Options{Direction: Response, APIKey: p.key, APIVersion: p.ver, Head: f.Head, Mechanism: c.id.Mechanism(), ShowSecrets: s.ShowSecrets, Inner: p.inner}
	e.x.Identity = s.observe(c, p.key, f.Data, e.opts)
	e.frame = s.copyFrame(f.Data)
	e.x.Peer, e.x.PeerCut = p.index, p.cut
	e.x.Latency, e.x.HasLatency = f.First.Sub(p.last), true
	s.dropPending(p)
	s.enqueue(e)
}

// ConnEnd says that a connection ended (a FIN or RST, not the end of the
// capture): its requests wait no longer, and an authentication under way
// failed.
func (s *Session[M]) ConnEnd(connID uint64) {
	c := s.conns[connID]
	if c == nil {
		return
	}
	if c.id != nil {
		c.id.Close()
	}
	failed := c.identity()
	for _, p := range c.pending {
		if p.held == nil {
			continue
		}
		p.held.waiting = false
		if id := p.held.x.Identity; failed.Failed && id.Known() && !id.Authenticated && !id.Failed {
			// The broker closed the connection instead of answering this
			// authentication: it refused it.
			p.held.x.Identity = failed
		}
	}
	for _, e := range c.awaiting {
		e.waiting, e.awaiting = false, false
	}
	for _, p := range c.pending {
		s.dropPending(p)
	}
	delete(s.conns, connID)
	s.pump()
}

// Pass queues an event of the caller's (captured at t) to be handed back
// to the sink's Event in capture order.
func (s *Session[M]) Pass(meta M, t time.Time) {
	s.enqueue(&entry[M]{kind: entryEvent, meta: meta, time: t})
	s.pump()
}

func (s *Session[M]) enqueue(e *entry[M]) {
	s.queue = append(s.queue, e)
	s.held += len(e.frame)
}

// pump hands out the queue up to the first request still waiting for its
// response.
func (s *Session[M]) pump() {
	n := 0
	for _, e := range s.queue {
		if e.waiting && s.now.Sub(e.time) < holdFor && len(s.queue)-n < maxQueued && s.held < maxQueuedBytes {
			break
		}
		s.emit(e)
		n++
	}
	if n > 0 {
		clear(s.queue[:n])
		s.queue = s.queue[n:]
		if len(s.queue) == 0 {
			s.queue = s.queue[:0:0]
		}
	}
}

// Spare frames: a few, each up to a large Produce, so that what they
// hold stays small beside the frames in flight.
const (
	maxSpareFrames = 4
	maxSpareFrame  = 1 << 20
)

// copyFrame copies b into a spare frame big enough, or a new one.
func (s *Session[M]) copyFrame(b []byte) []byte {
	for i, f := range s.spare {
		if cap(f) >= len(b) {
			last := len(s.spare) - 1
			s.spare[i], s.spare[last] = s.spare[last], nil
			s.spare = s.spare[:last]
			return append(f, b...)
		}
	}
	return append([]byte(nil), b...)
}

// recycle keeps e's frame, handed out and no longer needed, as a spare.
func (s *Session[M]) recycle(e *entry[M]) {
	f := e.frame
	e.frame = nil
	if cap(f) == 0 || cap(f) > maxSpareFrame {
		return
	}
	if len(s.spare) < maxSpareFrames {
		s.spare = append(s.spare, f[:0])
		return
	}
	// Full: the smallest spare makes way for a larger frame.
	small := 0
	for i, g := range s.spare {
		if cap(g) < cap(s.spare[small]) {
			small = i
		}
	}
	if cap(f) > cap(s.spare[small]) {
		s.spare[small] = f[:0]
	}
}

// Flush hands out everything still held: the capture ended.
func (s *Session[M]) Flush() {
	for _, e := range s.queue {
		s.emit(e)
	}
	s.queue = nil
}

func (s *Session[M]) emit(e *entry[M]) {
	s.held -= len(e.frame)
	if e.awaiting {
		// Handed out unmatched: a request that comes later is not its own.
		e.awaiting = false
		if c := s.conns[e.conn]; c != nil {
			delete(c.awaiting, e.corr)
		}
	}
	e.emitted = true
	defer s.free(e)
	if e.drop {
		return
	}
	switch e.kind {
	case entryEvent:
		s.sink.Event(e.meta)
	case entryIncomplete:
		s.sink.Incomplete(e.meta, e.cut)
	case entryUnmatched:
		s.sink.Unmatched(e.meta, Unmatched{Index: e.x.Index, CorrelationID: e.corr, Size: e.size, Identity: e.x.Identity})
		if s.Guess && !e.head {
			s.guess(e)
		}
	default:
		// e.x is handed over, not a copy of it: a copy taken by address
		// for Skip went to the heap, once a message.
		e.opts.MaxDecompressed, e.opts.MaxNodes, e.opts.BatchHeaders = s.MaxDecompressed, s.MaxNodes, s.BatchHeaders
		e.x.Options = e.opts
		if s.Skip == nil || !s.Skip(e.meta, &e.x, e.opts, e.frame) {
			s.sink.Message(e.meta, e.x, s.dec.Decode(e.frame, e.opts))
		}
		s.recycle(e)
	}
}

// guesses are the definitions Guess tries on a response without its
// request, in this order; the first whose decode consumes the frame
// exactly, without a problem, is handed out. Newer versions come first:
// where two versions share a layout (CreateAcls v0/v1 and v2/v3, DeleteAcls
// v2/v3) the bytes cannot tell them apart, and current clients send the
// newest.
var guesses = [...][2]int16{{30, 3}, {30, 2}, {30, 1}, {30, 0}, {31, 3}, {31, 2}, {31, 1}, {31, 0}}

// Fits yields, in Guess's order, each ACL response definition among wants
// (nil: all) that decodes frame exactly, without a problem: o with its API
// key and version set, and the message, valid until the next decode. It is
// how a response without its request is guessed, here and by `kdissect
// frame`'s hint.
func (d *Decoder) Fits(frame []byte, o Options, wants func(int16) bool) iter.Seq2[Options, *Message] {
	return func(yield func(Options, *Message) bool) {
		for _, g := range guesses {
			if wants != nil && !wants(g[0]) {
				continue
			}
			o.Direction, o.APIKey, o.APIVersion = Response, g[0], g[1]
			if m := d.Decode(frame, o); len(m.Problems) == 0 && !yield(o, m) {
				return
			}
		}
	}
}

// guess hands out an unmatched response decoded as the first ACL response
// definition that fits it, marked inferred.
func (s *Session[M]) guess(e *entry[M]) {
	for o, m := range s.dec.Fits(e.frame, e.opts, s.wants) {
		x := e.x
		x.Inferred, x.Options = true, o
		s.sink.Message(e.meta, x, m)
		return
	}
}

// SetTLSIdentity records the subject DN of the client certificate that a
// connection's TLS handshake showed (mTLS): its messages carry it unless
// SASL names another principal.
func (s *Session[M]) SetTLSIdentity(connID uint64, dn string) {
	c := s.conn(connID)
	if c.id == nil {
		c.id = newIdentityTracker(true) // the handshake is the connection's start
	}
	c.id.SetTLS(dn)
}
