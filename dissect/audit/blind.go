package audit

import (
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kdissect/kdissect/dissect"
)

// Reasons of a blind spot: what kept the log from seeing a connection's
// traffic, each a place where a change may have gone by unlogged.
const (
	BlindTLSNoKeys   = "tls_no_keys"        // a TLS connection whose secrets are not in the key log
	BlindGap         = "gap"                // bytes never captured
	BlindUnparseable = "unparseable"        // bytes skipped, or TLS records not decoded
	BlindIncomplete  = "incomplete"         // a frame cut short (or not buffered whole)
	BlindUnmatched   = "unmatched_response" // a response whose request was not captured
	BlindEvicted     = "evicted"            // a connection ended by --max-conns
)

// BlindSpot is one thing the log could not see on a broker connection.
// Pointers are null in JSON; fields a reason does not use are left out.
type BlindSpot struct {
	Reason string
	Time   time.Time
	Client netip.AddrPort
	Broker netip.AddrPort
	File   string // the capture file; "" live
	// FromClient: the bytes were the client's (requests), else the
	// broker's; for the events of a direction.
	FromClient   *bool
	StreamOffset *int64
	Length       *int64 // bytes lost or skipped; -1 unknown
	// incomplete
	Have, Want *int64
	Cause      string // why the frame was cut, or "buffer_limit"
	// incomplete (with its header) and unmatched_response
	Index         *int
	CorrelationID *int32
	APIKey        *int16
	APIVersion    *int16
	Size          *int // unmatched: the response's size
	Principal     *string
	// Inferred counts the rows inferred from an unmatched response.
	Inferred int
	// tls_no_keys; Midstream: the capture began after the handshake (Why
	// says so), rather than the key log lacking the secrets. Unparseable
	// with Midstream: the bytes are TLS records of a connection the
	// capture picked up inside a record
	Version, Cipher, SNI, Why string
	Midstream                 bool
	// a TLS record problem reported as unparseable
	TLSProblem, Message string
	// evicted
	LastSeen *time.Time
	MaxConns *int
}

// CountInferred sets each unmatched response's Inferred to the number of
// rows inferred from it.
func CountInferred(spots []BlindSpot, rows []Row) {
	n := map[int]int{}
	for i := range rows {
		if rows[i].Inferred && rows[i].ResponseIndex != nil {
			n[*rows[i].ResponseIndex]++
		}
	}
	for i := range spots {
		if s := &spots[i]; s.Reason == BlindUnmatched && s.Index != nil {
			s.Inferred = n[*s.Index]
		}
	}
}

