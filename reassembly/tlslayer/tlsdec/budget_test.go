package tlsdec

import (
	"bytes"
	"crypto/tls"
	"strings"
	"testing"
)

// budget is a Budget that grants up to limit bytes in all and records what
// it granted, by direction.
type budget struct {
	limit   int
	held    [2]int
	peak    int
	refused int
}

func side(fromClient bool) int {
	if fromClient {
		return 0
	}
	return 1
}

func (b *budget) Hold(fromClient bool, _ int64, n int) bool {
	if n > 0 && b.held[0]+b.held[1]+n > b.limit {
		b.refused++
		return false
	}
	b.held[side(fromClient)] += n
	b.peak = max(b.peak, b.held[0]+b.held[1])
	return true
}

// checkHeld fails unless every buffer a Conn keeps is held against its
// budget, no more and no less, with no other buffer than those.
func checkHeld(t *testing.T, c *Conn, b *budget, when string) {
	t.Helper()
	for i := range c.dirs {
		d := &c.dirs[i]
		n := cap(d.body) + cap(d.hs) + cap(d.queue)
		if d.desync != nil {
			n += cap(d.scan)
		}
		if d.held != n || b.held[i] != n || b.held[i] < 0 {
			t.Fatalf("%s: direction %d keeps %d bytes, counts %d, its budget granted %d", when, i, n, d.held, b.held[i])
		}
	}
}

func budgetCapture(t *testing.T) *capture {
	forceTLS13Suite(t, tls.TLS_AES_128_GCM_SHA256)
	return exchange(t, &tls.Config{MinVersion: tls.VersionTLS13}, &tls.Config{}, testSends(), payload(9, 30000), nil)
}

// Whatever the chunking, the order of the directions and a gap, every
// byte a Conn keeps is held against its budget, and given back by End; it
// holds nothing between records.
func TestBudgetAccountsEveryBuffer(t *testing.T) {
	cp := budgetCapture(t)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	for _, mode := range []string{"server first", "1 byte", "random", "gap"} {
		b := &budget{limit: 1 << 30}
		c := NewConnWith(kl, nil, b)
		var col collector
		client, server := cp.client, cp.server
		step := func(fromClient bool, p []byte) {
			c.Feed(fromClient, p, col.out)
			checkHeld(t, c, b, mode)
		}
		switch mode {
		case "server first":
			// The server's records wait for the ClientHello: all held.
			step(false, server)
			encrypted := 0
			for _, r := range splitRecords(server) {
				if r.typ == typeAppData {
					encrypted += len(r.raw)
				}
			}
			if c.Held(false) < encrypted {
				t.Errorf("server first: %d bytes held for the %d of encrypted records the server sent before the ClientHello", c.Held(false), encrypted)
			}
			step(true, client)
		case "gap":
			step(false, server[:len(server)/2])
			step(true, client[:len(client)/2])
			c.Gap(true, 3000, col.out)
			checkHeld(t, c, b, mode)
			step(true, client[len(client)/2+3000:])
			step(false, server[len(server)/2:])
		default:
			size := map[string]int{"1 byte": 1, "random": 700}[mode]
			for len(client) > 0 || len(server) > 0 {
				for _, fromClient := range []bool{true, false} {
					src := &server
					if fromClient {
						src = &client
					}
					n := min(size, len(*src))
					if n > 0 {
						step(fromClient, (*src)[:n])
						*src = (*src)[n:]
					}
				}
				size = size*3%1900 + 1
			}
		}
		if mode != "gap" {
			if !bytes.Equal(col.data[true], cp.sent) || !bytes.Equal(col.data[false], cp.replied) {
				t.Errorf("%s: the plaintext is not what the peers wrote", mode)
			}
			if c.Held(true)+c.Held(false) != 0 {
				t.Errorf("%s: %d+%d bytes held once every record was handled", mode, c.Held(true), c.Held(false))
			}
		}
		c.End(col.out)
		checkHeld(t, c, b, mode+", ended")
		if b.held != [2]int{} {
			t.Errorf("%s: %v bytes still granted after End", mode, b.held)
		}
	}
}

// Under a budget that is too small, a Conn holds no more than it grants:
// records that wait for the other direction's hello give up (KindLimit),
// and nothing breaks.
func TestBudgetRefusalGivesUp(t *testing.T) {
	cp := budgetCapture(t)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	b := &budget{limit: 4096}
	c := NewConnWith(kl, nil, b)
	var col collector
	limits := 0
	out := func(o Output) {
		if o.Kind == KindLimit {
			limits++
		}
		col.out(o)
	}
	for off := 0; off < len(cp.server); off += 1000 {
		c.Feed(false, cp.server[off:min(off+1000, len(cp.server))], out)
		checkHeld(t, c, b, "server first")
	}
	c.Feed(true, cp.client, out)
	checkHeld(t, c, b, "then the client")
	c.End(out)
	if b.peak > b.limit || limits == 0 || b.refused == 0 {
		t.Errorf("held %d bytes at most under a limit of %d, %d refusals, %d KindLimit", b.peak, b.limit, b.refused, limits)
	}
	if len(col.data[false]) != 0 {
		t.Errorf("%d bytes of the server's plaintext decoded, though its records were given up", len(col.data[false]))
	}
	if b.held != [2]int{} {
		t.Errorf("%v bytes still granted after End", b.held)
	}
}

