package dissect

// The definitions in defs/ (but the hand-written ACL and SASL ones) and the
// facts in testdata/kafka are written from Kafka's own files by defgen.
//go:generate go run ../internal/testtools/defgen -root ..

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kdissect/kdissect/internal/jsonc"
)

// Versions is an inclusive range of API versions, parsed from Kafka's
// notation: "0+", "1-3", "2", "none".
type Versions struct{ Lo, Hi int16 }

var noVersions = Versions{Lo: 1, Hi: 0}

// parseVersions reads Kafka's version range notation. The empty string is
// "none", as Kafka treats an absent nullableVersions or taggedVersions.
func parseVersions(s string) (Versions, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == "none":
		return noVersions, nil
	case strings.HasSuffix(s, "+"):
		lo, err := parseVersion(s[:len(s)-1])
		return Versions{lo, math.MaxInt16}, err
	}
	if lo, hi, ok := strings.Cut(s, "-"); ok {
		l, err1 := parseVersion(lo)
		h, err2 := parseVersion(hi)
		if err := errors.Join(err1, err2); err != nil {
			return noVersions, err
		}
		if h < l {
			return noVersions, fmt.Errorf("version range %q is empty", s)
		}
		return Versions{l, h}, nil
	}
	v, err := parseVersion(s)
	return Versions{v, v}, err
}

func parseVersion(s string) (int16, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 16)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad version %q", s)
	}
	return int16(v), nil
}

// Has reports whether v is in the range.
func (r Versions) Has(v int16) bool { return r.Lo <= v && v <= r.Hi }

func (r Versions) String() string {
	switch {
	case r.Lo > r.Hi:
		return "none"
	case r.Hi == math.MaxInt16:
		return strconv.Itoa(int(r.Lo)) + "+"
	case r.Lo == r.Hi:
		return strconv.Itoa(int(r.Lo))
	}
	return strconv.Itoa(int(r.Lo)) + "-" + strconv.Itoa(int(r.Hi))
}

// kind is the wire type of a field.
type kind uint8

const (
	kBool kind = iota
	kInt8
	kInt16
	kUint16
	kInt32
	kUint32
	kInt64
	kFloat64
	kUUID
	kString
	kBytes
	kRecords
	kStruct
	kArray
)

var primitives = map[string]kind{
	"bool": kBool, "int8": kInt8, "int16": kInt16, "uint16": kUint16,
	"int32": kInt32, "uint32": kUint32, "int64": kInt64, "float64": kFloat64,
	"uuid": kUUID, "string": kString, "bytes": kBytes, "records": kRecords,
}

// fixedSize is the wire size of fixed-width kinds, 0 for the others.
var fixedSize = [...]int{kBool: 1, kInt8: 1, kInt16: 2, kUint16: 2, kInt32: 4, kUint32: 4,
	kInt64: 8, kFloat64: 8, kUUID: 16}

// Field is one field of a message definition, in the shape of Kafka's
// message JSON.
type Field struct {
	Name     string
	Type     string // as written: int8, string, []AclCreation, AclCreation
	About    string
	Default  string
	Versions Versions
	Nullable Versions
	Tagged   Versions
	Tag      int // -1 when not a tagged field

	// flexible overrides the message's flexible versions for this field
	// alone; the request header's client_id is never compact.
	flexible *Versions
	// label overrides the type shown in the tree.
	label string
	// saslToken marks SaslAuthenticate's AuthBytes: its value is a SASL
	// token, dissected by mechanism and redacted where it holds a secret.
	saslToken bool
	// secret marks a value that is a credential (a SCRAM salt, a token's
	// HMAC): redacted unless the options show secrets.
	secret bool
	// config marks a struct holding a config entry (Name, Value): its
	// value is redacted when the name or the entry says it is sensitive.
	config bool
	// embedded marks bytes that may carry a structure of their own: the
	// consumer protocol of JoinGroup and SyncGroup.
	embedded embedded
	// envelope marks the bytes of an Envelope that carry a forwarded
	// message, the client's principal or its address.
	envelope envelopePart

	kind kind
	// elemNames are the names of an array's first elements, made when
	// the array is first decoded: most arrays of the definitions never
	// are in a run, and their names would only burden the collector.
	elemNames atomic.Pointer[[]string]
	elem      kind     // element kind of an array
	sname     string   // struct (or array element struct) name
	Fields    []*Field // struct fields
	enum      *Enum
}

