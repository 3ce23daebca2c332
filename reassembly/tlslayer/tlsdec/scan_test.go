package tlsdec

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// scanRecords is a stream of TLS 1.3 application data records of random
// lengths with random contents.
func scanRecords(r *rand.Rand, n int) []byte {
	var b []byte
	for range n {
		l := 1 + r.IntN(1<<14+256)
		b = append(b, typeAppData, 3, 3, byte(l>>8), byte(l))
		for range l {
			b = append(b, byte(r.Uint32()))
		}
	}
	return b
}

// feedScan gives s the stream in random chunks (one byte each when small).
func feedScan(r *rand.Rand, s *RecordScan, b []byte, small bool) (found, done bool) {
	for len(b) > 0 {
		k := 1
		if !small {
			k = 1 + r.IntN(3000)
		}
		k = min(k, len(b))
		if found, done = s.Feed(b[:k]); done {
			return
		}
		b = b[k:]
	}
	return
}

func TestRecordScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
		stream := scanRecords(r, 10)
		cut := r.IntN(1 << 14) // inside the first record, mostly
		var s RecordScan
		if found, done := feedScan(r, &s, stream[cut:], i%8 == 0); !found || !done {
			t.Errorf("records cut at %d: found %v, done %v", cut, found, done)
		}
	}
	// Random bytes, and Kafka frames (size prefix, api key, version,
	// correlation id, client id): no chain.
	noise := make([]byte, 256<<10)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	var kafka []byte
	for i := range 3000 {
		body := make([]byte, 10+r.IntN(200))
		binary.BigEndian.PutUint16(body[0:], uint16(r.IntN(70)))
		binary.BigEndian.PutUint16(body[2:], uint16(r.IntN(13)))
		binary.BigEndian.PutUint32(body[4:], uint32(i))
		kafka = binary.BigEndian.AppendUint32(kafka, uint32(len(body)))
		kafka = append(kafka, body...)
	}
	for name, b := range map[string][]byte{"noise": noise, "kafka": kafka[1234:]} {
		var s RecordScan
		if found, done := feedScan(r, &s, b, false); found || !done {
			t.Errorf("%s: found %v, done %v", name, found, done)
		}
	}
	// Chained headers must start within ScanLimit.
	late := append(append([]byte{}, noise[:ScanLimit+100]...), scanRecords(r, 5)...)
	var s RecordScan
	if found, _ := feedScan(r, &s, late, false); found {
		t.Error("records beginning past ScanLimit were found")
	}
}

func FuzzRecordScan(f *testing.F) {
	f.Add([]byte{23, 3, 3, 0, 1, 0, 23, 3, 3, 0, 1, 0, 23, 3, 3, 0, 1, 0}, uint8(1))
	f.Add([]byte{0, 0, 0, 5, 0, 1, 0, 2}, uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, chunk uint8) {
		var whole RecordScan
		want, _ := whole.Feed(b)
		var s RecordScan
		got := false
		for k := max(1, int(chunk)); len(b) > 0; b = b[min(k, len(b)):] {
			if f, done := s.Feed(b[:min(k, len(b))]); done {
				got = f
				break
			}
		}
		if s.found != want {
			t.Fatalf("fed whole: %v; in chunks of %d: %v (returned %v)", want, chunk, s.found, got)
		}
	})
}
