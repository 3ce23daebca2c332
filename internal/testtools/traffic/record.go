package traffic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Frame is one Kafka request and its response as they crossed a client's
// TCP connection, in the client's own words (its header fields) and decoded
// with kmsg.
type Frame struct {
	Seq           int   // order in which the client wrote the request, across connections
	API           int16 // request API key
	Version       int16 // request API version from the request header
	CorrelationID int32 // correlation ID from the request header
	ClientID      *string
	ClientPort    int    // the client's local (ephemeral) TCP port
	User          string // SASL user the connection authenticated as ("" if none)
	Request       kmsg.Request
	Response      kmsg.Response // nil if no response was read (or none is sent)
	RequestErr    error         // set if the request body did not decode
	ResponseErr   error         // set if the response body did not decode
}

// Recorder watches the bytes of client connections and pairs requests with
// responses by correlation ID. It is safe for concurrent use by many
// connections.
type Recorder struct {
	mu     sync.Mutex
	seq    int
	frames []*Frame
	tokens []RawToken
}

// RawToken is a SASL token sent bare, without a Kafka header: after a
// SaslHandshake v0 the client writes each token as a 4-byte length and the
// bytes, and the broker answers the same way.
type RawToken struct {
	Seq        int // order among the frames and tokens
	ClientPort int
	FromClient bool
	Mechanism  string // from the SaslHandshake request
	Data       []byte // the token, without its length
}

// RawTokens returns the bare SASL tokens recorded so far, in order.
func (r *Recorder) RawTokens() []RawToken {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RawToken(nil), r.tokens...)
}

// saslRounds is how many bare token exchanges a mechanism takes after a
// SaslHandshake v0.
func saslRounds(mechanism string) int {
	switch mechanism {
	case "PLAIN":
		return 1
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		return 2
	}
	return 0
}

// Wrap returns conn with every byte written and read fed to the recorder.
// user labels the frames of this connection (the SASL user it logs in as).
func (r *Recorder) Wrap(conn net.Conn, user string) net.Conn {
	port := 0
	if a, ok := conn.LocalAddr().(*net.TCPAddr); ok {
		port = a.Port
	}
	return &recConn{Conn: conn, r: r, user: user, port: port, pending: make(map[int32]*Frame)}
}

// Frames returns the frames recorded so far in request order.
func (r *Recorder) Frames() []*Frame {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]*Frame(nil), r.frames...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// Exchanges returns the recorded CreateAcls and DeleteAcls frames as
// exchanges, in request order. Frames without a response are an error: a
// scenario waits for every response it asked for.
func (r *Recorder) Exchanges() ([]Exchange, error) {
	var out []Exchange
	for _, f := range r.Frames() {
		if f.API != APICreateAcls && f.API != APIDeleteAcls {
			continue
		}
		if f.RequestErr != nil {
			return nil, fmt.Errorf("api %d v%d corr %d: request: %w", f.API, f.Version, f.CorrelationID, f.RequestErr)
		}
		if f.ResponseErr != nil {
			return nil, fmt.Errorf("api %d v%d corr %d: response: %w", f.API, f.Version, f.CorrelationID, f.ResponseErr)
		}
		if f.Response == nil {
			return nil, fmt.Errorf("api %d v%d corr %d: no response recorded", f.API, f.Version, f.CorrelationID)
		}
		out = append(out, Exchange{
			API:           f.API,
			Version:       f.Version,
			CorrelationID: f.CorrelationID,
			Request:       f.Request,
			Response:      f.Response,
			ClientPort:    f.ClientPort,
			User:          f.User,
		})
	}
	return out, nil
}

type recConn struct {
	net.Conn
	r    *Recorder
	user string
	port int

	mu      sync.Mutex
	wbuf    []byte // bytes written, not yet a whole frame
	rbuf    []byte // bytes read, not yet a whole frame
	pending map[int32]*Frame
	broken  error // set once the stream could not be parsed; recording stops

	// Bare SASL tokens still to come after a SaslHandshake v0: rawOut the
	// client's, rawIn the broker's answers.
	rawOut, rawIn int
	rawMech       string
}

func (c *recConn) token(fromClient bool, data []byte) {
	c.r.mu.Lock()
	c.r.tokens = append(c.r.tokens, RawToken{Seq: c.r.seq, ClientPort: c.port, FromClient: fromClient,
		Mechanism: c.rawMech, Data: append([]byte(nil), data...)})
	c.r.seq++
	c.r.mu.Unlock()
}

func (c *recConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.mu.Lock()
		c.wbuf = append(c.wbuf, p[:n]...)
		c.drainWrites()
		c.mu.Unlock()
	}
	return n, err
}

func (c *recConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.rbuf = append(c.rbuf, p[:n]...)
		c.drainReads()
		c.mu.Unlock()
	}
	return n, err
}

