package main

import (
	"bufio"
	"net/netip"
	"strconv"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly"
)

const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// treePrinter writes a heading line and the field tree of each message.
type treePrinter struct {
	w       *bufio.Writer
	hexDump bool
	buf     []byte
}

func (p *treePrinter) message(it *item, m *dissect.Message) {
	b := appendHeading(p.buf[:0], it, m.Summary)
	b = append(b, '\n')
	b = dissect.AppendText(b, m.Tree)
	if p.hexDump {
		b = dissect.AppendHexDump(b, m.Raw, m.Tree)
	}
	b = append(b, '\n')
	p.w.Write(b)
	p.buf = b
}

func (p *treePrinter) event(it *item) {
	p.buf = appendEventText(p.buf[:0], it)
	p.w.Write(p.buf)
}

// summaryPrinter writes one line per message.
type summaryPrinter struct {
	w   *bufio.Writer
	buf []byte
}

func (p *summaryPrinter) message(it *item, m *dissect.Message) {
	b := appendHeading(p.buf[:0], it, m.Summary)
	p.buf = append(b, '\n')
	p.w.Write(p.buf)
}

func (p *summaryPrinter) event(it *item) {
	p.buf = appendEventText(p.buf[:0], it)
	p.w.Write(p.buf)
}

// appendHeading writes "#N TIME SRC → DST WHAT (peer, latency)".
func appendHeading(b []byte, it *item, what string) []byte {
	b = append(b, '#')
	b = strconv.AppendInt(b, int64(it.index), 10)
	b = append(b, ' ')
	b = it.time.UTC().AppendFormat(b, timeLayout)
	b = append(b, ' ')
	b = appendFlow(b, it.flow)
	b = append(b, ' ')
	b = append(b, dissect.Escape(what)...)
	switch {
	case it.inferred:
		b = append(b, " (inferred)"...)
	case it.dir == dissect.Response:
		b = append(b, " (request #"...)
		b = strconv.AppendInt(b, int64(it.peer), 10)
		b = append(b, ", "...)
		b = appendLatency(b, it.latency)
		b = append(b, ')')
	case it.peer > 0:
		b = append(b, " (response #"...)
		b = strconv.AppendInt(b, int64(it.peer), 10)
		b = append(b, ')')
	}
	return b
}

func appendFlow(b []byte, f reassembly.Flow) []byte {
	b = f.Src.AppendTo(b)
	b = append(b, " → "...)
	return f.Dst.AppendTo(b)
}

func appendLatency(b []byte, d time.Duration) []byte {
	return append(b, strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64)+" ms"...)
}

// appendEventText writes an anomaly as a "!! " line.
func appendEventText(b []byte, it *item) []byte {
	b = append(b, "!! "...)
	b = it.time.UTC().AppendFormat(b, timeLayout)
	b = append(b, ' ')
	switch e := it.event.(type) {
	case unmatched:
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(it.index), 10)
		b = append(b, ' ')
		b = appendFlow(b, it.flow)
		b = append(b, " response corr="...)
		b = strconv.AppendInt(b, int64(it.corr), 10)
		b = append(b, " unmatched: its request was not captured ("...)
		b = strconv.AppendInt(b, int64(it.size), 10)
		b = append(b, " bytes)"...)
	case *reassembly.Gap:
		b = appendFlowAt(b, e.Flow, e.StreamOffset)
		b = append(b, "gap: "...)
		b = appendLength(b, e.Length)
		b = append(b, " not captured"...)
	case *reassembly.Unparseable:
		b = appendFlowAt(b, e.Flow, e.StreamOffset)
		b = append(b, "unparseable: skipped "...)
		b = appendLength(b, e.Length)
		if e.Leading {
			b = append(b, " before the first frame boundary (capture began mid-connection)"...)
		} else {
			b = append(b, " looking for the next frame"...)
		}
	case *reassembly.Incomplete:
		b = appendFlowAt(b, e.Flow, e.StreamOffset)
		b = append(b, "incomplete frame: "...)
		b = strconv.AppendInt(b, e.Have, 10)
		if e.Want >= 0 {
			b = append(b, " of "...)
			b = strconv.AppendInt(b, e.Want, 10)
		}
		b = append(b, " bytes ("...)
		b = append(b, e.Reason...)
		b = append(b, ')')
		b = appendIncompleteHead(b, it)
	case *reassembly.Retransmission:
		b = appendFlowAt(b, e.Flow, e.StreamOffset)
		b = append(b, "retransmission: "...)
		b = appendLength(b, e.Length)
	case *reassembly.BufferLimit:
		b = appendFlowAt(b, e.Flow, e.StreamOffset)
		b = append(b, "buffer limit: "...)
		b = appendLength(b, e.Length)
		b = append(b, " not buffered"...)
	case *reassembly.Evicted:
		b = e.Conn.Client.AppendTo(b)
		b = append(b, " → "...)
		b = e.Conn.Server.AppendTo(b)
		b = append(b, " evicted (--max-conns "...)
		b = strconv.AppendInt(b, int64(e.MaxConns), 10)
		b = append(b, " reached), idle since "...)
		b = e.LastSeen.UTC().AppendFormat(b, timeLayout)
	case *reassembly.PortDetected:
		b = append(b, "Kafka detected at "...)
		b = e.Server.AppendTo(b)
		b = append(b, " (not a --port; its clients send Kafka request headers)"...)
	}
	return append(b, '\n')
}

