package tlsdec

import (
	"bytes"
	"crypto/tls"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// bulkCapture is a TLS 1.3 AES-128-GCM connection whose client sent 256 full 16 KiB records.
var (
	bulkOnce sync.Once
	bulkCap  *capture
)

func bulkCapture(tb testing.TB) *capture {
	bulkOnce.Do(func() {
		var sends [][]byte
		for i := 0; i < 256; i++ {
			sends = append(sends, payload(uint64(100+i), 16384))
		}
		forceTLS13Suite(tb, tls.TLS_AES_128_GCM_SHA256)
		bulkCap = exchange(tb, &tls.Config{MinVersion: tls.VersionTLS13, DynamicRecordSizingDisabled: true},
			&tls.Config{}, sends, payload(9, 100), nil)
	})
	if bulkCap == nil {
		tb.Fatal("no benchmark capture")
	}
	return bulkCap
}

// handshakeEnd is the offset of the client's first application data record.
func handshakeEnd(client []byte) int {
	recs := splitRecords(client)
	seenFinished := false
	for _, r := range recs {
		if r.typ == typeAppData {
			if seenFinished {
				return r.pos
			}
			seenFinished = true
		}
	}
	return len(client)
}

// Decrypting a record allocates nothing, whether it comes whole or in pieces.
func TestZeroAllocsPerRecord(t *testing.T) {
	cp := bulkCapture(t)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	recs := splitRecords(cp.client)
	start := handshakeEnd(cp.client)
	for _, chunk := range []int{0, 1000} {
		c := NewConn(kl)
		total := 0
		out := func(o Output) {
			if o.FromClient {
				total += len(o.Data)
			}
		}
		c.Feed(false, cp.server, out)
		c.Feed(true, cp.client[:start], out)
		i := 0
		for recs[i].pos < start {
			i++
		}
		allocs := testing.AllocsPerRun(100, func() {
			r := recs[i].raw
			if chunk == 0 {
				c.Feed(true, r, out)
			} else {
				for len(r) > 0 {
					n := min(chunk, len(r))
					c.Feed(true, r[:n], out)
					r = r[n:]
				}
			}
			i++
		})
		if allocs != 0 {
			t.Errorf("chunks of %d: %v allocations per record, want 0", chunk, allocs)
		}
		if total != 101*16384 {
			t.Errorf("chunks of %d: %d plaintext bytes, want %d", chunk, total, 101*16384)
		}
	}
}

// BenchmarkDecryptAES128GCM measures the client direction of a TLS 1.3 AES-128-GCM connection of
// 256 records of 16 KiB (4 MiB), handshake included, fed in 64 KiB chunks.
func BenchmarkDecryptAES128GCM(b *testing.B) {
	cp := bulkCapture(b)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	b.SetBytes(int64(len(cp.client)))
	b.ReportAllocs()
	total := 0
	out := func(o Output) { total += len(o.Data) }
	for b.Loop() {
		c := NewConn(kl)
		c.Feed(false, cp.server, out)
		for p := cp.client; len(p) > 0; {
			n := min(len(p), 1<<16)
			c.Feed(true, p[:n], out)
			p = p[n:]
		}
	}
	if total == 0 {
		b.Fatal("nothing decrypted")
	}
}

// Damaged captures (bytes changed, cut, lost) never make Conn panic, and the plaintext it hands out
// stays contiguous per direction.
func TestDamagedInput(t *testing.T) {
	cfgs := []*tls.Config{
		{MinVersion: tls.VersionTLS13},
		{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256}},
	}
	for _, cfg := range cfgs {
		cp := exchange(t, cfg, cfg, testSends(), payload(9, 3000), nil)
		for _, keys := range []string{cp.keyLog, ""} {
			kl, _ := ParseKeyLog(strings.NewReader(keys))
			r := mrand.New(mrand.NewPCG(5, 5))
			for iter := 0; iter < 200; iter++ {
				client, server := bytes.Clone(cp.client), bytes.Clone(cp.server)
				for k := r.IntN(4); k > 0; k-- {
					b := client
					if r.IntN(2) == 0 {
						b = server
					}
					b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
				}
				c := NewConn(kl)
				next := map[bool]int64{}
				out := func(o Output) {
					if o.Kind == KindData {
						if o.Offset != next[o.FromClient] {
							t.Fatalf("offset %d, want %d", o.Offset, next[o.FromClient])
						}
						next[o.FromClient] += int64(len(o.Data))
					}
				}
				for len(client) > 0 || len(server) > 0 {
					fromClient := len(server) == 0 || len(client) > 0 && r.IntN(2) == 0
					src := &server
					if fromClient {
						src = &client
					}
					n := min(1+r.IntN(5000), len(*src))
					if r.IntN(20) == 0 {
						c.Gap(fromClient, int64(n), out)
					} else {
						c.Feed(fromClient, (*src)[:n], out)
					}
					*src = (*src)[n:]
				}
				_ = c.Info()
			}
		}
	}
}

func FuzzConn(f *testing.F) {
	client, server := rfcStreams(f)
	f.Add(client, server, uint16(300))
	f.Add(client[:250], server[5:], uint16(7))
	kl, _ := ParseKeyLog(strings.NewReader(rfcKeyLog))
	f.Fuzz(func(t *testing.T, client, server []byte, chunk uint16) {
		c := NewConn(kl)
		n := int(chunk%2000) + 1
		var r *fuzzReader
		if chunk&0x8000 != 0 {
			// Decrypting selectively: plans that change with every question.
			r = &fuzzReader{n: int64(chunk)}
			c.SetReader(r)
		}
		sessions := 0
		out := func(o Output) {
			if o.Kind == KindSkip && r != nil && (o.Len <= 0 || int64(o.Len) > r.skip) {
				t.Fatalf("skipped %d bytes, %d skippable", o.Len, r.skip)
			}
			if o.Kind == KindSession {
				if sessions++; sessions > 1 {
					t.Fatal("the session was reported twice")
				}
			}
		}
		for len(client) > 0 || len(server) > 0 {
			a, b := min(n, len(client)), min(n, len(server))
			c.Feed(true, client[:a], out)
			c.Feed(false, server[:b], out)
			client, server = client[a:], server[b:]
			if n%7 == 0 {
				c.Gap(true, -1, nil)
			}
		}
		_ = c.Info()
		c.End(out)
		if sessions != 1 {
			t.Fatalf("the session was reported %d times", sessions)
		}
	})
}

// fuzzReader answers a Conn's questions with plans that vary.
type fuzzReader struct{ n, k, skip int64 }

func (r *fuzzReader) Unread(bool) (skip, head int64) {
	r.k++
	r.skip = 0
	switch r.k % 3 {
	case 0:
		r.skip = 1 + (r.n*r.k)%20000
		return r.skip, 0
	case 1:
		return 0, 1 + r.k%70
	}
	return 0, 0
}

func (r *fuzzReader) Settled(bool) bool { return r.k%2 == 0 }
