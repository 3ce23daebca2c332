package stats

import (
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

func apiCells(a apiKey) (cell, cell) {
	if a == tlsHandshake {
		return text(a.name), cell{text: "", json: []byte("null")}
	}
	return text(a.name), number(int64(a.key))
}

// tlsHandshake is the principals table's API of the client certificates a
// broker refused: no Kafka API, so no key (-1 is the raw SASL tokens').
var tlsHandshake = apiKey{-2, "TLS handshake"}

// apis: requests, responses and bytes per API and version.
type apis struct{ m map[apisKey]*apisRow }

type apisKey struct {
	api apiKey
	ver int16
}

type apisRow struct{ requests, responses, bytes int64 }

func (*apis) name() string { return "apis" }
func (*apis) title() string {
	return "requests, responses and bytes (frames, size prefix included) per API and version"
}

func (s *apis) record(r *capture.Record) {
	if r.Kind != capture.KindMessage {
		return
	}
	m := r.Message
	k := apisKey{apiOf(m), m.APIVersion}
	if s.m == nil {
		s.m = map[apisKey]*apisRow{}
	}
	row := s.m[k]
	if row == nil {
		row = &apisRow{}
		s.m[k] = row
	}
	if m.Direction == dissect.Request {
		row.requests++
	} else {
		row.responses++
	}
	row.bytes += frameSize(m)
}

func (*apis) columns() []column {
	return []column{{key: "api", head: "API"}, {key: "api_version", head: "VERSION", num: true},
		{key: "requests", head: "REQUESTS", num: true}, {key: "responses", head: "RESPONSES", num: true},
		{key: "bytes", head: "BYTES", num: true}, {key: "api_key", head: "KEY", num: true}}
}

func (s *apis) rows() [][]cell {
	keys := make([]apisKey, 0, len(s.m))
	for k := range s.m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].api != keys[j].api {
			return keys[i].api.less(keys[j].api)
		}
		return keys[i].ver < keys[j].ver
	})
	out := make([][]cell, 0, len(keys))
	for _, k := range keys {
		r := s.m[k]
		name, key := apiCells(k.api)
		out = append(out, []cell{name, number(int64(k.ver)), number(r.requests), number(r.responses), number(r.bytes), key})
	}
	return out
}

// latency: per API, the latencies of its responses, in microseconds:
// count, exact percentiles by nearest rank, and the largest. Each
// latency is kept until the end, 8 bytes each.
type latency struct{ m map[apiKey][]int64 }

func (*latency) name() string { return "latency" }
func (*latency) title() string {
	return "response latency per API in µs, request's last byte to response's first (nearest-rank percentiles)"
}

func (s *latency) record(r *capture.Record) {
	if r.Kind != capture.KindMessage || !r.Exchange.HasLatency {
		return
	}
	if s.m == nil {
		s.m = map[apiKey][]int64{}
	}
	k := apiOf(r.Message)
	s.m[k] = append(s.m[k], r.Exchange.Latency.Microseconds())
}

func (*latency) columns() []column {
	return []column{{key: "api", head: "API"}, {key: "count", head: "COUNT", num: true},
		{key: "p50_us", head: "P50", num: true}, {key: "p90_us", head: "P90", num: true},
		{key: "p99_us", head: "P99", num: true}, {key: "max_us", head: "MAX", num: true},
		{key: "api_key", head: "KEY", num: true}}
}

// Rank is the nearest-rank percentile p (0-100] of sorted values: the
// smallest value at least p% of them do not exceed.
func Rank(sorted []int64, p int) int64 {
	n := len(sorted)
	i := (p*n + 99) / 100 // ceil(p/100 * n), 1-based
	return sorted[max(i, 1)-1]
}

func (s *latency) rows() [][]cell {
	keys := make([]apiKey, 0, len(s.m))
	for k := range s.m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	var out [][]cell
	for _, k := range keys {
		v := s.m[k]
		slices.Sort(v)
		name, key := apiCells(k)
		out = append(out, []cell{name, number(int64(len(v))), number(Rank(v, 50)), number(Rank(v, 90)),
			number(Rank(v, 99)), number(v[len(v)-1]), key})
	}
	return out
}

// errorCounts: per API and error, how many error codes of responses said
// it (a response answering for many items counts each), and in how many
// responses.
type errorCounts struct{ m map[errKey]*errRow }

type errKey struct {
	api  apiKey
	code int64
}