// Def is one message definition: a request or response of one API, or a
// header.
type Def struct {
	APIKey   int16
	Request  bool
	Name     string // CreateAclsRequest
	Valid    Versions
	Flexible Versions
	Fields   []*Field
}

// jsonField and jsonDef mirror Kafka's message JSON.
type jsonField struct {
	Name             string          `json:"name"`
	Type             string          `json:"type"`
	Versions         string          `json:"versions"`
	NullableVersions string          `json:"nullableVersions"`
	TaggedVersions   string          `json:"taggedVersions"`
	FlexibleVersions *string         `json:"flexibleVersions"`
	Tag              *tagNum         `json:"tag"`
	About            string          `json:"about"`
	Default          json.RawMessage `json:"default"`
	Fields           []jsonField     `json:"fields"`
	// Enum is kdissect's own attribute: the table that names the field's
	// values (see Enums). Kafka keeps these tables in Java, not in JSON.
	Enum string `json:"enum"`
}

// tagNum is a tag number as Kafka's files write it: a number, or in one
// of them (BrokerHeartbeatRequest) a string of digits, which Kafka's
// generator reads all the same.
type tagNum int

func (t *tagNum) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("tag %s is not a number", b)
	}
	*t = tagNum(v)
	return nil
}

type jsonDef struct {
	APIKey           *int         `json:"apiKey"`
	Type             string       `json:"type"`
	Name             string       `json:"name"`
	ValidVersions    string       `json:"validVersions"`
	FlexibleVersions string       `json:"flexibleVersions"`
	Fields           []jsonField  `json:"fields"`
	CommonStructs    []jsonCommon `json:"commonStructs"`
}

type jsonCommon struct {
	Name     string      `json:"name"`
	Versions string      `json:"versions"`
	Fields   []jsonField `json:"fields"`
}

// parseDef reads one message definition in Kafka's JSON format, which
// allows // comments.
func parseDef(src []byte) (*Def, error) {
	jd, ok := scanDef(src)
	if !ok {
		// encoding/json reads what the scanner does not, and says what is
		// wrong with it.
		jd = jsonDef{}
		dec := json.NewDecoder(bytes.NewReader(jsonc.Strip(src)))
		if err := dec.Decode(&jd); err != nil {
			return nil, fmt.Errorf("not a Kafka message definition: %v", err)
		}
	}
	if jd.APIKey == nil {
		return nil, errors.New("definition has no apiKey")
	}
	if *jd.APIKey < 0 || *jd.APIKey > math.MaxInt16 {
		return nil, fmt.Errorf("apiKey %d out of range", *jd.APIKey)
	}
	if jd.Name == "" {
		return nil, errors.New("definition has no name")
	}
	d := &Def{APIKey: int16(*jd.APIKey), Name: jd.Name}
	switch jd.Type {
	case "request":
		d.Request = true
	case "response":
	default:
		return nil, fmt.Errorf("%s: type %q is not request or response", jd.Name, jd.Type)
	}
	var err error
	if strings.TrimSpace(jd.ValidVersions) == "" {
		// Without it nothing would ever be decoded; Kafka requires it too.
		return nil, fmt.Errorf("%s: validVersions is missing", jd.Name)
	}
	if d.Valid, err = parseVersions(jd.ValidVersions); err != nil {
		return nil, fmt.Errorf("%s: validVersions: %v", jd.Name, err)
	}
	if d.Flexible, err = parseVersions(jd.FlexibleVersions); err != nil {
		return nil, fmt.Errorf("%s: flexibleVersions: %v", jd.Name, err)
	}
	common := map[string][]jsonField{}
	for _, cs := range jd.CommonStructs {
		common[cs.Name] = cs.Fields
	}
	b := builder{common: common, seen: map[string]bool{}}
	d.Fields, err = b.fields(jd.Name, jd.Fields)
	if err == nil {
		// Marked by name, like enums, so that a definition loaded with
		// --schema-dir keeps its secrets hidden too.
		markSecrets(d)
		markEmbedded(d)
		markEnvelope(d)
	}
	return d, err
}

