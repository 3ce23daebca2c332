package dissect

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// The headers are defined like any message, with the two oddities Kafka's
// RequestHeader.json has: client_id arrived in v1 and is never compact.
// Nothing in them is tagged, and only client_id may be null: the zero
// Versions would say v0.
var (
	requestHeaderFields = []*Field{
		{Name: "request_api_key", Type: "int16", kind: kInt16, Versions: Versions{0, math.MaxInt16},
			Nullable: noVersions, Tagged: noVersions, Tag: -1, enum: apiEnum,
			About: "numeric id of the API being invoked"},
		{Name: "request_api_version", Type: "int16", kind: kInt16, Versions: Versions{0, math.MaxInt16},
			Nullable: noVersions, Tagged: noVersions, Tag: -1,
			About: "version of the API being invoked"},
		{Name: "correlation_id", Type: "int32", kind: kInt32, Versions: Versions{0, math.MaxInt16},
			Nullable: noVersions, Tagged: noVersions, Tag: -1,
			About: "echoed back by the broker in the response"},
		{Name: "client_id", Type: "string", kind: kString, Versions: Versions{1, math.MaxInt16}, Nullable: Versions{1, math.MaxInt16},
			Tagged: noVersions, Tag: -1, flexible: &noVersions, label: "nullable_string",
			About: "always a non-flexible int16-prefixed string"},
	}
	responseHeaderFields = []*Field{
		{Name: "correlation_id", Type: "int32", kind: kInt32, Versions: Versions{0, math.MaxInt16},
			Nullable: noVersions, Tagged: noVersions, Tag: -1,
			About: "matches the correlation_id of the request"},
	}
)

// The first flexible version of each header: its tagged-field section.
const (
	requestHeaderFlexFrom  = 2
	responseHeaderFlexFrom = 1
)

const (
	docFrame       = "length-delimited framing"
	docSize        = "number of bytes that follow"
	docTaggedCount = "number of tagged fields in this struct"
	docTaggedHead  = "number of tagged fields in the header"
)

// frame decodes the size prefix and returns the frame node; it sets the
// region end to the frame's end.
func (d *decoder) frame() *Node {
	d.cat = CatFrame
	fn, mark := d.open("Frame", "", KindGroup)
	fn.Doc = docFrame
	sn := d.fixed(kInt32, "size", "int32")
	sn.Doc = docSize
	d.close(fn, mark)
	if d.failed {
		return fn
	}
	have := int64(len(d.b) - 4)
	switch size := sn.Int; {
	case size < 0:
		d.fail(sn, 0, fmt.Sprintf("size %d is negative", size))
	case size > have && d.notKept > 0:
		d.notKept = int(size - have) // the size prefix is authoritative
	case size > have:
		d.problem(sn, 0, fmt.Sprintf("frame is truncated: size says %d bytes follow, %d present", size, have))
	default:
		d.end = 4 + int(size)
		d.notKept = 0
	}
	return fn
}

// header decodes a request or response header of version hv with fields fs.
func (d *decoder) header(name, doc string, hv int16, fs []*Field, flexFrom int16) *Node {
	d.cat = CatHeader
	hn, mark := d.open(name, versioned(&headerTypes, "v", hv), KindGroup)
	hn.Doc = doc
	v, flex := d.v, d.flex
	d.v, d.flex = hv, hv >= flexFrom
	d.fields(fs, docTaggedHead)
	d.v, d.flex = v, flex
	d.close(hn, mark)
	return hn
}

// requestHeader decodes a request header. Its version depends on its first
// two fields (API key and version), so those are read before the rest; a
// frame cut anywhere in the header still shows the fields it holds, and
// nothing is read beyond the frame's end.
func (d *decoder) requestHeader(r *Registry, m *Message) (keyKnown bool) {
	d.cat = CatHeader
	hn, mark := d.open("RequestHeader", "", KindGroup)
	hn.Doc = "common request header"
	defer d.close(hn, mark)
	d.v, d.flex = 0, false
	d.field(requestHeaderFields[0])
	if d.failed {
		return false
	}
	m.APIKey = int16(d.stack[len(d.stack)-1].Int)
	m.APIName = APIName(m.APIKey)
	d.field(requestHeaderFields[1])
	if d.failed {
		return true
	}
	m.APIVersion = int16(d.stack[len(d.stack)-1].Int)
	flex := r.isFlexible(m.APIKey, m.APIVersion)
	hv := requestHeaderVersion(m.APIKey, m.APIVersion, flex)
	hn.Type = versioned(&headerTypes, "v", hv)
	d.v, d.flex = hv, hv >= requestHeaderFlexFrom
	d.fields(requestHeaderFields[2:], docTaggedHead)
	if c := d.openChild(mark, "correlation_id"); c != nil && c.HasValue() {
		m.CorrelationID = int32(c.Int)
	}
	return true
}