// A record of application data the budget will not let a Conn collect is
// passed over (KindLimit, with its position and size), and the records
// after it decrypt: the sequence number moves on with it.
func TestPassedOverRecordKeepsDecrypting(t *testing.T) {
	var sends [][]byte
	for i := range 12 {
		sends = append(sends, payload(uint64(20+i), 3000))
	}
	forceTLS13Suite(t, tls.TLS_AES_128_GCM_SHA256)
	cp := exchange(t, &tls.Config{MinVersion: tls.VersionTLS13}, &tls.Config{}, sends, payload(9, 100), nil)
	kl, _ := ParseKeyLog(strings.NewReader(cp.keyLog))
	b := &budget{limit: 1 << 30}
	c := NewConnWith(kl, nil, b)
	var col collector
	var limited []Output
	out := func(o Output) {
		if o.Kind == KindLimit {
			limited = append(limited, o)
		}
		col.out(o)
	}
	c.Feed(false, cp.server, out)
	start := handshakeEnd(cp.client)
	c.Feed(true, cp.client[:start], out)
	var recs []wireRecord
	for _, r := range splitRecords(cp.client) {
		if r.pos >= start && r.typ == typeAppData {
			recs = append(recs, r)
		}
	}
	if len(recs) < len(sends) {
		t.Fatalf("%d application records for %d writes", len(recs), len(sends))
	}
	const skipped = 4
	at := recs[0].pos
	for i, r := range recs {
		if r.pos != at {
			t.Fatalf("record %d at %d, not after the one before (%d)", i, r.pos, at)
		}
		if i == skipped {
			// Split, at a moment when nothing may be held.
			b.limit = 0
			c.Feed(true, r.raw[:100], out)
			b.limit = 1 << 30
			c.Feed(true, r.raw[100:], out)
		} else {
			c.Feed(true, r.raw, out)
		}
		at += len(r.raw)
	}
	c.Feed(true, cp.client[at:], out)
	if len(limited) != 1 || limited[0].Pos != int64(recs[skipped].pos) || limited[0].RecordLen != len(recs[skipped].raw) {
		t.Fatalf("KindLimit outputs %+v, want one for the record at %d of %d bytes", limited, recs[skipped].pos, len(recs[skipped].raw))
	}
	// The writes come out in order but one, the one of that record.
	var missing []int
	got := col.data[true]
	for i, w := range sends {
		if bytes.HasPrefix(got, w) {
			got = got[len(w):]
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) != 1 || missing[0] == len(sends)-1 || len(got) != 0 {
		t.Errorf("writes %v missing from the plaintext, %d bytes left over: want one missing, and those after it there", missing, len(got))
	}
	if len(col.problems) != 0 {
		t.Errorf("problems: %+v", col.problems)
	}
}

// Under any budget, whatever the bytes, a Conn's buffers are exactly what
// its budget granted, never more than the limit, and nothing after End.
func FuzzConnBudget(f *testing.F) {
	client, server := rfcStreams(f)
	f.Add(client, server, uint16(300), uint32(1<<20))
	f.Add(client[:250], server[5:], uint16(7), uint32(600))
	f.Add(server, client, uint16(1999), uint32(40))
	kl, _ := ParseKeyLog(strings.NewReader(rfcKeyLog))
	f.Fuzz(func(t *testing.T, client, server []byte, chunk uint16, limit uint32) {
		b := &budget{limit: int(limit % (1 << 21))}
		c := NewConnWith(kl, nil, b)
		n := int(chunk%2000) + 1
		for len(client) > 0 || len(server) > 0 {
			x, y := min(n, len(client)), min(n, len(server))
			c.Feed(false, server[:y], nil)
			c.Feed(true, client[:x], nil)
			client, server = client[x:], server[y:]
			if n%5 == 0 {
				c.Gap(false, int64(n), nil)
			}
			checkHeld(t, c, b, "fed")
		}
		c.End(nil)
		checkHeld(t, c, b, "ended")
		if b.held != [2]int{} || b.peak > b.limit {
			t.Fatalf("after End %v granted, %d at most under %d", b.held, b.peak, b.limit)
		}
	})
}
