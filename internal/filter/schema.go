package filter

import (
	"sort"
	"strings"
	"sync"

	"github.com/kdissect/kdissect/dissect"
)

// schema is what a filter can name: the record fields, and for messages
// the body fields of the definitions it decodes with.
type schema struct {
	fields map[string]*recordField
	// body holds every field name of the definitions, at any depth, with
	// the types it has; nil for audit rows.
	body map[string]types
	defs []*dissect.Def
	// wild are prefixes below which any key is a field (an audit row's
	// target, whose keys depend on its kind).
	wild  []string
	paths func() []string // every dotted path, for suggestions
}

// saslParts are the fields kdissect's SASL dissection adds inside a
// token (SaslAuthenticate's AuthBytes, a raw token): they are in the
// tree, not in Kafka's definitions.
var saslParts = map[string]types{
	"authzid": tyString, "authcid": tyString, "password": tyString, "gs2_header": tyString,
	"username": tyString, "nonce": tyString, "salt": tyString, "iterations": tyInt | tyString,
	"channel_binding": tyString, "proof": tyString, "verifier": tyString, "error": tyString,
	"mandatory_extension": tyString, "tokenauth": tyString, "scheme": tyString, "auth": tyString,
	"token": tyString | tyBytes, "sub": tyString,
}

// recordParts are the fields of the record batches kdissect decodes inside
// a records field (Produce, Fetch), and a tagged field's tag: tree names,
// not definitions'.
// length and version are the events' here.
var recordParts = map[string]types{
	"base_offset": tyInt, "batch_length": tyInt, "partition_leader_epoch": tyInt, "magic": tyInt,
	"crc": tyInt, "attributes": tyInt, "last_offset_delta": tyInt, "base_timestamp": tyInt,
	"max_timestamp": tyInt, "producer_id": tyInt, "producer_epoch": tyInt, "base_sequence": tyInt,
	"record_count": tyInt, "timestamp_delta": tyInt, "offset_delta": tyInt, "key": tyBytes | tyString,
	"value": tyBytes | tyString, "headers": tyInt, "coordinator_epoch": tyInt, "message_size": tyInt,
	"offset": tyInt, "timestamp": tyInt,
	"tag": tyInt, // a tagged field's, known or not
}

var schemas sync.Map // *dissect.Registry → *schema

// messageSchema is the schema of reg's messages, built once per registry.
func messageSchema(reg *dissect.Registry) *schema {
	if s, ok := schemas.Load(reg); ok {
		return s.(*schema)
	}
	s := &schema{fields: messageFields, body: map[string]types{}, defs: reg.Defs()}
	for _, parts := range []map[string]types{saslParts, recordParts} {
		for n, t := range parts {
			s.body[n] = t
		}
	}
	var walk func(fs []*dissect.Field)
	walk = func(fs []*dissect.Field) {
		for _, f := range fs {
			s.body[f.Name] |= fieldTypes(f)
			walk(f.Fields)
		}
	}
	for _, d := range s.defs {
		walk(d.Fields)
	}
	s.paths = sync.OnceValue(func() []string {
		seen := map[string]bool{}
		var walk func(prefix string, fs []*dissect.Field)
		walk = func(prefix string, fs []*dissect.Field) {
			for _, f := range fs {
				p := prefix + f.Name
				seen[p] = true
				walk(p+".", f.Fields)
			}
		}
		for _, d := range s.defs {
			walk("", d.Fields)
		}
		out := make([]string, 0, len(seen))
		for p := range seen {
			out = append(out, p)
		}
		sort.Strings(out)
		return out
	})
	actual, _ := schemas.LoadOrStore(reg, s)
	return actual.(*schema)
}

// fieldTypes is what a definition's field holds as a filter sees it: an
// array of numbers or strings its elements, an array of structs its
// length.
func fieldTypes(f *dissect.Field) types {
	if t, ok := primitiveTypes[strings.TrimPrefix(f.Type, "[]")]; ok {
		return t
	}
	if strings.HasPrefix(f.Type, "[]") {
		return tyInt
	}
	return tyStruct
}

// pathTypes is the types of a dotted path from a body, and whether some
// definition has it.
func (s *schema) pathTypes(path []string) (types, bool) {
	var t types
	found := false
	for _, d := range s.defs {
		if u, ok := fieldsPath(d.Fields, path); ok {
			t |= u
			found = true
		}
	}
	return t, found
}