// dissectAs is the version of def a frame of version v is read as: v
// itself, or the newest def knows when v is newer (a client newer than
// kdissect still shows what the bytes allow); ok is false when def cannot
// read it at all.
func dissectAs(def *Def, v int16) (int16, bool) {
	switch {
	case def == nil || v < def.Valid.Lo:
		return v, false
	case v > def.Valid.Hi:
		return def.Valid.Hi, true
	}
	return v, true
}

// body decodes the message body with def, or shows it as opaque bytes
// when there is no definition for this API and version.
func (d *decoder) body(def *Def, apiName string, cat Category) *Node {
	d.cat = cat
	framed := d.v
	v, ok := dissectAs(def, d.v)
	if !ok {
		n := d.node("body", "bytes", KindBytes)
		n.Size = max(d.left(), 0)
		n.note = "not dissected"
		n.Doc = "message body: kdissect has no definition for " + apiName + " v" + strconv.Itoa(int(d.v))
		d.off += n.Size
		if d.end == len(d.b) {
			n.Size += d.notKept // the body's bytes that were not kept are still its bytes
			d.covered = true
		}
		if cat == CatRequestBody && d.m.APIKey == saslAuthenticateKey {
			// Without a definition the token cannot be read, and it may be a
			// PLAIN password: the whole body stays hidden.
			d.hide(n, redactSecret)
		}
		return nil
	}
	bn, mark := d.open(def.Name, "struct", KindStruct)
	bn.noval = true
	if v != framed {
		// The flexible encoding (header and body) stays the frame's own:
		// Kafka never made a flexible API inflexible again.
		bn.Doc = "message body, dissected as version " + strconv.Itoa(int(v)) + ", the newest kdissect knows"
	} else {
		bn.Doc = versioned(&bodyDocs, "message body, version ", d.v)
	}
	d.v = v
	d.fields(def.Fields, docTaggedCount)
	d.v = framed
	d.close(bn, mark)
	return bn
}

// trailing flags bytes before to that nothing accounted for.
func (d *decoder) trailing(to int, what string) {
	if d.failed || d.off >= to {
		return
	}
	n := d.node("trailing", "bytes", KindBytes)
	n.Bytes = d.b[d.off:to:to]
	n.Size = len(n.Bytes)
	n.Doc = what
	d.problem(n, d.off, fmt.Sprintf("%d %s", n.Size, what))
	d.off = to
}

func (d *decoder) request(r *Registry) *Message {
	m := &d.m
	m.Direction = Request
	root, mark := d.open("", "", KindGroup)
	d.frame()
	var def *Def
	if !d.failed && d.requestHeader(r, m) {
		def = r.reqDef(m.APIKey)
		if !d.failed {
			d.checkAPI(root, 4, 6, m.APIKey, m.APIVersion, def)
			d.v, d.flex = m.APIVersion, r.isFlexible(m.APIKey, m.APIVersion)
			d.body(def, m.APIName, CatRequestBody)
		}
	}
	if m.APIName == "" {
		m.APIName = "Unknown"
	}
	return d.finish(m, root, mark, def, "Request")
}

