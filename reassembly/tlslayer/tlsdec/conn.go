package tlsdec

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// MaxRecordLen is the largest record body accepted: 2^14 bytes of plaintext plus 256 of expansion, the
// TLS 1.3 limit (RFC 8446, section 5.2). No TLS 1.2 suite decrypted here expands a record by more.
const MaxRecordLen = 1<<14 + 256

// RecordLenOK reports whether a record header's length is within MaxRecordLen.
func RecordLenOK(n int) bool { return n >= 0 && n <= MaxRecordLen }

const (
	recordHeaderLen = 5
	maxHandshakeMsg = 1 << 18 // larger handshake messages are skipped, not buffered
	maxBacklog      = 1 << 20 // bytes held while waiting for the other direction's hello
	resyncWindow    = 256     // sequence numbers tried after a gap (records lost in it)
	maxResyncFails  = 8       // authenticated-looking headers that did not decrypt before giving up
	resyncChunk     = 1 << 16

	typeCCS       = 20
	typeAlert     = 21
	typeHandshake = 22
	typeAppData   = 23
	typeHeartbeat = 24

	versionTLS12 = 0x0303
	versionTLS13 = 0x0304
)

// The alert bytes read here (RFC 8446, section 6).
const (
	alertFatal        = 2 // the level of an alert that ends the connection
	alertCloseNotify  = 0
	alertUserCanceled = 90
)

// AlertFatal reports whether an alert ends the connection: one of level
// fatal, and in TLS 1.3 every alert but close_notify and user_canceled,
// whatever its level says.
func AlertFatal(tls13 bool, level, desc uint8) bool {
	return level == alertFatal || tls13 && desc != alertCloseNotify && desc != alertUserCanceled
}

// LooksLikeTLS reports whether the first bytes of a direction are a TLS handshake record carrying a
// ClientHello. It needs at least 11 bytes (record header, handshake header, client_version).
func LooksLikeTLS(b []byte) bool {
	if len(b) < 11 {
		return false
	}
	n := int(b[3])<<8 | int(b[4])
	return b[0] == typeHandshake && b[1] == 3 && b[2] <= 4 && n >= 4 && n <= 1<<14 &&
		b[5] == 1 && b[9] == 3 && b[10] <= 4
}

// LooksLikeRecord reports whether the first bytes of a direction are a TLS record header: a
// connection the capture picked up after its handshake. No Kafka frame starts so: its size
// would be over 335 MB.
func LooksLikeRecord(b []byte) bool {
	if len(b) < recordHeaderLen {
		return false
	}
	n := int(b[3])<<8 | int(b[4])
	return b[0] >= typeCCS && b[0] <= typeAppData && b[1] == 3 && b[2] <= 4 && n > 0 && n <= MaxRecordLen
}

// LooksLikeMidstream reports whether the first bytes of a direction are a record that comes only
// after a handshake: application data, a handshake record that is no ClientHello, or an alert
// too long to be one in the clear. A client may well send an alert first: it gave up.
func LooksLikeMidstream(b []byte) bool {
	if !LooksLikeRecord(b) || LooksLikeTLS(b) {
		return false
	}
	n := int(b[3])<<8 | int(b[4])
	return b[0] == typeAppData || b[0] == typeHandshake && len(b) > recordHeaderLen && b[5] != 1 || b[0] == typeAlert && n != 2
}

// Midstream tells the Conn that the capture began after the handshake: no hello will come, every
// record is encrypted, and none can be decrypted.
func (c *Conn) Midstream(out func(Output)) {
	if out == nil {
		out = func(Output) {}
	}
	c.info.Midstream = true
	c.missing("the capture began mid-connection: the handshake was not captured", out)
	for i := range c.dirs {
		c.dirs[i].ccs = true
	}
}

// Kind says what an Output carries.
type Kind uint8

const (
	// KindData is decrypted application data.
	KindData Kind = iota + 1
	// KindSession is sent once, when the version, the suite and whether there are keys are known;
	// Info has the details.
	KindSession
	// KindProblem is a record that could not be decoded; nothing more is decoded from that direction
	// until a KindResync.
	KindProblem
	// KindResync: decoding resumed at a record boundary after a gap or a problem.
	KindResync
	// KindAlert is a TLS alert (in clear or decrypted).
	KindAlert
	// KindLimit: the Budget refused to buffer bytes of this direction: the record at Pos (RecordLen
	// bytes on the wire) was passed over, or, with RecordLen 0, the direction gave up waiting for the
	// other one's hello. The plaintext on its two sides is not contiguous, as after a KindProblem,
	// but nothing was wrong with the bytes.
	KindLimit
	// KindSkip: Len bytes of application data at Offset that the Reader said are not read, and
	// that were not decrypted (Data is nil). They count in Offset as KindData's do.
	KindSkip
)

// Problem classifies a KindProblem.
type Problem uint8

const (
	ProblemOversize  Problem = iota + 1 // a record header announcing more than MaxRecordLen bytes
	ProblemMalformed                    // bytes that are not a TLS record header, or a bad plaintext
	ProblemAuth                         // a record failed its AEAD tag, MAC or padding check: wrong key
	ProblemTruncated                    // a record cut by a gap
	ProblemHandshake                    // a handshake message that does not parse
	ProblemBacklog                      // the other direction's hello never came
	ProblemNoResync                     // after a gap, no record decrypts: the direction is given up
)

// Output is one thing Conn reports. Data is only valid during the callback.
type Output struct {
	Kind       Kind
	FromClient bool
	// Data and Offset (KindData): plaintext application bytes and the offset of Data[0] in this
	// direction's decrypted stream (only what was decrypted counts).
	Data   []byte
	Offset int64
	// Unverified (KindData): the bytes were decrypted on their own, by their offset in the record,
	// and the record's tag was not checked: they are a head the Reader asked for, in a record
	// that is otherwise passed over (Info.Unverified counts those records).
	Unverified bool
	Len        int // KindSkip
	// Pos is the position, in this direction's TCP stream, of the record's first byte (KindData,
	// KindProblem, KindAlert) or of the record decoding resumed at (KindResync). Bytes reported lost
	// through Gap count.
	Pos int64
	// RecordLen (KindData, KindAlert): the record's size on the wire, header included: its bytes are
	// [Pos, Pos+RecordLen) of the TCP stream.
	RecordLen int
	// KindProblem.
	Problem Problem
	Message string // one sentence
	Have    int    // ProblemTruncated: bytes of the record received
	Want    int    // ProblemTruncated: bytes of the record (-1 when even the header was cut)
	// KindResync: bytes skipped before Pos since the problem or gap.
	Skipped int64
	// KindAlert.
	AlertLevel, AlertDesc uint8
}

