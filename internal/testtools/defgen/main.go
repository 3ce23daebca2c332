// Command defgen writes kdissect's message definitions (dissect/defs) and
// the facts TestDefsMatchKafka checks them against (dissect/testdata/kafka)
// from Kafka's own JSON message definitions, in the three layers of
// ../shared/kafka-messages: the current files decide the versions they
// define, the files from before Kafka 4.0 the versions it removed, and
// the supplement the versions newer than both. A fourth layer, kmsg/ here,
// holds the APIs no Kafka file in reach defines at all (93, 94), their
// layout read from franz-go's kmsg.
//
// Only wire facts are carried over: names, types, versions, nullable,
// tagged and flexible versions, tags, defaults, common structs. The field
// descriptions come from about.txt, in kdissect's words, and the enum
// tables from enums.go; a field without a description stops the run.
//
//	go run ./internal/testtools/defgen [-kafka ../shared/kafka-messages]
//
// Definitions written by hand (the ACL and SASL ones) are left alone; their
// facts are written all the same.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Layers, newest first: the first that defines a version decides it. A
// layer that is ours lives in this folder, not with Kafka's files: those
// are read-only facts shared with others.
var layers = []struct {
	dir, commit, why string
	ours             bool
}{
	{"kmsg", "", "APIs no Kafka file in reach defines, their layout read from franz-go's kmsg", true},
	{"supplement", "", "versions newer than 8b119e51, their layout read from franz-go's kmsg", false},
	{"8b119e51", "8b119e5105906a66cc99264527670c88b07c7a10", "apache/kafka trunk of 2025-11-21", false},
	{"1eb76443", "1eb7644349cb07139d6a3c1ad1986979647cac99", "apache/kafka trunk of 2024-10-25, before Kafka 4.0 removed old versions", false},
}

// handWritten definitions keep their own text; defgen does not touch them.
var handWritten = map[string]bool{
	"CreateAclsRequest": true, "CreateAclsResponse": true,
	"DeleteAclsRequest": true, "DeleteAclsResponse": true,
	"SaslHandshakeRequest": true, "SaslHandshakeResponse": true,
	"SaslAuthenticateRequest": true, "SaslAuthenticateResponse": true,
}

var warnings int

func warnf(format string, args ...any) {
	warnings++
	fmt.Fprintf(os.Stderr, "defgen: "+format+"\n", args...)
}

func main() {
	root := flag.String("root", ".", "the repository root")
	kafka := flag.String("kafka", "", "Kafka's message definitions (default ROOT/../shared/kafka-messages)")
	list := flag.Bool("list", false, "list the fields that need a description, and stop")
	review := flag.Bool("review", false, "print every field with its description, and stop")
	flag.Parse()
	if *kafka == "" {
		*kafka = filepath.Join(*root, "..", "shared", "kafka-messages")
	}
	if err := run(*root, *kafka, *list, *review); err != nil {
		fmt.Fprintln(os.Stderr, "defgen:", err)
		os.Exit(1)
	}
}

