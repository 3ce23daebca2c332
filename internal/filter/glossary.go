package filter

import (
	"sort"
	"strings"

	"github.com/kdissect/kdissect/dissect"
)

// Field is one name a filter, a -T fields column or the explorer's filter
// bar takes, as tshark -G fields lists its own.
type Field struct {
	Name string
	// Types are what it holds: int, float, bool, string, bytes, time,
	// address, struct (an array of structs counts its elements), joined
	// by |.
	Types string
	// Source is "kdissect" (a key of the NDJSON lines), "wireshark" (a
	// name of Wireshark's) or "kafka" (a field of Kafka's definitions, or
	// of the trees kdissect adds: SASL tokens, record batches).
	Source string
	// StandsFor is, for a Wireshark name, the fields it means.
	StandsFor string
}

// Glossary lists every field name of reg's messages, sorted by name.
func Glossary(reg *dissect.Registry) []Field {
	s := messageSchema(reg)
	var out []Field
	for name, rf := range s.fields {
		src := "kdissect"
		if rf.of != nil || name == "kafka" { // derived from kdissect's, as Wireshark names them
			src = "wireshark"
		}
		f := Field{Name: name, Types: typeWords(rf.types), Source: src}
		for _, b := range rf.of {
			f.StandsFor = join(f.StandsFor, b.name)
		}
		out = append(out, f)
	}
	for ws, own := range wiresharkNames {
		if rf := s.fields[own]; rf != nil {
			out = append(out, Field{Name: ws, Types: typeWords(rf.types), Source: "wireshark", StandsFor: own})
		} else {
			out = append(out, Field{Name: ws, Types: typeWords(s.body[own]), Source: "wireshark", StandsFor: own})
		}
	}
	for ws, a := range wiresharkBodyNames {
		f := Field{Name: ws, Source: "wireshark", Types: typeWords(a.types(s))}
		for _, m := range a.fields {
			f.StandsFor = join(f.StandsFor, m.name)
		}
		out = append(out, f)
	}
	for name, ty := range s.body {
		if s.fields[name] == nil {
			out = append(out, Field{Name: name, Types: typeWords(ty), Source: "kafka"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	if strings.Contains(", "+a+", ", ", "+b+", ") {
		return a
	}
	return a + ", " + b
}

func typeWords(t types) string {
	var w []string
	for _, d := range []struct {
		t    types
		name string
	}{{tyInt, "int"}, {tyFloat, "float"}, {tyBool, "bool"}, {tyString, "string"}, {tyBytes, "bytes"},
		{tyTime, "time"}, {tyAddr, "address"}, {tyStruct, "struct"}} {
		if t&d.t != 0 {
			w = append(w, d.name)
		}
	}
	return strings.Join(w, "|")
}

// AppendGlossary appends tshark -G fields' form of Glossary(reg): a line
// a name, tab-separated: F, the name, its types, its source and what a
// Wireshark name stands for.
func AppendGlossary(b []byte, reg *dissect.Registry) []byte {
	for _, f := range Glossary(reg) {
		b = append(b, "F\t"...)
		b = append(b, f.Name...)
		b = append(b, '\t')
		b = append(b, f.Types...)
		b = append(b, '\t')
		b = append(b, f.Source...)
		b = append(b, '\t')
		b = append(b, f.StandsFor...)
		b = append(b, '\n')
	}
	return b
}
