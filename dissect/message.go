package dissect

import (
	"bytes"
	"embed"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"
)

// Direction says whether a frame travels client to broker or back.
type Direction uint8

const (
	Request Direction = iota
	Response
)

func (d Direction) String() string {
	if d == Response {
		return "response"
	}
	return "request"
}

// Message is one decoded Kafka frame.
type Message struct {
	APIKey        int16
	APIName       string
	APIVersion    int16
	Direction     Direction
	CorrelationID int32
	Summary       string
	Problems      []Problem
	Tree          *Node
	Raw           []byte // the frame, size prefix included; Tree offsets index into it
	// Sources are the decompressed record batches: the offsets of nodes
	// with Source k index into Sources[k-1].Data.
	Sources []Source
	// Inner is the message an Envelope (API key 58) forwards, its Tree a
	// subtree of this one and its offsets in this frame; nil for every
	// other message. Forwarded is who an EnvelopeRequest says the
	// forwarded request is by; nil when it does not say (and on
	// responses).
	Inner     *Message
	Forwarded *Forwarded

	unpacked int // bytes decompressed so far, against the message's cap
}

// Registry holds the message definitions the interpreter can walk.
type Registry struct {
	req, resp map[int16]*defSlot
}

// defSlot holds a definition, the built-in ones parsed when first asked
// for: a run decodes a few of the 190 APIs, and parsing them all is most of
// what a small capture costs (BenchmarkLoadBuiltin).
type defSlot struct {
	once sync.Once
	name string // the built-in file; "" for a definition added parsed
	def  *Def
}

func (s *defSlot) get() *Def {
	s.once.Do(func() {
		src, err := builtinDefs.ReadFile(s.name)
		if err == nil {
			s.def, err = parseDef(src)
		}
		if err != nil {
			panic(fmt.Sprintf("built-in definition %s: %v", s.name, err)) // a build defect: TestBuiltinSlots parses each
		}
	})
	return s.def
}

// builtin reports whether the slot holds a built-in definition, whose
// flexible versions are those of the built-in table.
func (s *defSlot) builtin() bool { return s.name != "" }

func parsedSlot(d *Def) *defSlot {
	s := &defSlot{def: d}
	s.once.Do(func() {})
	return s
}

func (r *Registry) reqDef(key int16) *Def {
	if s := r.req[key]; s != nil {
		return s.get()
	}
	return nil
}

func (r *Registry) respDef(key int16) *Def {
	if s := r.resp[key]; s != nil {
		return s.get()
	}
	return nil
}

//go:embed defs/*.json
var builtinDefs embed.FS

var builtin = sync.OnceValue(func() *Registry { return loadBuiltin("defs/*.json") })

// saslDefs holds SaslHandshake and SaslAuthenticate, which AddSASL puts
// back into a registry that replaced them.
var saslDefs = sync.OnceValue(func() *Registry { return loadBuiltin("defs/Sasl*.json") })

// loadBuiltin files the built-in definitions by the API key and direction
// their files name, unparsed.
func loadBuiltin(pattern string) *Registry {
	r := &Registry{req: map[int16]*defSlot{}, resp: map[int16]*defSlot{}}
	files, _ := fs.Glob(builtinDefs, pattern)
	head := make([]byte, peekLen)
	for _, name := range files {
		f, err := builtinDefs.Open(name)
		n := 0
		if err == nil {
			n, _ = io.ReadFull(f, head)
			f.Close()
		}
		key, ok := peekAPIKey(head[:n])
		if !ok {
			panic(fmt.Sprintf("built-in definition %s: no apiKey in its first %d bytes", name, peekLen)) // a build defect, caught by every test
		}
		m := r.resp
		if strings.HasSuffix(name, "Request.json") {
			m = r.req
		}
		m[key] = &defSlot{name: name}
	}
	return r
}

// peekLen is how far into a built-in definition its apiKey is looked for:
// past the comment that opens each file.
const peekLen = 1024