// appendIncompleteHead names what the captured header of a cut frame says:
// ", #5 CreateAcls v3 request corr=7 (response #6)".
func appendIncompleteHead(b []byte, it *item) []byte {
	if !it.hasHead {
		return b
	}
	b = append(b, ", #"...)
	b = strconv.AppendInt(b, int64(it.index), 10)
	if it.hasAPI {
		b = append(b, ' ')
		b = append(b, dissect.APIName(it.key)...)
		b = append(b, " v"...)
		b = strconv.AppendInt(b, int64(it.ver), 10)
	}
	if it.flow.FromClient {
		b = append(b, " request corr="...)
	} else {
		b = append(b, " response corr="...)
	}
	b = strconv.AppendInt(b, int64(it.corr), 10)
	if it.peer > 0 {
		if it.flow.FromClient {
			b = append(b, " (response #"...)
		} else {
			b = append(b, " (request #"...)
		}
		b = strconv.AppendInt(b, int64(it.peer), 10)
		b = append(b, ')')
	}
	return b
}

func appendFlowAt(b []byte, f reassembly.Flow, off int64) []byte {
	b = appendFlow(b, f)
	b = append(b, " @"...)
	b = strconv.AppendInt(b, off, 10)
	return append(b, ' ')
}

func appendLength(b []byte, n int64) []byte {
	if n < 0 {
		return append(b, "unknown bytes"...)
	}
	b = strconv.AppendInt(b, n, 10)
	return append(b, " bytes"...)
}

// jsonPrinter writes NDJSON: the dissector's message object plus where
// and when it was captured; anomalies are objects with an "event" key.
type jsonPrinter struct {
	w    *bufio.Writer
	buf  []byte
	file []byte // `,"file":"PATH"` while a file is read; none live
}

func (p *jsonPrinter) setFile(path string) {
	p.file = dissect.AppendJSONString(append(p.file[:0], `,"file":`...), path)
}

func (p *jsonPrinter) message(it *item, m *dissect.Message) {
	b := append(p.buf[:0], `{"index":`...)
	b = strconv.AppendInt(b, int64(it.index), 10)
	b = appendCommonJSON(b, it.time, it.flow, it.offset)
	b = append(b, `,"packets":[`...)
	for i, n := range it.packets {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, `],"peer":`...)
	if it.peer > 0 {
		b = strconv.AppendInt(b, int64(it.peer), 10)
	} else {
		b = append(b, "null"...)
	}
	if it.hasLat {
		b = append(b, `,"latency_us":`...)
		b = strconv.AppendInt(b, it.latency.Microseconds(), 10)
	}
	b = append(b, p.file...)
	if it.inferred {
		b = append(b, `,"inferred":true`...)
	}
	b = append(b, ',')
	b = dissect.AppendJSONFields(b, m)
	b = append(b, "}\n"...)
	p.w.Write(b)
	p.buf = b
}

