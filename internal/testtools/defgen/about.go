package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
)

// about holds kdissect's field descriptions, read from about.txt. A key is
// one of, most specific first:
//
//	Message/Path.To.Field   one field of one message
//	Parent.Field            a field inside the struct or array named Parent
//	Field@Type              a field of that name and type anywhere
//	Field                   a field of that name anywhere
type about struct {
	text map[string]string
	used map[string]bool
}

func readAbout(path string) (*about, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a := &about{text: map[string]string{}, used: map[string]bool{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok || strings.ContainsAny(k, " \t") || strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("%s:%d: not \"key: description\"", path, n)
		}
		if _, dup := a.text[k]; dup {
			return nil, fmt.Errorf("%s:%d: %s described twice", path, n, k)
		}
		a.text[k] = strings.TrimSpace(v)
	}
	return a, sc.Err()
}

func (a *about) lookup(msg, path, name, typ string, parents []string) (string, bool) {
	keys := []string{msg + "/" + path}
	for _, p := range parents {
		keys = append(keys, p+"."+name)
	}
	keys = append(keys, name+"@"+typ, name)
	for _, k := range keys {
		if t, ok := a.text[k]; ok {
			a.used[k] = true
			return t, true
		}
	}
	return "", false
}

func (a *about) unused() []string {
	var out []string
	for k := range a.text {
		if !a.used[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// describe sets the about text of every field of d and returns the ones
// about.txt has nothing for.
func describe(d *def, a *about) []string {
	var missing []string
	var walk func(fs []*field, path string, parents []string)
	walk = func(fs []*field, path string, parents []string) {
		for _, f := range fs {
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			t, ok := a.lookup(d.Name, p, f.Name, f.Type, parents)
			if ok {
				f.About = t
			} else {
				missing = append(missing, fmt.Sprintf("%s/%s\t%s\tparents=%v", d.Name, p, f.Type, parents))
			}
			if len(f.Fields) > 0 {
				walk(f.Fields, p, []string{f.Name, strings.TrimPrefix(f.Type, "[]")})
			}
		}
	}
	walk(d.Fields, "", nil)
	for _, c := range d.Common {
		parents := []string{c.Name}
		for _, ref := range referrers(d, c.Name) {
			parents = append(parents, ref)
		}
		walk(c.Fields, c.Name, parents)
	}
	return missing
}

// referrers names the fields whose type is the common struct name.
func referrers(d *def, name string) []string {
	var out []string
	var walk func(fs []*field)
	walk = func(fs []*field) {
		for _, f := range fs {
			if strings.TrimPrefix(f.Type, "[]") == name {
				out = append(out, f.Name)
			}
			walk(f.Fields)
		}
	}
	walk(d.Fields)
	for _, c := range d.Common {
		walk(c.Fields)
	}
	return out
}