// WriteBlindSpotsJSON writes one {"event":"blind_spot",...} line each.
func WriteBlindSpotsJSON(w io.Writer, spots []BlindSpot) error {
	var b []byte
	for i := range spots {
		b = appendBlindJSON(b[:0], &spots[i])
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func appendBlindJSON(b []byte, s *BlindSpot) []byte {
	b = append(b, `{"event":"blind_spot","reason":`...)
	b = dissect.AppendJSONString(b, s.Reason)
	b = append(b, `,"time":"`...)
	b = s.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","client":`...)
	b = jsonAddr(b, s.Client)
	b = append(b, `,"broker":`...)
	b = jsonAddr(b, s.Broker)
	if s.File != "" {
		b = append(b, `,"file":`...)
		b = dissect.AppendJSONString(b, s.File)
	}
	if s.FromClient != nil {
		b = append(b, `,"from":`...)
		if *s.FromClient {
			b = append(b, `"client"`...)
		} else {
			b = append(b, `"broker"`...)
		}
	}
	num := func(key string, v *int64) {
		if v != nil {
			b = append(b, `,"`+key+`":`...)
			b = strconv.AppendInt(b, *v, 10)
		}
	}
	num("stream_offset", s.StreamOffset)
	num("length", s.Length)
	num("have", s.Have)
	num("want", s.Want)
	text := func(key, v string) {
		if v != "" {
			b = append(b, `,"`+key+`":`...)
			b = dissect.AppendJSONString(b, v)
		}
	}
	text("cause", s.Cause)
	if s.Index != nil {
		b = append(b, `,"index":`...)
		b = strconv.AppendInt(b, int64(*s.Index), 10)
	}
	if s.APIKey != nil {
		b = append(b, `,"api_key":`...)
		b = strconv.AppendInt(b, int64(*s.APIKey), 10)
		b = append(b, `,"api_name":`...)
		b = dissect.AppendJSONString(b, dissect.APIName(*s.APIKey))
	}
	if s.APIVersion != nil {
		b = append(b, `,"api_version":`...)
		b = strconv.AppendInt(b, int64(*s.APIVersion), 10)
	}
	if s.CorrelationID != nil {
		b = append(b, `,"correlation_id":`...)
		b = strconv.AppendInt(b, int64(*s.CorrelationID), 10)
	}
	if s.Reason == BlindUnmatched {
		b = append(b, `,"size":`...)
		b = jsonInt(b, s.Size)
		b = append(b, `,"principal":`...)
		b = jsonStr(b, s.Principal)
		b = append(b, `,"inferred_rows":`...)
		b = strconv.AppendInt(b, int64(s.Inferred), 10)
	}
	if s.Reason == BlindTLSNoKeys {
		for _, kv := range [][2]string{{"version", s.Version}, {"cipher", s.Cipher}, {"sni", s.SNI}, {"why", s.Why}} {
			b = append(b, `,"`+kv[0]+`":`...)
			b = dissect.AppendJSONString(b, kv[1])
		}
	}
	if s.Reason == BlindUnparseable && s.Midstream {
		b = append(b, `,"tls":true`...)
	}
	text("tls_problem", s.TLSProblem)
	text("message", s.Message)
	if s.LastSeen != nil {
		b = append(b, `,"last_seen":"`...)
		b = s.LastSeen.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	if s.MaxConns != nil {
		b = append(b, `,"max_conns":`...)
		b = strconv.AppendInt(b, int64(*s.MaxConns), 10)
	}
	return append(b, "}\n"...)
}

// BlindSummary is one sentence per reason and broker, in the order of the
// reasons above, then of the brokers: what the log could not see, for
// stderr and the table's footer. Nil when the log is complete.
func BlindSummary(spots []BlindSpot) []string {
	type group struct {
		reason, broker string
		n, inferred    int
		bytes          int64
		unknown        bool // some lengths were not known
		tls            int  // unparseable: stretches after a TLS problem, whose length no event gives
		midstream      int  // connections captured after their handshake (tls_no_keys), TLS stretches of them (unparseable)
		apis           map[string]int
		conns          map[netip.AddrPort]bool
	}
	groups := map[[2]string]*group{}
	for i := range spots {
		s := &spots[i]
		k := [2]string{s.Reason, addrText(s.Broker)}
		g := groups[k]
		if g == nil {
			g = &group{reason: k[0], broker: k[1], apis: map[string]int{}, conns: map[netip.AddrPort]bool{}}
			groups[k] = g
		}
		g.n++
		g.conns[s.Client] = true
		g.inferred += s.Inferred
		if s.Midstream {
			g.midstream++
		}
		switch {
		case s.Reason == BlindUnparseable && s.TLSProblem != "":
			g.tls++
		case s.Length != nil && *s.Length >= 0:
			g.bytes += *s.Length
		case s.Length != nil:
			g.unknown = true
		}
		if s.Reason == BlindIncomplete {
			what := "of unknown API"
			if s.APIKey != nil {
				what = dissect.APIName(*s.APIKey)
				if s.FromClient != nil && *s.FromClient {
					what += " request"
				} else {
					what += " response"
				}
			}
			g.apis[what]++
		}
	}
	order := map[string]int{BlindTLSNoKeys: 0, BlindGap: 1, BlindUnparseable: 2, BlindIncomplete: 3, BlindUnmatched: 4, BlindEvicted: 5}
	list := make([]*group, 0, len(groups))
	for _, g := range groups {
		list = append(list, g)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].reason != list[j].reason {
			return order[list[i].reason] < order[list[j].reason]
		}
		return list[i].broker < list[j].broker
	})
	var out []string
	for _, g := range list {
		bytes := func(verb string) string {
			s := plural(int(g.bytes), "byte") + " " + verb
			if g.unknown {
				s += ", and more of unknown length"
			}
			return s
		}
		var s string
		switch g.reason {
		case BlindTLSNoKeys:
			why := "no keys"
			switch {
			case g.midstream == g.n:
				why = "captured after the handshake"
			case g.midstream > 0:
				why = fmt.Sprintf("%d without keys, %d captured after the handshake", g.n-g.midstream, g.midstream)
			}
			s = fmt.Sprintf("%s to %s not decrypted (%s): changes on them are not in this log",
				plural(g.n, "TLS connection"), g.broker, why)
		case BlindGap:
			s = fmt.Sprintf("%s on connections to %s (%s): changes in them are not in this log",
				plural(g.n, "gap"), g.broker, bytes("not captured"))
		case BlindUnparseable:
			var what []string
			if g.n > g.tls {
				w := bytes("skipped")
				switch {
				case g.midstream == g.n:
					w += ": TLS records of connections captured after their handshake"
				case g.midstream > 0:
					w += fmt.Sprintf(", %d of the stretches TLS records captured after the handshake", g.midstream)
				}
				what = append(what, w)
			}
			if g.tls > 0 {
				what = append(what, strconv.Itoa(g.tls)+" after a TLS problem, length unknown")
			}
			s = fmt.Sprintf("%s of bytes on connections to %s not read as Kafka frames (%s): changes in them are not in this log",
				stretches(g.n), g.broker, strings.Join(what, "; "))
		case BlindIncomplete:
			var parts []string
			for what, n := range g.apis {
				parts = append(parts, fmt.Sprintf("%d %s", n, what))
			}
			sort.Strings(parts)
			s = fmt.Sprintf("%s cut short on connections to %s (%s): changes in them are not in this log",
				plural(g.n, "frame"), g.broker, strings.Join(parts, ", "))
		case BlindUnmatched:
			s = fmt.Sprintf("%s without their request on connections to %s: ", plural(g.n, "response"), g.broker)
			if g.n == 1 {
				s = strings.Replace(s, "their", "its", 1)
			}
			them := "them"
			if g.n == 1 {
				them = "it"
			}
			if g.inferred > 0 {
				s += fmt.Sprintf("%s inferred from %s (marked inferred), others may be missing", plural(g.inferred, "row"), them)
			} else {
				s += fmt.Sprintf("the changes %s answered are not in this log", map[bool]string{true: "it", false: "they"}[g.n == 1])
			}
		case BlindEvicted:
			s = fmt.Sprintf("%s to %s evicted (--max-conns): changes on them after that may be missing",
				plural(len(g.conns), "connection"), g.broker)
		}
		out = append(out, s)
	}
	return out
}

func stretches(n int) string {
	if n == 1 {
		return "1 stretch"
	}
	return strconv.Itoa(n) + " stretches"
}

func addrText(a netip.AddrPort) string {
	if !a.IsValid() {
		return "an unknown broker"
	}
	return a.String()
}
