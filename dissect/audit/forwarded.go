package audit

import (
	"net/netip"

	"github.com/kdissect/kdissect/dissect"
)

// In KRaft a broker forwards a client's admin request to the controller
// inside an Envelope: on the controller's listener the connection is the
// broker's, the change the client's. A forwarded change is audited from
// the forwarded request and response, by the principal and from the
// client address the envelope names; the broker goes in ForwardedBy.

const envelopeKey = 58

// ForwardedBy is the broker that forwarded a change in an Envelope: the
// client side of the envelope's connection and who that connection
// authenticated as (nil when unknown).
type ForwardedBy struct {
	Broker    netip.AddrPort
	Principal *string
}

// unwrap returns the message an Envelope forwards with the meta of the
// client behind it, or m and meta as they are for any other message. ok
// is false for an Envelope whose forwarded message was not decoded.
func unwrap(m *dissect.Message, meta Meta) (*dissect.Message, Meta, bool) {
	if m.APIKey != envelopeKey {
		return m, meta, true
	}
	if m.Inner == nil {
		return nil, meta, false
	}
	meta.ForwardedBy = &ForwardedBy{Broker: meta.Client, Principal: meta.Principal}
	// A response does not say who the client is: its row takes the
	// request's, and a response alone leaves them unknown.
	meta.Client, meta.Principal = netip.AddrPort{}, nil
	if f := m.Forwarded; f != nil {
		if f.Client.IsValid() {
			// Port 0: the envelope carries the address alone.
			meta.Client = netip.AddrPortFrom(f.Client, 0)
		}
		if f.Principal != "" {
			p := f.Principal
			meta.Principal = &p
		}
	}
	return m.Inner, meta, true
}

// appendForwardedJSON writes forwarded_by: {"broker", "principal"}, or
// null for a change not forwarded.
func appendForwardedJSON(b []byte, f *ForwardedBy) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"broker":`...)
	b = jsonAddr(b, f.Broker)
	b = append(b, `,"principal":`...)
	b = jsonStr(b, f.Principal)
	return append(b, '}')
}

// forwardedText is the table's brief note of the forwarding broker.
func forwardedText(f *ForwardedBy) string {
	if f == nil {
		return ""
	}
	s := " via " + addr(f.Broker)
	if f.Principal != nil {
		s += " (" + dissect.Escape(*f.Principal) + ")"
	}
	return s
}

func forwardedPrincipal(f *ForwardedBy) string {
	if f.Principal == nil {
		return ""
	}
	return " as " + *f.Principal
}