type errRow struct {
	name             string // "" when Kafka's table does not know the code
	count, responses int64
}

func (*errorCounts) name() string { return "errors" }
func (*errorCounts) title() string {
	return "error codes in responses per API (each item's code counts)"
}

// IsErrorCode reports whether a node is a Kafka error code that is not
// NONE: ErrorCode, TopLevelErrorCode and the other *ErrorCode fields.
func IsErrorCode(n *dissect.Node) bool {
	return strings.HasSuffix(n.Name, "ErrorCode") && n.Kind == dissect.KindInt && n.HasValue() &&
		!n.Null && !n.Redacted() && n.Int != 0
}

func (s *errorCounts) record(r *capture.Record) {
	if r.Kind != capture.KindMessage || r.Message.Direction != dissect.Response || r.Message.Tree == nil {
		return
	}
	if s.m == nil {
		s.m = map[errKey]*errRow{}
	}
	api := apiOf(r.Message)
	var seen []int64
	r.Message.Tree.Walk(func(n *dissect.Node, _ int) {
		if !IsErrorCode(n) {
			return
		}
		k := errKey{api, n.Int}
		row := s.m[k]
		if row == nil {
			row = &errRow{}
			if name, ok := errorCodes.Lookup(n.Int); ok {
				row.name = name
			}
			s.m[k] = row
		}
		row.count++
		if !slices.Contains(seen, n.Int) {
			seen = append(seen, n.Int)
			row.responses++
		}
	})
}

func (*errorCounts) columns() []column {
	return []column{{key: "api", head: "API"}, {key: "error", head: "ERROR"},
		{key: "error_code", head: "CODE", num: true}, {key: "count", head: "COUNT", num: true},
		{key: "responses", head: "RESPONSES", num: true}, {key: "api_key", head: "KEY", num: true}}
}

func (s *errorCounts) rows() [][]cell {
	keys := make([]errKey, 0, len(s.m))
	for k := range s.m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.api != b.api {
			return a.api.less(b.api)
		}
		if ca, cb := s.m[a].count, s.m[b].count; ca != cb {
			return ca > cb
		}
		return a.code < b.code
	})
	var out [][]cell
	for _, k := range keys {
		r := s.m[k]
		name, key := apiCells(k.api)
		out = append(out, []cell{name, textOr(r.name, r.name != "", "(unknown)"), number(k.code),
			number(r.count), number(r.responses), key})
	}
	return out
}

// principals: per principal and API, the messages; and the
// authentications the broker refused: a refused SaslAuthenticate response,
// or a request it closed the connection on, which are SASL messages (shown
// with --all or --api SaslAuthenticate); and a client certificate refused
// in the TLS handshake (the tls_alert event), API "TLS handshake".
type principals struct{ m map[prinKey]*prinRow }

type prinKey struct {
	principal string // "" when not known
	api       apiKey
}

type prinRow struct{ requests, responses, failed int64 }

func (*principals) name() string { return "principals" }
func (*principals) title() string {
	return "messages per principal and API, and refused authentications"
}

func (s *principals) record(r *capture.Record) {
	switch r.Kind {
	case capture.KindEvent:
		if le, ok := r.Event.(*reassembly.LayerEvent); ok {
			if a, ok := le.Value.(*tlslayer.Alert); ok && a.RefusedCert() {
				s.row(capture.AlertPrincipal(a), tlsHandshake).failed++
			}
		}
		return
	case capture.KindMessage:
	default:
		return
	}
	m, x := r.Message, &r.Exchange
	row := s.row(x.Identity.Principal, apiOf(m))
	if m.Direction == dissect.Request {
		row.requests++
	} else {
		row.responses++
	}
	// A refused certificate is counted once, by its handshake; the
	// requests sent before the verdict are not more refusals.
	if x.Identity.Failed && x.Identity.Source != "tls" && (m.Direction == dissect.Response || x.Peer == 0) {
		row.failed++
	}
}

func (s *principals) row(principal string, api apiKey) *prinRow {
	if s.m == nil {
		s.m = map[prinKey]*prinRow{}
	}
	k := prinKey{principal, api}
	row := s.m[k]
	if row == nil {
		row = &prinRow{}
		k.principal = strings.Clone(k.principal)
		s.m[k] = row
	}
	return row
}