// Info describes the connection as far as it has been seen.
type Info struct {
	Version       string // "1.2", "1.3"; "" before the ServerHello
	Cipher        string // e.g. "TLS_AES_128_GCM_SHA256"
	SNI           string
	ALPN          []string // offered by the client
	ClientRandom  string   // hex
	Reason        string   // why not Decrypted, e.g. "no key for client random 1a2b…"
	ClientCertDER [][]byte // the client's certificate chain (mTLS), leaf first; read only
	// The flags are together, so that a million connections' Info take less room.
	Decrypted bool // keys were found and no record failed authentication
	Resumed   bool // TLS 1.2 abbreviated handshake or TLS 1.3 PSK
	// Refused: a peer ended the handshake with a fatal alert, and nothing that could carry data
	// came after it: the alert came before any ServerHello and no record followed, or, in a
	// handshake not decrypted, in the clear before any record that may carry application data (in
	// TLS 1.3 the client's first encrypted one), and none followed. The connection carried nothing
	// to decrypt (Reason names the alert).
	Refused    bool
	HelloRetry bool
	// Midstream: the capture began after the handshake (Conn.Midstream), so nothing could be
	// decrypted, key log or not.
	Midstream bool
	// CertRequested: the server asked for a client certificate (a CertificateRequest was read).
	CertRequested bool
	KeyUpdates    int
	Tickets       int
	Records       int // records seen in both directions, decrypted or not
	// Unverified counts the records decrypted only in part (the Reader read only heads of them, or
	// nothing) whose tag was therefore not checked: they are not known to be authentic.
	Unverified int

	// ClientCertUnread: the client sent a Certificate message that could not be read (malformed, or
	// above the size handshake messages are read to): it may have named a certificate, so who the
	// client is, is unknown, not anonymous.
	ClientCertUnread bool
	ClientCertPos    int64 // TCP stream position of the record that ended the client's Certificate
}

type keyState uint8

const (
	keysUnknown keyState = iota
	keysReady
	keysMissing
)

type dirState uint8

const (
	stNormal dirState = iota
	stDesync
	stDead
)

const (
	afterAppKeys = 1 << iota
	afterKeyUpdate
	afterEndOfEarlyData
)

type direction struct {
	client     bool
	state      dirState
	ccs        bool  // TLS 1.2: ChangeCipherSpec seen, everything after is encrypted
	earlyPhase bool  // TLS 1.3 client: records may still be 0-RTT data
	appKeys    bool  // the application data key is in use: the handshake is over
	blocked    bool  // waiting for the other direction's hello: bytes go to queue
	hdrN       uint8 // bytes of hdr read
	after      uint8
	earlySkips uint8
	hdr        [recordHeaderLen]byte

	pos      int64 // bytes of this direction consumed (and lost in gaps)
	recPos   int64
	plainOff int64
	need     int
	skip     int // bytes of an undecryptable record still to pass over
	hsSkip   int
	held     int    // bytes held against the Budget: cap of body, hs, queue and scan
	body     []byte // a record split across Feeds, while it is collected (Shared.recordBuf)
	hs       []byte
	queue    []byte

	cipher  *recordCipher // current read key
	pending *recordCipher // TLS 1.2: key taking over at ChangeCipherSpec
	early   *recordCipher // TLS 1.3 client: 0-RTT key

	// While looking for a record boundary (stDesync); allocated then.
	*desync
}

// desync is what a direction looks for a record boundary with, after a gap or a problem.
type desync struct {
	scan        []byte
	scanPos     int64
	scanSkipped int64
	resyncFails int
}

// Conn decrypts one TCP connection. It is not safe for concurrent use.
type Conn struct {
	keys    *KeyLog
	bufs    *Shared
	budget  Budget
	dirs    [2]direction // client, server
	ch      *clientHello
	sh      *serverHello
	version uint16
	suite   *suite
	ks      keyState
	master  []byte     // TLS 1.2
	app     *[2][]byte // TLS 1.3: each direction's current application traffic secret, once known
	okRecs  int
	info    Info
	reader  Reader
	// refusal is why the handshake ended before a ServerHello, or, not decrypted, before any record
	// that may carry application data (held): a fatal alert in the clear, which is the peer's
	// answer, not bytes the capture lost; refusalRecs the records seen up to it.
	refusal     string
	refusalRecs int
	// held: the session of a handshake without keys waits to be reported until the first record
	// that may carry application data, or the end: a refusal in the clear may come first
	// (refusal). In TLS 1.2 that is any application data record; in TLS 1.3, where the server's
	// handshake is one too, the client's first (a server never speaks first: no request, no data).
	held    bool
	appRecs [2]int // application data records seen, decrypted or not, from the client and the server
}

// unopened reports whether no record that may carry application data was seen (see held).
func (c *Conn) unopened() bool {
	return c.appRecs[0] == 0 && (c.tls13() || c.appRecs[1] == 0)
}

// A Reader says which application data of a direction its consumer will read, so that a Conn
// decrypts only that: Unread and Settled are reassembly.Skipper's, which a framer answers.
type Reader interface {
	// Unread: skip > 0: the next skip bytes of plaintext are not read; otherwise only the next
	// head bytes are read before the consumer may skip again (head 0: every byte is read).
	Unread(fromClient bool) (skip, head int64)
	// Settled: every byte handed out since the last call went where nothing reads beyond a head
	// judged not worth keeping; it starts a new account.
	Settled(fromClient bool) bool
}

