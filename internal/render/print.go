// Package render writes a run's records for people and scripts: text
// trees, one line per message (--summary), NDJSON (--json), the byte
// layout (-x), and the ACL change log (kdissect audit). Each is a
// capture.Listener; the output contract is in README.md.
package render

import (
	"io"
	"net/netip"
	"strconv"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

// Form is an output form of the main command.
type Form int

const (
	Tree    Form = iota // field trees (-x adds the byte layout)
	Summary             // one line per message
	JSON                // NDJSON
)

// Printer writes records in one form. Flush writes what is buffered.
//
// Records are rendered straight into the buffer that is written out, not
// through a bufio.Writer: --all --json writes ten times the capture, and
// copying every line once more into bufio's buffer was a tenth of its
// memory traffic.
type Printer struct {
	out
	form    Form
	hexDump bool
	// follow flushes after every record: a live capture is read as it
	// comes.
	follow bool
}

// out is a printer's buffer and where it goes; the first write error
// stays.
type out struct {
	w   io.Writer
	buf []byte
	err error
}

// flush writes what is buffered and returns the first write error.
func (o *out) flush() error {
	o.write(o.buf)
	o.buf = o.buf[:0]
	return o.err
}

// write writes b unless a write failed before.
func (o *out) write(b []byte) {
	if len(b) > 0 && o.err == nil {
		if _, err := o.w.Write(b); err != nil {
			o.err = err
		}
	}
}

// NewPrinter returns a printer of form to w; hexDump adds the byte layout
// to trees; follow writes each record at once (live).
func NewPrinter(w io.Writer, form Form, hexDump, follow bool) *Printer {
	return &Printer{out: out{w: w}, form: form, hexDump: hexDump, follow: follow}
}

// flushAt is how much the printer buffers before it writes: enough to
// make a write rare, and little for a short run to allocate.
const flushAt = 256 << 10

// Flush writes what is buffered and returns the first write error.
func (p *Printer) Flush() error { return p.flush() }

// Record writes r.
func (p *Printer) Record(r *capture.Record) {
	p.grow()
	p.buf = p.Render(p.buf, r)
	p.written()
}

// Render appends what Record writes of r to b. It reads nothing but r and
// the printer's settings (form, -x), so runs on any goroutine
// (capture.Renderer).
func (p *Printer) Render(b []byte, r *capture.Record) []byte {
	if p.form == JSON {
		return appendRecordJSON(b, r)
	}
	return p.appendRecordText(b, r)
}

// emitDirect is the output of a record written as it is, not copied into
// the buffer: the record of a Produce or Fetch frame under --all --json is
// ten times the frame, and copying it on the run's goroutine would be what
// the goroutines rendering in parallel wait for.
const emitDirect = 64 << 10

// Emit writes output Render made, as Record would have.
func (p *Printer) Emit(b []byte) {
	if len(b) >= emitDirect {
		p.flush()
		p.write(b)
		return
	}
	if len(p.buf)+len(b) > flushAt {
		p.flush()
	}
	p.grow()
	p.buf = append(p.buf, b...)
	p.written()
}

// Immediate reports whether each record is written as it comes.
func (p *Printer) Immediate() bool { return p.follow }

func (p *Printer) grow() {
	if p.buf == nil && !p.follow {
		// Grown by doubling, the buffer would be copied and dropped
		// again and again on its way to flushAt; a run of a few messages
		// touches only the pages it writes.
		p.buf = make([]byte, 0, flushAt+flushAt/8)
	}
}

// written flushes after a record once enough is buffered, or each record
// when following.
func (p *Printer) written() {
	if len(p.buf) >= flushAt || p.follow {
		p.Flush()
	}
}

const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// appendRecordText writes a message's heading (and tree), or a "!!" line.
// A person reading text is spared what only scripts count: retransmitted
// bytes, and the sessions that were decrypted (their messages say so).
func (p *Printer) appendRecordText(b []byte, r *capture.Record) []byte {
	switch r.Kind {
	case capture.KindMessage:
		b = appendHeading(b, r)
		b = append(b, '\n')
		if p.form == Summary {
			return b
		}
		m := r.Message
		b = dissect.AppendText(b, m.Tree)
		if p.hexDump {
			b = dissect.AppendLayout(b, m) // the frame, then each decompressed batch
		}
		return append(b, '\n')
	case capture.KindUnmatched:
		return appendUnmatchedText(b, r)
	case capture.KindEvent:
		switch e := r.Event.(type) {
		case *reassembly.Retransmission:
			return b
		case *reassembly.LayerEvent:
			if s, ok := e.Value.(*tlslayer.Session); ok && s.Decrypted {
				return b
			}
		}
	}
	return appendEventText(b, r)
}

// appendHeading writes "#N TIME SRC → DST WHAT (peer, latency) by WHO".
func appendHeading(b []byte, r *capture.Record) []byte {
	x, m := &r.Exchange, r.Message
	b = append(b, '#')
	b = strconv.AppendInt(b, int64(x.Index), 10)
	b = append(b, ' ')
	b = r.Time.UTC().AppendFormat(b, timeLayout)
	b = append(b, ' ')
	b = appendFlow(b, r.Flow)
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
func appendUnmatchedText(b []byte, r *capture.Record) []byte {
	u := &r.Unmatched
	b = append(b, "!! "...)
	b = r.Time.UTC().AppendFormat(b, timeLayout)
	b = append(b, " #"...)
	b = strconv.AppendInt(b, int64(u.Index), 10)
	b = append(b, ' ')
	b = appendFlow(b, r.Flow)
	b = append(b, " response corr="...)
	b = strconv.AppendInt(b, int64(u.CorrelationID), 10)
	b = append(b, " unmatched: its request was not captured ("...)
	b = strconv.AppendInt(b, int64(u.Size), 10)
	b = append(b, " bytes)"...)
	return append(b, '\n')
}

// appendEventText writes a cut frame or an event as a "!! " line.
func appendEventText(b []byte, r *capture.Record) []byte {
	b = append(b, "!! "...)
	b = r.Time.UTC().AppendFormat(b, timeLayout)
	b = append(b, ' ')
	switch e := r.Event.(type) {
	case *reassembly.Gap:
		b = appendFlowAt(b, e.Flow, e.StreamOffset)
		b = append(b, "gap: "...)
		b = appendLength(b, e.Length)
		b = append(b, " not captured"...)
	case *reassembly.Unparseable:
		b = appendFlowAt(b, e.Flow, e.StreamOffset)
		b = append(b, "unparseable: skipped "...)
		b = appendLength(b, e.Length)
		switch {
		case e.Unframed && e.TLS:
			b = append(b, " of TLS records (the capture began inside one, after the handshake): encrypted, and no key log can open them"...)
		case e.Unframed:
			// Not the tail of a frame: the direction never reached a boundary.
			b = append(b, " and found no frame boundary in them (capture began mid-connection): not Kafka, or encrypted (TLS picked up after its handshake)?"...)
		case e.Leading:
			b = append(b, " before the first frame boundary (capture began mid-connection)"...)
		default:
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
		b = appendIncompleteHead(b, e.FromClient, r.Cut)
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
		b = appendFlow(b, r.Flow)
		b = append(b, " evicted (--max-conns "...)
		b = strconv.AppendInt(b, int64(e.MaxConns), 10)
		b = append(b, " reached), idle since "...)
		b = e.LastSeen.UTC().AppendFormat(b, timeLayout)
	case *reassembly.PortDetected:
		what, how := "Kafka", "send Kafka request headers"
		if e.TLS {
			what, how = "TLS", "start a TLS handshake, which may carry Kafka"
		}
		b = append(b, what+" detected at "...)
		b = e.Server.AppendTo(b)
		b = append(b, " (not a --port; its clients "+how+")"...)
	case *reassembly.LayerEvent:
		b = appendLayerText(b, e)
	}
	return append(b, '\n')
}

// appendLayerText writes a TLS layer event after the "!! TIME " lead.
func appendLayerText(b []byte, e *reassembly.LayerEvent) []byte {
	switch v := e.Value.(type) {
	case *tlslayer.Session:
		b = appendFlow(b, e.Flow)
		b = append(b, " TLS"...)
		if v.Version != "" { // no ServerHello named it
			b = append(b, ' ')
			b = append(b, dissect.Escape(v.Version)...)
		}
		if v.Cipher != "" {
			b = append(b, ' ')
			b = append(b, dissect.Escape(v.Cipher)...)
		}
		if v.SNI != "" {
			b = append(b, " sni="...)
			b = append(b, dissect.Escape(v.SNI)...)
		}
		if v.Decrypted {
			b = append(b, ": decrypted"...)
		} else {
			b = append(b, ": not decrypted, "...)
			b = append(b, dissect.Escape(v.Reason)...)
		}
	case *tlslayer.Alert:
		b = appendFlowAt(b, e.Flow, v.StreamOffset)
		b = append(b, "TLS fatal alert "...)
		b = append(b, dissect.Escape(v.Name)...)
		b = append(b, " ("...)
		b = strconv.AppendInt(b, int64(v.Code), 10)
		b = append(b, ") from the "...)
		b = append(b, sender(e.FromClient)...)
		switch v.Offered {
		case "none":
			b = append(b, ": it refused a client without a certificate"...)
		case "unreadable":
			b = append(b, ": it refused an unreadable client certificate"...)
		case "sent":
			b = append(b, ": it refused the client certificate of "...)
			b = append(b, dissect.Escape(capture.AlertPrincipal(v))...)
		}
	case *tlslayer.Problem:
		b = appendFlowAt(b, e.Flow, v.StreamOffset)
		b = append(b, "TLS "...)
		b = append(b, dissect.Escape(v.Kind)...)
		b = append(b, ": "...)
		b = append(b, dissect.Escape(v.Message)...)
	}
	return b
}

// sender names the side a direction's bytes come from.
func sender(fromClient bool) string {
	if fromClient {
		return "client"
	}
	return "server"
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

func appendAddrJSON(b []byte, a netip.AddrPort) []byte {
	return dissect.AppendJSONString(b, a.String())
}
