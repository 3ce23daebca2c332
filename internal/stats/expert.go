package stats

import (
	"sort"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

// expert: what the run could not read, or read with a problem, grouped as
// tshark's -z expert groups its expert infos: by severity, kind and
// summary, each with its count and the first message it was on. A
// problem's numbers (offsets, lengths) are left out of its summary, so
// that one kind of damage is one row however often it recurs.
type expert struct {
	m   map[expertKey]*expertRow
	seq int // the order keys were first seen, to break ties
}

type expertKey struct {
	severity, kind, api, summary string
}

type expertRow struct {
	count int64
	first int // the first message's index; 0 for events
	seen  int
}

// Severities, most severe first, as tshark names them.
var severities = map[string]int{"error": 0, "warning": 1, "note": 2}

func (*expert) name() string { return "expert" }
func (*expert) title() string {
	return "problems and what could not be read, per kind (numbers in summaries left out)"
}

func (s *expert) add(severity, kind, api, summary string, index int) {
	if s.m == nil {
		s.m = map[expertKey]*expertRow{}
	}
	k := expertKey{severity, kind, api, summary}
	row := s.m[k]
	if row == nil {
		s.seq++
		row = &expertRow{first: index, seen: s.seq}
		s.m[k] = row
	}
	row.count++
}

func (s *expert) record(r *capture.Record) {
	switch r.Kind {
	case capture.KindMessage:
		m := r.Message
		for _, p := range m.Problems {
			s.add("error", "malformed", m.APIName, withoutNumbers(p.Message), r.Exchange.Index)
		}
		return
	case capture.KindUnmatched:
		s.add("warning", "unmatched_response", "", "a response whose request was not captured", 0)
		return
	}
	switch e := r.Event.(type) {
	case *reassembly.Gap:
		s.add("warning", "gap", "", "bytes missing from the capture", 0)
	case *reassembly.Unparseable:
		what := "bytes that are not Kafka frames"
		if e.TLS {
			what = "TLS records that could not be read"
		}
		s.add("error", "unparseable", "", what, 0)
	case *reassembly.Retransmission:
		s.add("note", "retransmission", "", "bytes sent again", 0)
	case *reassembly.BufferLimit:
		s.add("warning", "buffer_limit", "", "bytes passed over at a buffer limit", 0)
	case *reassembly.Incomplete:
		api := ""
		if r.Cut.HasAPI {
			api = dissect.APIName(r.Cut.APIKey)
		}
		s.add("warning", "incomplete", api, withoutNumbers(e.Reason), r.Cut.Index)
	case *reassembly.Evicted:
		s.add("warning", "evicted", "", "a connection dropped at --max-conns", 0)
	case *reassembly.PortDetected:
		s.add("note", "port_detected", "", "Kafka found on a port not given", 0)
	case *reassembly.LayerEvent:
		switch v := e.Value.(type) {
		case *tlslayer.Session:
			switch {
			case v.Refused:
				// refused before any Kafka byte: nothing went unread
				s.add("note", "tls_session", "", withoutNumbers(v.Reason), 0)
			case !v.Decrypted:
				s.add("warning", "tls_session", "", "not decrypted: "+withoutNumbers(v.Reason), 0)
			}
		case *tlslayer.Alert:
			s.add("warning", "tls_alert", "", "fatal alert "+v.Name, 0)
		case *tlslayer.Problem:
			s.add("error", "tls_problem", "", withoutNumbers(v.Message), 0)
		}
	}
}

// withoutNumbers is a summary with each number (a word of digits, hex
// digits after 0x, a client random's) as N; digits in a word (CRC-32C,
// int16, v2) are kept.
func withoutNumbers(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X'):
			j := i + 2
			for j < len(s) && isHex(s[j]) {
				j++
			}
			b = append(b, "0xN"...)
			i = j
		case isHex(c) && hexRun(s, i) >= 8:
			b = append(b, 'N')
			i += hexRun(s, i)
		case c >= '0' && c <= '9' && decimalWord(s, i):
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			b = append(b, 'N')
			i = j
		case isLetter(c) || c >= '0' && c <= '9':
			// a word with digits in it (int16, CRC-32C's 32C) stays whole
			j := i
			for j < len(s) && (isLetter(s[j]) || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			b = append(b, s[i:j]...)
			i = j
		default:
			b = append(b, c)
			i++
		}
	}
	return string(b)
}

// decimalWord reports whether the digits at i are a word of their own:
// no letter right before or after them.
func decimalWord(s string, i int) bool {
	if i > 0 && isLetter(s[i-1]) {
		return false
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j == len(s) || !isLetter(s[j])
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// hexRun is the length of the run of hex digits at i, when it starts a
// word: a client random is one, "deadbeef" in prose is too, "face" is not.
func hexRun(s string, i int) int {
	if i > 0 && (isHex(s[i-1]) || isLetter(s[i-1])) {
		return 0
	}
	j := i
	for j < len(s) && isHex(s[j]) {
		j++
	}
	if j < len(s) && isLetter(s[j]) {
		return 0
	}
	return j - i
}

func (*expert) columns() []column {
	return []column{{key: "severity", head: "SEVERITY"}, {key: "kind", head: "KIND"}, {key: "api", head: "API"},
		{key: "count", head: "COUNT", num: true}, {key: "first", head: "FIRST", num: true}, {key: "summary", head: "SUMMARY"}}
}

func (s *expert) rows() [][]cell {
	keys := make([]expertKey, 0, len(s.m))
	for k := range s.m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if sa, sb := severities[a.severity], severities[b.severity]; sa != sb {
			return sa < sb
		}
		if ca, cb := s.m[a].count, s.m[b].count; ca != cb {
			return ca > cb
		}
		return s.m[a].seen < s.m[b].seen
	})
	var out [][]cell
	for _, k := range keys {
		r := s.m[k]
		first := cell{text: "", json: []byte("null")}
		if r.first > 0 {
			first = number(int64(r.first))
		}
		out = append(out, []cell{text(k.severity), text(k.kind), textOr(k.api, k.api != "", ""), number(r.count), first, text(k.summary)})
	}
	return out
}
