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

// textLines writes the "!!" lines of the text forms: unmatched
// responses, cut frames and pipeline events.
type textLines struct {
	w   *bufio.Writer
	buf []byte
}

func (p *textLines) unmatched(w *origin, u dissect.Unmatched) {
	p.buf = appendUnmatchedText(p.buf[:0], w, u)
	p.w.Write(p.buf)
}

func (p *textLines) incomplete(e *reassembly.Incomplete, c dissect.Incomplete) {
	p.buf = appendEventText(p.buf[:0], e, c)
	p.w.Write(p.buf)
}

func (p *textLines) event(e reassembly.Event) {
	p.buf = appendEventText(p.buf[:0], e, dissect.Incomplete{})
	p.w.Write(p.buf)
}

// treePrinter writes a heading line and the field tree of each message.
type treePrinter struct {
	textLines
	hexDump bool
}

func (p *treePrinter) message(w *origin, x dissect.Exchange, m *dissect.Message) {
	b := appendHeading(p.buf[:0], w, x, m)
	b = append(b, '\n')
	b = dissect.AppendText(b, m.Tree)
	if p.hexDump {
		b = dissect.AppendHexDump(b, m.Raw, m.Tree)
	}
	b = append(b, '\n')
	p.w.Write(b)
	p.buf = b
}

// summaryPrinter writes one line per message.
type summaryPrinter struct{ textLines }

func (p *summaryPrinter) message(w *origin, x dissect.Exchange, m *dissect.Message) {
	b := appendHeading(p.buf[:0], w, x, m)
	p.buf = append(b, '\n')
	p.w.Write(p.buf)
}

