package filter

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"sort"
	"sync"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/dissect/audit"
)

// rowTypes are the audit's NDJSON keys (binding flattened with dots) whose
// type the filter knows; a key the rows write that is not here is
// compared by what its values are.
var rowTypes = map[string]types{
	"kind": tyString, "time": tyTime, "client": tyAddr, "broker": tyAddr, "principal": tyString,
	"client_id": tyString, "action": tyString, "api_version": tyInt, "correlation_id": tyInt,
	"binding.resource_type": tyString, "binding.resource_name": tyString, "binding.pattern_type": tyString,
	"binding.principal": tyString, "binding.host": tyString, "binding.operation": tyString,
	"binding.permission": tyString, "result": tyString, "error_code": tyInt, "error_name": tyString,
	"error_message": tyString, "filter_index": tyInt, "latency_us": tyInt, "request_index": tyInt,
	"response_index": tyInt, "effect": tyString, "inferred": tyBool, "validate_only": tyBool,
	"forwarded_by.broker": tyAddr, "forwarded_by.principal": tyString,
	"client_software.name": tyString, "client_software.version": tyString,
}

// rowFlags are written only when true.
var rowFlags = []string{"inferred", "validate_only"}

var rowSchema = sync.OnceValue(func() *schema {
	s := &schema{fields: map[string]*recordField{}, wild: []string{"target."}}
	add := func(name string, t types) {
		if s.fields[name] == nil {
			s.fields[name] = &recordField{name: name, id: fRow, types: t}
		}
	}
	for name, t := range rowTypes {
		add(name, t)
		if t == tyBool {
			s.fields[name].flag = true
		}
	}
	s.fields["error_code"].names = errorCodeByName
	s.fields["error_code"].suggest = errorNames
	// Whatever else a row says: keys added to the rows are filterable
	// without a change here.
	for name := range flatten(rowJSON(&audit.Row{})) {
		add(name, tyAny)
	}
	return s
})

var errorNames = sync.OnceValue(func() []string {
	var out []string
	for v := int64(-1); v < 4096; v++ {
		if n, ok := errorCodes.Lookup(v); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
})

func errorCodeByName(s string) (int64, bool) {
	for v := int64(-1); v < 4096; v++ {
		if n, ok := errorCodes.Lookup(v); ok && n == s {
			return v, true
		}
	}
	return 0, false
}

// rowJSON is a row as kdissect audit --format json writes it.
func rowJSON(r *audit.Row) map[string]any {
	var buf bytes.Buffer
	if err := audit.WriteJSON(&buf, []audit.Row{*r}); err != nil {
		return nil
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	return m
}

// flatten names every value of an object by its dotted path; the
// elements of an array are occurrences of the same name.
func flatten(m map[string]any) map[string][]any {
	out := map[string][]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(prefix+k+".", x)
			}
			if len(v) == 0 && prefix != "" {
				out[prefix[:len(prefix)-1]] = nil
			}
		case []any:
			for _, x := range v {
				walk(prefix, x)
			}
		default:
			name := prefix[:len(prefix)-1]
			out[name] = append(out[name], v)
		}
	}
	walk("", m)
	return out
}

// rowValues are a row's occurrences by key: its NDJSON, read back with
// the types the filter gives its keys. Rows are few (one per change), so
// reading their JSON costs little and keeps the filter's names the
// output's.
func rowValues(r *audit.Row) map[string][]Value {
	out := map[string][]Value{}
	for name, vs := range flatten(rowJSON(r)) {
		t := rowTypes[name]
		for _, v := range vs {
			if x, ok := jsonValue(name, v, t); ok {
				out[name] = append(out[name], x)
			}
		}
	}
	if _, ok := out["kind"]; !ok {
		out["kind"] = []Value{String("acl")} // rows before kinds were all ACL changes
	}
	for _, f := range rowFlags {
		if _, ok := out[f]; !ok {
			out[f] = []Value{Bool(false)}
		}
	}
	return out
}

func jsonValue(key string, v any, t types) (Value, bool) {
	switch v := v.(type) {
	case nil:
		return Value{}, false
	case bool:
		return Bool(v), true
	case json.Number:
		if n, err := v.Int64(); err == nil {
			name := ""
			if key == "error_code" {
				name, _ = errorCodes.Lookup(n)
			}
			return Int(n, name), true
		}
		f, err := v.Float64()
		return Value{Kind: KindFloat, Float: f}, err == nil
	case string:
		switch t {
		case tyTime:
			if tm, ok := parseTime(v); ok {
				return Time(tm), true
			}
		case tyAddr:
			if ap, err := netip.ParseAddrPort(v); err == nil {
				return Addr(ap), true
			}
		}
		return String(v), true
	}
	return Value{}, false
}

// errorCodes is Kafka's table of error names.
var errorCodes = dissect.EnumNamed("ErrorCode")
