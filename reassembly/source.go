package reassembly

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/klauspost/compress/zstd"
)

// Source yields packets; implementations: files and live.
type Source interface {
	// Next returns the next packet: data valid until the next call, capture
	// info, its link type. io.EOF at end. A truncated file gives a clear
	// error after the packets it could read.
	Next() (data []byte, ci gopacket.CaptureInfo, link layers.LinkType, err error)
	Close() error
}

// readBufferSize is the bufio.Reader in front of files: pcapgo's zero-copy
// reads are twice as fast behind it (see the benchmark notes in README).
// A quarter of a MiB stays in a core's cache between the kernel's copy
// into it and pcapgo's copy out, which 1 MiB did not: 8% less time for
// a cached file.
const readBufferSize = 256 << 10

// maxSnaplen caps a pcap header's snaplen: pcapgo allocates its packet buffer
// from it, so a hostile header must not be able to ask for gigabytes.
const maxSnaplen = 4 << 20

// maxZstdWindow caps the window a zstd stream may ask for: the decoder
// allocates it, so the file's frame header must not choose gigabytes. 128 MiB
// is zstd --long's default window (2^27), so every stream the zstd tool
// writes with default settings fits.
const maxZstdWindow = 128 << 20

type fileSource struct {
	name  string
	f     *os.File  // nil for stdin
	codec string    // "gzip" or "zstd" when the capture is compressed
	dec   io.Closer // the decompressor, when it holds resources
	in    *countingReader
	pcap  *pcapgo.Reader
	ng    *pcapgo.NgReader
	link  layers.LinkType
	n     int // packets returned
	err   error
	// secrets receives a pcapng file's Decryption Secrets Blocks
	// (FileOptions.Secrets).
	secrets func(kind uint32, data []byte)
}

// FileOptions are what OpenFileWith and OpenReaderWith are told besides
// what to read.
type FileOptions struct {
	// Secrets, when set, is given what each Decryption Secrets Block of a
	// pcapng file holds (its secrets type, e.g. SecretsTLSKeyLog, and its
	// data, valid during the call), once the reading has passed it and
	// before the packets after it are returned.
	Secrets func(kind uint32, data []byte)
}

// OpenFile opens a pcap or pcapng capture, chosen by its magic number, and
// also gzip- or zstd-compressed (again by magic number); "-" reads standard
// input. Errors are one sentence naming the file.
func OpenFile(path string) (Source, error) { return OpenFileWith(path, FileOptions{}) }

// OpenFileWith is OpenFile, told o.
func OpenFileWith(path string, o FileOptions) (Source, error) {
	if path == "-" {
		return OpenReaderWith("standard input", os.Stdin, o)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, openError(path, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a capture file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	s := &fileSource{name: path, f: f, in: &countingReader{r: f}, secrets: o.Secrets}
	if err := s.open(bufio.NewReaderSize(s.tap(s.in), readBufferSize)); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenReader reads a pcap or pcapng capture from r (a pipe, standard
// input); name is what errors call it.
func OpenReader(name string, r io.Reader) (Source, error) {
	return OpenReaderWith(name, r, FileOptions{})
}

// OpenReaderWith is OpenReader, told o.
func OpenReaderWith(name string, r io.Reader, o FileOptions) (Source, error) {
	s := &fileSource{name: name, in: &countingReader{r: r}, secrets: o.Secrets}
	if err := s.open(bufio.NewReaderSize(s.tap(s.in), readBufferSize)); err != nil {
		return nil, err
	}
	return s, nil
}

func openError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: cannot open: %v", path, err)
}

// countingReader counts the bytes read from the file itself, compressed
// or not.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Consumed is how many bytes of the file have been read so far (of the
// compressed data when it is compressed; what is buffered included): progress
// against the file's size, which packet sizes cannot give for a
// compressed file.
func (s *fileSource) Consumed() int64 { return s.in.n }

// codecError is an error of the decompressor, not of the capture inside.
type codecError struct{ err error }

func (e codecError) Error() string { return e.err.Error() }

// codecReader tags its reader's errors other than io.EOF as codecError, so
// that a damaged compressed file is not reported as a damaged capture.
type codecReader struct{ r io.Reader }

func (c codecReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		err = codecError{err}
	}
	return n, err
}

// tap puts an ngGuard on r, under the buffer the capture is read through:
// it checks a pcapng stream's blocks and hands over their secrets when
// they are asked for, and stops looking at the first bytes of a file that
// is not pcapng (or a compressed one, whose capture is tapped after the
// decompressor).
func (s *fileSource) tap(r io.Reader) io.Reader {
	return &ngGuard{r: r, onSecrets: s.secrets}
}

// open reads the capture's header, first undoing a gzip or zstd
// compression recognised by its magic number.
func (s *fileSource) open(br *bufio.Reader) error {
	magic, _ := br.Peek(4)
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		s.codec = "gzip"
		// br is already this size (then NewReaderSize returns it): the
		// decompressor reads a byte at a time.
		br = bufio.NewReaderSize(br, readBufferSize)
		zr, err := gzip.NewReader(br)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return fmt.Errorf("%s: truncated: the gzip data ends inside its header", s.name)
			}
			return fmt.Errorf("%s: not valid gzip data: %v", s.name, err)
		}
		br = bufio.NewReaderSize(s.tap(codecReader{zr}), readBufferSize)
	case len(magic) == 4 && binary.LittleEndian.Uint32(magic) == 0xfd2fb528:
		s.codec = "zstd"
		// One goroutine: the stream is read in order anyway, and the
		// default (one per core) multiplies the memory held.
		br = bufio.NewReaderSize(br, readBufferSize)
		zd, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			return fmt.Errorf("%s: cannot read zstd data: %v", s.name, err)
		}
		s.dec = zstdCloser{zd}
		br = bufio.NewReaderSize(s.tap(codecReader{zd}), readBufferSize)
	}
	return s.openCapture(br)
}

