package reassembly

import (
	"bufio"
	"io"
	"os"
	"sync"
)

// OpenFileAhead is OpenFile with the file read on a goroutine of its own,
// a few blocks ahead of the packets parsed: the system calls and the copy
// from the page cache (a third of a plaintext run's reading, see the
// benchmark notes) overlap the parsing on another core. "-" is standard
// input, read as OpenFile reads it.
func OpenFileAhead(path string) (Source, error) {
	if path == "-" {
		return OpenFile(path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, openError(path, err)
	}
	if fi.IsDir() {
		return OpenFile(path) // its error
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	ra := newReadAhead(f)
	s := &fileSource{name: path, f: f, ahead: ra, in: &countingReader{r: ra}}
	// The blocks already make the system calls few: a bufio.Reader as
	// large as OpenFile's would only copy every byte once more. Its buffer
	// holds what open peeks at; pcapgo's packet reads, larger, bypass it.
	if err := s.open(bufio.NewReaderSize(s.in, aheadPeek)); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// aheadPeek is the buffer in front of the blocks: enough for the magic
// numbers and a pcap file header.
const aheadPeek = 64

// aheadBlocks blocks of readBufferSize are read ahead at most.
const aheadBlocks = 4

type aheadBlock struct {
	b   []byte
	err error
}

// readAhead is an io.Reader of r whose reads come from blocks a goroutine
// reads: each block is one Read of r, so a pipe's bytes come as soon as
// they are there.
type readAhead struct {
	full      chan aheadBlock
	free      chan []byte
	done      chan struct{}
	closeOnce sync.Once
	cur, last []byte
	err       error
}

func newReadAhead(r io.Reader) *readAhead {
	ra := &readAhead{full: make(chan aheadBlock, aheadBlocks), free: make(chan []byte, aheadBlocks), done: make(chan struct{})}
	for range aheadBlocks {
		ra.free <- make([]byte, readBufferSize)
	}
	go ra.run(r)
	return ra
}

func (ra *readAhead) run(r io.Reader) {
	defer close(ra.full)
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.done:
			return
		}
		n, err := r.Read(buf)
		if n == 0 && err == nil {
			ra.free <- buf
			continue
		}
		select {
		case ra.full <- aheadBlock{buf[:n], err}:
		case <-ra.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.err != nil {
			return 0, ra.err
		}
		if ra.last != nil {
			ra.free <- ra.last[:cap(ra.last)]
			ra.last = nil
		}
		b, ok := <-ra.full
		if !ok {
			return 0, os.ErrClosed
		}
		ra.cur, ra.last, ra.err = b.b, b.b, b.err
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// close stops the goroutine (before the file is closed under it).
func (ra *readAhead) close() { ra.closeOnce.Do(func() { close(ra.done) }) }
