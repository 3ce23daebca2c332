package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

var (
	at   = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	flow = reassembly.Flow{
		Conn:   reassembly.ConnKey{Client: netip.MustParseAddrPort("192.0.2.10:50500"), Server: netip.MustParseAddrPort("192.0.2.1:9092"), ID: 1},
		ConnID: 1, FromClient: true,
		Src: netip.MustParseAddrPort("192.0.2.10:50500"), Dst: netip.MustParseAddrPort("192.0.2.1:9092"),
	}
)

// everyRecord is one record of each kind and event, hostile text included.
func everyRecord() []capture.Record {
	ev := func(e reassembly.Event) capture.Record {
		return capture.Record{Kind: capture.KindEvent, Flow: flow, Time: at, Event: e, File: "a.pcap"}
	}
	req := dissect.Builtin().Decode([]byte{0, 0, 0, 21, 0, 30, 0, 3, 0, 0, 0, 2, 0, 1, 'x', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, dissect.Options{})
	return []capture.Record{
		{Kind: capture.KindMessage, Flow: flow, Time: at, Packets: []int{3, 4}, Message: req,
			Exchange: dissect.Exchange{Index: 1, Identity: dissect.Identity{Principal: "User:\u202eevil", Source: "sasl", Authenticated: true},
				Software: &dissect.ClientSoftware{Name: "kadm\u202e", Version: "1"}},
			TLS: &capture.TLS{Version: "1.3", Cipher: "TLS_AES_128_GCM_SHA256", SNI: "k\x1b[2J"}, File: "a.pcap"},
		{Kind: capture.KindUnmatched, Flow: flow, Time: at, Unmatched: dissect.Unmatched{Index: 2, CorrelationID: 9, Size: 20}},
		{Kind: capture.KindIncomplete, Flow: flow, Time: at, Event: &reassembly.Incomplete{Flow: flow, Have: 5, Want: 30, Reason: "gap", Time: at},
			Cut: dissect.Incomplete{Index: 3, HasAPI: true, APIKey: 30, APIVersion: 3, CorrelationID: 4, Peer: 4}},
		ev(&reassembly.Gap{Flow: flow, Length: -1, Time: at}),
		ev(&reassembly.Unparseable{Flow: flow, Length: 7, Time: at, Leading: true}),
		ev(&reassembly.Retransmission{Flow: flow, Length: 7, Time: at}),
		ev(&reassembly.BufferLimit{Flow: flow, Length: 1 << 20, Time: at}),
		ev(&reassembly.PortDetected{Server: flow.Dst, Time: at}),
		ev(&reassembly.Evicted{Conn: flow.Conn, ConnID: 1, Time: at, LastSeen: at, MaxConns: 10}),
		ev(&reassembly.LayerEvent{Flow: flow, Time: at, Value: &tlslayer.Session{Version: "1.3", Cipher: "c", SNI: "\u202e", Decrypted: true}}),
		ev(&reassembly.LayerEvent{Flow: flow, Time: at, Value: &tlslayer.Session{Version: "1.2", Reason: "no keys"}}),
		ev(&reassembly.LayerEvent{Flow: flow, Time: at, Value: &tlslayer.Problem{StreamOffset: 9, Kind: "auth", Message: "bad \x1b[31mtag"}}),
	}
}

// Every record is one valid NDJSON line; events name themselves.
func TestJSONLinesAreValid(t *testing.T) {
	var out bytes.Buffer
	p := NewPrinter(&out, JSON, false, false)
	recs := everyRecord()
	for i := range recs {
		p.Record(&recs[i])
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("%d lines for %d records", len(lines), len(recs))
	}
	want := []string{"", "unmatched_response", "incomplete", "gap", "unparseable", "retransmission", "buffer_limit", "port_detected", "evicted", "tls_session", "tls_session", "tls_problem"}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, l)
		}
		if got, _ := m["event"].(string); got != want[i] {
			t.Errorf("line %d: event %q, want %q", i, got, want[i])
		}
		if strings.ContainsAny(l, "\x1b\u202e") {
			t.Errorf("line %d carries raw control or bidi characters: %q", i, l)
		}
	}
	if !strings.Contains(lines[0], `"client_software":{"name":"kadm\u202e","version":"1"}`) {
		t.Errorf("client software: %s", lines[0])
	}
	if !strings.Contains(lines[0], `"file":"a.pcap","principal"`) || !strings.HasSuffix(lines[3], `,"file":"a.pcap"}`) {
		t.Errorf("file key misplaced:\n%s\n%s", lines[0], lines[3])
	}
}

