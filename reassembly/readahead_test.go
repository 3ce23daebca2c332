package reassembly

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// OpenFileAhead yields the packets OpenFile yields, and a source closed
// before its end stops its goroutine without a hang.
func TestOpenFileAheadSamePackets(t *testing.T) {
	files, _ := filepath.Glob("../testdata/pcaps/*.pcap")
	if len(files) == 0 {
		t.Fatal("no captures")
	}
	for _, f := range files {
		a, err := OpenFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := OpenFileAhead(f)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; ; n++ {
			da, ca, la, ea := a.Next()
			db, cb, lb, eb := b.Next()
			if !bytes.Equal(da, db) || ca.Timestamp != cb.Timestamp || la != lb || (ea == nil) != (eb == nil) {
				t.Fatalf("%s: packet %d differs: %v, %v", f, n, ea, eb)
			}
			if ea == io.EOF {
				break
			}
		}
		a.Close()
		b.Close()
	}
	b, err := OpenFileAhead(files[0])
	if err != nil {
		t.Fatal(err)
	}
	b.Next()
	b.Close()
}

// The bytes of a reader come through whole, however its reads are cut,
// and its error comes after them.
func TestReadAheadReader(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789abcdef"), readBufferSize/4)
	ra := newReadAhead(iotest.HalfReader(bytes.NewReader(src)))
	got, err := io.ReadAll(iotest.OneByteReader(io.LimitReader(ra, 100)))
	if err != nil || !bytes.Equal(got, src[:100]) {
		t.Fatalf("first 100 bytes: %v", err)
	}
	rest, err := io.ReadAll(ra)
	if err != nil || !bytes.Equal(append(got, rest...), src) {
		t.Fatalf("%d of %d bytes, %v", len(got)+len(rest), len(src), err)
	}
	ra.close()
	bad := newReadAhead(iotest.TimeoutReader(bytes.NewReader(src)))
	if _, err := io.ReadAll(bad); err != iotest.ErrTimeout {
		t.Fatalf("error %v, want the reader's", err)
	}
	bad.close()
}