// SetReader makes the Conn decrypt only what r says is read (nil: everything). A record that
// gives a single byte to something read beyond its head is decrypted whole and authenticated, as
// is the first record under every key (a wrong key is reported as it always was); of the others
// only the heads r asks for are decrypted (Output.Unverified), by their offset in the record,
// and the rest is passed as KindSkip.
func (c *Conn) SetReader(r Reader) { c.reader = r }

// NewConn returns a Conn that looks its secrets up in keys (which may be nil: nothing is decrypted,
// records are counted), with buffers of its own and no budget.
func NewConn(keys *KeyLog) *Conn { return NewConnWith(keys, nil, nil) }

// NewConnWith is NewConn with buffers shared with other Conns (nil: its own) and a Budget that
// accounts what it buffers (nil: none).
func NewConnWith(keys *KeyLog, sh *Shared, b Budget) *Conn {
	if sh == nil {
		sh = NewShared()
	}
	c := &Conn{keys: keys, bufs: sh, budget: b}
	c.dirs[0].client = true
	return c
}

// Info returns what is known of the connection.
func (c *Conn) Info() Info { return c.info }

// ClientCertSeen is whether the client has sent a Certificate message
// with a certificate, or one that could not be read: Info without copying
// it, for a check made on every segment.
func (c *Conn) ClientCertSeen() bool { return len(c.info.ClientCertDER) > 0 || c.info.ClientCertUnread }

func (c *Conn) dir(fromClient bool) *direction {
	if fromClient {
		return &c.dirs[0]
	}
	return &c.dirs[1]
}

func (c *Conn) tls13() bool { return c.version == versionTLS13 }

// appSecret is d's TLS 1.3 application traffic secret, nil before the keys are known.
func (c *Conn) appSecret(d *direction) *[]byte {
	if c.app == nil {
		return nil
	}
	if d.client {
		return &c.app[0]
	}
	return &c.app[1]
}

// Feed gives Conn the next bytes of one direction, in order, in any chunking. out receives decrypted
// data and events, possibly of the other direction too (its records may have waited for this one's
// hello).
func (c *Conn) Feed(fromClient bool, data []byte, out func(Output)) {
	if out == nil {
		out = func(Output) {}
	}
	d := c.dir(fromClient)
	if d.blocked {
		c.enqueue(d, data, out)
		return
	}
	c.consume(d, data, out)
}

// Gap tells Conn that bytes of one direction were lost (lost < 0: how many is unknown). A record cut
// by it is reported; decoding that direction resumes at the first record that decrypts after it.
func (c *Conn) Gap(fromClient bool, lost int64, out func(Output)) {
	if out == nil {
		out = func(Output) {}
	}
	d := c.dir(fromClient)
	if d.blocked {
		out(Output{Kind: KindProblem, FromClient: d.client, Pos: d.pos, Problem: ProblemBacklog,
			Message: "bytes were lost while this direction waited for the other one's TLS hello"})
		c.giveUp(d)
	}
	if d.state == stDead {
		if lost > 0 {
			d.pos += lost
		}
		return
	}
	c.truncated(d, "a gap", out)
	d.hdrN, d.skip, d.need = 0, 0, 0
	c.freeBody(d)
	c.free(d, &d.hs)
	d.hsSkip = 0
	if lost > 0 {
		d.pos += lost
	}
	// Also when already looking for a boundary: bytes on both sides of a gap are never joined.
	c.enterDesync(d, nil, d.pos)
}

// truncated reports a record of d cut short, if there is one.
func (c *Conn) truncated(d *direction, by string, out func(Output)) {
	if d.state != stNormal || d.hdrN == 0 {
		return
	}
	have, want := int(d.hdrN), -1
	if d.hdrN == recordHeaderLen {
		want = recordHeaderLen + int(binary.BigEndian.Uint16(d.hdr[3:]))
		have = recordHeaderLen + len(d.body)
		if d.skip > 0 || d.need == 0 {
			have = want - d.skip
		}
	}
	msg := fmt.Sprintf("TLS record cut by %s after %d of %d bytes", by, have, want)
	if want < 0 {
		msg = fmt.Sprintf("TLS record header cut by %s after %d bytes", by, have)
	}
	out(Output{Kind: KindProblem, FromClient: d.client, Pos: d.pos - int64(have), Problem: ProblemTruncated,
		Message: msg, Have: have, Want: want})
}

// End tells Conn that no more bytes will come (end of the capture, connection closed): records that
// waited for a hello that never came are counted, the session is reported if it was not yet, and a
// record cut short is reported.
func (c *Conn) End(out func(Output)) {
	if out == nil {
		out = func(Output) {}
	}
	switch {
	case c.sh == nil && c.refusal != "":
		c.info.Refused = c.info.Records == c.refusalRecs && len(c.dirs[0].queue) == 0 && len(c.dirs[1].queue) == 0
		c.missing(c.refusal, out)
	case c.ch == nil:
		c.missing("the ClientHello was not captured", out)
	case c.sh == nil:
		c.missing("the ServerHello was not captured", out)
	}
	if c.held {
		c.held = false
		if c.refusal != "" {
			c.info.Refused, c.info.Reason = true, c.refusal
		}
		out(Output{Kind: KindSession})
	}
	for i := range c.dirs {
		d := &c.dirs[i]
		c.truncated(d, "the end of the stream", out)
		d.hdrN, d.skip, d.need = 0, 0, 0
		c.freeBody(d)
		c.free(d, &d.hs)
		c.free(d, &d.queue)
		c.endDesync(d)
		d.blocked = false
	}
}

// giveUp ends a direction that waited for the other one's hello: what it
// held is passed over and nothing more of it is decoded.
func (c *Conn) giveUp(d *direction) {
	d.pos += int64(len(d.queue))
	c.free(d, &d.queue)
	d.blocked, d.state = false, stDead
}

