package dissect

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"
)

// Envelope (API key 58): in KRaft a broker forwards a client's admin
// request to the controller inside an EnvelopeRequest, with who the
// client is and where it connected from, and gets the controller's answer
// back inside an EnvelopeResponse. The forwarded request and response are
// decoded as the full messages they are, nested under the bytes that carry
// them, their nodes' offsets in the envelope's frame: the byte layout,
// secret masking and the explorer need nothing of their own for them.

const envelopeKey = 58

// envelopePart says what an Envelope bytes field carries.
type envelopePart uint8

const (
	envNone envelopePart = iota
	envRequestData
	envResponseData
	envPrincipal
	envAddress
)

// InnerAPI is the API and version of the request an Envelope forwarded:
// what decoding the EnvelopeResponse's ResponseData needs, since a
// response does not name its API.
type InnerAPI struct {
	Known              bool
	APIKey, APIVersion int16
}

// Forwarded is who an EnvelopeRequest says the forwarded request is by:
// the client behind the broker that forwarded it, not the broker.
type Forwarded struct {
	// Principal is "Type:Name" as Kafka names principals; "" when the
	// principal data could not be read.
	Principal          string
	PrincipalType      string
	PrincipalName      string
	TokenAuthenticated bool
	// Client is the client's address as the forwarding broker saw it; not
	// valid when absent or malformed.
	Client netip.Addr
}

var principalDef = sync.OnceValue(func() *Def {
	src, err := dataDefs.ReadFile("datadefs/DefaultPrincipalData.json")
	var d *Def
	if err == nil {
		d, err = parseData(src)
	}
	if err != nil {
		panic(fmt.Sprintf("built-in definition DefaultPrincipalData: %v", err)) // a build defect, caught by every test
	}
	return d
})

// markEnvelope marks the bytes fields of Envelope that carry structures of
// their own; by name, so that a definition loaded with --schema-dir is
// read the same.
func markEnvelope(d *Def) {
	if d.APIKey != envelopeKey {
		return
	}
	for _, f := range d.Fields {
		if f.kind != kBytes {
			continue
		}
		switch {
		case d.Request && f.Name == "RequestData":
			f.envelope = envRequestData
		case !d.Request && f.Name == "ResponseData":
			f.envelope = envResponseData
		case d.Request && f.Name == "RequestPrincipal":
			f.envelope = envPrincipal
		case d.Request && f.Name == "ClientHostAddress":
			f.envelope = envAddress
		}
	}
}

// envelopePart decodes what the Envelope bytes node n carries.
func (d *decoder) envelopePart(n *Node, p envelopePart) {
	if n.noval || n.Null || d.failed || d.reg == nil {
		return
	}
	switch p {
	case envRequestData:
		d.forwarded(n, Request)
	case envResponseData:
		d.forwarded(n, Response)
	case envPrincipal:
		d.principalData(n)
	case envAddress:
		d.clientAddress(n)
	}
}

// region is the decoder's walk state, saved while a nested structure is
// read over a bytes value and restored after it.
type region struct {
	off, end, notKept int
	v                 int16
	flex, cut         bool
	cat               Category
}

func (d *decoder) saveRegion() region {
	return region{off: d.off, end: d.end, notKept: d.notKept, v: d.v, flex: d.flex, cut: d.cut, cat: d.cat}
}

// restore returns to r. The bytes value was read whole, so a problem
// inside it does not stop the walk of the envelope.
func (d *decoder) restore(r region) {
	d.off, d.end, d.notKept, d.v, d.flex, d.cut, d.cat = r.off, r.end, r.notKept, r.v, r.flex, r.cut, r.cat
	d.failed = false
}

// forwarded decodes the forwarded message that bytes node n holds: a
// request header and body, or a response header and body, without a size
// prefix.
func (d *decoder) forwarded(n *Node, dir Direction) {
	if d.nested {
		// Kafka refuses an Envelope inside an Envelope; a second level
		// would also overwrite the decoder's one inner message.
		n.note = "an Envelope inside an Envelope, not decoded"
		return
	}
	saved := d.saveRegion()
	start := saved.off - len(n.Bytes)
	mark, nprobs := len(d.stack), len(d.probs)
	d.nested = true
	defer func() { d.nested = false }()
	im := &d.inner
	*im = Message{Direction: dir}
	inferred := false
	if dir == Request {
		d.forwardedMessage(im, start, saved.off)
	} else {
		in := d.opts.Inner
		if !in.Known {
			in, inferred = d.inferInner(start, saved.off, mark, nprobs)
		}
		if !in.Known {
			d.restore(saved)
			n.note = "forwarded response: the Envelope request was not captured, so its API is not known"
			// It may be a token's HMAC or a sensitive config's value.
			d.hide(n, redactSecret)
			return
		}
		im.APIKey, im.APIVersion, im.APIName = in.APIKey, in.APIVersion, APIName(in.APIKey)
		if !inferred {
			d.forwardedMessage(im, start, saved.off)
		}
	}
	root := d.stack[mark]
	d.adopt(n, mark)
	d.restore(saved)
	im.Tree, im.Raw = root, d.b
	im.Problems = d.probs[nprobs:len(d.probs):len(d.probs)]
	im.Summary = summarize(im)
	d.m.Inner = im
	n.note = "forwarded " + im.APIName + " v" + strconv.Itoa(int(im.APIVersion)) + " " + dir.String()
	if inferred {
		n.note += ", inferred: the first ACL response that reads it exactly"
	}
	if n.redact == redactNone && !d.opts.ShowSecrets && hasSecret(root) {
		n.redact = redactHolds
	}
}

