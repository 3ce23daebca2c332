package dissect

import "encoding/binary"

// Head is what a frame's header says, read without decoding the frame:
// what a display filter can decide a message by before its body is
// decoded.
type Head struct {
	Direction          Direction
	APIKey, APIVersion int16
	APIName            string
	CorrelationID      int32
	// ClientID is the request header's client_id; HasClientID is false
	// for a null one, a header v0 and a response.
	ClientID    string
	HasClientID bool
}

// PeekHead reads the header of frame as Decode with o would, without
// decoding the body. ok is false wherever Decode might read the fields
// otherwise: a raw SASL token, a frame shorter than its header (or whose
// size prefix says it is).
func (r *Registry) PeekHead(frame []byte, o Options) (h Head, ok bool) {
	if o.RawToken || len(frame) < 4 {
		return Head{}, false
	}
	// The bytes the size prefix covers: the decoder reads no further.
	end := min(len(frame), 4+int(min(binary.BigEndian.Uint32(frame), 1<<31-1)))
	b := frame[:end]
	if o.Direction != Request {
		corr, ok := peekCorrelationID(b)
		if !ok {
			return Head{}, false
		}
		return Head{Direction: o.Direction, APIKey: o.APIKey, APIVersion: o.APIVersion, APIName: APIName(o.APIKey),
			CorrelationID: corr}, true
	}
	rh, ok := PeekRequest(b)
	if !ok {
		return Head{}, false
	}
	h = Head{Direction: Request, APIKey: rh.APIKey, APIVersion: rh.APIVersion, APIName: APIName(rh.APIKey), CorrelationID: rh.CorrelationID}
	if requestHeaderVersion(h.APIKey, h.APIVersion, r.isFlexible(h.APIKey, h.APIVersion)) == 0 {
		return h, true
	}
	if len(b) < 14 {
		return Head{}, false
	}
	// client_id is a nullable string with an int16 length in every
	// header version, flexible ones included.
	n := int(int16(binary.BigEndian.Uint16(b[12:])))
	switch {
	case n == -1:
		return h, true
	case n < 0 || 14+n > len(b):
		return Head{}, false
	}
	h.ClientID, h.HasClientID = string(b[14:14+n]), true
	return h, true
}