// nextFrame cuts one size-prefixed frame off buf.
func nextFrame(buf *[]byte) ([]byte, bool) {
	b := *buf
	if len(b) < 4 {
		return nil, false
	}
	size := int(int32(binary.BigEndian.Uint32(b)))
	if size < 0 || len(b)-4 < size {
		return nil, false
	}
	frame := b[4 : 4+size]
	*buf = b[4+size:]
	return frame, true
}

func (c *recConn) drainWrites() {
	for c.broken == nil {
		body, ok := nextFrame(&c.wbuf)
		if !ok {
			return
		}
		if c.rawOut > 0 {
			c.rawOut--
			c.rawIn++
			c.token(true, body)
			continue
		}
		f, err := parseRequest(body)
		if err != nil {
			c.broken = err
			return
		}
		f.ClientPort, f.User = c.port, c.user
		c.r.mu.Lock()
		f.Seq = c.r.seq
		c.r.seq++
		c.r.frames = append(c.r.frames, f)
		c.r.mu.Unlock()
		c.pending[f.CorrelationID] = f
	}
}

func (c *recConn) drainReads() {
	for c.broken == nil {
		body, ok := nextFrame(&c.rbuf)
		if !ok {
			return
		}
		// A bare token answer comes when no Kafka request is waiting.
		if c.rawIn > 0 && len(c.pending) == 0 {
			c.rawIn--
			c.token(false, body)
			continue
		}
		if len(body) < 4 {
			c.broken = errors.New("response shorter than its correlation ID")
			return
		}
		corr := int32(binary.BigEndian.Uint32(body))
		f := c.pending[corr]
		if f == nil {
			c.broken = fmt.Errorf("response to unknown correlation ID %d", corr)
			return
		}
		delete(c.pending, corr)
		c.r.mu.Lock()
		f.Response, f.ResponseErr = parseResponse(f.API, f.Version, body[4:])
		c.r.mu.Unlock()
		// After a successful SaslHandshake v0 the tokens go bare.
		if hs, ok := f.Response.(*kmsg.SASLHandshakeResponse); ok && f.Version == 0 && hs.ErrorCode == 0 {
			if req, ok := f.Request.(*kmsg.SASLHandshakeRequest); ok {
				c.rawMech = req.Mechanism
				c.rawOut = saslRounds(req.Mechanism)
			}
		}
	}
}

// parseRequest decodes a request frame (without its size prefix).
func parseRequest(b []byte) (*Frame, error) {
	if len(b) < 10 {
		return nil, fmt.Errorf("request header too short (%d bytes)", len(b))
	}
	f := &Frame{
		API:           int16(binary.BigEndian.Uint16(b)),
		Version:       int16(binary.BigEndian.Uint16(b[2:])),
		CorrelationID: int32(binary.BigEndian.Uint32(b[4:])),
	}
	n := int16(binary.BigEndian.Uint16(b[8:]))
	b = b[10:]
	if n >= 0 {
		if int(n) > len(b) {
			return nil, errors.New("client ID runs past the frame")
		}
		id := string(b[:n])
		f.ClientID = &id
		b = b[n:]
	}
	req := kmsg.RequestForKey(f.API)
	if req == nil {
		f.RequestErr = fmt.Errorf("unknown API key %d", f.API)
		return f, nil
	}
	req.SetVersion(f.Version)
	if req.IsFlexible() {
		rest, err := skipTags(b)
		if err != nil {
			f.RequestErr = fmt.Errorf("request header tags: %w", err)
			return f, nil
		}
		b = rest
	}
	if err := req.ReadFrom(b); err != nil {
		f.RequestErr = err
	}
	f.Request = req
	return f, nil
}

// parseResponse decodes a response body that follows the correlation ID.
func parseResponse(api, version int16, b []byte) (kmsg.Response, error) {
	resp := kmsg.ResponseForKey(api)
	if resp == nil {
		return nil, fmt.Errorf("unknown API key %d", api)
	}
	resp.SetVersion(version)
	// ApiVersions responses keep a v0 header at every version.
	if resp.IsFlexible() && api != 18 {
		rest, err := skipTags(b)
		if err != nil {
			return nil, fmt.Errorf("response header tags: %w", err)
		}
		b = rest
	}
	if err := resp.ReadFrom(b); err != nil {
		return resp, err
	}
	return resp, nil
}

// skipTags skips a tagged-field section.
func skipTags(b []byte) ([]byte, error) {
	num, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errors.New("bad tag count")
	}
	b = b[n:]
	for i := uint64(0); i < num; i++ {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, errors.New("bad tag key")
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < size {
			return nil, errors.New("bad tag size")
		}
		b = b[n+int(size):]
	}
	return b, nil
}
