package dissect

import "encoding/binary"

// ClientSoftware is what a client says it is in its ApiVersions request
// (v3 and later): kafka-acls, kadm, a Terraform provider...
type ClientSoftware struct {
	Name, Version string
}

// apiVersionsKey is ApiVersions, whose request names the client software.
const apiVersionsKey = 18

// readClientSoftware reads ClientSoftwareName and ClientSoftwareVersion
// from a whole ApiVersions v3+ request frame, without a definition: every
// connection's client is named, whatever APIs are shown. Header v2: api
// key, version, correlation id, client_id (int16 length), tagged fields;
// then the two compact strings.
func readClientSoftware(frame []byte) (ClientSoftware, bool) {
	if len(frame) < 4 || int64(binary.BigEndian.Uint32(frame)) != int64(len(frame)-4) {
		return ClientSoftware{}, false
	}
	b, ok := requestBody(frame, true)
	if !ok {
		return ClientSoftware{}, false
	}
	name, ok1 := compactString(&b)
	version, ok2 := compactString(&b)
	if !ok1 || !ok2 {
		return ClientSoftware{}, false
	}
	return ClientSoftware{Name: name, Version: version}, true
}

// requestBody is what follows a request header v1 (flexible: v2) in frame:
// past the size prefix, api key, version, correlation id, client_id (and
// the header's tagged fields). false: frame ends before its body.
func requestBody(frame []byte, flexible bool) ([]byte, bool) {
	if len(frame) < 14 {
		return nil, false
	}
	b := frame[12:]
	n := int(int16(binary.BigEndian.Uint16(b))) // client_id, -1 null
	b = b[2:]
	if n > 0 {
		if n > len(b) {
			return nil, false
		}
		b = b[n:]
	}
	if flexible && !skipTags(&b) {
		return nil, false
	}
	return b, true
}

func uvarint(b *[]byte) (uint64, bool) {
	v, n := binary.Uvarint(*b)
	if n <= 0 {
		return 0, false
	}
	*b = (*b)[n:]
	return v, true
}

func compactString(b *[]byte) (string, bool) {
	n, ok := uvarint(b)
	if !ok || n == 0 || n-1 > uint64(len(*b)) {
		return "", false
	}
	s := string((*b)[:n-1])
	*b = (*b)[n-1:]
	return s, true
}

// skipTags passes over a tagged-field section.
func skipTags(b *[]byte) bool {
	count, ok := uvarint(b)
	if !ok || count > uint64(len(*b)) {
		return false
	}
	for range count {
		if _, ok := uvarint(b); !ok {
			return false
		}
		size, ok := uvarint(b)
		if !ok || size > uint64(len(*b)) {
			return false
		}
		*b = (*b)[size:]
	}
	return true
}
