package stats

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

func TestRankIsNearestRank(t *testing.T) {
	ten := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		v    []int64
		p    int
		want int64
	}{
		{ten, 50, 5}, {ten, 90, 9}, {ten, 99, 10}, {ten, 100, 10}, {ten, 10, 1}, {ten, 11, 2},
		{[]int64{7}, 50, 7}, {[]int64{7}, 99, 7}, {[]int64{1, 2}, 50, 1}, {[]int64{1, 2}, 51, 2},
	} {
		if got := Rank(c.v, c.p); got != c.want {
			t.Errorf("Rank(%v, %d) = %d, want %d", c.v, c.p, got, c.want)
		}
	}
}

func TestSetTakesKnownNamesOnce(t *testing.T) {
	var s Set
	for _, n := range []string{"latency", "apis", "latency"} {
		if err := s.Set(n); err != nil {
			t.Fatal(err)
		}
	}
	if s.String() != "latency,apis" || s.Len() != 2 {
		t.Errorf("%q %d", s.String(), s.Len())
	}
	if err := s.Set("lat"); err == nil {
		t.Error("lat is not a statistic")
	}
}

func frame(size int) []byte {
	b := make([]byte, size)
	b[3] = byte(size - 4)
	return b
}

// A table is aligned and shows wire text escaped and cut; JSON holds it
// whole and valid.
func TestTablesEscapeAndJSONIsValid(t *testing.T) {
	evil := "User:\x1b[31mmallory\u202e" + strings.Repeat("x", 100)
	conn := reassembly.ConnKey{Client: netip.MustParseAddrPort("192.0.2.1:5000"), Server: netip.MustParseAddrPort("192.0.2.2:9092"), ID: 7}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var s Set
	for _, n := range Names {
		if err := s.Set(n); err != nil {
			t.Fatal(err)
		}
	}
	recs := []*capture.Record{
		{Kind: capture.KindMessage, Time: at, Flow: reassembly.Flow{Conn: conn, ConnID: 7},
			Message:  &dissect.Message{APIKey: 30, APIName: "CreateAcls", APIVersion: 3, Raw: frame(40)},
			Exchange: dissect.Exchange{Identity: dissect.Identity{Principal: evil, Source: "sasl", Authenticated: true}}},
		{Kind: capture.KindMessage, Time: at.Add(time.Second), Flow: reassembly.Flow{Conn: conn, ConnID: 7},
			Message:  &dissect.Message{APIKey: 30, APIName: "CreateAcls", APIVersion: 3, Direction: dissect.Response, Raw: frame(20)},
			Exchange: dissect.Exchange{Latency: 1500 * time.Microsecond, HasLatency: true}},
		{Kind: capture.KindEvent, Time: at},
	}
	for _, r := range recs {
		s.Record(r)
	}
	var txt, js bytes.Buffer
	if err := s.Write(&txt, false); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(txt.String(), "\x1b\u202e") || !strings.Contains(txt.String(), "…") {
		t.Errorf("wire text not escaped or not cut:\n%s", txt.String())
	}
	for _, want := range []string{
		"API         VERSION  REQUESTS  RESPONSES  BYTES  KEY\nCreateAcls        3         1          1     60   30\n",
		"API         COUNT   P50   P90   P99   MAX  KEY\nCreateAcls      1  1500  1500  1500  1500   30\n",
		"== errors: error codes in responses per API (each item's code counts)\n(none)\n",
	} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("tables lack\n%s\nin\n%s", want, txt.String())
		}
	}
	if err := s.Write(&js, true); err != nil {
		t.Fatal(err)
	}
	var stats []string
	for _, line := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		stats = append(stats, row["stat"].(string))
		if row["stat"] == "conns" {
			if row["principal"] != evil || row["messages"] != 2.0 || row["bytes"] != 60.0 ||
				row["first"] != "2026-01-02T03:04:05Z" || row["last"] != "2026-01-02T03:04:06Z" || row["client"] != "192.0.2.1:5000" {
				t.Errorf("conns row %v", row)
			}
		}
	}
	if got := strings.Join(stats, " "); got != "apis latency principals principals conns io,stat io,stat" {
		t.Errorf("rows of %s", got)
	}
}

