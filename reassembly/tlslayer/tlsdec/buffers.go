package tlsdec

// What a Conn buffers, and for how long: nothing between records. A record
// that comes whole in one Feed is decrypted from the caller's bytes into the
// Shared plaintext buffer; only a record split across Feeds, a handshake
// message split across records, the records that wait for the other
// direction's hello and the bytes scanned after a gap are kept, each in a
// buffer sized to what is pending and given up once it is used. Every such
// buffer is held against the Budget first, so that a capture of many TLS
// connections stays inside the memory caps of the rest of the pipeline.

// Budget accounts the bytes a Conn buffers. Hold asks for n more bytes of
// a direction, buffered from TCP stream position pos; n < 0 gives bytes
// back, which is always granted. When Hold refuses, the Conn goes without:
// a record split across Feeds is passed over (KindLimit), a handshake
// message split across records is skipped unread, a direction waiting for
// the other's hello gives up (KindLimit), and bytes scanned for a record
// boundary after a gap are skipped.
type Budget interface {
	Hold(fromClient bool, pos int64, n int) bool
}

// Shared holds the buffers that the Conns of one goroutine share: the
// plaintext of the record being handed out (Output.Data), the copy of a
// record being tried under several keys or sequence numbers, and spare
// buffers for records collected from several Feeds. Conns that share one
// must be fed from one goroutine.
type Shared struct {
	plain, trial []byte
	spare        [][]byte
}

// NewShared returns buffers for Conns to share (NewConnWith).
func NewShared() *Shared { return new(Shared) }

// spareRecords is how many record buffers a Shared keeps for reuse: enough
// for the connections that collect records at the same time in a bulk
// transfer, a few hundred KiB at most.
const spareRecords = 16

// plainBuf is a buffer for the plaintext of a record of n bytes (at most
// MaxRecordLen, checked with its header); it is valid until the next
// record is opened.
func (s *Shared) plainBuf(n int) []byte {
	if cap(s.plain) < n {
		s.plain = make([]byte, MaxRecordLen)
	}
	return s.plain[:n]
}

// trialCopy copies a record's bytes for a decryption that may fail and
// must then be tried again on the original bytes.
func (s *Shared) trialCopy(b []byte) []byte {
	s.trial = append(s.trial[:0], b...)
	return s.trial
}

// recordBuf returns an empty buffer a record of n bytes fits in: a spare,
// or a new one of n bytes (n is a record's length, at most MaxRecordLen).
func (s *Shared) recordBuf(n int) []byte {
	best := -1
	for i, b := range s.spare {
		if cap(b) >= n && (best < 0 || cap(b) < cap(s.spare[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]byte, 0, n)
	}
	b := s.spare[best]
	last := len(s.spare) - 1
	s.spare[best], s.spare[last] = s.spare[last], nil
	s.spare = s.spare[:last]
	return b
}

// putRecord takes back a buffer of recordBuf once its record is handled.
func (s *Shared) putRecord(b []byte) {
	if len(s.spare) < spareRecords {
		s.spare = append(s.spare, b[:0])
		return
	}
	// Full: keep the larger buffers, which fit more records.
	for i, o := range s.spare {
		if cap(o) < cap(b) {
			s.spare[i] = b[:0]
			return
		}
	}
}

// hold asks the budget for n more bytes of d, buffered from pos.
func (c *Conn) hold(d *direction, pos int64, n int) bool {
	if n <= 0 {
		return true
	}
	if c.budget != nil && !c.budget.Hold(d.client, pos, n) {
		return false
	}
	d.held += n
	return true
}

// release gives n bytes of d back to the budget.
func (c *Conn) release(d *direction, n int) {
	n = min(n, d.held)
	if n <= 0 {
		return
	}
	d.held -= n
	if c.budget != nil {
		c.budget.Hold(d.client, d.pos, -n)
	}
}

// grow makes room in b (held against the budget) for n more bytes; ok is
// false when the budget refuses. The room grows with what is there, not
// with a length read from the wire.
func (c *Conn) grow(d *direction, b []byte, n int) ([]byte, bool) {
	need := len(b) + n
	if need <= cap(b) {
		return b, true
	}
	size := max(need, 2*cap(b), 64)
	if !c.hold(d, d.pos, size-cap(b)) {
		return b, false
	}
	nb := make([]byte, len(b), size)
	copy(nb, b)
	return nb, true
}

// free gives a buffer held against the budget back.
func (c *Conn) free(d *direction, b *[]byte) {
	c.release(d, cap(*b))
	*b = nil
}

// freeBody ends the collection of a record split across Feeds.
func (c *Conn) freeBody(d *direction) {
	if d.body == nil {
		return
	}
	c.release(d, cap(d.body))
	c.bufs.putRecord(d.body)
	d.body = nil
}

// Held reports the bytes the Conn holds for a direction: what it asked its
// Budget for and has not given back.
func (c *Conn) Held(fromClient bool) int { return c.dir(fromClient).held }