func (c *Conn) enqueue(d *direction, data []byte, out func(Output)) {
	if len(d.queue)+len(data) > maxBacklog {
		out(Output{Kind: KindProblem, FromClient: d.client, Pos: d.pos, Problem: ProblemBacklog,
			Message: "gave up on this TLS direction: the other direction's hello never came"})
		c.giveUp(d)
		d.pos += int64(len(data))
		return
	}
	q, ok := c.grow(d, d.queue, len(data))
	if !ok {
		out(Output{Kind: KindLimit, FromClient: d.client, Pos: d.pos})
		c.giveUp(d)
		d.pos += int64(len(data))
		return
	}
	d.queue = append(q, data...)
}

func (c *Conn) consume(d *direction, data []byte, out func(Output)) {
	for len(data) > 0 {
		switch {
		case d.blocked:
			c.enqueue(d, data, out)
			return
		case d.state == stDead:
			d.pos += int64(len(data))
			return
		case d.state == stDesync:
			n := min(len(data), resyncChunk)
			c.resyncFeed(d, data[:n], out)
			data = data[n:]
			continue
		case d.skip > 0:
			n := min(d.skip, len(data))
			d.skip -= n
			d.pos += int64(n)
			data = data[n:]
			if d.skip == 0 {
				d.hdrN = 0
			}
			continue
		}
		if d.hdrN < recordHeaderLen {
			n := copy(d.hdr[d.hdrN:], data)
			d.hdrN += uint8(n)
			d.pos += int64(n)
			data = data[n:]
			if d.hdrN < recordHeaderLen {
				return
			}
			d.recPos = d.pos - recordHeaderLen
			if !c.headerOK(d, out) {
				continue
			}
			if c.mustWait(d) {
				d.hdrN = 0
				q, ok := c.grow(d, nil, recordHeaderLen+len(data))
				if !ok {
					out(Output{Kind: KindLimit, FromClient: d.client, Pos: d.recPos})
					c.giveUp(d)
					d.pos += int64(len(data))
					return
				}
				q = append(q, d.hdr[:]...)
				d.queue = append(q, data...)
				d.blocked = true
				d.pos -= recordHeaderLen
				return
			}
			c.info.Records++
			if d.hdr[0] == typeAppData {
				if d.client {
					c.appRecs[0]++
				} else {
					c.appRecs[1]++
				}
				if c.held && !c.unopened() {
					c.held = false
					out(Output{Kind: KindSession})
				}
			}
			n = int(binary.BigEndian.Uint16(d.hdr[3:]))
			if c.undecryptable(d) {
				d.skip, d.need = n, 0
				if n == 0 {
					d.hdrN = 0
				}
				continue
			}
			d.need = n
			if n == 0 {
				d.hdrN = 0
				c.record(d, nil, false, out)
				continue
			}
			if len(data) >= n && !d.earlyPhase {
				d.hdrN = 0
				d.pos += int64(n)
				in := data[:n]
				data = data[n:]
				c.record(d, in, false, out)
				continue
			}
			// Split across Feeds: collected, in a buffer held against the budget.
			b := c.bufs.recordBuf(n)
			if !c.hold(d, d.recPos, cap(b)) {
				c.bufs.putRecord(b)
				c.passOver(d, n, out)
				continue
			}
			d.body = b
			continue
		}
		n := min(d.need-len(d.body), len(data))
		d.body = append(d.body, data[:n]...)
		d.pos += int64(n)
		data = data[n:]
		if len(d.body) == d.need {
			d.hdrN = 0
			c.record(d, d.body, true, out)
			c.freeBody(d)
		}
	}
}

func (c *Conn) headerOK(d *direction, out func(Output)) bool {
	h := &d.hdr
	n := int(binary.BigEndian.Uint16(h[3:]))
	if h[0] >= typeCCS && h[0] <= typeHeartbeat && h[1] == 3 && h[2] <= 4 && n <= MaxRecordLen {
		return true
	}
	p, msg := ProblemMalformed, fmt.Sprintf("bytes %02x %02x %02x are not a TLS record header", h[0], h[1], h[2])
	if h[0] >= typeCCS && h[0] <= typeHeartbeat && h[1] == 3 && h[2] <= 4 {
		p, msg = ProblemOversize, fmt.Sprintf("TLS record of %d bytes exceeds the %d-byte limit", n, MaxRecordLen)
	}
	out(Output{Kind: KindProblem, FromClient: d.client, Pos: d.recPos, Problem: p, Message: msg})
	d.hdrN = 0
	c.enterDesync(d, h[1:], d.recPos+1)
	d.scanSkipped = 1 // the header's first byte
	return false
}

// mustWait: the record needs keys that depend on the other direction's hello, not seen yet.
func (c *Conn) mustWait(d *direction) bool {
	if c.ks != keysUnknown {
		return false
	}
	switch d.hdr[0] {
	case typeAppData:
		return true
	case typeCCS:
		return c.version != versionTLS13
	}
	return d.ccs
}

// undecryptable: an encrypted record for which there is no key; it is counted and passed over.
func (c *Conn) undecryptable(d *direction) bool {
	if c.tls13() {
		return d.hdr[0] == typeAppData && d.cipher == nil && !(d.earlyPhase && d.early != nil)
	}
	return d.ccs && d.cipher == nil
}

// passOver skips a record of n bytes that the budget would not let d
// collect. Application data under the application key is passed over and
// the next record decrypted; without a record of the handshake, or of
// early data, the rest of the direction cannot be read, and it is given up.
func (c *Conn) passOver(d *direction, n int, out func(Output)) {
	out(Output{Kind: KindLimit, FromClient: d.client, Pos: d.recPos, RecordLen: recordHeaderLen + n})
	d.need = 0
	if d.cipher != nil && !d.earlyPhase && (c.tls13() && d.appKeys && d.hdr[0] == typeAppData || !c.tls13() && d.ccs) {
		d.skip = n
		d.cipher.seq++
		return
	}
	switch {
	case d.client && c.ch == nil:
		c.missing("the ClientHello was not kept: a memory cap was reached", out)
	case !d.client && c.sh == nil:
		c.missing("the ServerHello was not kept: a memory cap was reached", out)
	}
	d.hdrN = 0
	d.state = stDead
}

