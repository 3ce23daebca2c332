package reassembly

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
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
// reads are twice as fast behind it (see perf-notes).
const readBufferSize = 1 << 20

// maxSnaplen caps a pcap header's snaplen: pcapgo allocates its packet buffer
// from it, so a hostile header must not be able to ask for gigabytes.
const maxSnaplen = 4 << 20

type fileSource struct {
	name string
	f    *os.File // nil for stdin
	pcap *pcapgo.Reader
	ng   *pcapgo.NgReader
	link layers.LinkType
	n    int // packets returned
	err  error
}

// OpenFile opens a pcap or pcapng capture, chosen by its magic number; "-"
// reads standard input. Errors are one sentence naming the file.
func OpenFile(path string) (Source, error) {
	if path == "-" {
		return OpenReader("standard input", os.Stdin)
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
	s := &fileSource{name: path, f: f}
	if err := s.open(bufio.NewReaderSize(f, readBufferSize)); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenReader reads a pcap or pcapng capture from r (a pipe, standard
// input); name is what errors call it.
func OpenReader(name string, r io.Reader) (Source, error) {
	s := &fileSource{name: name}
	if err := s.open(bufio.NewReaderSize(r, readBufferSize)); err != nil {
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

func (s *fileSource) open(br *bufio.Reader) error {
	head, err := br.Peek(24)
	if len(head) == 0 {
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: cannot read: %v", s.name, err)
		}
		return fmt.Errorf("%s: empty file", s.name)
	}
	if len(head) < 4 {
		return fmt.Errorf("%s: not a pcap or pcapng file (only %d bytes)", s.name, len(head))
	}
	le := binary.LittleEndian.Uint32(head)
	switch {
	case le == 0x0a0d0d0a:
		ng, err := pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{WantMixedLinkType: true})
		if err != nil {
			return s.headerError("pcapng", err)
		}
		s.ng = ng
	case le == 0xa1b2c3d4 || le == 0xd4c3b2a1 || le == 0xa1b23c4d || le == 0x4d3cb2a1 ||
		head[0] == 0x1f && head[1] == 0x8b:
		full := len(head) == 24
		var snap, link uint32
		if full && head[0] != 0x1f {
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
		return fmt.Errorf("%s: not a pcap or pcapng file (starts with % x)", s.name, head[:4])
	}
	return nil
}

func (s *fileSource) headerError(kind string, err error) error {
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
		switch {
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
	if s.f != nil {
		err := s.f.Close()
		s.f = nil
		return err
	}
	return nil
}
