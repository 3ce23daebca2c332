package filter

import (
	"encoding/binary"
	"net/netip"
	"regexp"
	"strings"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

// fieldID names a field of the record itself (not of a message's body).
type fieldID uint8

const (
	fNone fieldID = iota
	fAPI
	fAPIKey
	fAPIVersion
	fDirection
	fCorrelationID
	fClientID
	fPrincipal
	fAuthMechanism
	fAuthSource
	fAuthAuthenticated
	fAuthFailed
	fSrc
	fDst
	fLatency
	fIndex
	fPeer
	fTime
	fStreamOffset
	fPackets
	fFile
	fInferred
	fTLS
	fTLSVersion
	fTLSCipher
	fTLSSNI
	fForwarded
	fMalformed
	fSummary
	fSize
	fProblemMessage
	fSoftwareName
	fSoftwareVersion
	fProblemOffset
	fEvent
	fLength
	fLeading
	fUnframed
	fHave
	fWant
	fReason
	fLastSeen
	fMaxConns
	fServer
	fVersion
	fCipher
	fSNI
	fClientRandom
	fDecrypted
	fRefused
	fSender
	fLevel
	fAlert
	fCode
	fRefusedCert
	fCertificate
	fProblem
	fMessage
	fForwardedPrincipal
	fForwardedClient
	fKafka // Wireshark's protocol field: every message
	fRow   // a key of an audit row
)

// recordField is a field of every record (or of the records that carry
// it), by its NDJSON name.
type recordField struct {
	name  string
	id    fieldID
	types types
	// flag: a bare test of it is its truth (malformed, tls), not its
	// presence: every message has one.
	flag bool
	// closed lists the only strings it takes, so that a typo in
	// api == "CreateAcl" is an error rather than an empty output.
	closed func(string) bool
	// names turns a name into the number it stands for (api_key ==
	// "CreateAcls").
	names func(string) (int64, bool)
	// suggest lists the values closed takes, for "did you mean".
	suggest func() []string
	// of: a field of Wireshark's that kdissect derives from its own, the
	// occurrences of these (ip.addr is src and dst); port: their ports
	// (tcp.port).
	of       []*recordField
	port     bool
	addrOnly bool   // their addresses without the ports (ip.src)
	dir      string // only on messages of this direction (kafka.request_key)
	prefixed bool   // their value less the size prefix's 4 bytes (kafka.len)
}

var eventNames = []string{"gap", "unparseable", "incomplete", "unmatched_response", "retransmission",
	"buffer_limit", "evicted", "port_detected", "tls_session", "tls_alert", "tls_problem"}

var unknownAPI = regexp.MustCompile(`^Unknown\([0-9]+\)$`)

// apiNames are the names a message's api can have: Kafka's, and the raw
// SASL tokens after a SaslHandshake v0.
func apiNames() []string {
	out := []string{"SaslToken"}
	for k := int16(0); k <= dissect.MaxAPIKey; k++ {
		out = append(out, dissect.APIName(k))
	}
	return out
}

func isAPIName(s string) bool {
	if s == "SaslToken" || unknownAPI.MatchString(s) {
		return true
	}
	k, ok := dissect.APIKeyByName(s)
	return ok && dissect.APIName(k) == s
}

func apiKeyByName(s string) (int64, bool) {
	if s == "SaslToken" {
		return -1, true
	}
	k, ok := dissect.APIKeyByName(s)
	return int64(k), ok
}

func oneOf(vals ...string) (func(string) bool, func() []string) {
	return func(s string) bool {
			for _, v := range vals {
				if v == s {
					return true
				}
			}
			return false
		}, func() []string {
			return vals
		}
}

// messageFields are the record fields of the main command's filter.
var messageFields = func() map[string]*recordField {
	dirs, dirList := oneOf("request", "response")
	events, eventList := oneOf(eventNames...)
	sources, sourceList := oneOf("sasl", "tls", "none")
	senders, senderList := oneOf("client", "server")
	certs, certList := oneOf("none", "unreadable", "sent")
	api := func(name string) *recordField {
		return &recordField{name: name, id: fAPI, types: tyString, closed: isAPIName, suggest: apiNames}
	}
	list := []*recordField{
		api("api"), api("api_name"),
		{name: "api_key", id: fAPIKey, types: tyInt, names: apiKeyByName, suggest: apiNames},
		{name: "api_version", id: fAPIVersion, types: tyInt},
		{name: "direction", id: fDirection, types: tyString, closed: dirs, suggest: dirList},
		{name: "correlation_id", id: fCorrelationID, types: tyInt},
		{name: "client_id", id: fClientID, types: tyString},
		{name: "principal", id: fPrincipal, types: tyString},
		{name: "auth.mechanism", id: fAuthMechanism, types: tyString},
		{name: "auth.source", id: fAuthSource, types: tyString, closed: sources, suggest: sourceList},
		{name: "auth.authenticated", id: fAuthAuthenticated, types: tyBool, flag: true},
		{name: "auth.failed", id: fAuthFailed, types: tyBool, flag: true},
		{name: "src", id: fSrc, types: tyAddr},
		{name: "dst", id: fDst, types: tyAddr},
		{name: "latency_us", id: fLatency, types: tyInt},
		{name: "index", id: fIndex, types: tyInt},
		{name: "peer", id: fPeer, types: tyInt},
		{name: "time", id: fTime, types: tyTime},
		{name: "stream_offset", id: fStreamOffset, types: tyInt},
		{name: "packets", id: fPackets, types: tyInt},
		{name: "file", id: fFile, types: tyString},
		{name: "inferred", id: fInferred, types: tyBool, flag: true},
		{name: "tls", id: fTLS, types: tyBool, flag: true},
		{name: "tls.version", id: fTLSVersion, types: tyString},
		{name: "tls.cipher", id: fTLSCipher, types: tyString},
		{name: "tls.sni", id: fTLSSNI, types: tyString},
		{name: "forwarded", id: fForwarded, types: tyBool, flag: true},
		{name: "forwarded.principal", id: fForwardedPrincipal, types: tyString},
		{name: "forwarded.client", id: fForwardedClient, types: tyAddr},
		{name: "malformed", id: fMalformed, types: tyBool, flag: true},
		{name: "summary", id: fSummary, types: tyString},
		{name: "client_software.name", id: fSoftwareName, types: tyString},
		{name: "client_software.version", id: fSoftwareVersion, types: tyString},
		{name: "size", id: fSize, types: tyInt},
		{name: "problems.message", id: fProblemMessage, types: tyString},
		{name: "problems.offset", id: fProblemOffset, types: tyInt},
		{name: "event", id: fEvent, types: tyString, closed: events, suggest: eventList},
		{name: "length", id: fLength, types: tyInt},
		{name: "leading", id: fLeading, types: tyBool, flag: true},
		{name: "unframed", id: fUnframed, types: tyBool, flag: true},
		{name: "have", id: fHave, types: tyInt},
		{name: "want", id: fWant, types: tyInt},
		{name: "reason", id: fReason, types: tyString},
		{name: "last_seen", id: fLastSeen, types: tyTime},
		{name: "max_conns", id: fMaxConns, types: tyInt},
		{name: "server", id: fServer, types: tyAddr},
		{name: "version", id: fVersion, types: tyString},
		{name: "cipher", id: fCipher, types: tyString},
		{name: "sni", id: fSNI, types: tyString},
		{name: "client_random", id: fClientRandom, types: tyString},
		{name: "decrypted", id: fDecrypted, types: tyBool, flag: true},
		{name: "refused", id: fRefused, types: tyBool, flag: true},
		{name: "sender", id: fSender, types: tyString, closed: senders, suggest: senderList},
		{name: "level", id: fLevel, types: tyString},
		{name: "alert", id: fAlert, types: tyString},
		{name: "code", id: fCode, types: tyInt},
		{name: "refused_certificate", id: fRefusedCert, types: tyBool, flag: true},
		{name: "certificate", id: fCertificate, types: tyString, closed: certs, suggest: certList},
		{name: "problem", id: fProblem, types: tyString},
		{name: "message", id: fMessage, types: tyString},
	}
	m := make(map[string]*recordField, len(list))
	for _, f := range list {
		m[f.name] = f
	}
	// Wireshark's name of the protocol is a field of its every message.
	m["kafka"] = &recordField{name: "kafka", id: fKafka, types: tyBool, flag: true}
	both := []*recordField{m["src"], m["dst"]}
	for _, f := range []*recordField{
		{name: "ip.src", types: tyAddr, of: both[:1], addrOnly: true},
		{name: "ip.dst", types: tyAddr, of: both[1:], addrOnly: true},
		{name: "ip.addr", types: tyAddr, of: both, addrOnly: true},
		{name: "ipv6.src", types: tyAddr, of: both[:1], addrOnly: true},
		{name: "ipv6.dst", types: tyAddr, of: both[1:], addrOnly: true},
		{name: "ipv6.addr", types: tyAddr, of: both, addrOnly: true},
		{name: "tcp.port", types: tyInt, of: both, port: true},
		{name: "tcp.srcport", types: tyInt, of: both[:1], port: true},
		{name: "tcp.dstport", types: tyInt, of: both[1:], port: true},
		// Wireshark's API key and version of a request, and of the
		// request a response answers.
		{name: "kafka.request_key", types: tyInt, of: []*recordField{m["api_key"]}, dir: "request", names: apiKeyByName, suggest: apiNames},
		{name: "kafka.response_key", types: tyInt, of: []*recordField{m["api_key"]}, dir: "response", names: apiKeyByName, suggest: apiNames},
		// the size prefix's value: the bytes after it
		{name: "kafka.len", types: tyInt, of: []*recordField{m["size"]}, prefixed: true},
		{name: "kafka.request.version", types: tyInt, of: []*recordField{m["api_version"]}, dir: "request"},
		{name: "kafka.response.version", types: tyInt, of: []*recordField{m["api_version"]}, dir: "response"},
	} {
		m[f.name] = f
	}
	return m
}()

// recordValues appends the occurrences of a record field: NDJSON's
// value, nothing where NDJSON has no such key or null.
func recordValues(r *capture.Record, id fieldID, dst []Value) []Value {
	if id == fMalformed {
		return append(dst, Bool(r.Malformed))
	}
	if id == fTime {
		return append(dst, Time(r.Time))
	}
	if id == fFile {
		if r.File == "" {
			return dst
		}
		return append(dst, String(r.File))
	}
	switch r.Kind {
	case capture.KindMessage:
		return messageValues(r, id, dst)
	case capture.KindUnmatched:
		u := &r.Unmatched
		switch id {
		case fEvent:
			return append(dst, String("unmatched_response"))
		case fIndex:
			return append(dst, Int(int64(u.Index), ""))
		case fCorrelationID:
			return append(dst, Int(int64(u.CorrelationID), ""))
		case fSize:
			return append(dst, Int(int64(u.Size), ""))
		}
		return flowValues(r, id, dst, true)
	}
	return eventValues(r, id, dst)
}

func messageValues(r *capture.Record, id fieldID, dst []Value) []Value {
	m, x := r.Message, &r.Exchange
	switch id {
	case fKafka:
		return append(dst, Bool(true))
	case fAPI:
		return append(dst, String(m.APIName))
	case fAPIKey:
		return append(dst, Int(int64(m.APIKey), m.APIName))
	case fAPIVersion:
		return append(dst, Int(int64(m.APIVersion), ""))
	case fDirection:
		return append(dst, String(m.Direction.String()))
	case fCorrelationID:
		return append(dst, Int(int64(m.CorrelationID), ""))
	case fClientID:
		return clientID(m, dst)
	case fPrincipal:
		if x.Identity.Principal != "" {
			dst = append(dst, String(x.Identity.Principal))
		}
		return dst
	case fAuthMechanism:
		if x.Identity.Known() && x.Identity.Mechanism != "" {
			dst = append(dst, String(x.Identity.Mechanism))
		}
		return dst
	case fAuthSource:
		if x.Identity.Known() {
			dst = append(dst, String(x.Identity.Source))
		}
		return dst
	case fAuthAuthenticated:
		if x.Identity.Known() {
			dst = append(dst, Bool(x.Identity.Authenticated))
		}
		return dst
	case fAuthFailed:
		if x.Identity.Known() {
			dst = append(dst, Bool(x.Identity.Failed))
		}
		return dst
	case fLatency:
		if x.HasLatency {
			dst = append(dst, Int(x.Latency.Microseconds(), ""))
		}
		return dst
	case fIndex:
		return append(dst, Int(int64(x.Index), ""))
	case fPeer:
		if x.Peer > 0 {
			dst = append(dst, Int(int64(x.Peer), ""))
		}
		return dst
	case fPackets:
		for _, p := range r.Packets {
			dst = append(dst, Int(int64(p), ""))
		}
		return dst
	case fInferred:
		return append(dst, Bool(x.Inferred))
	case fTLS:
		return append(dst, Bool(r.TLS != nil))
	case fTLSVersion, fTLSCipher, fTLSSNI:
		if t := r.TLS; t != nil {
			dst = append(dst, String([...]string{t.Version, t.Cipher, t.SNI}[id-fTLSVersion]))
		}
		return dst
	case fForwarded:
		// An Envelope whose forwarded message was decoded: the message
		// NDJSON's "forwarded" is not null for.
		return append(dst, Bool(m.Inner != nil))
	case fForwardedPrincipal, fForwardedClient:
		return forwardedValues(m, id, dst)
	case fSummary:
		return append(dst, String(m.Summary))
	case fSoftwareName, fSoftwareVersion:
		if sw := x.Software; sw != nil {
			dst = append(dst, String([...]string{sw.Name, sw.Version}[id-fSoftwareName]))
		}
		return dst
	case fSize:
		return append(dst, Int(int64(frameSize(m)), ""))
	case fProblemMessage:
		for _, p := range m.Problems {
			dst = append(dst, String(p.Message))
		}
		return dst
	case fProblemOffset:
		for _, p := range m.Problems {
			dst = append(dst, Int(int64(p.Offset), ""))
		}
		return dst
	}
	return flowValues(r, id, dst, true)
}

// frameSize is a message's frame size, size prefix included, as its
// prefix says (a frame whose body was not kept still says it).
func frameSize(m *dissect.Message) int {
	if len(m.Raw) >= 4 {
		return int(binary.BigEndian.Uint32(m.Raw)) + 4
	}
	return len(m.Raw)
}

// clientID is the request header's client_id.
func clientID(m *dissect.Message, dst []Value) []Value {
	if m.Tree == nil {
		return dst
	}
	for _, c := range m.Tree.Children {
		if c.Category != dissect.CatHeader {
			continue
		}
		if n := c.Child("client_id"); n != nil && n.HasValue() && !n.Null {
			dst = append(dst, String(n.Str))
		}
	}
	return dst
}

// flowValues appends src, dst and stream_offset of a record of one
// direction of a connection.
func flowValues(r *capture.Record, id fieldID, dst []Value, offset bool) []Value {
	switch id {
	case fSrc:
		return append(dst, Addr(r.Flow.Src))
	case fDst:
		return append(dst, Addr(r.Flow.Dst))
	case fStreamOffset:
		if offset {
			dst = append(dst, Int(r.Offset, ""))
		}
	}
	return dst
}

// connValues appends src and dst of an event of a whole connection: the
// client and the broker.
func connValues(r *capture.Record, id fieldID, dst []Value) []Value {
	switch id {
	case fSrc:
		return append(dst, Addr(r.Flow.Conn.Client))
	case fDst:
		return append(dst, Addr(r.Flow.Conn.Server))
	}
	return dst
}

func eventValues(r *capture.Record, id fieldID, dst []Value) []Value {
	name := func(s string) []Value { return append(dst, String(s)) }
	length := func(n int64) []Value {
		if id == fLength {
			return append(dst, Int(n, ""))
		}
		return flowValues(r, id, dst, true)
	}
	switch e := r.Event.(type) {
	case *reassembly.Gap:
		if id == fEvent {
			return name("gap")
		}
		return length(e.Length)
	case *reassembly.Unparseable:
		switch id {
		case fEvent:
			return name("unparseable")
		case fLeading:
			return append(dst, Bool(e.Leading))
		case fUnframed:
			return append(dst, Bool(e.Unframed))
		case fTLS:
			return append(dst, Bool(e.TLS))
		}
		return length(e.Length)
	case *reassembly.Retransmission:
		if id == fEvent {
			return name("retransmission")
		}
		return length(e.Length)
	case *reassembly.BufferLimit:
		if id == fEvent {
			return name("buffer_limit")
		}
		return length(e.Length)
	case *reassembly.Incomplete:
		return incompleteValues(r, e, id, dst)
	case *reassembly.Evicted:
		switch id {
		case fEvent:
			return name("evicted")
		case fLastSeen:
			return append(dst, Time(e.LastSeen))
		case fMaxConns:
			return append(dst, Int(int64(e.MaxConns), ""))
		}
		return connValues(r, id, dst)
	case *reassembly.PortDetected:
		switch id {
		case fEvent:
			return name("port_detected")
		case fServer:
			return append(dst, Addr(e.Server))
		case fTLS:
			return append(dst, Bool(e.TLS))
		}
	case *reassembly.LayerEvent:
		switch v := e.Value.(type) {
		case *tlslayer.Session:
			switch id {
			case fEvent:
				return name("tls_session")
			case fVersion:
				return name(v.Version)
			case fCipher:
				return name(v.Cipher)
			case fSNI:
				return name(v.SNI)
			case fClientRandom:
				return name(v.ClientRandom)
			case fDecrypted:
				return append(dst, Bool(v.Decrypted))
			case fRefused:
				return append(dst, Bool(v.Refused))
			case fReason:
				if !v.Decrypted {
					return name(v.Reason)
				}
				return dst
			}
			return connValues(r, id, dst)
		case *tlslayer.Alert:
			switch id {
			case fEvent:
				return name("tls_alert")
			case fSender:
				if r.Flow.FromClient {
					return name("client")
				}
				return name("server")
			case fLevel:
				return name("fatal")
			case fAlert:
				return name(v.Name)
			case fCode:
				return append(dst, Int(int64(v.Code), ""))
			case fRefusedCert:
				return append(dst, Bool(v.RefusedCert()))
			case fPrincipal:
				if p := capture.AlertPrincipal(v); p != "" {
					return name(p)
				}
				return dst
			case fCertificate:
				if v.Offered != "" {
					return name(v.Offered)
				}
				return dst
			}
			return flowValues(r, id, dst, true)
		case *tlslayer.Problem:
			switch id {
			case fEvent:
				return name("tls_problem")
			case fProblem:
				return name(v.Kind)
			case fMessage:
				return name(v.Message)
			}
			return flowValues(r, id, dst, true)
		}
	}
	return dst
}

func incompleteValues(r *capture.Record, e *reassembly.Incomplete, id fieldID, dst []Value) []Value {
	c := &r.Cut
	switch id {
	case fEvent:
		return append(dst, String("incomplete"))
	case fHave:
		return append(dst, Int(e.Have, ""))
	case fWant:
		return append(dst, Int(e.Want, ""))
	case fReason:
		return append(dst, String(e.Reason))
	}
	if c.Index > 0 {
		switch id {
		case fIndex:
			return append(dst, Int(int64(c.Index), ""))
		case fCorrelationID:
			return append(dst, Int(int64(c.CorrelationID), ""))
		case fPeer:
			if c.Peer > 0 {
				dst = append(dst, Int(int64(c.Peer), ""))
			}
			return dst
		}
		if c.HasAPI {
			switch id {
			case fAPI:
				return append(dst, String(dissect.APIName(c.APIKey)))
			case fAPIKey:
				return append(dst, Int(int64(c.APIKey), dissect.APIName(c.APIKey)))
			case fAPIVersion:
				return append(dst, Int(int64(c.APIVersion), ""))
			}
		}
	}
	return flowValues(r, id, dst, true)
}

// bodyOf is the message's body: the root's child that is a request or
// response body (a raw SASL token's is the token itself).
func bodyOf(m *dissect.Message) *dissect.Node {
	if m == nil || m.Tree == nil {
		return nil
	}
	for _, c := range m.Tree.Children {
		if c.Category == dissect.CatRequestBody || c.Category == dissect.CatResponseBody {
			return c
		}
	}
	return nil
}

// nodeValues appends the occurrence a field node stands for: its value;
// for an array of numbers or strings its elements, for an array of
// structs its length; nothing to compare (KindNull) for a null, a value
// the frame was cut before, a structure or a secret, which a filter must
// not be a way to read.
func nodeValues(n *dissect.Node, dst []Value) []Value {
	if n.Redacted() || !n.HasValue() || n.Null {
		return append(dst, Value{})
	}
	switch n.Kind {
	case dissect.KindInt:
		return append(dst, Int(n.Int, n.EnumName()))
	case dissect.KindBool:
		return append(dst, Bool(n.Int != 0))
	case dissect.KindFloat:
		return append(dst, Value{Kind: KindFloat, Float: n.Float})
	case dissect.KindString, dissect.KindUUID:
		return append(dst, String(n.Str))
	case dissect.KindBytes:
		if n.Bytes == nil {
			return append(dst, Value{}) // not kept
		}
		return append(dst, Value{Kind: KindBytes, Bytes: n.Bytes})
	case dissect.KindArray:
		if !primitiveArray(n.Type) {
			return append(dst, Int(n.Int, ""))
		}
		before := len(dst)
		for _, c := range n.Children {
			if c.Name != "length" {
				dst = nodeValues(c, dst)
			}
		}
		if len(dst) == before {
			dst = append(dst, Value{}) // empty: there, with nothing to compare
		}
		return dst
	}
	return append(dst, Value{})
}

var primitiveTypes = map[string]types{
	"bool": tyBool, "int8": tyInt, "int16": tyInt, "uint16": tyInt, "int32": tyInt, "uint32": tyInt,
	"int64": tyInt, "float64": tyFloat, "uuid": tyString, "string": tyString, "bytes": tyBytes,
	"records": tyBytes,
}

func primitiveArray(typ string) bool {
	_, ok := primitiveTypes[strings.TrimPrefix(typ, "[]")]
	return ok && strings.HasPrefix(typ, "[]")
}

// bodyValues appends the occurrences of a body field: every node of that
// name at any depth, or those at the end of a dotted path from the body.
func bodyValues(m *dissect.Message, path []string, dst []Value) []Value {
	body := bodyOf(m)
	if body == nil {
		return dst
	}
	if len(path) == 1 {
		return named(body, path[0], dst)
	}
	return follow(body, path, dst)
}

func named(n *dissect.Node, name string, dst []Value) []Value {
	if n.Name == name {
		dst = nodeValues(n, dst)
	}
	for _, c := range n.Children {
		dst = named(c, name, dst)
	}
	return dst
}

// follow walks path from n: through each element of an array of structs,
// and through the tagged fields, where Kafka's definitions put no level.
func follow(n *dissect.Node, path []string, dst []Value) []Value {
	for _, c := range n.Children {
		switch {
		case c.Name == path[0]:
			if len(path) == 1 {
				dst = nodeValues(c, dst)
			} else {
				dst = into(c, path[1:], dst)
			}
		case c.Name == "tagged_fields" && c.Category == dissect.CatTaggedFields:
			for _, t := range c.Children {
				if t.Type == "tagged_field" {
					dst = follow(t, path, dst)
				}
			}
		}
	}
	return dst
}

// into goes down into a field's value for the rest of a path.
func into(n *dissect.Node, path []string, dst []Value) []Value {
	if n.Kind == dissect.KindArray {
		for _, e := range n.Children {
			if e.Kind == dissect.KindStruct {
				dst = follow(e, path, dst)
			}
		}
		return dst
	}
	return follow(n, path, dst)
}

// forwardedValues are NDJSON's forwarded.principal and forwarded.client:
// who an Envelope request says the request it forwards is by.
func forwardedValues(m *dissect.Message, id fieldID, dst []Value) []Value {
	f := m.Forwarded
	switch {
	case m.Inner == nil || f == nil:
	case id == fForwardedPrincipal && f.Principal != "":
		dst = append(dst, String(f.Principal))
	case id == fForwardedClient && f.Client.IsValid():
		dst = append(dst, Addr(netip.AddrPortFrom(f.Client, 0)))
	}
	return dst
}