func (d *decoder) response(r *Registry, key, ver int16) *Message {
	m := &d.m
	m.Direction, m.APIKey, m.APIVersion, m.APIName = Response, key, ver, APIName(key)
	root, mark := d.open("", "", KindGroup)
	d.frame()
	asked := ver
	if !d.failed && unsupportedAPIVersions(d.b, key, ver) {
		ver, m.APIVersion = 0, 0
	}
	if !d.failed {
		d.v, d.flex = ver, r.isFlexible(key, ver)
		hv := responseHeaderVersion(key, d.flex)
		hn := d.header("ResponseHeader", "common response header", hv, responseHeaderFields, responseHeaderFlexFrom)
		if c := hn.Child("correlation_id"); c != nil && c.HasValue() {
			m.CorrelationID = int32(c.Int)
		}
		if !d.failed {
			// A response does not carry its API key or version: a problem
			// with them points at the body they leave undissected.
			d.checkAPI(root, d.off, d.off, key, ver, r.respDef(key))
			d.v, d.flex = ver, r.isFlexible(key, ver)
			bn := d.body(r.respDef(key), m.APIName, CatResponseBody)
			if bn != nil && ver != asked {
				bn.Doc = "message body, version 0: the request's v" + strconv.Itoa(int(asked)) +
					" is one the broker does not support, and a broker answers such an ApiVersions request in v0"
			}
		}
	}
	return d.finish(m, root, mark, r.respDef(key), "Response")
}

// unsupportedAPIVersions reports whether frame is the answer to an
// ApiVersions request at version ver > 0 that the broker does not support:
// a Kafka broker then writes the response in v0 (the layout every client
// can read, so that it can retry lower) with error UNSUPPORTED_VERSION and
// its own range of ApiVersions versions. No broker answers a version it
// supports with that error, so the error code decides the layout.
func unsupportedAPIVersions(frame []byte, key, ver int16) bool {
	const apiVersionsKey, unsupportedVersion = 18, 35
	// size prefix, correlation id (header v0 at every version), ErrorCode
	return key == apiVersionsKey && ver > 0 && len(frame) >= 10 &&
		int16(binary.BigEndian.Uint16(frame[8:])) == unsupportedVersion
}

// checkAPI records problems with the API key and version themselves, at
// keyOff and verOff.
func (d *decoder) checkAPI(root *Node, keyOff, verOff int, key, ver int16, def *Def) {
	switch {
	case key < 0 || key > MaxAPIKey:
		d.problem(root, keyOff, fmt.Sprintf("unknown API key %d", key))
	case def != nil && ver > def.Valid.Hi:
		d.problem(root, verOff, fmt.Sprintf("unsupported version v%d of %s, dissected as v%d", ver, def.Name, def.Valid.Hi))
	case def != nil && !def.Valid.Has(ver):
		d.problem(root, verOff, fmt.Sprintf("%s v%d is not a known version (known: %s)", def.Name, ver, def.Valid))
	case ver < 0:
		d.problem(root, verOff, fmt.Sprintf("version %d is negative", ver))
	case def == nil && ver > MaxVersion(key):
		d.problem(root, verOff, fmt.Sprintf("%s v%d is newer than kdissect knows (up to v%d)", APIName(key), ver, MaxVersion(key)))
	}
}

func (d *decoder) finish(m *Message, root *Node, mark int, def *Def, dir string) *Message {
	d.trailing(d.end, "bytes after the end of the message body")
	d.trailing(len(d.b), "bytes after the end of the frame its size gives")
	if d.notKept > 0 && !d.covered {
		d.off = len(d.b)
		n := d.node("not_kept", "bytes", KindBytes)
		n.Size = d.notKept
		n.Doc = "the rest of the frame, which the capture did not keep: its API is not being shown in full"
	}
	d.close(root, mark)
	root.Size = len(d.b) + d.notKept
	if def != nil {
		root.Name = def.Name
	} else {
		root.Name = m.APIName + dir
	}
	root.Type = versioned(&rootTypes, "message v", m.APIVersion)
	m.Tree = root
	m.Problems = d.probs
	m.Raw = d.b
	if guards(m, d.opts) {
		guard(m)
	}
	m.Summary = summarize(m)
	return m
}

// Strings that name a version are made once for the common versions
// rather than on every decode.
var bodyDocs, rootTypes, headerTypes [32]string

func init() {
	for v := range int16(len(bodyDocs)) {
		bodyDocs[v] = versionString("message body, version ", v)
		rootTypes[v] = versionString("message v", v)
		headerTypes[v] = versionString("v", v)
	}
}

func versioned(table *[32]string, prefix string, v int16) string {
	if v >= 0 && int(v) < len(table) {
		return table[v]
	}
	return versionString(prefix, v)
}

func versionString(prefix string, v int16) string { return prefix + strconv.Itoa(int(v)) }