func appendCommonJSON(b []byte, t time.Time, f reassembly.Flow, off int64) []byte {
	b = append(b, `,"time":"`...)
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","src":`...)
	b = appendAddrJSON(b, f.Src)
	b = append(b, `,"dst":`...)
	b = appendAddrJSON(b, f.Dst)
	b = append(b, `,"stream_offset":`...)
	return strconv.AppendInt(b, off, 10)
}

func appendAddrJSON(b []byte, a netip.AddrPort) []byte {
	return dissect.AppendJSONString(b, a.String())
}

func (p *jsonPrinter) event(it *item) {
	b := append(p.buf[:0], `{"event":"`...)
	switch e := it.event.(type) {
	case unmatched:
		b = append(b, `unmatched_response","index":`...)
		b = strconv.AppendInt(b, int64(it.index), 10)
		b = appendCommonJSON(b, it.time, it.flow, it.offset)
		b = append(b, `,"correlation_id":`...)
		b = strconv.AppendInt(b, int64(it.corr), 10)
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, int64(it.size), 10)
	case *reassembly.Gap:
		b = appendRangeEvent(b, "gap", e.Time, e.Flow, e.StreamOffset, e.Length)
	case *reassembly.Unparseable:
		b = appendRangeEvent(b, "unparseable", e.Time, e.Flow, e.StreamOffset, e.Length)
		if e.Leading {
			b = append(b, `,"leading":true`...)
		}
	case *reassembly.Retransmission:
		b = appendRangeEvent(b, "retransmission", e.Time, e.Flow, e.StreamOffset, e.Length)
	case *reassembly.BufferLimit:
		b = appendRangeEvent(b, "buffer_limit", e.Time, e.Flow, e.StreamOffset, e.Length)
	case *reassembly.Incomplete:
		b = append(b, `incomplete"`...)
		b = appendCommonJSON(b, e.Time, e.Flow, e.StreamOffset)
		b = append(b, `,"have":`...)
		b = strconv.AppendInt(b, e.Have, 10)
		b = append(b, `,"want":`...)
		b = strconv.AppendInt(b, e.Want, 10)
		b = append(b, `,"reason":`...)
		b = dissect.AppendJSONString(b, e.Reason)
		if it.hasHead {
			b = append(b, `,"index":`...)
			b = strconv.AppendInt(b, int64(it.index), 10)
			if it.hasAPI {
				b = append(b, `,"api_key":`...)
				b = strconv.AppendInt(b, int64(it.key), 10)
				b = append(b, `,"api_name":`...)
				b = dissect.AppendJSONString(b, dissect.APIName(it.key))
				b = append(b, `,"api_version":`...)
				b = strconv.AppendInt(b, int64(it.ver), 10)
			}
			b = append(b, `,"correlation_id":`...)
			b = strconv.AppendInt(b, int64(it.corr), 10)
			b = append(b, `,"peer":`...)
			if it.peer > 0 {
				b = strconv.AppendInt(b, int64(it.peer), 10)
			} else {
				b = append(b, "null"...)
			}
		}
	case *reassembly.Evicted:
		b = append(b, `evicted","time":"`...)
		b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","src":`...)
		b = appendAddrJSON(b, e.Conn.Client)
		b = append(b, `,"dst":`...)
		b = appendAddrJSON(b, e.Conn.Server)
		b = append(b, `,"last_seen":"`...)
		b = e.LastSeen.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","max_conns":`...)
		b = strconv.AppendInt(b, int64(e.MaxConns), 10)
	case *reassembly.PortDetected:
		b = append(b, `port_detected","time":"`...)
		b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","server":`...)
		b = appendAddrJSON(b, e.Server)
	}
	b = append(b, p.file...)
	b = append(b, "}\n"...)
	p.w.Write(b)
	p.buf = b
}

func appendRangeEvent(b []byte, name string, t time.Time, f reassembly.Flow, off, n int64) []byte {
	b = append(b, name...)
	b = append(b, '"')
	b = appendCommonJSON(b, t, f, off)
	b = append(b, `,"length":`...)
	return strconv.AppendInt(b, n, 10)
}
