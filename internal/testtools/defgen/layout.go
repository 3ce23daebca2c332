package main

import (
	"fmt"
	"strings"
)

// layout is what a definition puts on the wire at version v, one line a
// field: the check that a merged definition reads every version exactly
// as the Kafka file that defines that version.
func layout(d *def, v int) []string {
	flex := parseRange(d.Flexible).has(v)
	commons := map[string][]*field{}
	for _, c := range d.Common {
		commons[c.Name] = c.Fields
	}
	var out []string
	var walk func(fs []*field, path string)
	walk = func(fs []*field, path string) {
		for _, f := range fs {
			if !parseRange(f.Versions).has(v) {
				continue
			}
			fx := flex
			if f.Flexible != nil {
				fx = parseRange(*f.Flexible).has(v)
			}
			tag := "-"
			if flex && taggedRange(f).has(v) {
				tag = fmt.Sprint(*f.Tag)
			}
			out = append(out, fmt.Sprintf("%s%s %s null=%v tag=%s flex=%v default=%s", path, f.Name, f.Type,
				parseRange(f.Nullable).has(v), tag, fx, f.Default))
			sub := f.Fields
			if len(sub) == 0 {
				sub = commons[strings.TrimPrefix(f.Type, "[]")]
			}
			walk(sub, path+f.Name+".")
		}
	}
	walk(d.Fields, "")
	return out
}

func sameLayout(a, b []string) (string, bool) {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("field %d: %q here, %q in Kafka", i, x, y), false
		}
	}
	return "", true
}
