package tlsdec

// RecordScan tells whether a stream picked up at an unknown point (a
// capture begun inside a TLS record) carries TLS records: somewhere in its
// first ScanLimit bytes a record header (a content type, version 3.x, a
// length a record can have) whose length leads to another header, and so
// on chainRecords times in a row. Random bytes and Kafka frames make such
// a chain about never. It keeps no bytes: a few counters, fed in order.
type RecordScan struct {
	off     int64   // bytes fed
	tail    [4]byte // the last bytes fed: a header may straddle two feeds
	nt      int
	next    int64 // the first position not yet judged as a header start
	chains  [maxChains]chain
	nc      int
	found   bool
	stopped bool
}

type chain struct {
	next  int64 // where the next header must be
	count int
}

const (
	// ScanLimit is how far into a stream a chain must start: past a first
	// record of the largest size.
	ScanLimit = 64 << 10
	// chainRecords headers in a row are proof; maxChains candidates are
	// followed at once.
	chainRecords = 3
	maxChains    = 8
	// maxCiphertext is the largest record TLS 1.2 allows (RFC 5246: 2^14 +
	// 2048); TLS 1.3's are smaller.
	maxCiphertext = 1<<14 + 2048
)

// Feed takes the next bytes of the stream; found says the stream carries
// TLS records, done that more bytes will not change the answer.
func (s *RecordScan) Feed(b []byte) (found, done bool) {
	if s.found || s.stopped {
		return s.found, true
	}
	end := s.off + int64(len(b))
	at := func(p int64) byte {
		if p >= s.off {
			return b[p-s.off]
		}
		return s.tail[s.nt-int(s.off-p)]
	}
	for p := s.next; p+recordHeaderLen <= end; p++ {
		n, ok := -1, false
		if t := at(p); t >= typeCCS && t <= typeAppData && at(p+1) == 3 && at(p+2) <= 4 {
			n = int(at(p+3))<<8 | int(at(p+4))
			ok = n > 0 && n <= maxCiphertext
		}
		chained := false
		for i := 0; i < s.nc; {
			c := &s.chains[i]
			if c.next != p {
				i++
				continue
			}
			if ok {
				c.count++
				c.next = p + recordHeaderLen + int64(n)
				if c.count >= chainRecords {
					s.found = true
					return true, true
				}
				chained = true
				i++
				continue
			}
			s.nc--
			s.chains[i] = s.chains[s.nc] // the chain broke
		}
		if ok && !chained && s.nc < maxChains && p < ScanLimit {
			s.chains[s.nc] = chain{next: p + recordHeaderLen + int64(n), count: 1}
			s.nc++
		}
		s.next = p + 1
	}
	// Keep the last bytes for a header across the next feed.
	if len(b) >= len(s.tail) {
		s.nt = copy(s.tail[:], b[len(b)-len(s.tail):])
	} else {
		var w [8]byte // two tails
		k := copy(w[:], s.tail[:s.nt])
		k += copy(w[k:], b)
		s.nt = copy(s.tail[:], w[max(0, k-len(s.tail)):k])
	}
	s.off = end
	if s.off >= ScanLimit && s.nc == 0 {
		s.stopped = true // no chain started in time
	}
	if s.off >= ScanLimit+chainRecords*(maxCiphertext+recordHeaderLen) {
		s.stopped = true
	}
	return false, s.stopped
}
