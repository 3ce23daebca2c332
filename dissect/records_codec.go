package dissect

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Decompression of record batches. Every codec writes into a buffer this
// file grows itself, never past the caller's limit (plus the one byte
// that proves the limit was passed), so neither a bomb nor a size field
// that lies can make an allocation larger than the cap.

// Kafka's compression codecs, the low three bits of a batch's attributes.
const (
	codecNone   = 0
	codecGzip   = 1
	codecSnappy = 2
	codecLZ4    = 3
	codecZstd   = 4
)

var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

func codecName(c int) string {
	if c >= 0 && c < len(codecNames) {
		return codecNames[c]
	}
	return "unknown codec " + fmt.Sprint(c)
}

// DefaultMaxDecompressed is the most bytes one record batch may
// decompress to when Options.MaxDecompressed is not set.
const DefaultMaxDecompressed = 64 << 20

// errTooBig is a batch that decompresses to more than the cap.
type errTooBig struct{ limit int }

func (e errTooBig) Error() string {
	return fmt.Sprintf("decompresses to more than %d bytes (--max-decompressed)", e.limit)
}

// decompress returns src, the compressed entries of a magic version,
// decompressed with codec, at most limit bytes.
func decompress(codec int, magic int8, src []byte, limit int) ([]byte, error) {
	switch codec {
	case codecGzip:
		return gunzip(src, limit)
	case codecSnappy:
		return unsnappy(src, limit)
	case codecLZ4:
		if magic == 0 {
			return unlz4Magic0(src, limit)
		}
		return unlz4(src, limit)
	case codecZstd:
		return unzstd(src, limit)
	}
	return nil, fmt.Errorf("unknown compression codec %d", codec)
}

// readCapped reads r to its end into a buffer that starts at hint bytes
// and doubles, clamped at limit+1: reading limit+1 bytes proves the
// stream is too big without reading (or holding) any more of it.
func readCapped(r io.Reader, hint, limit int) ([]byte, error) {
	buf := make([]byte, 0, min(max(hint, 512), limit+1))
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return nil, errTooBig{limit}
			}
			grown := make([]byte, len(buf), min(2*cap(buf), limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF && len(buf) > limit:
			return nil, errTooBig{limit}
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return nil, err
		}
	}
}

// Readers are pooled: a gzip, lz4 or zstd reader costs tens of kilobytes
// of tables to set up, more than decoding a small batch.
var (
	gzipPool sync.Pool
	lz4Pool  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	zstdPool sync.Pool
)

// deflateMaxRatio bounds what a gzip footer's size may claim: deflate
// cannot expand a byte to more than 1032.
const deflateMaxRatio = 1032

func gunzip(src []byte, limit int) ([]byte, error) {
	zr, _ := gzipPool.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(src))
	} else {
		err = zr.Reset(bytes.NewReader(src))
	}
	if err != nil {
		return nil, err
	}
	defer gzipPool.Put(zr)
	// The footer's ISIZE (size mod 2^32) is only a hint for the first
	// buffer, bounded by what deflate can do with these bytes.
	hint := 4 * len(src)
	if len(src) >= 18 {
		hint = min(int(binary.LittleEndian.Uint32(src[len(src)-4:])), deflateMaxRatio*len(src))
	}
	return readCapped(zr, hint+1, limit) // +1: the EOF is seen without growing
}

// xerialMagic starts the framing the Java client's snappy-java writes: the
// magic, a version and a compatible version (int32 each), then blocks, each
// an int32 length and a raw snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// snappyMaxRatio bounds a snappy block's claimed decoded length: snappy's
// longest copy (64 bytes from a 3-byte tag) expands less than 22 times, so
// a block claiming more is lying and is refused before any allocation.
const snappyMaxRatio = 22

func unsnappy(src []byte, limit int) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		n, err := snappyLen(src, limit)
		if err != nil {
			return nil, err
		}
		return s2.Decode(make([]byte, n), src)
	}
	if len(src) < 16 {
		return nil, errors.New("xerial snappy header is cut short")
	}
	// First the sizes, so that one buffer of the right size is made.
	total := 0
	for rest := src[16:]; len(rest) > 0; {
		block, next, err := xerialBlock(rest)
		if err != nil {
			return nil, err
		}
		n, err := snappyLen(block, limit)
		if err != nil {
			return nil, err
		}
		if total += n; total > limit {
			return nil, errTooBig{limit}
		}
		rest = next
	}
	out := make([]byte, 0, total)
	for rest := src[16:]; len(rest) > 0; {
		block, next, _ := xerialBlock(rest)
		n, _ := s2.DecodedLen(block)
		dec, err := s2.Decode(out[len(out):len(out)+n], block)
		if err != nil {
			return nil, err
		}
		out = out[:len(out)+len(dec)]
		rest = next
	}
	return out, nil
}