// forwardedMessage decodes the message in [start, end) into im (whose
// APIKey and APIVersion a response has already), its root node the last
// one added.
func (d *decoder) forwardedMessage(im *Message, start, end int) {
	d.off, d.end, d.notKept, d.cut = start, end, 0, false
	d.cat = im.Direction.bodyCategory()
	root, mark := d.open("", "", KindGroup)
	var def *Def
	r := d.reg
	if im.Direction == Request {
		if d.requestHeader(r, im) && !d.failed {
			def = r.reqDef(im.APIKey)
			d.checkAPI(root, start, start+2, im.APIKey, im.APIVersion, def)
			d.v, d.flex = im.APIVersion, r.isFlexible(im.APIKey, im.APIVersion)
			d.body(def, im.APIName, CatRequestBody)
		}
		if im.APIName == "" {
			im.APIName = "Unknown"
		}
	} else {
		key, ver := im.APIKey, im.APIVersion
		def = r.respDef(key)
		d.v, d.flex = ver, r.isFlexible(key, ver)
		hn := d.header("ResponseHeader", "common response header", responseHeaderVersion(key, d.flex), responseHeaderFields, responseHeaderFlexFrom)
		if c := hn.Child("correlation_id"); c != nil && c.HasValue() {
			im.CorrelationID = int32(c.Int)
		}
		if !d.failed {
			d.checkAPI(root, d.off, d.off, key, ver, def)
			d.v, d.flex = ver, r.isFlexible(key, ver)
			d.body(def, im.APIName, CatResponseBody)
		}
	}
	d.trailing(end, "bytes after the end of the forwarded message")
	if d.failed && d.off < end {
		// The walk stopped inside the forwarded message: what it did not
		// read may hold the secrets it would have hidden.
		rest := d.node("not_decoded", "bytes", KindBytes)
		rest.Bytes = d.b[d.off:end:end]
		rest.Size = len(rest.Bytes)
		rest.Doc = "the rest of the forwarded message, after the problem that stopped its walk"
		d.hide(rest, redactSecret)
		d.off = end
	}
	d.close(root, mark)
	root.Category = d.cat
	dir := "Request"
	if im.Direction == Response {
		dir = "Response"
	}
	if def != nil {
		root.Name = def.Name
	} else {
		root.Name = im.APIName + dir
	}
	root.Type = versioned(&rootTypes, "message v", im.APIVersion)
	root.Doc = "the forwarded " + im.Direction.String() + ", header and body, without a size prefix"
}

func (dir Direction) bodyCategory() Category {
	if dir == Response {
		return CatResponseBody
	}
	return CatRequestBody
}

// inferInner finds the API of a forwarded response whose Envelope request
// is not known, as Decoder.Fits does for a response without its request:
// the first ACL response definition that reads the bytes exactly, without
// a problem. The one that fits stays decoded.
func (d *decoder) inferInner(start, end, mark, nprobs int) (InnerAPI, bool) {
	im := &d.inner
	for _, g := range guesses {
		*im = Message{Direction: Response, APIKey: g[0], APIVersion: g[1], APIName: APIName(g[0])}
		d.failed = false
		d.forwardedMessage(im, start, end)
		if !d.failed && len(d.probs) == nprobs {
			return InnerAPI{Known: true, APIKey: g[0], APIVersion: g[1]}, true
		}
		d.stack, d.probs = d.stack[:mark], d.probs[:nprobs]
	}
	d.failed = false
	*im = Message{Direction: Response}
	return InnerAPI{}, false
}

// principalData decodes RequestPrincipal: an int16 version, then
// DefaultPrincipalData, as Kafka's default principal builder serializes
// the client's principal.
func (d *decoder) principalData(n *Node) {
	if len(n.Bytes) == 0 {
		return
	}
	def := principalDef()
	saved := d.saveRegion()
	end := saved.off
	mark := len(d.stack)
	d.off, d.end, d.notKept, d.flex, d.v = end-len(n.Bytes), end, 0, true, 0
	vn := d.fixed(kInt16, "Version", "int16")
	vn.Doc = "version of the DefaultPrincipalData that follows"
	if vn.HasValue() {
		if vn.Int != 0 {
			d.problem(vn, vn.Offset, fmt.Sprintf("DefaultPrincipalData version %d: Kafka knows only 0, read as 0", vn.Int))
		}
		d.fields(def.Fields, docTaggedCount)
	}
	if !d.failed {
		d.trailing(end, "bytes after the end of the DefaultPrincipalData")
	}
	f := &d.fwd
	var typ, name *Node
	for _, c := range d.stack[mark:] {
		switch c.Name {
		case "Type":
			typ = c
		case "Name":
			name = c
		case "tokenAuthenticated":
			f.TokenAuthenticated = c.HasValue() && c.Int != 0
		case "tagged_fields":
			// Principal builders other than Kafka's put their own data in
			// tags (an OAuth builder its bearer token): hidden whole.
			c.Walk(func(x *Node, _ int) {
				if x.Name == "data" && x.Kind == KindBytes {
					d.hide(x, redactSecret)
				}
			})
		}
	}
	if typ != nil && name != nil && typ.HasValue() && name.HasValue() {
		f.PrincipalType, f.PrincipalName = typ.Str, name.Str
		f.Principal = typ.Str + ":" + name.Str
		n.note = Escape(f.Principal)
		d.m.Forwarded = f
	}
	d.adopt(n, mark)
	d.restore(saved)
	if n.redact == redactNone && !d.opts.ShowSecrets && hasSecret(n) {
		n.redact = redactHolds
	}
}

