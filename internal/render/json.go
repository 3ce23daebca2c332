package render

import (
	"strconv"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

// appendRecordJSON writes a record as one NDJSON line: a message is the
// dissector's object plus where and when it was captured; anything else
// is an object with an "event" key.
func appendRecordJSON(b []byte, r *capture.Record) []byte {
	switch r.Kind {
	case capture.KindMessage:
		b = appendMessageJSON(b, r)
	case capture.KindUnmatched:
		u := &r.Unmatched
		b = append(b, `{"event":"unmatched_response","index":`...)
		b = strconv.AppendInt(b, int64(u.Index), 10)
		b = appendCommonJSON(b, r.Time, r.Flow, r.Offset)
		b = append(b, `,"correlation_id":`...)
		b = strconv.AppendInt(b, int64(u.CorrelationID), 10)
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, int64(u.Size), 10)
	default:
		b = appendEventJSON(b, r)
	}
	if r.File != "" && r.Kind != capture.KindMessage {
		b = append(b, `,"file":`...)
		b = dissect.AppendJSONString(b, r.File)
	}
	return append(b, "}\n"...)
}

func appendMessageJSON(b []byte, r *capture.Record) []byte {
	x := &r.Exchange
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(x.Index), 10)
	b = appendCommonJSON(b, r.Time, r.Flow, r.Offset)
	b = append(b, `,"packets":[`...)
	for i, n := range r.Packets {
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
	if r.File != "" {
		// Before the identity, where it has always stood; the other
		// lines end with it.
		b = append(b, `,"file":`...)
		b = dissect.AppendJSONString(b, r.File)
	}
	if x.Inferred {
		b = append(b, `,"inferred":true`...)
	}
	b = append(b, ',')
	b = dissect.AppendIdentityJSON(b, x.Identity)
	b = append(b, `,"tls":`...)
	if t := r.TLS; t == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"version":`...)
		b = dissect.AppendJSONString(b, t.Version)
		b = append(b, `,"cipher":`...)
		b = dissect.AppendJSONString(b, t.Cipher)
		b = append(b, `,"sni":`...)
		b = dissect.AppendJSONString(b, t.SNI)
		b = append(b, '}')
	}
	b = append(b, `,"client_software":`...)
	if cs := r.Exchange.Software; cs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"name":`...)
		b = dissect.AppendJSONString(b, cs.Name)
		b = append(b, `,"version":`...)
		b = dissect.AppendJSONString(b, cs.Version)
		b = append(b, '}')
	}
	b = append(b, `,"forwarded":`...)
	broker := r.Flow.Src // the envelope's connection's client is the forwarding broker
	if r.Message.Direction == dissect.Response {
		broker = r.Flow.Dst
	}
	b = dissect.AppendForwardedJSON(b, r.Message, broker, x.Identity.Principal)
	b = append(b, ',')
	return dissect.AppendJSONFields(b, r.Message)
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