// appendHeading writes "#N TIME SRC → DST WHAT (peer, latency)".
func appendHeading(b []byte, w *origin, x dissect.Exchange, m *dissect.Message) []byte {
	b = append(b, '#')
	b = strconv.AppendInt(b, int64(x.Index), 10)
	b = append(b, ' ')
	b = w.time.UTC().AppendFormat(b, timeLayout)
	b = append(b, ' ')
	b = appendFlow(b, w.flow)
	b = append(b, ' ')
	b = append(b, dissect.Escape(m.Summary)...)
	switch {
	case x.Inferred:
		b = append(b, " (inferred)"...)
	case m.Direction == dissect.Response && x.HasLatency:
		b = append(b, " (request #"...)
		b = strconv.AppendInt(b, int64(x.Peer), 10)
		b = append(b, ", "...)
		b = appendLatency(b, x.Latency)
		b = append(b, ')')
	case m.Direction == dissect.Request && x.Peer > 0:
		b = append(b, " (response #"...)
		b = strconv.AppendInt(b, int64(x.Peer), 10)
		b = append(b, ')')
	}
	if who := x.Identity.String(); who != "" { // escaped already
		b = append(b, " by "...)
		b = append(b, who...)
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

// appendUnmatchedText writes a response without its request as a "!! " line.
func appendUnmatchedText(b []byte, w *origin, u dissect.Unmatched) []byte {
	b = append(b, "!! "...)
	b = w.time.UTC().AppendFormat(b, timeLayout)
	b = append(b, " #"...)
	b = strconv.AppendInt(b, int64(u.Index), 10)
	b = append(b, ' ')
	b = appendFlow(b, w.flow)
	b = append(b, " response corr="...)
	b = strconv.AppendInt(b, int64(u.CorrelationID), 10)
	b = append(b, " unmatched: its request was not captured ("...)
	b = strconv.AppendInt(b, int64(u.Size), 10)
	b = append(b, " bytes)"...)
	return append(b, '\n')
}

// eventTime is when a pipeline event was captured.
func eventTime(e reassembly.Event) time.Time {
	switch e := e.(type) {
	case *reassembly.Gap:
		return e.Time
	case *reassembly.Unparseable:
		return e.Time
	case *reassembly.Incomplete:
		return e.Time
	case *reassembly.Retransmission:
		return e.Time
	case *reassembly.BufferLimit:
		return e.Time
	case *reassembly.PortDetected:
		return e.Time
	case *reassembly.Evicted:
		return e.Time
	case *reassembly.LayerEvent:
		return e.Time
	}
	return time.Time{}
}

// appendEventText writes an anomaly as a "!! " line; c is what the session
// knows of an *reassembly.Incomplete.
func appendEventText(b []byte, ev reassembly.Event, c dissect.Incomplete) []byte {
	b = append(b, "!! "...)
	b = eventTime(ev).UTC().AppendFormat(b, timeLayout)
	b = append(b, ' ')
	switch e := ev.(type) {
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
		b = appendIncompleteHead(b, e.FromClient, c)
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
	case *reassembly.LayerEvent:
		b = appendLayerText(b, e)
	}
	return append(b, '\n')
}

// appendIncompleteHead names what the captured header of a cut frame says:
// ", #5 CreateAcls v3 request corr=7 (response #6)".
func appendIncompleteHead(b []byte, fromClient bool, c dissect.Incomplete) []byte {
	if c.Index == 0 {
		return b
	}
	b = append(b, ", #"...)
	b = strconv.AppendInt(b, int64(c.Index), 10)
	if c.HasAPI {
		b = append(b, ' ')
		b = append(b, dissect.APIName(c.APIKey)...)
		b = append(b, " v"...)
		b = strconv.AppendInt(b, int64(c.APIVersion), 10)
	}
	if fromClient {
		b = append(b, " request corr="...)
	} else {
		b = append(b, " response corr="...)
	}
	b = strconv.AppendInt(b, int64(c.CorrelationID), 10)
	if c.Peer > 0 {
		if fromClient {
			b = append(b, " (response #"...)
		} else {
			b = append(b, " (request #"...)
		}
		b = strconv.AppendInt(b, int64(c.Peer), 10)
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

func (p *jsonPrinter) message(w *origin, x dissect.Exchange, m *dissect.Message) {
	b := append(p.buf[:0], `{"index":`...)
	b = strconv.AppendInt(b, int64(x.Index), 10)
	b = appendCommonJSON(b, w.time, w.flow, w.offset)
	b = append(b, `,"packets":[`...)
	for i, n := range w.packets {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	b = append(b, `],"peer":`...)
	if x.Peer > 0 {
		b = strconv.AppendInt(b, int64(x.Peer), 10)
	} else {
		b = append(b, "null"...)
	}
	if x.HasLatency {
		b = append(b, `,"latency_us":`...)
		b = strconv.AppendInt(b, x.Latency.Microseconds(), 10)
	}
	b = append(b, p.file...)
	if x.Inferred {
		b = append(b, `,"inferred":true`...)
	}
	b = append(b, ',')
	b = dissect.AppendIdentityJSON(b, x.Identity)
	b = append(b, ',')
	b = appendTLSJSON(b, w.tls)
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

func (p *jsonPrinter) unmatched(w *origin, u dissect.Unmatched) {
	b := append(p.buf[:0], `{"event":"unmatched_response","index":`...)
	b = strconv.AppendInt(b, int64(u.Index), 10)
	b = appendCommonJSON(b, w.time, w.flow, w.offset)
	b = append(b, `,"correlation_id":`...)
	b = strconv.AppendInt(b, int64(u.CorrelationID), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(u.Size), 10)
	b = append(b, p.file...)
	b = append(b, "}\n"...)
	p.w.Write(b)
	p.buf = b
}

func (p *jsonPrinter) event(e reassembly.Event) { p.eventWith(e, dissect.Incomplete{}) }

func (p *jsonPrinter) incomplete(e *reassembly.Incomplete, c dissect.Incomplete) { p.eventWith(e, c) }

// eventWith writes a pipeline event; c is what the session knows of an
// *reassembly.Incomplete.
func (p *jsonPrinter) eventWith(ev reassembly.Event, c dissect.Incomplete) {
	b := append(p.buf[:0], `{"event":"`...)
	switch e := ev.(type) {
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
		if c.Index > 0 {
			b = append(b, `,"index":`...)
			b = strconv.AppendInt(b, int64(c.Index), 10)
			if c.HasAPI {
				b = append(b, `,"api_key":`...)
				b = strconv.AppendInt(b, int64(c.APIKey), 10)
				b = append(b, `,"api_name":`...)
				b = dissect.AppendJSONString(b, dissect.APIName(c.APIKey))
				b = append(b, `,"api_version":`...)
				b = strconv.AppendInt(b, int64(c.APIVersion), 10)
			}
			b = append(b, `,"correlation_id":`...)
			b = strconv.AppendInt(b, int64(c.CorrelationID), 10)
			b = append(b, `,"peer":`...)
			if c.Peer > 0 {
				b = strconv.AppendInt(b, int64(c.Peer), 10)
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
	case *reassembly.LayerEvent:
		b = appendLayerJSON(b, e)
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
