package main

import (
	"bytes"
	"fmt"
	"strings"
)

// merge makes one definition that covers the versions of both layers:
// cur (Kafka's current file) decides every version it defines, old (a
// file from before Kafka 4.0 dropped versions) the versions only it has.
// Kafka drops a field together with the last version that used it, so the
// old file's fields that cur no longer has come back, limited to the old
// versions, at their old place.
func merge(cur, old *def) (*def, error) {
	switch {
	case cur == nil || parseRange(cur.Valid).empty():
		return cloneDef(old), nil
	case old == nil || parseRange(old.Valid).empty():
		return cloneDef(cur), nil
	}
	cv, ov := parseRange(cur.Valid), parseRange(old.Valid)
	if ov.lo > cv.hi+1 || cv.lo > ov.hi+1 {
		return nil, fmt.Errorf("%s: versions %s and %s leave a gap", cur.Name, cv, ov)
	}
	if parseRange(cur.Flexible) != parseRange(old.Flexible) {
		return nil, fmt.Errorf("%s: flexible versions %s now, %s before", cur.Name, cur.Flexible, old.Flexible)
	}
	union := vrange{min(cv.lo, ov.lo), max(cv.hi, ov.hi)}
	oldOnly := map[int]bool{}
	for v := ov.lo; v <= ov.hi; v++ {
		if !cv.has(v) {
			oldOnly[v] = true
		}
	}
	out := cloneDef(cur)
	out.Valid = union.String()
	if len(oldOnly) == 0 {
		return out, nil
	}
	m := merger{cur: cv, oldOnly: oldOnly, max: union.hi, name: cur.Name}
	var err error
	if out.Fields, err = m.fields(out.Fields, old.Fields, cur.Name); err != nil {
		return nil, err
	}
	for _, oc := range old.Common {
		found := false
		for _, c := range out.Common {
			if c.Name == oc.Name {
				found = true
				if c.Fields, err = m.fields(c.Fields, oc.Fields, cur.Name+":"+c.Name); err != nil {
					return nil, err
				}
			}
		}
		if !found {
			c := *oc
			c.Fields = cloneFields(oc.Fields)
			out.Common = append(out.Common, &c)
		}
	}
	return out, nil
}

func cloneDef(d *def) *def {
	c := *d
	c.Fields = cloneFields(d.Fields)
	c.Common = nil
	for _, cs := range d.Common {
		n := *cs
		n.Fields = cloneFields(cs.Fields)
		c.Common = append(c.Common, &n)
	}
	return &c
}

type merger struct {
	cur     vrange
	oldOnly map[int]bool
	max     int
	name    string
}

// fields merges the old fields of one struct into the current ones.
func (m *merger) fields(cur, old []*field, path string) ([]*field, error) {
	out := cur
	pos := -1 // where the next old field without a current one goes
	for _, o := range old {
		j := -1
		for i, n := range out {
			if n.Name == o.Name {
				j = i
			}
		}
		if j < 0 {
			c, ok := m.clip(o)
			if !ok {
				continue // renamed or dropped in versions the current file decides
			}
			out = append(out[:pos+1], append([]*field{c}, out[pos+1:]...)...)
			pos++
			continue
		}
		if err := m.reconcile(out[j], o, path+"."+o.Name); err != nil {
			return nil, err
		}
		pos = j
	}
	return out, nil
}

// clip limits an old field to the versions only the old file decides.
func (m *merger) clip(o *field) (*field, bool) {
	r := parseRange(o.Versions)
	set := map[int]bool{}
	for v := range m.oldOnly {
		if r.has(v) {
			set[v] = true
		}
	}
	nr, err := rangeOf(set, m.max, false)
	if err != nil || nr.empty() {
		return nil, false
	}
	c := *o
	c.Fields = cloneFields(o.Fields)
	if nr != r {
		c.Versions = nr.String()
	}
	return &c, true
}

// reconcile makes n, the current field, also say what o says in the old
// versions: present, nullable and tagged where o is.
func (m *merger) reconcile(n, o *field, path string) error {
	if n.Type != o.Type {
		return fmt.Errorf("%s: type %s now, %s before", path, n.Type, o.Type)
	}
	if !bytes.Equal(n.Default, o.Default) && len(o.Default) > 0 {
		// Defaults are not on the wire; the current one is kept.
		warnf("%s: default %s now, %s before (kept %s)", path, n.Default, o.Default, n.Default)
	}
	nv, ov := parseRange(n.Versions), parseRange(o.Versions)
	present := func(v int) bool {
		if m.oldOnly[v] {
			return ov.has(v)
		}
		return nv.has(v)
	}
	if s, changed, err := m.adjust(n.Versions, func(int) bool { return true }, present); err != nil {
		return fmt.Errorf("%s: versions: %v", path, err)
	} else if changed {
		n.Versions = s
	}
	nullOld := parseRange(o.Nullable)
	if s, changed, err := m.adjust(n.Nullable, present, func(v int) bool {
		if m.oldOnly[v] {
			return nullOld.has(v)
		}
		return parseRange(n.Nullable).has(v)
	}); err != nil {
		return fmt.Errorf("%s: nullableVersions: %v", path, err)
	} else if changed {
		n.Nullable = s
	}
	tn, to := taggedRange(n), taggedRange(o)
	for v := range m.oldOnly {
		if ov.has(v) && to.has(v) != tn.has(v) {
			return fmt.Errorf("%s: tagged in v%d differs", path, v)
		}
		if ov.has(v) && to.has(v) && *n.Tag != *o.Tag {
			return fmt.Errorf("%s: tag %d now, %d before", path, *n.Tag, *o.Tag)
		}
	}
	switch {
	case len(n.Fields) > 0 && len(o.Fields) > 0:
		var err error
		n.Fields, err = m.fields(n.Fields, o.Fields, path)
		return err
	case len(n.Fields) > 0 || len(o.Fields) > 0:
		if strings.HasPrefix(n.Type, "[]") || !isPrimitive(n.Type) {
			return fmt.Errorf("%s: fields inline in one file, a common struct in the other", path)
		}
	}
	return nil
}

// adjust returns the range string for the versions where want holds,
// among the versions where care holds; changed is false when cur already
// says so in the old versions.
func (m *merger) adjust(cur string, care, want func(int) bool) (string, bool, error) {
	cr := parseRange(cur)
	same := true
	for v := range m.oldOnly {
		if care(v) && cr.has(v) != want(v) {
			same = false
		}
	}
	if same {
		return cur, false, nil
	}
	set := map[int]bool{}
	lo := min(m.cur.lo, minKey(m.oldOnly))
	for v := lo; v <= m.max; v++ {
		if care(v) && want(v) {
			set[v] = true
		}
	}
	r, err := rangeOf(set, m.max, cr.hi == open)
	if err != nil {
		return "", false, err
	}
	return r.String(), true, nil
}

func minKey(s map[int]bool) int {
	lo := open
	for v := range s {
		lo = min(lo, v)
	}
	return lo
}

var primitiveTypes = map[string]bool{"bool": true, "int8": true, "int16": true, "uint16": true,
	"int32": true, "uint32": true, "int64": true, "float64": true, "uuid": true, "string": true,
	"bytes": true, "records": true}

func isPrimitive(t string) bool { return primitiveTypes[strings.TrimPrefix(t, "[]")] }
