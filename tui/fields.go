package tui

import (
	"net/netip"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/filter"
)

// entryFields is an Entry as the display filter reads it: its record
// fields by their NDJSON names, and its decoded message, loaded the first
// time the filter asks for a body field. The list keeps entries, not
// trees, so this is the adapter between the two.
type entryFields struct {
	e      *Entry
	load   func(index int) *dissect.Message // nil: nothing can be decoded
	msg    *dissect.Message
	loaded bool
}

func (a *entryFields) Message() *dissect.Message {
	if !a.loaded {
		a.loaded = true
		if a.load != nil {
			a.msg = a.load(a.e.Index)
		}
	}
	return a.msg
}

// Field yields what kdissect --json writes under name for the entry's
// message; nothing where NDJSON has no such key, or null. The event
// fields (length, reason, ...) never occur: the list holds messages only.
func (a *entryFields) Field(name string, yield func(filter.Value) bool) {
	e := a.e
	str := func(s string) {
		yield(filter.String(s))
	}
	num := func(n int64) {
		yield(filter.Int(n, ""))
	}
	switch name {
	case "kafka":
		yield(filter.Bool(true)) // Wireshark's protocol field: every message
	case "packets":
		for _, n := range e.Packets {
			if !yield(filter.Int(int64(n), "")) {
				return
			}
		}
	case "api", "api_name":
		str(e.APIName)
	case "api_key":
		yield(filter.Int(int64(e.APIKey), e.APIName))
	case "api_version":
		num(int64(e.APIVersion))
	case "direction":
		str(e.Direction.String())
	case "correlation_id":
		num(int64(e.CorrelationID))
	case "client_id":
		if e.HasClientID {
			str(e.ClientID)
		}
	case "principal":
		if e.Identity.Principal != "" {
			str(e.Identity.Principal)
		}
	case "auth.mechanism":
		if e.Identity.Known() && e.Identity.Mechanism != "" {
			str(e.Identity.Mechanism)
		}
	case "auth.source":
		if e.Identity.Known() {
			str(e.Identity.Source)
		}
	case "auth.authenticated":
		if e.Identity.Known() {
			yield(filter.Bool(e.Identity.Authenticated))
		}
	case "auth.failed":
		if e.Identity.Known() {
			yield(filter.Bool(e.Identity.Failed))
		}
	case "src", "dst":
		s := e.Src
		if name == "dst" {
			s = e.Dst
		}
		if ap, err := netip.ParseAddrPort(s); err == nil {
			yield(filter.Addr(ap))
		}
	case "latency_us":
		if e.HasLatency {
			num(e.Latency.Microseconds())
		}
	case "index":
		num(int64(e.Index))
	case "peer":
		if e.Peer > 0 {
			num(int64(e.Peer))
		}
	case "time":
		yield(filter.Time(e.Time))
	case "stream_offset":
		num(e.StreamOffset)
	case "file":
		if e.File != "" {
			str(e.File)
		}
	case "inferred":
		yield(filter.Bool(e.Inferred))
	case "tls":
		yield(filter.Bool(e.TLS != ""))
	case "tls.version":
		if e.TLS != "" {
			str(e.TLSVersion)
		}
	case "tls.cipher":
		if e.TLS != "" {
			str(e.TLSCipher)
		}
	case "tls.sni":
		if e.TLS != "" {
			str(e.TLSSNI)
		}
	case "forwarded":
		yield(filter.Bool(e.Forwarded))
	case "forwarded.principal":
		if e.ForwardedPrincipal != "" {
			str(e.ForwardedPrincipal)
		}
	case "forwarded.client":
		if e.ForwardedClient.IsValid() {
			yield(filter.Addr(netip.AddrPortFrom(e.ForwardedClient, 0)))
		}
	case "malformed":
		yield(filter.Bool(e.HasProblems))
	case "summary":
		str(e.Summary)
	case "client_software.name", "client_software.version":
		if e.HasSoftware {
			if name == "client_software.name" {
				str(e.SoftwareName)
			} else {
				str(e.SoftwareVersion)
			}
		}
	case "size":
		num(int64(e.Size))
	case "problems.message", "problems.offset":
		// Only a message with problems has any; the rest are not decoded
		// to find out.
		if !e.HasProblems && !e.Inferred {
			return
		}
		m := a.Message()
		if m == nil {
			return
		}
		for _, p := range m.Problems {
			v := filter.String(p.Message)
			if name == "problems.offset" {
				v = filter.Int(int64(p.Offset), "")
			}
			if !yield(v) {
				return
			}
		}
	}
}