// record handles one complete record whose body is in: the caller's bytes (a record that came whole,
// decrypted into the shared plaintext buffer), or d.body (own: decrypted in place).
func (c *Conn) record(d *direction, in []byte, own bool, out func(Output)) {
	ctype := d.hdr[0]
	body := in
	encrypted := (c.tls13() && ctype == typeAppData) || (!c.tls13() && d.ccs)
	if encrypted && c.partialRecord(d, in, own, out) {
		return
	}
	if encrypted {
		var err error
		var ok bool
		body, ctype, ok, err = c.open(d, in, own)
		if err == errAuth {
			c.authFailure(d, out)
			return
		}
		if err != nil {
			out(Output{Kind: KindProblem, FromClient: d.client, Pos: d.recPos, Problem: ProblemMalformed,
				Message: "decrypted TLS record is longer than 2^14 bytes"})
			return
		}
		if !ok {
			return // rejected 0-RTT data, or no key any more: unreadable
		}
		c.okRecs++
	}
	switch ctype {
	case typeAppData:
		if encrypted && len(body) > 0 {
			out(Output{Kind: KindData, FromClient: d.client, Data: body, Offset: d.plainOff, Pos: d.recPos,
				RecordLen: recordHeaderLen + len(in)})
			d.plainOff += int64(len(body))
		}
	case typeHandshake:
		c.handshakeBytes(d, body, out)
	case typeAlert:
		if len(body) != 2 {
			break // an alert is two bytes: these are not one read in the clear
		}
		if AlertFatal(c.tls13(), body[0], body[1]) && c.refusal == "" && (c.sh == nil || c.held) {
			who, what := "server", "the handshake"
			if d.client {
				who = "client"
			} else if c.info.CertRequested {
				what = "the client certificate"
			}
			c.refusal = fmt.Sprintf("the %s refused %s: fatal alert %s (%d)", who, what, AlertName(body[1]), body[1])
			c.refusalRecs = c.info.Records
		}
		out(Output{Kind: KindAlert, FromClient: d.client, Pos: d.recPos, RecordLen: recordHeaderLen + len(in),
			AlertLevel: body[0], AlertDesc: body[1]})
	case typeCCS:
		if !c.tls13() && !encrypted {
			d.ccs = true
			d.cipher, d.pending = d.pending, nil
		}
	}
	if d.after != 0 {
		c.applyAfter(d)
	}
}

// partialMin is the smallest record decrypted in part: starting a keystream at an offset costs an
// allocation (crypto/cipher's Stream), about what opening a kilobyte whole costs with AES-NI.
const partialMin = 1024

// partialRecord hands out what the Reader reads of an application data record of d and reports
// whether it did; false: the record is to be opened whole, as without a Reader.
func (c *Conn) partialRecord(d *direction, in []byte, own bool, out func(Output)) bool {
	rc := d.cipher
	if c.reader == nil || rc == nil || !rc.verified || !rc.partialOK() || d.earlyPhase || d.hdr[0] != typeAppData ||
		c.tls13() && !d.appKeys || !c.tls13() && !d.ccs {
		return false
	}
	if len(in) < partialMin {
		return false
	}
	if skip, head := c.reader.Unread(d.client); skip == 0 && head == 0 {
		return false // all of it is read: the common case of a kept body
	}
	seq := rc.seq
	ct, n, ok := rc.plainLen(&d.hdr, in, seq)
	if !ok {
		return false
	}
	c.reader.Settled(d.client) // the account of this record starts here
	pb := c.bufs.plainBuf(n)
	var p []byte // the record's plaintext, once opened whole
	made := false
	// whole opens the record and checks its tag: false when it failed, reported as it is
	// without a Reader.
	whole := func() bool {
		body, _, _, err := c.open(d, in, own)
		switch {
		case err == errAuth:
			c.authFailure(d, out)
			return false
		case err != nil || len(body) != n:
			out(Output{Kind: KindProblem, FromClient: d.client, Pos: d.recPos, Problem: ProblemMalformed,
				Message: "decrypted TLS record is longer than 2^14 bytes"})
			return false
		}
		c.okRecs++
		p = body
		return true
	}
	for q := 0; q < n; {
		skip, head := c.reader.Unread(d.client)
		if skip > 0 {
			k := int(min(skip, int64(n-q)))
			out(Output{Kind: KindSkip, FromClient: d.client, Offset: d.plainOff, Len: k, Pos: d.recPos,
				RecordLen: recordHeaderLen + len(in)})
			d.plainOff += int64(k)
			q += k
			continue
		}
		k := n - q
		if head > 0 && head < int64(k) {
			k = int(head)
		}
		// What is read whole comes from the record opened whole. A head is decrypted on its own,
		// from the end already decrypted when it lies there (a small record); if it then goes to
		// a frame that is kept, or on into the next record, Settled says so below.
		if p == nil && head == 0 && !whole() {
			return true
		}
		var b []byte
		switch {
		case p != nil:
			b = p[q : q+k]
		case rc.tailOff >= 0 && q >= rc.tailOff:
			b = rc.scratch[q-rc.tailOff : q-rc.tailOff+k]
			made = true
		default:
			b = pb[q : q+k]
			rc.xorAt(ct, q, b)
			made = true
		}
		out(Output{Kind: KindData, FromClient: d.client, Data: b, Offset: d.plainOff, Pos: d.recPos,
			RecordLen: recordHeaderLen + len(in), Unverified: p == nil})
		d.plainOff += int64(k)
		q += k
	}
	if p == nil && made && !c.reader.Settled(d.client) && !whole() {
		return true
	}
	if p == nil {
		rc.seq++
		c.info.Unverified++
	}
	return true
}

