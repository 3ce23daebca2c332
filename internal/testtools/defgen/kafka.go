package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/internal/jsonc"
)

// field and def hold a message definition in the shape of Kafka's JSON:
// only the attributes that describe the wire (and our own about and enum).
type field struct {
	Name     string          `json:"name"`
	Type     string          `json:"type"`
	Versions string          `json:"versions"`
	Nullable string          `json:"nullableVersions,omitempty"`
	Tagged   string          `json:"taggedVersions,omitempty"`
	Tag      *tagNum         `json:"tag,omitempty"`
	Flexible *string         `json:"flexibleVersions,omitempty"`
	Default  json.RawMessage `json:"default,omitempty"`
	About    string          `json:"about,omitempty"`
	Enum     string          `json:"enum,omitempty"`
	Fields   []*field        `json:"fields,omitempty"`
}

type common struct {
	Name     string   `json:"name"`
	Versions string   `json:"versions"`
	Fields   []*field `json:"fields"`
}

type def struct {
	APIKey   *int      `json:"apiKey,omitempty"`
	Type     string    `json:"type"`
	Name     string    `json:"name"`
	Valid    string    `json:"validVersions"`
	Flexible string    `json:"flexibleVersions"`
	Fields   []*field  `json:"fields"`
	Common   []*common `json:"commonStructs,omitempty"`
	file     string
	layer    string
}

// tagNum is a tag number; Kafka's reader also takes one written as a
// string ("0"), as one of its files does.
type tagNum int

func (t *tagNum) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := strconv.Atoi(s)
	*t = tagNum(v)
	return err
}

// readLayer reads every definition of one folder of Kafka's JSON files.
func readLayer(dir, layer string) (map[string]*def, error) {
	files, err := filepath.Glob(filepath.Join(dir, layer, "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]*def{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var d def
		// Unknown attributes (about, entityType, mapKey, ...) are dropped:
		// only the wire facts are carried over.
		if err := json.Unmarshal(jsonc.Strip(src), &d); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		d.file, d.layer = filepath.Base(f), layer
		clearAbout(d.Fields)
		for _, c := range d.Common {
			clearAbout(c.Fields)
		}
		out[d.file] = &d
	}
	return out, nil
}

func clearAbout(fs []*field) {
	for _, f := range fs {
		f.About = ""
		clearAbout(f.Fields)
	}
}

// vrange is an inclusive version range; lo > hi is none.
type vrange struct{ lo, hi int }

const open = math.MaxInt16

func parseRange(s string) vrange {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == "none":
		return vrange{1, 0}
	case strings.HasSuffix(s, "+"):
		return vrange{atoi(s[:len(s)-1]), open}
	}
	if a, b, ok := strings.Cut(s, "-"); ok {
		return vrange{atoi(a), atoi(b)}
	}
	v := atoi(s)
	return vrange{v, v}
}

func atoi(s string) int {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		panic(fmt.Sprintf("bad version %q", s))
	}
	return v
}

func (r vrange) has(v int) bool { return r.lo <= v && v <= r.hi }
func (r vrange) empty() bool    { return r.lo > r.hi }

func (r vrange) String() string {
	switch {
	case r.empty():
		return "none"
	case r.hi == open:
		return strconv.Itoa(r.lo) + "+"
	case r.lo == r.hi:
		return strconv.Itoa(r.lo)
	}
	return strconv.Itoa(r.lo) + "-" + strconv.Itoa(r.hi)
}

// rangeOf turns a set of versions (up to max) back into a range; an
// open-ended range stays open when the set reaches max.
func rangeOf(set map[int]bool, max int, openEnded bool) (vrange, error) {
	var vs []int
	for v, ok := range set {
		if ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return vrange{1, 0}, nil
	}
	sort.Ints(vs)
	for i := 1; i < len(vs); i++ {
		if vs[i] != vs[i-1]+1 {
			return vrange{}, fmt.Errorf("versions %v are not one range", vs)
		}
	}
	r := vrange{vs[0], vs[len(vs)-1]}
	if openEnded && r.hi == max {
		r.hi = open
	}
	return r, nil
}

// taggedRange is the versions in which f travels as a tagged field: a tag
// without taggedVersions means all of its versions.
func taggedRange(f *field) vrange {
	if f.Tag == nil {
		return vrange{1, 0}
	}
	if f.Tagged == "" {
		return parseRange(f.Versions)
	}
	return parseRange(f.Tagged)
}

func cloneFields(fs []*field) []*field {
	out := make([]*field, len(fs))
	for i, f := range fs {
		c := *f
		c.Fields = cloneFields(f.Fields)
		out[i] = &c
	}
	return out
}