// io,stat counts messages per interval from the first message's time,
// an earlier one in a negative interval, and leaves out the empty ones.
func TestIOStatCountsPerInterval(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	msg := func(d time.Duration, dir dissect.Direction, size int) *capture.Record {
		return &capture.Record{Kind: capture.KindMessage, Time: at.Add(d),
			Message: &dissect.Message{APIKey: 0, APIName: "Produce", Direction: dir, Raw: frame(size)}}
	}
	recs := []*capture.Record{
		msg(0, dissect.Request, 100), msg(200*time.Millisecond, dissect.Response, 20),
		msg(-300*time.Millisecond, dissect.Request, 50), // another connection's, emitted later
		{Kind: capture.KindEvent, Time: at.Add(10 * time.Second)},
		msg(2600*time.Millisecond, dissect.Request, 30),
	}
	for _, c := range []struct {
		spec, want string
	}{
		{"io,stat,0.5", `{"stat":"io,stat","start":-0.500,"end":0.000,"messages":1,"requests":1,"responses":0,"bytes":50}
{"stat":"io,stat","start":0.000,"end":0.500,"messages":2,"requests":1,"responses":1,"bytes":120}
{"stat":"io,stat","start":2.500,"end":3.000,"messages":1,"requests":1,"responses":0,"bytes":30}
`},
		{"io,stat", `{"stat":"io,stat","start":-1.000,"end":0.000,"messages":1,"requests":1,"responses":0,"bytes":50}
{"stat":"io,stat","start":0.000,"end":1.000,"messages":2,"requests":1,"responses":1,"bytes":120}
{"stat":"io,stat","start":2.000,"end":3.000,"messages":1,"requests":1,"responses":0,"bytes":30}
`},
		{"io,stat,0", `{"stat":"io,stat","start":-0.300,"end":2.600,"messages":4,"requests":3,"responses":1,"bytes":200}
`},
		{"io,stat,0.0001", `{"stat":"io,stat","start":-0.3000,"end":-0.2999,"messages":1,"requests":1,"responses":0,"bytes":50}
{"stat":"io,stat","start":0.0000,"end":0.0001,"messages":1,"requests":1,"responses":0,"bytes":100}
{"stat":"io,stat","start":0.2000,"end":0.2001,"messages":1,"requests":0,"responses":1,"bytes":20}
{"stat":"io,stat","start":2.6000,"end":2.6001,"messages":1,"requests":1,"responses":0,"bytes":30}
`},
	} {
		var s Set
		if err := s.Set(c.spec); err != nil {
			t.Fatal(err)
		}
		if err := s.Set(c.spec); err != nil || s.Len() != 1 {
			t.Fatalf("%s asked twice: %v, %d statistics", c.spec, err, s.Len())
		}
		for _, r := range recs {
			s.Record(r)
		}
		var js bytes.Buffer
		if err := s.Write(&js, true); err != nil {
			t.Fatal(err)
		}
		if js.String() != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.spec, js.String(), c.want)
		}
	}
	for _, bad := range []string{"io,stat,", "io,stat,-1", "io,stat,x", "io,stat,NaN", "io,stat,1e12", "io,stat,0.0000001", "io,stat,1,frame.len>1", "io,stats", "io"} {
		var s Set
		if err := s.Set(bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
}

// -z expert: one row per kind of trouble, its numbers left out, counted,
// with its first message; errors first, then warnings, then notes; wire
// text escaped in the table.
func TestExpertGroupsByKind(t *testing.T) {
	var s Set
	if err := s.Set("expert"); err != nil {
		t.Fatal(err)
	}
	msg := func(index int, api string, problems ...string) *capture.Record {
		m := &dissect.Message{APIName: api, Raw: frame(20)}
		for _, p := range problems {
			m.Problems = append(m.Problems, dissect.Problem{Message: p})
		}
		return &capture.Record{Kind: capture.KindMessage, Message: m, Exchange: dissect.Exchange{Index: index}}
	}
	layer := func(v any) *capture.Record {
		return &capture.Record{Kind: capture.KindEvent, Event: &reassembly.LayerEvent{Value: v}}
	}
	for _, r := range []*capture.Record{
		{Kind: capture.KindEvent, Event: &reassembly.Gap{Length: 10}},
		msg(3, "Produce", "CRC-32C mismatch: the batch says 0x1a2b3c4d, its bytes give 0x00000001"),
		msg(4, "Metadata"),
		msg(7, "Produce", "CRC-32C mismatch: the batch says 0xdeadbeef, its bytes give 0x12345678", "string length 4000 exceeds the 12 bytes left"),
		msg(9, "Fetch", "a \x1b[31mred\x1b[0m name of 3 bytes"),
		layer(&tlslayer.Session{Reason: "no key for client random d678a1b2c3d4e5f6…"}),
		layer(&tlslayer.Session{Reason: "no key for client random 0011223344556677…"}),
		layer(&tlslayer.Session{Decrypted: true}),
		{Kind: capture.KindEvent, Event: &reassembly.Retransmission{Length: 5}},
		{Kind: capture.KindEvent, Event: &reassembly.Gap{Length: 99}},
	} {
		s.Record(r)
	}
	var txt, js bytes.Buffer
	if err := s.Write(&txt, false); err != nil {
		t.Fatal(err)
	}
	want := `== expert: problems and what could not be read, per kind (numbers in summaries left out)
SEVERITY  KIND            API      COUNT  FIRST  SUMMARY
error     malformed       Produce      2      3  CRC-32C mismatch: the batch says 0xN, its bytes give 0xN
error     malformed       Produce      1      7  string length N exceeds the N bytes left
error     malformed       Fetch        1      9  a \x1b[31mred\x1b[0m name of N bytes
warning   gap                          2         bytes missing from the capture
warning   tls_session                  2         not decrypted: no key for client random N…
note      retransmission               1         bytes sent again
`
	if txt.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", txt.String(), want)
	}
	if err := s.Write(&js, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d rows:\n%s", len(lines), js.String())
	}
	var row map[string]any
	if err := json.Unmarshal([]byte(lines[2]), &row); err != nil {
		t.Fatal(err)
	}
	if row["summary"] != "a \x1b[31mred\x1b[0m name of N bytes" || row["first"] != 9.0 || row["api"] != "Fetch" {
		t.Errorf("row %v", row)
	}
	if err := json.Unmarshal([]byte(lines[3]), &row); err != nil || row["first"] != nil || row["api"] != nil {
		t.Errorf("an event's row %v, %v", row, err)
	}
}

func TestWithoutNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"CRC-32C mismatch at 0x0040":                 "CRC-32C mismatch at 0xN",
		"int16 length -1 of 12 bytes; v2 only":       "int16 length -N of N bytes; v2 only",
		"no key for client random d678a1b2c3d4e5f6…": "no key for client random N…",
		"the face of 2^14":                           "the face of N^N",
	} {
		if got := withoutNumbers(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
