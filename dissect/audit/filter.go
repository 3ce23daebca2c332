package audit

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Glob reports whether s matches the glob pattern as a whole: * is any run
// of characters (/ included, unlike path.Match: principals such as
// User:kafka/broker@REALM hold slashes), ? is one character, and \ makes
// the next character literal. Matching is case-sensitive, as principals are.
func Glob(pattern, s string) bool {
	// Iterative matching with one backtrack point: linear in practice and
	// never exponential, whatever the pattern.
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		if p < len(pattern) {
			switch c := pattern[p]; c {
			case '*':
				starP, starI = p, i
				p++
				continue
			case '?':
				_, n := utf8.DecodeRuneInString(s[i:])
				p, i = p+1, i+n
				continue
			default:
				lit, n := c, 1
				if c == '\\' && p+1 < len(pattern) {
					lit, n = pattern[p+1], 2
				}
				if lit == s[i] {
					p, i = p+n, i+1
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last * swallow one more character and retry.
		_, n := utf8.DecodeRuneInString(s[starI:])
		starI += n
		p, i = starP+1, starI
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// Who keeps the rows whose connection principal matches the glob pattern
// (see Glob); rows whose principal is unknown never match.
func Who(rows []Row, pattern string) []Row {
	var out []Row
	for _, r := range rows {
		if r.Principal != nil && Glob(pattern, *r.Principal) {
			out = append(out, r)
		}
	}
	return out
}

// Failed keeps the rows the broker refused (result error).
func Failed(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.Failed() {
			out = append(out, r)
		}
	}
	return out
}

// Effect is the net change the rows made to the cluster's ACLs, in capture
// order: only accepted changes (result ok) count, and a binding created and
// later deleted (or deleted and later created again) cancels out. Each row
// returned is the change that decided the binding's fate, with Effect set
// to "added" or "removed"; added bindings come first, each group sorted by
// binding.
func Effect(rows []Row) []Row {
	type state struct {
		row   Row
		added bool
	}
	net := map[string]*state{}
	others := map[string]Row{}
	for _, r := range rows {
		if r.Result != ResultOK || r.ValidateOnly || r.Action == Describe {
			continue
		}
		if r.kind() != KindACL {
			// The other kinds' net change is their last accepted value.
			r.Effect = pastTense(r.Action)
			if r.Action == Replace {
				r.Effect = "set"
			}
			k := targetKey(&r)
			delete(others, k) // to the end: the order of the last change
			others[k] = r
			continue
		}
		if r.Binding == (Binding{}) {
			continue // an inferred creation: which binding is unknown
		}
		k := bindingKey(&r.Binding)
		add := r.Action == Create
		if s := net[k]; s != nil {
			if s.added != add {
				delete(net, k) // undone
			}
			// Repeating a change changes nothing: the first one stands.
			continue
		}
		net[k] = &state{row: r, added: add}
	}
	out := make([]Row, 0, len(net))
	for _, s := range net {
		r := s.row
		r.Effect = "removed"
		if s.added {
			r.Effect = "added"
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Effect != out[j].Effect {
			return out[i].Effect == "added"
		}
		return bindingKey(&out[i].Binding) < bindingKey(&out[j].Binding)
	})
	rest := make([]Row, 0, len(others))
	for _, r := range others {
		rest = append(rest, r)
	}
	order := map[Kind]int{}
	for i, k := range Kinds {
		order[k] = i
	}
	sort.Slice(rest, func(i, j int) bool {
		if a, b := order[rest[i].kind()], order[rest[j].kind()]; a != b {
			return a < b
		}
		return targetKey(&rest[i]) < targetKey(&rest[j])
	})
	return append(out, rest...)
}

// targetKey identifies what a row of another kind than acl changes: a
// user's credential for a mechanism, a token, a quota of an entity, a
// resource's config key.
func targetKey(r *Row) string {
	t := r.Target
	if t == nil {
		return string(r.kind())
	}
	parts := []string{string(r.kind())}
	switch r.kind() {
	case KindSCRAM:
		parts = append(parts, keyOf(t.User), keyOf(t.Mechanism))
	case KindToken:
		if t.TokenID == nil {
			// A token the capture did not see created: each change its own.
			parts = append(parts, "\x00", strconv.Itoa(order(r)))
		} else {
			parts = append(parts, *t.TokenID)
		}
	case KindQuota:
		parts = append(parts, entityKey(t.Entity), keyOf(t.Key))
	case KindConfig:
		parts = append(parts, keyOf(t.ResourceType), keyOf(t.ResourceName), keyOf(t.Key))
	}
	return strings.Join(parts, "\x01")
}

// OfKinds keeps the rows of these kinds.
func OfKinds(rows []Row, kinds []Kind) []Row {
	var out []Row
	for _, r := range rows {
		if contains(kinds, r.kind()) {
			out = append(out, r)
		}
	}
	return out
}

// bindingKey orders and identifies bindings: resource first, then who,
// then what.
func bindingKey(b *Binding) string {
	var sb strings.Builder
	for _, f := range []*string{b.ResourceType, b.ResourceName, b.PatternType, b.Principal, b.Host, b.Operation, b.Permission} {
		if f == nil {
			sb.WriteString("\x00null")
		} else {
			sb.WriteString(*f)
		}
		sb.WriteByte(0)
	}
	return sb.String()
}