// open decrypts a record of d, in place when own, else into the shared plaintext buffer; ok is
// false for a record passed over (rejected 0-RTT data).
func (c *Conn) open(d *direction, in []byte, own bool) (p []byte, ctype uint8, ok bool, err error) {
	dst := in
	if !own {
		dst = c.bufs.plainBuf(len(in))
	}
	if !d.earlyPhase {
		if d.cipher == nil {
			// Keys can go between the record's header, when it was judged
			// decryptable, and its last byte (the other direction's hello
			// came in between): it is passed over like any record without
			// a key.
			return nil, 0, false, nil
		}
		p, ctype, err = d.cipher.open(&d.hdr, in, dst, d.cipher.seq)
		if err == nil {
			d.cipher.seq++
		}
		return p, ctype, true, err
	}
	// A ClientHello that offered 0-RTT: the records before the handshake key's may be early data,
	// readable with the early key if the server accepted it, and otherwise skipped by the server too.
	ct := c.bufs.trialCopy(in) // in may be dst, which a failed try overwrites
	if d.cipher != nil {
		if p, ctype, err = d.cipher.open(&d.hdr, ct, dst, d.cipher.seq); err == nil {
			d.cipher.seq++
			d.earlyPhase = false
			return p, ctype, true, nil
		}
	}
	if d.early != nil {
		if p, ctype, err = d.early.open(&d.hdr, ct, dst, d.early.seq); err == nil {
			d.early.seq++
			return p, ctype, true, nil
		}
	}
	d.earlySkips++
	if d.earlySkips > 64 {
		return nil, 0, false, errAuth
	}
	return nil, 0, false, nil
}

func (c *Conn) authFailure(d *direction, out func(Output)) {
	out(Output{Kind: KindProblem, FromClient: d.client, Pos: d.recPos, Problem: ProblemAuth,
		Message: "TLS record failed authentication: the key does not match (or the bytes were altered)"})
	if c.okRecs == 0 {
		c.info.Decrypted = false
		c.info.Reason = "records fail authentication with the key log's secret for client random " + c.shortRandom()
	}
	// Over TCP the bytes arrive as sent, so a failed tag means a wrong key: resynchronising would only
	// fail again. The direction stays silent.
	d.state = stDead
}

func (c *Conn) applyAfter(d *direction) {
	a := d.after
	d.after = 0
	if a&afterEndOfEarlyData != 0 {
		d.earlyPhase = false
	}
	if a&afterAppKeys != 0 {
		d.earlyPhase = false
		d.cipher = nil
		if sec := c.appSecret(d); sec != nil && *sec != nil {
			d.cipher, _ = newCipher13(c.suite, *sec)
		}
		d.appKeys = d.cipher != nil
	}
	if sec := c.appSecret(d); a&afterKeyUpdate != 0 && sec != nil && *sec != nil {
		*sec = nextTrafficSecret(c.suite.prf, *sec)
		d.cipher, _ = newCipher13(c.suite, *sec)
	}
}

// handshakeBytes reassembles handshake messages, which may span records. Messages wholly inside p
// are read where they are; only one that continues in the next record is collected.
//
// p may be the shared plaintext buffer, which decrypting a record of the other direction overwrites:
// handshakeMsg does that (drain) only for a hello, which travels in clear (in the caller's bytes or
// d.body, never in that buffer).
func (c *Conn) handshakeBytes(d *direction, p []byte, out func(Output)) {
	for len(p) > 0 {
		if d.hsSkip > 0 {
			n := min(d.hsSkip, len(p))
			d.hsSkip -= n
			p = p[n:]
			continue
		}
		if len(d.hs) == 0 {
			if p = c.handshakeMsgs(d, p, out); len(p) == 0 {
				return
			}
		}
		hs, ok := c.grow(d, d.hs, len(p))
		if !ok {
			c.dropHandshake(d, p, out)
			return
		}
		d.hs = append(hs, p...)
		p = nil
		rest := c.handshakeMsgs(d, d.hs, out)
		if len(rest) == 0 {
			c.free(d, &d.hs)
		} else {
			d.hs = append(d.hs[:0], rest...)
		}
	}
}

// handshakeMsgs handles the complete handshake messages at the start of b and returns what is left:
// the start of a message that continues in the next record.
func (c *Conn) handshakeMsgs(d *direction, b []byte, out func(Output)) []byte {
	for len(b) >= 4 {
		n := int(b[1])<<16 | int(b[2])<<8 | int(b[3])
		if n > maxHandshakeMsg {
			// Skipped unread; only its length matters to find the next message.
			if b[0] == 11 && d.client {
				c.info.ClientCertUnread, c.info.ClientCertPos = true, d.recPos
			}
			have := len(b) - 4
			if have >= n {
				b = b[4+n:]
				continue
			}
			d.hsSkip = n - have
			return nil
		}
		if len(b) < 4+n {
			return b
		}
		c.handshakeMsg(d, b[0], b[4:4+n], out)
		b = b[4+n:]
	}
	return b
}

// dropHandshake gives up on the handshake message that p continues (or starts) when the budget
// would not let d collect it: it is skipped unread, as one larger than maxHandshakeMsg is, and
// what follows it in p is read on. The connection is not decrypted without its hellos.
func (c *Conn) dropHandshake(d *direction, p []byte, out func(Output)) {
	var h [4]byte
	k := copy(h[:], d.hs)
	copy(h[k:], p)
	kept := len(d.hs)
	c.free(d, &d.hs)
	typ := h[0]
	end := maxHandshakeMsg + 1<<24 // not even its length is known: nothing more of it is read
	if kept+len(p) >= 4 {
		end = 4 + (int(h[1])<<16 | int(h[2])<<8 | int(h[3])) - kept
	}
	switch {
	case typ == 1 && d.client && c.ch == nil:
		c.missing("the ClientHello was not kept: a memory cap was reached", out)
	case typ == 2 && !d.client && c.sh == nil:
		c.missing("the ServerHello was not kept: a memory cap was reached", out)
	case typ == 11 && d.client:
		c.info.ClientCertUnread, c.info.ClientCertPos = true, d.recPos
	}
	if end < len(p) {
		c.handshakeBytes(d, p[end:], out)
		return
	}
	d.hsSkip = end - len(p)
}