func (*principals) columns() []column {
	return []column{{key: "principal", head: "PRINCIPAL"}, {key: "api", head: "API"},
		{key: "requests", head: "REQUESTS", num: true}, {key: "responses", head: "RESPONSES", num: true},
		{key: "failed_authentications", head: "FAILED AUTH", num: true}, {key: "api_key", head: "KEY", num: true}}
}

func (s *principals) rows() [][]cell {
	keys := make([]prinKey, 0, len(s.m))
	for k := range s.m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.principal != b.principal {
			if a.principal == "" || b.principal == "" {
				return b.principal == "" // the unknown last
			}
			return a.principal < b.principal
		}
		return a.api.less(b.api)
	})
	var out [][]cell
	for _, k := range keys {
		r := s.m[k]
		name, key := apiCells(k.api)
		out = append(out, []cell{textOr(k.principal, k.principal != "", "(unknown)"), name,
			number(r.requests), number(r.responses), number(r.failed), key})
	}
	return out
}

// conns: per connection, who and what: its client and broker, the last
// principal known on it, the client software its ApiVersions request
// named, its TLS session, its messages and their bytes, the first and
// last message's time.
type conns struct {
	m     map[connKey]*connRow
	order []*connRow
}

type connKey struct {
	file string
	id   uint64
}

type connRow struct {
	file              string
	client, broker    netip.AddrPort
	principal         string
	software, version string
	hasSoftware       bool
	tls               *capture.TLS
	messages, bytes   int64
	first, last       time.Time
}

func (*conns) name() string  { return "conns" }
func (*conns) title() string { return "messages and bytes per connection" }

func (s *conns) record(r *capture.Record) {
	if r.Kind != capture.KindMessage {
		return
	}
	m, x := r.Message, &r.Exchange
	if s.m == nil {
		s.m = map[connKey]*connRow{}
	}
	k := connKey{r.File, r.Flow.ConnID}
	row := s.m[k]
	if row == nil {
		row = &connRow{file: r.File, client: r.Flow.Conn.Client, broker: r.Flow.Conn.Server, first: r.Time}
		s.m[k] = row
		s.order = append(s.order, row)
	}
	row.messages++
	row.bytes += frameSize(m)
	row.last = r.Time
	if p := x.Identity.Principal; p != "" && p != row.principal {
		row.principal = strings.Clone(p)
	}
	if r.TLS != nil && row.tls == nil {
		t := *r.TLS
		row.tls = &t
	}
	if sw := x.Software; sw != nil {
		row.software, row.version, row.hasSoftware = strings.Clone(sw.Name), strings.Clone(sw.Version), true
	}
}

func (*conns) columns() []column {
	return []column{{key: "client", head: "CLIENT"}, {key: "broker", head: "BROKER"},
		{key: "principal", head: "PRINCIPAL"}, {key: "client_software", head: "SOFTWARE"},
		{key: "tls", head: "TLS"}, {key: "messages", head: "MESSAGES", num: true},
		{key: "bytes", head: "BYTES", num: true}, {key: "first", head: "FIRST"}, {key: "last", head: "LAST"},
		{key: "file", head: "FILE"}}
}

func (s *conns) rows() [][]cell {
	out := make([][]cell, 0, len(s.order))
	for _, r := range s.order {
		sw := cell{text: "-", json: []byte("null")}
		if r.hasSoftware {
			sw = text(strings.TrimSpace(r.software + " " + r.version))
			b := append([]byte(`{"name":`), dissect.AppendJSONString(nil, r.software)...)
			b = append(b, `,"version":`...)
			b = append(dissect.AppendJSONString(b, r.version), '}')
			sw.json = b
		}
		tls := cell{text: "-", json: []byte("null")}
		if t := r.tls; t != nil {
			tls = text(t.Version + " " + t.Cipher)
			b := append([]byte(`{"version":`), dissect.AppendJSONString(nil, t.Version)...)
			b = append(b, `,"cipher":`...)
			b = dissect.AppendJSONString(b, t.Cipher)
			b = append(b, `,"sni":`...)
			b = append(dissect.AppendJSONString(b, t.SNI), '}')
			tls.json = b
		}
		out = append(out, []cell{text(r.client.String()), text(r.broker.String()),
			textOr(r.principal, r.principal != "", "(unknown)"), sw, tls, number(r.messages), number(r.bytes),
			timeCell(r.first), timeCell(r.last), textOr(r.file, r.file != "", "-")})
	}
	return out
}

// errorCodes is Kafka's table of error names.
var errorCodes = dissect.EnumNamed("ErrorCode")