func run(root, kafka string, list, review bool) error {
	byLayer := map[string]map[string]*def{}
	for _, l := range layers {
		base := kafka
		if l.ours {
			base = filepath.Join(root, "internal", "testtools", "defgen")
		}
		m, err := readLayer(base, l.dir)
		if err != nil {
			return err
		}
		byLayer[l.dir] = m
	}
	// Messages are matched by API key and direction, not file name: Kafka
	// renamed ListClientMetricsResources to ListConfigResources.
	type msgKey struct {
		key int
		typ string
	}
	defsOf := func(layer string) map[msgKey]*def {
		out := map[msgKey]*def{}
		for _, d := range byLayer[layer] {
			if d.APIKey != nil {
				out[msgKey{*d.APIKey, d.Type}] = d
			}
		}
		return out
	}
	sup, cur, old := defsOf("supplement"), defsOf("8b119e51"), defsOf("1eb76443")
	// An API only kmsg knows is a current file of its own.
	for k, d := range defsOf("kmsg") {
		if cur[k] != nil || old[k] != nil || sup[k] != nil {
			return fmt.Errorf("%s: the kmsg layer is for APIs no other layer defines", d.Name)
		}
		cur[k] = d
	}
	keys := map[msgKey]bool{}
	for k := range cur {
		keys[k] = true
	}
	for k := range old {
		keys[k] = true
	}
	var merged []*def
	for k := range keys {
		c := cur[k]
		if s := sup[k]; s != nil {
			c = s // the supplement is the current file with newer versions
		}
		d, err := merge(c, old[k])
		if err != nil {
			return err
		}
		if parseRange(d.Valid).empty() {
			continue
		}
		// Every version reads as the layer that defines it.
		for v := parseRange(d.Valid).lo; v <= parseRange(d.Valid).hi; v++ {
			var want *def
			for _, l := range []map[msgKey]*def{sup, cur, old} {
				if x := l[k]; x != nil && parseRange(x.Valid).has(v) {
					want = x
					break
				}
			}
			if want == nil {
				return fmt.Errorf("%s v%d: no layer defines it", d.Name, v)
			}
			if diff, ok := sameLayout(layout(d, v), layout(want, v)); !ok {
				return fmt.Errorf("%s v%d merged wrongly: %s", d.Name, v, diff)
			}
		}
		merged = append(merged, d)
	}
	sort.Slice(merged, func(i, j int) bool {
		if *merged[i].APIKey != *merged[j].APIKey {
			return *merged[i].APIKey < *merged[j].APIKey
		}
		return merged[i].Type == "request"
	})

	ab, err := readAbout(filepath.Join(root, "internal", "testtools", "defgen", "about.txt"))
	if err != nil {
		return err
	}
	var missing []string
	for _, d := range merged {
		if handWritten[d.Name] {
			continue
		}
		missing = append(missing, describe(d, ab)...)
		setEnums(d)
	}
	if review {
		for _, d := range merged {
			if !handWritten[d.Name] {
				printAbout(d)
			}
		}
		return nil
	}
	if list || len(missing) > 0 {
		for _, m := range missing {
			fmt.Println(m)
		}
		if len(missing) > 0 {
			return fmt.Errorf("%d fields without a description", len(missing))
		}
		return nil
	}
	for _, u := range ab.unused() {
		warnf("about.txt: %s is never used", u)
	}

	defsDir := filepath.Join(root, "dissect", "defs")
	for _, d := range merged {
		if handWritten[d.Name] {
			continue
		}
		if err := os.WriteFile(filepath.Join(defsDir, d.Name+".json"), renderDef(d), 0o644); err != nil {
			return err
		}
	}
	for _, l := range layers {
		dir := filepath.Join(root, "dissect", "testdata", "kafka", l.dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for _, d := range byLayer[l.dir] {
			if err := os.WriteFile(filepath.Join(dir, d.file), renderFacts(d, l.dir, l.commit, l.why), 0o644); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(os.Stderr, "defgen: %d definitions, %d warnings\n", len(merged), warnings)
	return nil
}

// renderDef writes a definition in Kafka's layout: one line a field.
func renderDef(d *def) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// kdissect's definition of %s, in Kafka's message format. Written by\n", d.Name)
	b.WriteString("// internal/testtools/defgen from the facts of Kafka's definitions and the\n")
	b.WriteString("// descriptions of its about.txt: change those and run it again.\n")
	writeDef(&b, d, true)
	return b.Bytes()
}

// renderFacts writes Kafka's definition without its descriptions and
// comments: the facts TestDefsMatchKafka compares ours with.
func renderFacts(d *def, layer, commit, why string) []byte {
	var b bytes.Buffer
	if layer == "kmsg" {
		fmt.Fprintf(&b, "// Facts of %s, which no Kafka file in reach defines\n", d.Name)
	} else {
		fmt.Fprintf(&b, "// Facts of Kafka's clients/src/main/resources/common/message/%s\n", d.file)
	}
	if commit != "" {
		fmt.Fprintf(&b, "// at apache/kafka %s (%s):\n", commit, why)
	} else {
		fmt.Fprintf(&b, "// (%s layer: %s):\n", layer, why)
	}
	b.WriteString("// names, types, versions, tags and defaults, without Kafka's descriptions\n")
	b.WriteString("// and comments. Written by internal/testtools/defgen.\n")
	writeDef(&b, d, false)
	return b.Bytes()
}

func writeDef(b *bytes.Buffer, d *def, ours bool) {
	b.WriteString("{\n")
	if d.APIKey != nil {
		fmt.Fprintf(b, "  \"apiKey\": %d,\n", *d.APIKey)
	}
	fmt.Fprintf(b, "  \"type\": %s,\n  \"name\": %s,\n  \"validVersions\": %s,\n  \"flexibleVersions\": %s,\n",
		jstr(d.Type), jstr(d.Name), jstr(d.Valid), jstr(d.Flexible))
	b.WriteString("  \"fields\": [")
	writeFields(b, d.Fields, "    ", ours)
	b.WriteString("]")
	if len(d.Common) > 0 {
		b.WriteString(",\n  \"commonStructs\": [\n")
		for i, c := range d.Common {
			fmt.Fprintf(b, "    { \"name\": %s, \"versions\": %s, \"fields\": [", jstr(c.Name), jstr(c.Versions))
			writeFields(b, c.Fields, "      ", ours)
			b.WriteString("]}")
			if i < len(d.Common)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("  ]")
	}
	b.WriteString("\n}\n")
}

func writeFields(b *bytes.Buffer, fs []*field, indent string, ours bool) {
	if len(fs) == 0 {
		return
	}
	b.WriteString("\n")
	for i, f := range fs {
		fmt.Fprintf(b, "%s{ \"name\": %s, \"type\": %s, \"versions\": %s", indent, jstr(f.Name), jstr(f.Type), jstr(f.Versions))
		if f.Nullable != "" {
			fmt.Fprintf(b, ", \"nullableVersions\": %s", jstr(f.Nullable))
		}
		if f.Tag != nil {
			if f.Tagged != "" {
				fmt.Fprintf(b, ", \"taggedVersions\": %s", jstr(f.Tagged))
			}
			fmt.Fprintf(b, ", \"tag\": %d", *f.Tag)
		}
		if f.Flexible != nil {
			fmt.Fprintf(b, ", \"flexibleVersions\": %s", jstr(*f.Flexible))
		}
		if len(f.Default) > 0 {
			fmt.Fprintf(b, ", \"default\": %s", f.Default)
		}
		if ours && f.Enum != "" {
			fmt.Fprintf(b, ", \"enum\": %s", jstr(f.Enum))
		}
		if ours {
			fmt.Fprintf(b, ",\n%s  \"about\": %s", indent, jstr(f.About))
		}
		if len(f.Fields) > 0 {
			b.WriteString(", \"fields\": [")
			writeFields(b, f.Fields, indent+"  ", ours)
			b.WriteString("]")
		}
		b.WriteString(" }")
		if i < len(fs)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(indent[:len(indent)-2])
}

// jstr is s as a JSON string, without HTML escaping.
func jstr(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func printAbout(d *def) {
	var walk func(fs []*field, path string)
	walk = func(fs []*field, path string) {
		for _, f := range fs {
			p := path + f.Name
			fmt.Printf("%s/%s\t%s\t%s\n", d.Name, p, f.Type, f.About)
			walk(f.Fields, p+".")
		}
	}
	walk(d.Fields, "")
	for _, c := range d.Common {
		walk(c.Fields, c.Name+".")
	}
}