func (c *Conn) handshakeMsg(d *direction, typ uint8, msg []byte, out func(Output)) {
	bad := func(what string) {
		out(Output{Kind: KindProblem, FromClient: d.client, Pos: d.recPos, Problem: ProblemHandshake,
			Message: "malformed TLS " + what})
	}
	switch typ {
	case 1: // ClientHello
		if !d.client || c.ch != nil {
			return // the second ClientHello after a HelloRetryRequest keeps the random
		}
		ch, sni, alpn, ok := parseClientHello(msg)
		if !ok {
			bad("ClientHello")
			c.missing("the ClientHello does not parse", out)
			return
		}
		c.ch = ch
		c.info.SNI = sni
		c.info.ALPN = alpn
		c.info.ClientRandom = hex.EncodeToString(ch.random[:])
		c.trySetup(out)
		c.drain(out)
	case 2: // ServerHello
		if d.client || c.sh != nil {
			return
		}
		sh, ok := parseServerHello(msg)
		if !ok {
			bad("ServerHello")
			c.missing("the ServerHello does not parse", out)
			return
		}
		c.version = sh.version
		c.info.Version = versionName(sh.version)
		c.info.Cipher = suiteName(sh.suite)
		if sh.hrr {
			c.info.HelloRetry = true
			c.drain(out) // a TLS 1.3 client's ChangeCipherSpec no longer waits
			return
		}
		c.sh = sh
		c.trySetup(out)
		c.drain(out)
	case 4: // NewSessionTicket
		c.info.Tickets++
		if !c.tls13() && !d.client {
			if t, ok := parseTicket12(msg); ok {
				c.keys.learn(nil, t, c.master)
			}
		}
	case 5: // EndOfEarlyData
		if d.client {
			d.after |= afterEndOfEarlyData
		}
	case 11: // Certificate
		if !d.client {
			return
		}
		certs, ok := parseCertificate(msg, c.tls13())
		c.info.ClientCertPos = d.recPos
		if !ok {
			c.info.ClientCertUnread = true
			bad("Certificate")
			return
		}
		if len(certs) > 0 {
			c.info.ClientCertDER = certs
		}
	case 13: // CertificateRequest
		if !d.client {
			c.info.CertRequested = true
		}
	case 20: // Finished
		if c.tls13() {
			d.after |= afterAppKeys
		}
	case 24: // KeyUpdate
		if c.tls13() {
			d.after |= afterKeyUpdate
			c.info.KeyUpdates++
		}
	}
}

func versionName(v uint16) string {
	switch v {
	case versionTLS13:
		return "1.3"
	case versionTLS12:
		return "1.2"
	case 0x0302:
		return "1.1"
	case 0x0301:
		return "1.0"
	}
	return fmt.Sprintf("0x%04x", v)
}

func (c *Conn) shortRandom() string {
	if len(c.info.ClientRandom) > 16 {
		return c.info.ClientRandom[:16] + "…"
	}
	return c.info.ClientRandom
}

func (c *Conn) missing(reason string, out func(Output)) {
	if c.ks != keysUnknown {
		return
	}
	c.ks = keysMissing
	c.info.Decrypted = false
	c.info.Reason = reason
	c.reportUndecrypted(out)
	c.drain(out)
}

// reportUndecrypted reports the session of a connection that is not decrypted, or holds it
// while a refusal in the clear may still come (held).
func (c *Conn) reportUndecrypted(out func(Output)) {
	if c.sh != nil && c.unopened() {
		c.held = true
		return
	}
	out(Output{Kind: KindSession})
}

// trySetup derives the record keys once both hellos are known.
func (c *Conn) trySetup(out func(Output)) {
	if c.ks != keysUnknown || c.ch == nil || c.sh == nil {
		return
	}
	ch, sh := c.ch, c.sh
	s := suites[sh.suite]
	cd, sd := &c.dirs[0], &c.dirs[1]
	switch sh.version {
	case versionTLS13:
		c.info.Resumed = sh.psk
		if s == nil || !s.tls13 {
			c.missing("cipher suite "+suiteName(sh.suite)+" is not one kdissect decrypts in TLS 1.3", out)
			return
		}
		c.suite = s
		sec, ok := c.keys.lookup(ch.random, nil, nil)
		if !ok {
			c.missing("no key for client random "+c.shortRandom(), out)
			return
		}
		cd.cipher = newCipher13OrNil(s, sec.clientHS)
		sd.cipher = newCipher13OrNil(s, sec.serverHS)
		c.app = &[2][]byte{sec.clientApp, sec.serverApp}
		if ch.earlyData {
			cd.earlyPhase = true
			cd.early = newCipher13OrNil(s, sec.clientEarly)
		}
		var lacks []string
		for _, x := range []struct {
			b    []byte
			name string
		}{{sec.clientHS, "CLIENT_HANDSHAKE_TRAFFIC_SECRET"}, {sec.serverHS, "SERVER_HANDSHAKE_TRAFFIC_SECRET"},
			{sec.clientApp, "CLIENT_TRAFFIC_SECRET_0"}, {sec.serverApp, "SERVER_TRAFFIC_SECRET_0"}} {
			if x.b == nil {
				lacks = append(lacks, x.name)
			} else if len(x.b) != s.prf().Size() {
				c.missing(fmt.Sprintf("the key log's %s for client random %s has %d bytes, not %d",
					x.name, c.shortRandom(), len(x.b), s.prf().Size()), out)
				cd.cipher, sd.cipher, c.app, cd.early = nil, nil, nil, nil
				return
			}
		}
		if len(lacks) > 0 {
			c.ks = keysReady
			c.info.Reason = "the key log lacks " + strings.Join(lacks, " and ") + " for client random " + c.shortRandom()
			c.reportUndecrypted(out) // a client that refused the server logs no secrets of its own
			return
		}
	case versionTLS12:
		c.info.Resumed = len(sh.sessionID) > 0 && string(sh.sessionID) == string(ch.sessionID)
		if s == nil || s.tls13 {
			c.missing("cipher suite "+suiteName(sh.suite)+" is not one kdissect decrypts in TLS 1.2", out)
			return
		}
		c.suite = s
		var sid, ticket []byte
		if c.info.Resumed {
			sid, ticket = sh.sessionID, ch.ticket
		}
		sec, ok := c.keys.lookup(ch.random, sid, ticket)
		if !ok || sec.master == nil {
			c.missing("no key for client random "+c.shortRandom(), out)
			return
		}
		c.master = sec.master
		if !c.info.Resumed {
			c.keys.learn(sh.sessionID, nil, sec.master)
		}
		etm := ch.etm && sh.etm && s.bulk == bulkCBC
		cc, sc, err := newCiphers12(s, sec.master, ch.random[:], sh.random[:], etm)
		if err != nil {
			c.missing("cannot build the record keys: "+err.Error(), out)
			return
		}
		cd.pending, sd.pending = cc, sc
	default:
		c.missing("TLS version "+versionName(sh.version)+" is not decrypted", out)
		return
	}
	c.ks = keysReady
	c.info.Decrypted = true
	out(Output{Kind: KindSession})
}

