package testkit

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Frame is the parts, concatenated, behind a 4-byte size prefix that
// counts them.
func Frame(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 4+n), uint32(n))
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// SetSize rewrites a frame's size prefix to cover what follows it, for
// tests that edit a frame after building it.
func SetSize(f []byte) []byte {
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	return f
}

// RequestHeader is a request header: v1 (api key, version, correlation id,
// client id), or v2 when flexible (v1 and an empty tagged-field section).
// The client id is never compact, as in Kafka; nil writes a null one.
func RequestHeader(key, version int16, corr int32, clientID *string, flexible bool) []byte {
	b := binary.BigEndian.AppendUint16(make([]byte, 0, 16), uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if clientID == nil {
		b = binary.BigEndian.AppendUint16(b, 0xffff)
	} else {
		b = binary.BigEndian.AppendUint16(b, uint16(len(*clientID)))
		b = append(b, *clientID...)
	}
	if flexible {
		b = append(b, 0)
	}
	return b
}

// ResponseHeader is a response header: v0 (the correlation id), or v1 when
// flexible (with an empty tagged-field section).
func ResponseHeader(corr int32, flexible bool) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 5), uint32(corr))
	if flexible {
		b = append(b, 0)
	}
	return b
}

// Request is a request frame from header values and a body.
func Request(key, version int16, corr int32, clientID *string, flexible bool, body []byte) []byte {
	return Frame(RequestHeader(key, version, corr, clientID, flexible), body)
}

// Response is a response frame from its correlation id and a body.
func Response(corr int32, flexible bool, body []byte) []byte {
	return Frame(ResponseHeader(corr, flexible), body)
}

// KmsgRequest is r as a frame: kmsg encodes the body, the header (v2 when
// r is flexible at its version, else v1) is built here.
func KmsgRequest(r kmsg.Request, corr int32, clientID *string) []byte {
	return Request(r.Key(), r.GetVersion(), corr, clientID, r.IsFlexible(), r.AppendTo(nil))
}

// KmsgResponse is r as a frame, with a v1 header when r is flexible,
// except ApiVersions': a client reads its header before it knows the
// broker's versions, so Kafka keeps that one at v0.
func KmsgResponse(r kmsg.Response, corr int32) []byte {
	return Response(corr, r.IsFlexible() && r.Key() != 18, r.AppendTo(nil))
}

// WithCorr is a copy of a request or response frame with another
// correlation id.
func WithCorr(frame []byte, corr int32, request bool) []byte {
	f := append([]byte(nil), frame...)
	off := 4
	if request {
		off = 8
	}
	binary.BigEndian.PutUint32(f[off:], uint32(corr))
	return f
}

// Counting is n bytes counting up from start (wrapping), a body whose
// bytes say where they are.
func Counting(n int, start byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

// Ptr is a pointer to v, for optional values such as a client id.
func Ptr[T any](v T) *T { return &v }

// EmptyGroups is a DescribeGroups v5 request frame naming n groups with
// empty names: a byte and a field each, the most fields bytes can carry.
func EmptyGroups(n int, corr int32) []byte {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 5
	req.Groups = make([]string, n)
	return KmsgRequest(req, corr, Ptr("c"))
}