func xerialBlock(b []byte) (block, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("xerial snappy block length cut short (%d bytes)", len(b))
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, fmt.Errorf("xerial snappy block of %d bytes, %d left", n, len(b)-4)
	}
	return b[4 : 4+n], b[4+n:], nil
}

// snappyLen is a raw snappy block's decoded length, checked against the
// limit and against what snappy can expand these bytes to.
func snappyLen(block []byte, limit int) (int, error) {
	n, err := s2.DecodedLen(block)
	switch {
	case err != nil:
		return 0, fmt.Errorf("snappy: %w", err)
	case n > limit:
		return 0, errTooBig{limit}
	case n > snappyMaxRatio*len(block)+64:
		return 0, fmt.Errorf("snappy block of %d bytes claims %d decoded: more than snappy can expand it", len(block), n)
	}
	return n, nil
}

func unlz4(src []byte, limit int) ([]byte, error) {
	return unlz4From(bytes.NewReader(src), len(src), limit)
}

func unlz4From(r io.Reader, n, limit int) ([]byte, error) {
	zr := lz4Pool.Get().(*lz4.Reader)
	defer func() {
		zr.Reset(nil) // let go of src and hand the block buffer back
		lz4Pool.Put(zr)
	}()
	zr.Reset(r)
	return readCapped(zr, 4*n, limit)
}

// unlz4Magic0 decompresses the value of a magic 0 message. Kafka before
// 0.10 computed the LZ4 frame descriptor's checksum over the frame's magic
// number as well (KAFKA-3160); Kafka's reader still ignores that byte in
// magic 0 messages, and clients still write it so for them (librdkafka
// does). The byte is replaced by whichever value pierrec/lz4's own header
// check accepts, so the rest of the frame is checked as usual.
func unlz4Magic0(src []byte, limit int) ([]byte, error) {
	n := lz4HeaderLen(src)
	if n == 0 {
		return unlz4(src, limit)
	}
	if ok, _ := lz4.ValidFrameHeader(src[:n]); ok {
		return unlz4(src, limit)
	}
	hdr := append([]byte(nil), src[:n]...)
	for c := range 256 {
		hdr[n-1] = byte(c)
		if ok, _ := lz4.ValidFrameHeader(hdr); ok {
			return unlz4From(io.MultiReader(bytes.NewReader(hdr), bytes.NewReader(src[n:])), len(src), limit)
		}
	}
	return unlz4(src, limit) // the descriptor is wrong in another way: say how
}

// lz4HeaderLen is the length of the LZ4 frame header src starts with
// (magic number, FLG, BD, the optional content size and dictionary id,
// HC), or 0 when src does not start with one.
func lz4HeaderLen(src []byte) int {
	if len(src) < 7 || binary.LittleEndian.Uint32(src) != 0x184d2204 {
		return 0
	}
	n := 7
	if src[4]&0x08 != 0 { // content size
		n += 8
	}
	if src[4]&0x01 != 0 { // dictionary id
		n += 4
	}
	if len(src) < n {
		return 0
	}
	return n
}

const zstdWindowFloor = 8 << 20

func unzstd(src []byte, limit int) ([]byte, error) {
	// A streaming decoder's memory limit is its largest window, which it
	// allocates up front: with the cap as that limit, a frame asking for
	// more is refused before its window exists. Streaming writers that do
	// not know the size ask for a window by level (2 MiB for the Java
	// producer's, 8 MiB for klauspost's): that much is allowed under a
	// smaller cap, which the output is held to all the same.
	mem := zstd.WithDecoderMaxMemory(uint64(max(limit, zstdWindowFloor)))
	zr, _ := zstdPool.Get().(*zstd.Decoder)
	var err error
	if zr == nil {
		zr, err = zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), mem)
	} else {
		err = zr.ResetWithOptions(bytes.NewReader(src), mem)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		zr.Reset(nil) // let go of src
		zstdPool.Put(zr)
	}()
	return readCapped(zr, 4*len(src), limit)
}