func newCipher13OrNil(s *suite, secret []byte) *recordCipher {
	if secret == nil || len(secret) != s.prf().Size() {
		return nil
	}
	rc, err := newCipher13(s, secret)
	if err != nil {
		return nil
	}
	return rc
}

// drain replays the bytes a direction held back while it waited for the other one's hello.
func (c *Conn) drain(out func(Output)) {
	for i := range c.dirs {
		d := &c.dirs[i]
		if !d.blocked {
			continue
		}
		if c.ks == keysUnknown && !(c.tls13() && d.queue[0] == typeCCS) {
			continue
		}
		q := d.queue
		d.queue, d.blocked = nil, false
		c.consume(d, q, out)
		c.release(d, cap(q))
	}
}

// enterDesync starts looking for the next record boundary; pending are bytes already consumed that
// may hold it, starting at stream position pos.
func (c *Conn) enterDesync(d *direction, pending []byte, pos int64) {
	d.state = stDesync
	if d.desync == nil {
		d.desync = new(desync)
	}
	d.scan = d.scan[:0]
	d.scanPos = pos
	d.scanSkipped = 0
	if scan, ok := c.grow(d, d.scan, len(pending)); ok {
		d.scan = append(scan, pending...)
	} else {
		d.scanPos += int64(len(pending))
		d.scanSkipped = int64(len(pending))
	}
	d.resyncFails = 0
	c.free(d, &d.hs)
	d.hsSkip = 0
}

// plausible reports whether b starts with a header of an encrypted record of this connection.
func (c *Conn) plausible(b []byte) bool {
	n := int(b[3])<<8 | int(b[4])
	if b[1] != 3 || n == 0 || n > MaxRecordLen {
		return false
	}
	if c.tls13() {
		return b[0] == typeAppData && b[2] == 3
	}
	return b[0] >= typeCCS && b[0] <= typeAppData && b[2] <= 3
}

func (c *Conn) resyncFeed(d *direction, data []byte, out func(Output)) {
	scan, ok := c.grow(d, d.scan, len(data))
	if !ok {
		// Nowhere to keep them: these bytes are skipped, and so is any record that starts in them.
		n := int64(len(d.scan) + len(data))
		d.pos += int64(len(data))
		d.scanPos += n
		d.scanSkipped += n
		c.free(d, &d.scan)
		return
	}
	d.scan = append(scan, data...)
	d.pos += int64(len(data))
	i := 0
	for ; i+recordHeaderLen <= len(d.scan); i++ {
		h := d.scan[i:]
		if !c.plausible(h) {
			continue
		}
		end := i + recordHeaderLen + (int(h[3])<<8 | int(h[4]))
		keyed := d.cipher != nil
		if keyed && end > len(d.scan) || !keyed && end+recordHeaderLen > len(d.scan) {
			break // this candidate needs more bytes to be judged
		}
		if !keyed && !c.plausible(d.scan[end:]) {
			continue
		}
		if keyed && !c.trial(d, d.scan[i:end]) {
			d.resyncFails++
			if d.resyncFails >= maxResyncFails {
				out(Output{Kind: KindProblem, FromClient: d.client, Pos: d.scanPos + int64(i), Problem: ProblemNoResync,
					Message: "no TLS record after the gap decrypts: the rest of this direction is not decoded"})
				d.state = stDead
				c.endDesync(d)
				return
			}
			continue
		}
		pos := d.scanPos + int64(i)
		out(Output{Kind: KindResync, FromClient: d.client, Pos: pos, Skipped: d.scanSkipped + int64(i)})
		rest := d.scan[i:]
		c.endDesync(d)
		d.state = stNormal
		d.pos = pos
		c.consume(d, rest, out)
		return
	}
	d.scanPos += int64(i)
	d.scanSkipped += int64(i)
	d.scan = append(d.scan[:0], d.scan[i:]...)
	// What waits for a verdict is at most a record: the room a bulk of scanned bytes took is given back.
	if n := cap(d.scan); n > 4096 && len(d.scan) < n/4 {
		small := append(make([]byte, 0, 2*len(d.scan)), d.scan...)
		c.release(d, n-cap(small))
		d.scan = small
	}
}

// endDesync forgets what looking for a record boundary took.
func (c *Conn) endDesync(d *direction) {
	if d.desync != nil {
		c.free(d, &d.scan)
		d.desync = nil
	}
}

// trial finds the sequence number a record after a gap was sent under, trying the records the gap
// may have held, and leaves the cipher at it.
func (c *Conn) trial(d *direction, rec []byte) bool {
	var hdr [recordHeaderLen]byte
	copy(hdr[:], rec)
	body := rec[recordHeaderLen:]
	rc := d.cipher
	try := func(seq uint64) bool {
		b := c.bufs.trialCopy(body)
		if _, _, err := rc.open(&hdr, b, b, seq); err == nil {
			rc.seq = seq
			return true
		}
		return false
	}
	if !rc.tls13 && rc.s.bulk == bulkGCM && len(body) >= 8 {
		// Most TLS 1.2 stacks (Go, OpenSSL, Java) send the sequence number as the explicit nonce.
		if seq := binary.BigEndian.Uint64(body[:8]); seq >= rc.seq && try(seq) {
			return true
		}
	}
	for k := uint64(0); k < resyncWindow; k++ {
		if try(rc.seq + k) {
			return true
		}
	}
	return false
}