type zstdCloser struct{ d *zstd.Decoder }

func (z zstdCloser) Close() error { z.d.Close(); return nil }

func (s *fileSource) openCapture(br *bufio.Reader) error {
	head, err := br.Peek(24)
	if ce := (codecError{}); errors.As(err, &ce) {
		return s.codecErr(ce, "the capture's header", "in the capture's header")
	}
	if be := (*ngBlockError)(nil); errors.As(err, &be) && len(head) < 4 {
		return s.headerError("pcapng", err)
	}
	if len(head) == 0 {
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: cannot read: %v", s.name, err)
		}
		if s.codec != "" {
			return fmt.Errorf("%s: the %s data holds nothing", s.name, s.codec)
		}
		return fmt.Errorf("%s: empty file", s.name)
	}
	if len(head) < 4 {
		return fmt.Errorf("%s: not a pcap or pcapng file%s (only %d bytes)", s.name, s.inside(), len(head))
	}
	le := binary.LittleEndian.Uint32(head)
	switch {
	case le == ngSectionHeader:
		ng, err := pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{WantMixedLinkType: true})
		if err != nil {
			return s.headerError("pcapng", err)
		}
		s.ng = ng
	case le == 0xa1b2c3d4 || le == 0xd4c3b2a1 || le == 0xa1b23c4d || le == 0x4d3cb2a1:
		full := len(head) == 24
		var snap, link uint32
		if full {
			order := binary.ByteOrder(binary.LittleEndian)
			if le == 0xd4c3b2a1 || le == 0x4d3cb2a1 {
				order = binary.BigEndian
			}
			snap, link = order.Uint32(head[16:]), order.Uint32(head[20:])
		}
		pr, err := pcapgo.NewReader(br)
		if err != nil {
			return s.headerError("pcap", err)
		}
		s.pcap = pr
		s.link = pr.LinkType()
		if link > 0xff {
			// pcapgo keeps only the low byte; see LinkTypeLinuxSLL2.
			s.link = layers.LinkType(0xff)
			if link == 276 {
				s.link = LinkTypeLinuxSLL2
			}
		}
		if snap > maxSnaplen || pr.Snaplen() > maxSnaplen {
			pr.SetSnaplen(maxSnaplen)
		}
	default:
		return fmt.Errorf("%s: not a pcap or pcapng file%s (starts with % x)", s.name, s.inside(), head[:4])
	}
	return nil
}

// inside names the compression a capture was found in, for messages.
func (s *fileSource) inside() string {
	if s.codec == "" {
		return ""
	}
	return " inside the " + s.codec + " data"
}

// codecErr words a decompressor's error: what kind, and where: inside
// which part of the capture the data ends, or after what it is corrupt.
func (s *fileSource) codecErr(ce codecError, inside, after string) error {
	switch {
	case errors.Is(ce.err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: truncated: the %s data ends inside %s", s.name, s.codec, inside)
	case errors.Is(ce.err, zstd.ErrWindowSizeExceeded):
		return fmt.Errorf("%s: the zstd data needs a window above %d MiB, more than kdissect allows", s.name, maxZstdWindow>>20)
	}
	return fmt.Errorf("%s: corrupt %s data %s: %v", s.name, s.codec, after, ce.err)
}

func (s *fileSource) headerError(kind string, err error) error {
	if ce := (codecError{}); errors.As(err, &ce) {
		return s.codecErr(ce, "the capture's header", "in the capture's header")
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%s: truncated %s header", s.name, kind)
	}
	return fmt.Errorf("%s: bad %s header: %v", s.name, kind, err)
}

func (s *fileSource) Next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if s.err != nil {
		return nil, gopacket.CaptureInfo{}, 0, s.err
	}
	var (
		data []byte
		ci   gopacket.CaptureInfo
		err  error
		link = s.link
	)
	if s.ng != nil {
		data, ci, err = s.ng.ZeroCopyReadPacketData()
		if err == nil && len(ci.AncillaryData) > 0 {
			if l, ok := ci.AncillaryData[0].(layers.LinkType); ok {
				link = l
			}
		}
	} else {
		data, ci, err = s.pcap.ZeroCopyReadPacketData()
	}
	if err != nil {
		// pcapgo returns io.EOF both at a clean end and when a record's data
		// is missing entirely; only in the second case is ci filled in.
		ce := codecError{}
		switch {
		case errors.As(err, &ce):
			s.err = s.codecErr(ce, fmt.Sprintf("packet %d", s.n+1), fmt.Sprintf("after packet %d", s.n))
		case err == io.EOF && ci.CaptureLength == 0 && ci.Length == 0:
			s.err = io.EOF
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			s.err = fmt.Errorf("%s: truncated: the file ends inside packet %d", s.name, s.n+1)
		default:
			s.err = fmt.Errorf("%s: bad record after packet %d: %v", s.name, s.n, err)
		}
		return nil, gopacket.CaptureInfo{}, 0, s.err
	}
	s.n++
	return data, ci, link, nil
}

func (s *fileSource) Close() error {
	if s.dec != nil {
		s.dec.Close()
		s.dec = nil
	}
	if s.f != nil {
		err := s.f.Close()
		s.f = nil
		return err
	}
	return nil
}
