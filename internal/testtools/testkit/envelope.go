package testkit

import (
	"encoding/binary"
	"net/netip"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// PrincipalData is a principal as Kafka's default principal builder
// serializes it for an Envelope: an int16 version (0), then the flexible
// DefaultPrincipalData (compact Type and Name, the tokenAuthenticated
// bool, no tagged fields). Written here from those facts rather than by
// kdissect's code, so that a test compares two readings of them.
func PrincipalData(typ, name string, token bool) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = binary.AppendUvarint(b, uint64(len(typ)+1))
	b = append(b, typ...)
	b = binary.AppendUvarint(b, uint64(len(name)+1))
	b = append(b, name...)
	if token {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return append(b, 0) // no tagged fields
}

// EnvelopeRequest is an EnvelopeRequest v0 frame (correlation id corr,
// from a broker whose client id is brokerID) forwarding inner (encoded by
// kmsg, with innerCorr and the client's clientID) for the principal
// typ:name from addr. RequestData is the inner frame without its size
// prefix, as Kafka forwards it.
func EnvelopeRequest(inner kmsg.Request, innerCorr int32, clientID *string, typ, name string, addr netip.Addr, corr int32, brokerID *string) []byte {
	env := kmsg.NewPtrEnvelopeRequest()
	env.RequestData = KmsgRequest(inner, innerCorr, clientID)[4:]
	env.RequestPrincipal = PrincipalData(typ, name, false)
	env.ClientHostAddress = addr.AsSlice()
	return KmsgRequest(env, corr, brokerID)
}

// EnvelopeResponse is an EnvelopeResponse v0 frame (correlation id corr)
// carrying inner, the forwarded request's response with innerCorr,
// without its size prefix.
func EnvelopeResponse(inner kmsg.Response, innerCorr, corr int32) []byte {
	env := kmsg.NewPtrEnvelopeResponse()
	env.ResponseData = KmsgResponse(inner, innerCorr)[4:]
	return KmsgResponse(env, corr)
}