// clientAddress decodes ClientHostAddress: the client's IPv4 or IPv6
// address, its 4 or 16 bytes.
func (d *decoder) clientAddress(n *Node) {
	a, ok := netip.AddrFromSlice(n.Bytes)
	if !ok || len(n.Bytes) != 4 && len(n.Bytes) != 16 {
		d.problem(n, n.Offset, fmt.Sprintf("ClientHostAddress has %d bytes, not 4 (IPv4) or 16 (IPv6)", len(n.Bytes)))
		return
	}
	n.note = a.String()
	d.fwd.Client = a
	d.m.Forwarded = &d.fwd
}

// peekEnvelopeInner reads the API key and version of the request an
// EnvelopeRequest frame forwards, without building a tree: a Session
// keeps them to decode the EnvelopeResponse.
func peekEnvelopeInner(frame []byte) (InnerAPI, bool) {
	h, ok := PeekRequest(frame)
	if !ok || h.APIKey != envelopeKey {
		return InnerAPI{}, false
	}
	b, ok := requestBody(frame, true) // Envelope is flexible from v0
	if !ok {
		return InnerAPI{}, false
	}
	// RequestData: compact bytes, length+1, then the inner header.
	n, ok := uvarint(&b)
	if !ok || n < 5 || len(b) < 4 {
		return InnerAPI{}, false
	}
	return InnerAPI{Known: true, APIKey: int16(binary.BigEndian.Uint16(b)), APIVersion: int16(binary.BigEndian.Uint16(b[2:]))}, true
}

// appendEnvelope is an Envelope's summary: the forwarded message's, said
// to be forwarded, and by whom and from where for a request.
func appendEnvelope(b []byte, m *Message, body *Node) []byte {
	in := m.Inner
	if in == nil {
		if m.Direction == Response {
			b = appendEnvelopeError(b, body)
		}
		return b
	}
	b = append(b, "forwarded "...)
	// The inner summary without its own malformed note: the envelope's
	// names the first problem, the inner ones included.
	probs := in.Problems
	in.Problems = nil
	s := summarize(in)
	in.Problems = probs
	head, detail, _ := strings.Cut(s, ": ")
	b = append(b, head...)
	if f := m.Forwarded; f != nil {
		if f.Principal != "" {
			b = append(b, " by "...)
			b = append(b, Escape(f.Principal)...)
		}
		if f.Client.IsValid() {
			b = append(b, " from "...)
			b = f.Client.AppendTo(b)
		}
	}
	if detail != "" {
		b = append(b, ": "...)
		b = append(b, detail...)
	}
	if m.Direction == Response {
		b = appendEnvelopeError(b, body)
	}
	return b
}

// appendEnvelopeError names the envelope's own error, which says the
// forwarding failed rather than the forwarded request.
func appendEnvelopeError(b []byte, body *Node) []byte {
	c := body.Child("ErrorCode")
	if c == nil || !c.HasValue() || c.Int == 0 {
		return b
	}
	b = append(b, " (envelope error "...)
	if name := c.EnumName(); name != "" {
		b = append(b, name...)
	} else {
		b = strconv.AppendInt(b, c.Int, 10)
	}
	return append(b, ')')
}

// AppendForwardedJSON writes NDJSON's "forwarded" value of m: null unless
// m is an Envelope carrying a forwarded message, else who the forwarded
// request is by (principal and client, null when the message does not say:
// a response never does) and the broker that forwarded it, as the
// envelope's connection shows it (its client side and its principal).
func AppendForwardedJSON(b []byte, m *Message, broker netip.AddrPort, brokerPrincipal string) []byte {
	if m == nil || m.Inner == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"principal":`...)
	f := m.Forwarded
	if f != nil && f.Principal != "" {
		b = AppendJSONString(b, f.Principal)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"client":`...)
	if f != nil && f.Client.IsValid() {
		b = append(b, '"')
		b = f.Client.AppendTo(b)
		b = append(b, '"')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"broker":`...)
	if broker.IsValid() {
		b = append(b, '"')
		b = broker.AppendTo(b)
		b = append(b, '"')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"broker_principal":`...)
	if brokerPrincipal != "" {
		b = AppendJSONString(b, brokerPrincipal)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}