type builder struct {
	common map[string][]jsonField
	seen   map[string]bool // common structs being expanded, to refuse cycles
}

func (b *builder) fields(owner string, in []jsonField) ([]*Field, error) {
	out := make([]*Field, 0, len(in))
	for _, jf := range in {
		f, err := b.field(jf)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %v", owner, jf.Name, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func (b *builder) field(jf jsonField) (*Field, error) {
	if jf.Name == "" || jf.Type == "" {
		return nil, errors.New("field needs a name and a type")
	}
	f := &Field{Name: jf.Name, Type: jf.Type, About: jf.About, Tag: -1}
	if strings.TrimSpace(jf.Versions) == "" {
		// A field without versions would silently never be decoded.
		return nil, errors.New("field has no versions")
	}
	var err error
	if f.Versions, err = parseVersions(jf.Versions); err != nil {
		return nil, fmt.Errorf("versions: %v", err)
	}
	if f.Nullable, err = parseVersions(jf.NullableVersions); err != nil {
		return nil, fmt.Errorf("nullableVersions: %v", err)
	}
	if f.Tagged, err = parseVersions(jf.TaggedVersions); err != nil {
		return nil, fmt.Errorf("taggedVersions: %v", err)
	}
	if jf.Tag == nil && jf.TaggedVersions != "" {
		// It would otherwise be decoded as a positional field.
		return nil, errors.New("taggedVersions without a tag")
	}
	if jf.Tag != nil {
		if *jf.Tag < 0 || *jf.Tag > math.MaxInt32 {
			return nil, fmt.Errorf("tag %d out of range", *jf.Tag)
		}
		f.Tag = int(*jf.Tag)
		if jf.TaggedVersions == "" {
			f.Tagged = f.Versions
		}
	}
	if jf.FlexibleVersions != nil {
		v, err := parseVersions(*jf.FlexibleVersions)
		if err != nil {
			return nil, err
		}
		f.flexible = &v
	}
	if len(jf.Default) > 0 {
		var s string
		if json.Unmarshal(jf.Default, &s) != nil {
			s = string(jf.Default)
		}
		f.Default = s
	}
	if _, prim := primitives[strings.TrimPrefix(jf.Type, "[]")]; jf.Enum != "" && !prim {
		return nil, fmt.Errorf("enum %q on a field of type %s: enums name int8, int16 or int32 values", jf.Enum, jf.Type)
	}
	typ := jf.Type
	if strings.HasPrefix(typ, "[]") {
		f.kind = kArray
		typ = typ[2:]
		if k, ok := primitives[typ]; ok {
			f.elem = k
			// An array of integers names its elements' values, as
			// ShareAcknowledge's AcknowledgeTypes.
			f.enum, err = enumFor(jf, k)
			return f, err
		}
		f.elem = kStruct
	} else if k, ok := primitives[typ]; ok {
		f.kind = k
		f.enum, err = enumFor(jf, k)
		return f, err
	} else {
		f.kind = kStruct
	}
	f.sname = typ
	sub := jf.Fields
	if len(sub) == 0 {
		cs, ok := b.common[typ]
		if !ok {
			return nil, fmt.Errorf("unknown type %q", jf.Type)
		}
		if b.seen[typ] {
			return nil, fmt.Errorf("struct %q contains itself", typ)
		}
		b.seen[typ] = true
		defer delete(b.seen, typ)
		sub = cs
	}
	f.Fields, err = b.fields(typ, sub)
	return f, err
}

// indexNames are the names of the first elements of an array: a decode
// names elements without formatting for every array that is not huge.
// Arrays of one element type share them: the definitions hold hundreds of
// arrays of a few dozen names.
func indexNames(prefix string) []string {
	indexNamesMu.Lock()
	defer indexNamesMu.Unlock()
	if out, ok := indexNamesOf[prefix]; ok {
		return out
	}
	out := make([]string, 32)
	for i := range out {
		out[i] = prefix + "[" + strconv.Itoa(i) + "]"
	}
	indexNamesOf[prefix] = out
	return out
}

var (
	indexNamesMu sync.Mutex
	indexNamesOf = map[string][]string{}
)

// elemNamePrefix is what array f's elements are named after: their
// struct, or the field itself for an array of primitives.
func (f *Field) elemNamePrefix() string {
	if f.elem == kStruct {
		return f.sname
	}
	return f.Name
}

// names returns the names of array f's first elements.
func (f *Field) names() []string {
	if p := f.elemNames.Load(); p != nil {
		return *p
	}
	names := indexNames(f.elemNamePrefix())
	f.elemNames.Store(&names)
	return names
}

// elemName names element i of an array whose first names are names.
func (f *Field) elemName(names []string, i int64) string {
	if i < int64(len(names)) {
		return names[i]
	}
	return f.elemNamePrefix() + "[" + strconv.FormatInt(i, 10) + "]"
}

// scanDef reads a definition the quick way, for the ~190 embedded ones a
// process parses at start-up: a scanner that knows the shape of a
// definition reads it in a third of encoding/json's time. It reports false
// for anything but that plain shape (a value of another type, a key that
// differs from one it knows only in case), which encoding/json then reads
// as it would have: both give the same jsonDef (FuzzScanDef).
func scanDef(src []byte) (jd jsonDef, ok bool) {
	s := defScanner{b: src}
	ok = s.object(func(key string) bool {
		switch key {
		case "apiKey":
			return s.intPtr(&jd.APIKey)
		case "type":
			return s.str(&jd.Type)
		case "name":
			return s.str(&jd.Name)
		case "validVersions":
			return s.str(&jd.ValidVersions)
		case "flexibleVersions":
			return s.str(&jd.FlexibleVersions)
		case "fields":
			return s.fields(&jd.Fields)
		case "commonStructs":
			jd.CommonStructs = nil
			n, null, ok := s.array(func() bool {
				jd.CommonStructs = append(jd.CommonStructs, jsonCommon{})
				c := &jd.CommonStructs[len(jd.CommonStructs)-1]
				return s.object(func(key string) bool {
					switch key {
					case "name":
						return s.str(&c.Name)
					case "versions":
						return s.str(&c.Versions)
					case "fields":
						return s.fields(&c.Fields)
					}
					return s.other(key, "name", "versions", "fields")
				})
			})
			if ok && !null && n == 0 {
				jd.CommonStructs = jd.CommonStructs[:0:0]
			}
			return ok
		}
		return s.other(key, "apiKey", "type", "name", "validVersions", "flexibleVersions", "fields", "commonStructs")
	})
	return jd, ok
}

// defScanner reads JSON with // comments, as far as definitions use it.
type defScanner struct {
	b []byte
	i int
}

// ws skips white space and comments.
func (s *defScanner) ws() {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			s.i++
		case c == '/' && s.i+1 < len(s.b) && s.b[s.i+1] == '/':
			for s.i < len(s.b) && s.b[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

func (s *defScanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// null consumes a null; JSON's null leaves a string as it was and makes a
// pointer or slice nil.
func (s *defScanner) null() bool {
	if s.peek() == 'n' && bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// object reads {"key": value, ...}, calling val for each key with the
// scanner at its value.
func (s *defScanner) object(val func(key string) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		var key string
		if s.peek() != '"' || !s.str(&key) || s.peek() != ':' {
			return false
		}
		s.i++
		if !val(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array reads [elem, ...] or null, and says how many elements it read.
func (s *defScanner) array(elem func() bool) (n int, null, ok bool) {
	if s.null() {
		return 0, true, true
	}
	if s.peek() != '[' {
		return 0, false, false
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return 0, false, true
	}
	for {
		if !elem() {
			return n, false, false
		}
		n++
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return n, false, true
		default:
			return n, false, false
		}
	}
}

// fields reads an array of fields as encoding/json does: null makes it
// nil, [] empty but not nil.
func (s *defScanner) fields(out *[]jsonField) bool {
	*out = nil
	n, null, ok := s.array(func() bool {
		*out = append(*out, jsonField{})
		return s.field(&(*out)[len(*out)-1])
	})
	if ok && !null && n == 0 {
		*out = []jsonField{}
	}
	return ok
}

func (s *defScanner) field(f *jsonField) bool {
	return s.object(func(key string) bool {
		switch key {
		case "name":
			return s.str(&f.Name)
		case "type":
			return s.str(&f.Type)
		case "versions":
			return s.str(&f.Versions)
		case "nullableVersions":
			return s.str(&f.NullableVersions)
		case "taggedVersions":
			return s.str(&f.TaggedVersions)
		case "about":
			return s.str(&f.About)
		case "enum":
			return s.str(&f.Enum)
		case "flexibleVersions":
			if s.null() {
				f.FlexibleVersions = nil
				return true
			}
			var v string
			if !s.str(&v) {
				return false
			}
			f.FlexibleVersions = &v
			return true
		case "tag":
			if s.null() {
				f.Tag = nil
				return true
			}
			start := s.i
			if s.peek() == '"' {
				var v string
				if !s.str(&v) {
					return false
				}
			} else if _, ok := s.number(); !ok {
				return false
			}
			t := new(tagNum)
			if t.UnmarshalJSON(s.b[start:s.i]) != nil {
				return false
			}
			f.Tag = t
			return true
		case "default":
			s.ws()
			start := s.i
			if !s.skip() {
				return false
			}
			f.Default = json.RawMessage(s.b[start:s.i:s.i])
			return true
		case "fields":
			return s.fields(&f.Fields)
		}
		return s.other(key, "name", "type", "versions", "nullableVersions", "taggedVersions", "about",
			"enum", "flexibleVersions", "tag", "default", "fields")
	})
}

// other skips the value of a key the scanner does not read, unless it
// is one of known but for case: encoding/json would read it as that key.
func (s *defScanner) other(key string, known ...string) bool {
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return false
		}
	}
	return s.skip()
}

// str reads a string into out (a null leaves it); text with escapes or
// bytes beyond ASCII is decoded by encoding/json, which also replaces
// invalid UTF-8 as it does everywhere else.
func (s *defScanner) str(out *string) bool {
	if s.null() {
		return true
	}
	if s.peek() != '"' {
		return false
	}
	start := s.i
	s.i++
	plain := true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			if plain {
				*out = string(s.b[start+1 : s.i-1])
				return true
			}
			return json.Unmarshal(s.b[start:s.i], out) == nil
		case c == '\\':
			plain = false
			s.i++
		case c < 0x20:
			return false
		case c >= 0x80:
			plain = false
		}
	}
	return false
}

// number reads an integer: the only numbers a definition holds.
func (s *defScanner) number() (int, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	t := string(s.b[start:s.i])
	if t == "-0" || len(t) > 1 && (t[0] == '0' || strings.HasPrefix(t, "-0")) {
		return 0, false // JSON forbids leading zeros; let encoding/json say so
	}
	v, err := strconv.Atoi(t)
	return v, err == nil
}

func (s *defScanner) intPtr(out **int) bool {
	if s.null() {
		*out = nil
		return true
	}
	v, ok := s.number()
	if ok {
		*out = &v
	}
	return ok
}

// skip passes over one value of any kind.
func (s *defScanner) skip() bool {
	switch c := s.peek(); {
	case c == '"':
		var v string
		return s.str(&v)
	case c == '{':
		return s.object(func(string) bool { return s.skip() })
	case c == '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			return true
		}
		for {
			if !s.skip() {
				return false
			}
			switch s.peek() {
			case ',':
				s.i++
			case ']':
				s.i++
				return true
			default:
				return false
			}
		}
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
				s.i += len(lit)
				return true
			}
		}
		return false
	case c == '-' || c >= '0' && c <= '9':
		_, ok := s.number()
		return ok
	}
	return false
}
