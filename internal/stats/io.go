package stats

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
)

// ioStat is tshark's -z io,stat,INTERVAL for Kafka: messages, requests,
// responses and bytes per interval of capture time, counted from the
// first message's time. Only intervals that hold a message are rows, so
// what it keeps grows with the messages at most, however long the capture
// and short the interval; interval 0 is one row for the whole run.
type ioStat struct {
	spec     string        // as asked, for asking twice
	interval time.Duration // 0: the whole run
	first    time.Time     // the first message's time, where intervals start
	earliest time.Time
	last     time.Time
	rowsBy   map[int64]*ioRow
}

type ioRow struct{ messages, requests, responses, bytes int64 }

// ioPrefix starts the -z value of the statistic.
const ioPrefix = "io,stat"

// parseIO reads io,stat or io,stat,SECONDS (1 when not given).
func parseIO(spec string) (*ioStat, error) {
	rest, ok := strings.CutPrefix(spec, ioPrefix)
	if !ok || rest != "" && rest[0] != ',' {
		return nil, errNotStat
	}
	st := &ioStat{spec: spec, interval: time.Second}
	if rest == "" {
		return st, nil
	}
	arg := rest[1:]
	if strings.Contains(arg, ",") {
		return nil, errors.New("io,stat takes an interval only: filter the messages with -Y")
	}
	sec, err := strconv.ParseFloat(arg, 64)
	switch {
	case err != nil || math.IsNaN(sec) || sec < 0:
		return nil, errors.New("io,stat's interval is a number of seconds, 0 for the whole capture")
	case sec > 0 && sec < 1e-6, sec > 1e9:
		return nil, errors.New("io,stat's interval is from 0.000001 to 1000000000 seconds (0: the whole capture)")
	}
	st.interval = time.Duration(math.Round(sec * 1e9))
	return st, nil
}

func (*ioStat) name() string { return ioPrefix }
func (s *ioStat) title() string {
	if s.interval == 0 {
		return "messages, requests, responses and bytes in the whole capture, in seconds from the first message"
	}
	return "messages, requests, responses and bytes per " + strconv.FormatFloat(s.interval.Seconds(), 'f', -1, 64) +
		" s of capture time, from the first message (intervals without one are left out)"
}

func (s *ioStat) record(r *capture.Record) {
	if r.Kind != capture.KindMessage {
		return
	}
	if s.rowsBy == nil {
		s.rowsBy = map[int64]*ioRow{}
		s.first, s.earliest, s.last = r.Time, r.Time, r.Time
	}
	if r.Time.Before(s.earliest) {
		s.earliest = r.Time
	}
	s.last = later(s.last, r.Time)
	var k int64
	if s.interval > 0 {
		// Floor division: a message earlier than the first (another
		// connection's, emitted later) falls in a negative interval.
		d := r.Time.Sub(s.first)
		k = int64(d / s.interval)
		if d < 0 && d%s.interval != 0 {
			k--
		}
	}
	row := s.rowsBy[k]
	if row == nil {
		row = &ioRow{}
		s.rowsBy[k] = row
	}
	row.messages++
	if r.Message.Direction == dissect.Request {
		row.requests++
	} else {
		row.responses++
	}
	row.bytes += frameSize(r.Message)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (*ioStat) columns() []column {
	return []column{{key: "start", head: "START", num: true}, {key: "end", head: "END", num: true},
		{key: "messages", head: "MESSAGES", num: true}, {key: "requests", head: "REQUESTS", num: true},
		{key: "responses", head: "RESPONSES", num: true}, {key: "bytes", head: "BYTES", num: true}}
}

func (s *ioStat) rows() [][]cell {
	keys := make([]int64, 0, len(s.rowsBy))
	for k := range s.rowsBy {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	prec := 3 // milliseconds, as tshark prints, or finer for a finer interval
	for iv := s.interval; iv > 0 && iv%time.Millisecond != 0 && prec < 9; iv *= 10 {
		prec++
	}
	out := make([][]cell, 0, len(keys))
	for _, k := range keys {
		r := s.rowsBy[k]
		start, end := time.Duration(k)*s.interval, time.Duration(k+1)*s.interval
		if s.interval == 0 {
			start, end = s.earliest.Sub(s.first), s.last.Sub(s.first)
		}
		out = append(out, []cell{seconds(start, prec), seconds(end, prec), number(r.messages), number(r.requests),
			number(r.responses), number(r.bytes)})
	}
	return out
}

// seconds is d in seconds with prec decimals, in both forms.
func seconds(d time.Duration, prec int) cell {
	s := strconv.FormatFloat(d.Seconds(), 'f', prec, 64)
	return cell{text: s, json: []byte(s)}
}
