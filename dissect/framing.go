package dissect

import "encoding/binary"

// KafkaFraming is how Kafka frames its messages, in the terms the
// reassembly framer asks for (reassembly.FrameRules): an int32 size prefix,
// request and response headers, the correlation id that names a
// response's request, and which bodies are worth keeping. Its fields are
// set by whoever builds the pipeline (Session.Framing builds them from a
// session); the zero value of Wants and Registry keeps every body.
type KafkaFraming struct {
	// MaxFrame bounds the size a plausible request may declare.
	MaxFrame int
	// Wants says which APIs are handed out (Session.Wants); nil: every one.
	Wants func(apiKey int16) bool
	// Registry, when set, limits the bodies kept to those it has a
	// definition to dissect with.
	Registry *Registry
}

// PrefixLen is the length of Kafka's int32 size prefix.
func (KafkaFraming) PrefixLen() int { return 4 }

// Size reads the size prefix at the start of b.
func (KafkaFraming) Size(b []byte) int64 { return int64(int32(binary.BigEndian.Uint32(b))) }

// MinSize, where a frame is known to start (inSync): a request shorter
// than its header is still cut out (and its problem shown), and a broker
// may send an empty frame, the empty SASL token that answers a PLAIN login
// after a SaslHandshake v0. A candidate frame start after lost bytes must
// hold a request header's api key, version and correlation id, or a
// response's correlation id.
func (KafkaFraming) MinSize(fromClient, inSync bool) int64 {
	switch {
	case fromClient && inSync:
		return 4
	case fromClient:
		return 8
	case inSync:
		return 0
	}
	return 4
}

// minHead is how much of a request head must be there for it to be
// judged: the size prefix, api key and version, correlation id and
// client_id's length. A longer frame cut before that is not judged.
const minHead = 14

// PlausibleRequest is PlausibleRequest with k's MaxFrame, on a head of at
// least minHead bytes.
func (k KafkaFraming) PlausibleRequest(head []byte) bool {
	return len(head) >= minHead && plausibleRequest(head, k.MaxFrame)
}

// Key is a request's correlation id, or the one a response carries.
func (KafkaFraming) Key(fromClient bool, f []byte) (uint32, bool) {
	if fromClient {
		h, ok := PeekRequest(f)
		return uint32(h.CorrelationID), ok
	}
	c, ok := peekCorrelationID(f)
	return uint32(c), ok
}

// Keep keeps the bodies of the messages that are handed out and that a
// definition can dissect, and of the SASL messages that name the
// connection's identity. After a SaslHandshake v0 the tokens travel
// without Kafka headers, so every frame is kept until the next request
// (IdentityTracker.RawTokens). A head too short to name its API keeps
// everything.
func (k KafkaFraming) Keep(head []byte) (body, response, all bool) {
	if len(head) < 8 {
		return true, true, false
	}
	key := int16(binary.BigEndian.Uint16(head[4:]))
	if saslKey(key) {
		return true, true, key == saslHandshakeKey && binary.BigEndian.Uint16(head[6:]) == 0
	}
	// An ApiVersions request names the client software (Session reads
	// it for every connection); its response is kept only when shown.
	soft := key == apiVersionsKey
	// An Envelope is shown when the request it forwards is (Session.shows),
	// which its head cannot tell: keep it, admin requests are rare.
	if key == envelopeKey && k.Registry != nil && k.Registry.HasDefinition(key, true) {
		return true, true, false
	}
	if k.Wants != nil && !k.Wants(key) {
		return soft, false, false
	}
	if k.Registry == nil {
		return true, true, false
	}
	return soft || k.Registry.HasDefinition(key, true), k.Registry.HasDefinition(key, false), false
}
