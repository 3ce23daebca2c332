package dissect

import "encoding/binary"

// KafkaFraming is how Kafka frames its messages, in the terms the
// reassembly framer asks for (reassembly.FrameRules): an int32 size prefix,
// request and response headers, and the correlation id that names a
// response's request. MaxFrame bounds the size a plausible request may
// declare.
type KafkaFraming struct{ MaxFrame int }

// PrefixLen is the length of Kafka's int32 size prefix.
func (KafkaFraming) PrefixLen() int { return 4 }

// Size reads the size prefix at the start of b.
func (KafkaFraming) Size(b []byte) int64 { return int64(int32(binary.BigEndian.Uint32(b))) }

// MinSize is the smallest frame after the prefix: a request header's api
// key, version and correlation id; a response's correlation id.
func (KafkaFraming) MinSize(fromClient bool) int64 {
	if fromClient {
		return 8
	}
	return 4
}

// MinSyncedSize bounds a size prefix where a frame is known to start: a
// request shorter than its header is still cut out (and its problem shown),
// and a broker may send an empty frame, the empty SASL token that answers a
// PLAIN login after a SaslHandshake v0.
func (KafkaFraming) MinSyncedSize(fromClient bool) int64 {
	if fromClient {
		return 4
	}
	return 0
}

// MinHead is how much of a request cut short must be there for its header
// to be judged: the size prefix, api key and version, correlation id and
// client_id's length.
func (KafkaFraming) MinHead() int { return 14 }

// PlausibleRequest is PlausibleRequest with k's MaxFrame.
func (k KafkaFraming) PlausibleRequest(head []byte) bool { return PlausibleRequest(head, k.MaxFrame) }

// RequestKey is a request's correlation id.
func (KafkaFraming) RequestKey(f []byte) (uint32, bool) {
	h, ok := PeekRequest(f)
	return uint32(h.CorrelationID), ok
}

// ResponseKey is a response's correlation id.
func (KafkaFraming) ResponseKey(f []byte) (uint32, bool) {
	c, ok := PeekCorrelationID(f)
	return uint32(c), ok
}