// peekAPIKey reads a definition's "apiKey" without parsing the rest.
// TestBuiltinSlots checks it against the parse of every built-in file.
func peekAPIKey(src []byte) (int16, bool) {
	i := bytes.Index(src, []byte(`"apiKey"`))
	if i < 0 {
		return 0, false
	}
	b := bytes.TrimLeft(src[i+len(`"apiKey"`):], " \t\r\n")
	if len(b) == 0 || b[0] != ':' {
		return 0, false
	}
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	n, k := 0, 0
	for k < len(b) && k < 5 && b[k] >= '0' && b[k] <= '9' {
		n = n*10 + int(b[k]-'0')
		k++
	}
	return int16(n), k > 0 && n <= int(MaxAPIKey)
}

// AddSASL adds the built-in SaslHandshake (17) and SaslAuthenticate (36)
// definitions, requests and responses, and returns r. The built-in
// registry holds them already; a registry whose --schema-dir replaced them
// gets them back, since the identity of a connection is read from their
// decoded trees.
func (r *Registry) AddSASL() *Registry {
	s := saslDefs()
	for k, d := range s.req {
		r.req[k] = d
	}
	for k, d := range s.resp {
		r.resp[k] = d
	}
	return r
}

// Builtin is the shared registry of the definitions compiled into
// kdissect: every request and response of API keys 0-94 at every version
// Kafka defined (93 and 94 as franz-go's kmsg lays them out). Do not add to it; use NewRegistry for that.
func Builtin() *Registry { return builtin() }

// NewRegistry returns a registry holding the built-in definitions, ready
// for more.
func NewRegistry() *Registry {
	b := builtin()
	r := &Registry{req: make(map[int16]*defSlot, len(b.req)), resp: make(map[int16]*defSlot, len(b.resp))}
	for k, d := range b.req {
		r.req[k] = d
	}
	for k, d := range b.resp {
		r.resp[k] = d
	}
	return r
}

// AddJSON parses a definition in Kafka's JSON message format and adds it,
// replacing any definition of the same API and direction.
func (r *Registry) AddJSON(src []byte) (*Def, error) {
	d, err := parseDef(src)
	if err != nil {
		return nil, err
	}
	r.add(d)
	return d, nil
}

// add adds a parsed definition, replacing any of the same API and
// direction. It is not exported: only ParseDef makes a Def whose fields
// carry their wire kinds.
func (r *Registry) add(d *Def) {
	if d.Request {
		r.req[d.APIKey] = parsedSlot(d)
	} else {
		r.resp[d.APIKey] = parsedSlot(d)
	}
}

// Defs lists the registry's definitions ordered by API key, request first.
func (r *Registry) Defs() []*Def {
	var out []*Def
	for _, d := range r.req {
		out = append(out, d.get())
	}
	for _, d := range r.resp {
		out = append(out, d.get())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].APIKey != out[j].APIKey {
			return out[i].APIKey < out[j].APIKey
		}
		return out[i].Request && !out[j].Request
	})
	return out
}

// isFlexible reports whether version v of key is flexible, trusting a
// loaded definition over the built-in table (which the built-in
// definitions agree with, unparsed or not).
func (r *Registry) isFlexible(key, v int16) bool {
	s := r.req[key]
	if s == nil {
		s = r.resp[key]
	}
	if s == nil || s.builtin() {
		return isFlexibleBuiltin(key, v)
	}
	return s.def.Flexible.Has(v)
}

// RequestHead is what a request frame's first bytes say.
type RequestHead struct {
	Size          int32
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
}

// PeekRequest reads the size prefix and fixed header fields of a request
// frame without building a tree.
func PeekRequest(frame []byte) (RequestHead, bool) {
	if len(frame) < 12 {
		return RequestHead{}, false
	}
	return RequestHead{
		Size:          int32(binary.BigEndian.Uint32(frame)),
		APIKey:        int16(binary.BigEndian.Uint16(frame[4:])),
		APIVersion:    int16(binary.BigEndian.Uint16(frame[6:])),
		CorrelationID: int32(binary.BigEndian.Uint32(frame[8:])),
	}, true
}