// Text spares people retransmissions and the sessions it decrypted, and
// escapes wire text.
func TestTextSkipsWhatOnlyScriptsCount(t *testing.T) {
	var out bytes.Buffer
	p := NewPrinter(&out, Summary, false, false)
	recs := everyRecord()
	for i := range recs {
		p.Record(&recs[i])
	}
	p.Flush()
	text := out.String()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != len(recs)-2 {
		t.Errorf("%d lines, want %d:\n%s", len(lines), len(recs)-2, text)
	}
	for _, bad := range []string{"retransmission", ": decrypted", "\x1b", "\u202e"} {
		if strings.Contains(text, bad) {
			t.Errorf("text has %q:\n%s", bad, text)
		}
	}
	if !strings.HasPrefix(lines[0], "#1 2026-03-01T12:00:00.000000Z 192.0.2.10:50500 → 192.0.2.1:9092 CreateAcls v3 request") {
		t.Errorf("heading %q", lines[0])
	}
}

// failAfter accepts n writes, then fails every one, counting the calls.
type failAfter struct {
	n, calls int
}

func (w *failAfter) Write(p []byte) (int, error) {
	w.calls++
	if w.calls > w.n {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// The printer writes in chunks of about flushAt, keeps the first write
// error for Flush to return, and writes nothing more after it.
func TestPrinterWriteError(t *testing.T) {
	w := &failAfter{n: 1}
	p := NewPrinter(w, JSON, false, false)
	recs := everyRecord()
	var line bytes.Buffer
	one := NewPrinter(&line, JSON, false, false)
	one.Record(&recs[0])
	one.Flush()
	k := 3*flushAt/line.Len() + 1 // enough for three chunks
	for range k {
		p.Record(&recs[0])
	}
	if w.calls != 2 {
		t.Fatalf("%d writes for %d lines of %d bytes, want 2 (one accepted, one failed)", w.calls, k, line.Len())
	}
	if err := p.Flush(); err == nil || err.Error() != "disk full" {
		t.Fatalf("Flush = %v, want the write error", err)
	}
	if w.calls != 2 {
		t.Errorf("%d writes after the error, want none", w.calls-2)
	}
}

// The printer's buffer is made once at the size it flushes at: output on
// its way to a flush is not copied into ever larger buffers.
func TestPrinterBufferMadeOnce(t *testing.T) {
	recs := everyRecord()
	var line bytes.Buffer
	one := NewPrinter(&line, Summary, false, false)
	one.Record(&recs[0])
	one.Flush()
	k := 2*flushAt/line.Len() + 1 // past two flushes
	p := NewPrinter(io.Discard, Summary, false, false)
	p.Record(&recs[0])
	first, size := unsafe.SliceData(p.buf), cap(p.buf)
	for range k {
		p.Record(&recs[0])
	}
	// Grown by doubling from nothing, the buffer would have been made
	// again on its way to flushAt: it is the same array, made at its size.
	// (Counting the run's allocations said the same, but the race
	// detector's and other tests' allocations made that count flaky.)
	if unsafe.SliceData(p.buf) != first || cap(p.buf) != size || size < flushAt+line.Len() {
		t.Errorf("printing %d lines of %d bytes: buffer of %d bytes, remade: %v", k, line.Len(), cap(p.buf), unsafe.SliceData(p.buf) != first)
	}
}