func fieldsPath(fs []*dissect.Field, path []string) (types, bool) {
	var t types
	found := false
	for _, f := range fs {
		if f.Name != path[0] {
			continue
		}
		if len(path) == 1 {
			t |= fieldTypes(f)
			found = true
		} else if u, ok := fieldsPath(f.Fields, path[1:]); ok {
			t |= u
			found = true
		}
	}
	return t, found
}

// field is a field a filter names, resolved.
type field struct {
	name  string
	rec   *recordField // a field of the record; nil for a body field
	path  []string     // a body field: its name, or its path from the body
	alias *bodyAlias   // or a Wireshark name of body fields
	types types
}

func (f *field) flag() bool { return f.rec != nil && f.rec.flag }

// resolve finds the field a word names.
func (s *schema) resolve(t token) (*field, error) {
	name := t.text
	if !isName(name) {
		return nil, errorf(t.col, "%s is not a field name; a test starts with one", show(t))
	}
	typed := name // what errors call it
	if s.body != nil {
		if n, ok := wiresharkNames[name]; ok {
			name = n
		}
		if a := wiresharkBodyNames[name]; a != nil {
			return &field{name: typed, alias: a, types: a.types(s)}, nil
		}
	}
	if rf := s.fields[name]; rf != nil {
		return &field{name: typed, rec: rf, types: rf.types}, nil
	}
	for _, p := range s.wild {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return &field{name: name, rec: &recordField{name: name, id: fRow, types: tyAny}, types: tyAny}, nil
		}
	}
	if s.body != nil {
		if !strings.Contains(name, ".") {
			if ty, ok := s.body[name]; ok {
				return &field{name: typed, path: []string{name}, types: ty}, nil
			}
		} else {
			path := strings.Split(name, ".")
			if ty, ok := s.pathTypes(path); ok {
				return &field{name: name, path: path, types: ty}, nil
			}
		}
	}
	e := errorf(t.col, "unknown field %q", name)
	if best := s.suggest(name); best != "" {
		e.Hint = "did you mean " + quote(best) + "?"
	} else if s.body != nil && strings.HasPrefix(name, "kafka.") {
		e.Hint = "kdissect knows Wireshark's kafka.* names of the fields it can match exactly (kafka.topic_name, kafka.partition_id, kafka.acl_principal, ...); for the others use Kafka's (Offset, CommittedOffset, FetchOffset)"
	}
	return nil, e
}

// isName: letters, digits and _, in parts joined by dots, not starting
// with a digit.
func isName(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if part == "" || part[0] >= '0' && part[0] <= '9' {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				return false
			}
		}
	}
	return true
}

// isField reports whether a word names a field, for a value that does.
func (s *schema) isField(name string) bool {
	if !isName(name) {
		return false
	}
	if s.fields[name] != nil {
		return true
	}
	if s.body != nil && !strings.Contains(name, ".") {
		_, ok := s.body[name]
		return ok
	}
	return false
}

// suggest is the known name closest to name, or "".
func (s *schema) suggest(name string) string {
	var cands []string
	for n := range s.fields {
		cands = append(cands, n)
	}
	for n := range s.body {
		cands = append(cands, n)
	}
	if strings.Contains(name, ".") {
		if s.paths != nil {
			cands = append(cands, s.paths()...)
		}
		for _, p := range s.wild {
			cands = append(cands, p+"…")
		}
	}
	return closest(name, cands)
}

// closest is the candidate nearest to s: fewest edits ignoring case, then
// fewest edits, then first in order; "" when even that is too far to be a
// typo.
func closest(s string, cands []string) string {
	sort.Strings(cands)
	best, bestCI, bestCS := "", 1<<30, 1<<30
	ls := strings.ToLower(s)
	for _, c := range cands {
		ci := distance(ls, strings.ToLower(c))
		if ci > bestCI {
			continue
		}
		cs := distance(s, c)
		if ci < bestCI || cs < bestCS {
			best, bestCI, bestCS = c, ci, cs
		}
	}
	if bestCI > max(1, len([]rune(s))/3) {
		return ""
	}
	return best
}

// distance is the number of single-character insertions, deletions,
// substitutions and transpositions that turn a into b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// enumNames holds every name of every enum table: a body field's table
// is the decoder's to choose, so a name is checked against them all
// (WRTIE is no value of any field; WRITE may be).
var enumNames = sync.OnceValue(func() []string {
	seen := map[string]bool{}
	for _, e := range dissect.EnumTables() {
		for v := e.First(); v < e.First()+4096; v++ {
			if n, ok := e.Lookup(v); ok {
				seen[n] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
})

func isEnumName(s string) bool {
	names := enumNames()
	i := sort.SearchStrings(names, s)
	return i < len(names) && names[i] == s
}