// appendEventJSON writes a cut frame or an event, without its closing
// brace.
func appendEventJSON(b []byte, r *capture.Record) []byte {
	b = append(b, `{"event":"`...)
	switch e := r.Event.(type) {
	case *reassembly.Gap:
		b = appendRangeEvent(b, "gap", r, e.Length)
	case *reassembly.Unparseable:
		b = appendRangeEvent(b, "unparseable", r, e.Length)
		if e.Leading {
			b = append(b, `,"leading":true`...)
		}
		if e.Unframed {
			b = append(b, `,"unframed":true`...)
		}
		if e.TLS {
			b = append(b, `,"tls":true`...)
		}
	case *reassembly.Retransmission:
		b = appendRangeEvent(b, "retransmission", r, e.Length)
	case *reassembly.BufferLimit:
		b = appendRangeEvent(b, "buffer_limit", r, e.Length)
	case *reassembly.Incomplete:
		b = append(b, `incomplete"`...)
		b = appendCommonJSON(b, r.Time, r.Flow, r.Offset)
		b = append(b, `,"have":`...)
		b = strconv.AppendInt(b, e.Have, 10)
		b = append(b, `,"want":`...)
		b = strconv.AppendInt(b, e.Want, 10)
		b = append(b, `,"reason":`...)
		b = dissect.AppendJSONString(b, e.Reason)
		if c := r.Cut; c.Index > 0 {
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
		b = append(b, `evicted"`...)
		b = appendTimeFlowJSON(b, r)
		b = append(b, `,"last_seen":"`...)
		b = e.LastSeen.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","max_conns":`...)
		b = strconv.AppendInt(b, int64(e.MaxConns), 10)
	case *reassembly.PortDetected:
		b = append(b, `port_detected","time":"`...)
		b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","server":`...)
		b = appendAddrJSON(b, e.Server)
		b = append(b, `,"tls":`...)
		b = strconv.AppendBool(b, e.TLS)
	case *reassembly.LayerEvent:
		b = appendLayerJSON(b, r, e)
	}
	return b
}

func appendRangeEvent(b []byte, name string, r *capture.Record, n int64) []byte {
	b = append(b, name...)
	b = append(b, '"')
	b = appendCommonJSON(b, r.Time, r.Flow, r.Offset)
	b = append(b, `,"length":`...)
	return strconv.AppendInt(b, n, 10)
}

// appendTimeFlowJSON writes the time and the connection's two sides, for
// events of a connection rather than of a direction.
func appendTimeFlowJSON(b []byte, r *capture.Record) []byte {
	b = append(b, `,"time":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","src":`...)
	b = appendAddrJSON(b, r.Flow.Conn.Client)
	b = append(b, `,"dst":`...)
	return appendAddrJSON(b, r.Flow.Conn.Server)
}

// appendLayerJSON writes a TLS layer event's object from its name on.
func appendLayerJSON(b []byte, r *capture.Record, e *reassembly.LayerEvent) []byte {
	switch v := e.Value.(type) {
	case *tlslayer.Session:
		b = append(b, `tls_session"`...)
		b = appendTimeFlowJSON(b, r)
		for _, kv := range [][2]string{{"version", v.Version}, {"cipher", v.Cipher}, {"sni", v.SNI}, {"client_random", v.ClientRandom}} {
			b = append(b, `,"`+kv[0]+`":`...)
			b = dissect.AppendJSONString(b, kv[1])
		}
		b = append(b, `,"decrypted":`...)
		b = strconv.AppendBool(b, v.Decrypted)
		b = append(b, `,"reason":`...)
		if v.Decrypted {
			b = append(b, "null"...)
		} else {
			b = dissect.AppendJSONString(b, v.Reason)
		}
		b = append(b, `,"refused":`...)
		b = strconv.AppendBool(b, v.Refused)
	case *tlslayer.Alert:
		b = append(b, `tls_alert"`...)
		b = appendCommonJSON(b, r.Time, r.Flow, v.StreamOffset)
		b = append(b, `,"sender":"`+sender(r.Flow.FromClient)+`","level":"fatal","alert":`...)
		b = dissect.AppendJSONString(b, v.Name)
		b = append(b, `,"code":`...)
		b = strconv.AppendInt(b, int64(v.Code), 10)
		b = append(b, `,"refused_certificate":`...)
		b = strconv.AppendBool(b, v.RefusedCert())
		b = append(b, `,"principal":`...)
		if p := capture.AlertPrincipal(v); p == "" {
			b = append(b, "null"...)
		} else {
			b = dissect.AppendJSONString(b, p)
		}
		b = append(b, `,"certificate":`...)
		if v.Offered == "" {
			b = append(b, "null"...)
		} else {
			b = append(b, `"`+v.Offered+`"`...)
		}
	case *tlslayer.Problem:
		b = append(b, `tls_problem"`...)
		b = appendCommonJSON(b, r.Time, r.Flow, v.StreamOffset)
		b = append(b, `,"problem":`...)
		b = dissect.AppendJSONString(b, v.Kind)
		b = append(b, `,"message":`...)
		b = dissect.AppendJSONString(b, v.Message)
	}
	return b
}