// peekCorrelationID reads the correlation id of a response frame.
func peekCorrelationID(frame []byte) (int32, bool) {
	if len(frame) < 8 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(frame[4:])), true
}

// Client ids longer than this are implausible in a request header.
const maxPlausibleClientID = 1024

// plausibleRequest says whether frame (starting at its size prefix; the
// first 14+ bytes suffice) looks like the start of a Kafka request. It is
// the test a capture uses to find frame boundaries after lost bytes:
//   - the size is at least 10 (header v1 without client id bytes) and at
//     most maxSize;
//   - the API key is one Kafka defines;
//   - the version is at most 3 above the newest kdissect knows, so that
//     clients newer than kdissect still sync;
//   - client_id's int16 length is -1 (null) or fits inside the frame, and
//     the bytes of it that are present are printable ASCII.
func plausibleRequest(frame []byte, maxSize int) bool {
	h, ok := PeekRequest(frame)
	if !ok || h.Size < 10 || int64(h.Size) > int64(maxSize) {
		return false
	}
	if h.APIKey < 0 || h.APIKey > MaxAPIKey || h.APIVersion < 0 || h.APIVersion > MaxVersion(h.APIKey)+3 {
		return false
	}
	if requestHeaderVersion(h.APIKey, h.APIVersion, false) == 0 {
		return true
	}
	if len(frame) < 14 {
		return true // the client id is not here yet; everything seen fits
	}
	n := int(int16(binary.BigEndian.Uint16(frame[12:])))
	if n == -1 {
		return true
	}
	if n < 0 || n > maxPlausibleClientID || n > int(h.Size)-10 {
		return false
	}
	id := frame[14:min(len(frame), 14+n)]
	for _, c := range id {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// Decoder decodes frame after frame into the same storage: the message it
// returns, and its tree, are valid only until its next call. It is for hot
// paths that render each message and move on, such as a capture; after a
// few frames it decodes without allocating. Registry.Decode returns
// messages that live on their own.
type Decoder struct {
	r *Registry
	d decoder
}

// NewDecoder returns a reusable decoder over the registry's definitions.
func (r *Registry) NewDecoder() *Decoder {
	x := &Decoder{r: r}
	x.d.reset(nil)
	return x
}

// Decode decodes frame (size prefix included) as o says: a request, a
// response to a request of o.APIKey at o.APIVersion (responses do not
// carry their API key), a raw SASL token, or only the head of a frame
// whose remaining bytes were deliberately not kept (o.Head). The message
// lives until the decoder's next call.
func (x *Decoder) Decode(frame []byte, o Options) *Message {
	x.d.reset(frame)
	x.d.opts = o
	return x.d.decode(x.r, frame, o)
}

// Decode is Decoder.Decode for a message that lives on its own.
func (r *Registry) Decode(frame []byte, o Options) *Message {
	d := newDecoder(frame)
	d.opts = o
	return d.decode(r, frame, o)
}

func (d *decoder) decode(r *Registry, frame []byte, o Options) *Message {
	d.reg = r
	if o.Head {
		d.notKept = 1 // the true count comes from the size prefix
	}
	var m *Message
	switch {
	case o.RawToken:
		m = d.rawToken(o.Direction)
	case o.Direction == Request:
		m = d.request(r)
	default:
		m = d.response(r, o.APIKey, o.APIVersion)
	}
	m.Raw = frame
	return m
}

// HasDefinition says whether the registry can dissect the body of key's
// requests (or responses) at some version.
func (r *Registry) HasDefinition(key int16, request bool) bool {
	if request {
		return r.req[key] != nil
	}
	return r.resp[key] != nil
}
