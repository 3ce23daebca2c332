// Package stats holds kdissect's statistics (-z, as tshark's): listeners
// on a capture run that count the records they are handed (after the
// display filter) and print aligned tables, or NDJSON rows with a "stat"
// key, when the run ends. What they keep grows with their rows (APIs,
// principals, connections, intervals), not with the messages, except the latencies
// the exact percentiles need: 8 bytes per response (8 MB per million).
package stats

import (
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
)

// Names are the statistics -z knows, in the order they are documented.
var Names = []string{"apis", "latency", "errors", "principals", "conns", "expert", ioPrefix}

var errNotStat = errors.New("not a statistic (they are " + strings.Join(Names, ", ") + "[,SECONDS])")

// Set is the statistics a run was asked for. It is a flag.Value (-z
// NAME, repeatable) and a capture.Listener.
type Set struct {
	stats []stat
}

type stat interface {
	name() string
	title() string
	record(r *capture.Record)
	columns() []column
	rows() [][]cell
}

// column is a table column: its NDJSON key and its table heading.
type column struct {
	key, head string
	num       bool // right-aligned
}

// cell is one value, in both forms.
type cell struct {
	text string // for the table, escaped
	json []byte // the JSON value
}

// String lists the statistics asked for.
func (s *Set) String() string {
	if s == nil {
		return ""
	}
	var names []string
	for _, st := range s.stats {
		names = append(names, st.name())
	}
	return strings.Join(names, ",")
}

// Set adds the statistic name; asking twice is asking once.
func (s *Set) Set(name string) error {
	for _, st := range s.stats {
		if io, ok := st.(*ioStat); st.name() == name || ok && io.spec == name {
			return nil
		}
	}
	var st stat
	switch name {
	case "apis":
		st = &apis{}
	case "latency":
		st = &latency{}
	case "errors":
		st = &errorCounts{}
	case "principals":
		st = &principals{}
	case "conns":
		st = &conns{}
	case "expert":
		st = &expert{}
	default:
		io, err := parseIO(name)
		if err != nil {
			return err
		}
		st = io
	}
	s.stats = append(s.stats, st)
	return nil
}

// NeedsRecords reports whether a statistic counts what a batch's records
// may hold: expert counts every problem, a damaged record's among them.
func (s *Set) NeedsRecords() bool {
	for _, st := range s.stats {
		if _, ok := st.(*expert); ok {
			return true
		}
	}
	return false
}

// Len is how many statistics were asked for.
func (s *Set) Len() int { return len(s.stats) }

// Record counts a record in every statistic.
func (s *Set) Record(r *capture.Record) {
	for _, st := range s.stats {
		st.record(r)
	}
}

// Listener is what a run feeds: the printer and the statistics, or (quiet)
// the statistics alone.
func (s *Set) Listener(printer capture.Listener, quiet bool) capture.Listener {
	switch {
	case quiet && s.Len() == 0:
		return capture.ListenerFunc(func(*capture.Record) {})
	case quiet:
		return s
	case s.Len() == 0:
		return printer
	}
	return capture.Tee(printer, s)
}

// Write prints the statistics: aligned tables, one after the other, or
// (asJSON) one NDJSON object a row, with a "stat" key.
func (s *Set) Write(w io.Writer, asJSON bool) error {
	var b []byte
	for i, st := range s.stats {
		if asJSON {
			b = appendJSON(b, st)
			continue
		}
		if i > 0 {
			b = append(b, '\n')
		}
		b = appendTable(b, st)
	}
	if len(b) == 0 {
		return nil
	}
	_, err := w.Write(b)
	return err
}

func appendJSON(b []byte, st stat) []byte {
	cols := st.columns()
	for _, row := range st.rows() {
		b = append(b, `{"stat":`...)
		b = dissect.AppendJSONString(b, st.name())
		for i, c := range cols {
			b = append(b, ',')
			b = dissect.AppendJSONString(b, c.key)
			b = append(b, ':')
			b = append(b, row[i].json...)
		}
		b = append(b, "}\n"...)
	}
	return b
}

func appendTable(b []byte, st stat) []byte {
	cols, rows := st.columns(), st.rows()
	b = append(b, "== "...)
	b = append(b, st.name()...)
	b = append(b, ": "...)
	b = append(b, st.title()...)
	b = append(b, '\n')
	if len(rows) == 0 {
		return append(b, "(none)\n"...)
	}
	width := make([]int, len(cols))
	for i, c := range cols {
		width[i] = len(c.head)
		for _, r := range rows {
			width[i] = max(width[i], utf8.RuneCountInString(r[i].text))
		}
	}
	line := func(cells func(i int) string) {
		start := len(b)
		for i, c := range cols {
			s := cells(i)
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(s))
			if i > 0 {
				b = append(b, "  "...)
			}
			if c.num {
				b = append(b, pad...)
				b = append(b, s...)
			} else {
				b = append(b, s...)
				b = append(b, pad...)
			}
		}
		end := len(b)
		for end > start && b[end-1] == ' ' {
			end--
		}
		b = append(b[:end], '\n')
	}
	line(func(i int) string { return cols[i].head })
	for _, r := range rows {
		line(func(i int) string { return r[i].text })
	}
	return b
}

// maxCell is where a cell of wire text is cut in a table: one long client
// name would otherwise pad every row to its length. JSON has it whole.
const maxCell = 80

func text(s string) cell {
	t := dissect.Escape(s)
	if utf8.RuneCountInString(t) > maxCell {
		r := []rune(t)
		t = string(r[:maxCell-1]) + "…"
	}
	return cell{text: t, json: dissect.AppendJSONString(nil, s)}
}

// textOr is text, or null (shown as dflt) when s is not known.
func textOr(s string, ok bool, dflt string) cell {
	if !ok {
		return cell{text: dflt, json: []byte("null")}
	}
	return text(s)
}

func number(n int64) cell {
	s := strconv.FormatInt(n, 10)
	return cell{text: s, json: []byte(s)}
}

func timeCell(t time.Time) cell {
	s := t.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	return cell{text: s, json: append(append([]byte{'"'}, t.UTC().Format(time.RFC3339Nano)...), '"')}
}

// frameSize is a message's frame size, size prefix included, as the
// prefix says.
func frameSize(m *dissect.Message) int64 {
	if len(m.Raw) >= 4 {
		return int64(binary.BigEndian.Uint32(m.Raw)) + 4
	}
	return int64(len(m.Raw))
}

// apiKey orders rows by API: by key, then by name (an API the raw SASL
// tokens share key -1 with nothing else).
type apiKey struct {
	key  int16
	name string
}

func apiOf(m *dissect.Message) apiKey { return apiKey{m.APIKey, m.APIName} }

func (a apiKey) less(b apiKey) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.name < b.name
}
