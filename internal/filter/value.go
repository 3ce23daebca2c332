package filter

import (
	"net/netip"
	"strconv"
	"time"
)

// Kind is the type of a field's value.
type Kind uint8

const (
	KindNull   Kind = iota // present, without a value (a null string, a cut field, a secret)
	KindInt                // Int; Str may name it (an enum's or an API's name)
	KindFloat              // Float
	KindBool               // Int is 0 or 1
	KindString             // Str
	KindBytes              // Bytes
	KindTime               // Int: nanoseconds since the Unix epoch
	KindAddr               // Addr
)

// Value is one occurrence of a field.
type Value struct {
	Kind  Kind
	Int   int64
	Float float64
	Str   string
	Bytes []byte
	Addr  netip.AddrPort
}

// Int is an integer occurrence; name, when not "", is what it stands for
// (an enum's name), compared with a string literal.
func Int(v int64, name string) Value { return Value{Kind: KindInt, Int: v, Str: name} }

// String is a text occurrence.
func String(s string) Value { return Value{Kind: KindString, Str: s} }

// Bool is a boolean occurrence.
func Bool(b bool) Value {
	if b {
		return Value{Kind: KindBool, Int: 1}
	}
	return Value{Kind: KindBool}
}

// Time is a time occurrence.
func Time(t time.Time) Value { return Value{Kind: KindTime, Int: t.UnixNano()} }

// Addr is an address occurrence.
func Addr(a netip.AddrPort) Value { return Value{Kind: KindAddr, Addr: a} }

// text is the value as contains and matches read it: a number's name when
// it has one, else its digits; an address as NDJSON writes it; a time in
// RFC 3339.
func (v *Value) text() string {
	switch v.Kind {
	case KindInt:
		if v.Str != "" {
			return v.Str
		}
		return strconv.FormatInt(v.Int, 10)
	case KindFloat:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case KindBool:
		return strconv.FormatBool(v.Int != 0)
	case KindString:
		return v.Str
	case KindBytes:
		return string(v.Bytes)
	case KindTime:
		return time.Unix(0, v.Int).UTC().Format(time.RFC3339Nano)
	case KindAddr:
		if v.Addr.Port() == 0 {
			return v.Addr.Addr().String() // an Envelope's client address has no port
		}
		return v.Addr.String()
	}
	return ""
}

// types is a set of kinds a field can have; a name that is a string in one
// definition and a number in another has both.
type types uint16

const (
	tyInt types = 1 << iota
	tyFloat
	tyBool
	tyString
	tyBytes
	tyTime
	tyAddr
	tyStruct // a struct: only its presence can be tested
	tyAny    = tyInt | tyFloat | tyBool | tyString
)

func (t types) has(u types) bool { return t&u != 0 }

// describe names the types for a message: "a number", "a string or a number".
func (t types) describe() string {
	var parts []string
	for _, d := range []struct {
		t    types
		name string
	}{{tyInt, "a number"}, {tyFloat, "a decimal number"}, {tyBool, "true or false"}, {tyString, "a string"},
		{tyBytes, "bytes"}, {tyTime, "a time"}, {tyAddr, "an address"}, {tyStruct, "a structure"}} {
		if t&d.t != 0 {
			parts = append(parts, d.name)
		}
	}
	switch len(parts) {
	case 0:
		return "a value"
	case 1:
		return parts[0]
	}
	s := parts[0]
	for _, p := range parts[1 : len(parts)-1] {
		s += ", " + p
	}
	return s + " or " + parts[len(parts)-1]
}
