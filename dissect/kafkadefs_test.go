package dissect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/jsonc"
)

// The definitions in defs/ and the headers of frame.go are checked, version
// by version, against the facts of Kafka's own message definitions, kept in
// testdata/kafka in four layers (see internal/testtools/defgen): kmsg (the
// APIs, 93 and 94, that no Kafka file in reach defines, as franz-go's kmsg
// lays them out), the supplement (versions newer than the rest), Kafka's
// current files, and the files from before Kafka 4.0 removed old
// versions. The first layer
// whose validVersions holds a version decides it: for every version ours
// define, every field must be there with the same name, type, nullability,
// tag and flexibility, in the same order, as that layer says.

var factLayers = []string{"kmsg", "supplement", "8b119e51", "1eb76443"}

// fieldFacts is what the comparison looks at in one field: the shape of the
// bytes and the default, not the descriptions or kdissect's enum attributes.
type fieldFacts struct {
	Name, Type                 string
	Versions, Nullable, Tagged Versions
	Tag                        int       // -1: not a tagged field
	Flexible                   *Versions // nil: the message's flexible versions
	Default                    string
	Fields                     []fieldFacts
}

// factsOfJSON reads the facts of fields, expanding common structs.
func factsOfJSON(fs []jsonField, commons map[string][]jsonField) ([]fieldFacts, error) {
	var out []fieldFacts
	for _, jf := range fs {
		f := fieldFacts{Name: jf.Name, Type: jf.Type, Tag: -1, Default: string(jf.Default)}
		var errs [4]error
		f.Versions, errs[0] = parseVersions(jf.Versions)
		f.Nullable, errs[1] = parseVersions(jf.NullableVersions)
		f.Tagged, errs[2] = parseVersions(jf.TaggedVersions)
		if jf.FlexibleVersions != nil {
			v, err := parseVersions(*jf.FlexibleVersions)
			f.Flexible, errs[3] = &v, err
		}
		for _, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("%s: %v", jf.Name, err)
			}
		}
		if jf.Tag != nil {
			f.Tag = int(*jf.Tag)
			if jf.TaggedVersions == "" {
				f.Tagged = f.Versions
			}
		}
		sub := jf.Fields
		if len(sub) == 0 {
			sub = commons[strings.TrimPrefix(jf.Type, "[]")]
		}
		var err error
		if f.Fields, err = factsOfJSON(sub, commons); err != nil {
			return nil, fmt.Errorf("%s.%v", jf.Name, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// factsOfFields reads the facts of Go-declared fields (the headers), named
// as Kafka names them.
func factsOfFields(fs []*Field, kafkaName map[string]string) []fieldFacts {
	var out []fieldFacts
	for _, f := range fs {
		name := f.Name
		if k, ok := kafkaName[name]; ok {
			name = k
		}
		typ := f.Type
		out = append(out, fieldFacts{Name: name, Type: typ, Versions: f.Versions, Nullable: f.Nullable,
			Tagged: f.Tagged, Tag: f.Tag, Flexible: f.flexible, Fields: factsOfFields(f.Fields, kafkaName)})
	}
	return out
}

// wireAt lists what fs put on the wire at version v of a message whose
// flexible versions are flex: one line a field present, depth first.
func wireAt(fs []fieldFacts, v int16, flex Versions) []string {
	var out []string
	var walk func(fs []fieldFacts, path string)
	walk = func(fs []fieldFacts, path string) {
		for _, f := range fs {
			if !f.Versions.Has(v) {
				continue
			}
			fx := flex.Has(v)
			if f.Flexible != nil {
				fx = f.Flexible.Has(v)
			}
			tag := "untagged"
			if flex.Has(v) && f.Tag >= 0 && f.Tagged.Has(v) {
				tag = "tag " + strconv.Itoa(f.Tag)
			}
			def := ""
			if f.Default != "" {
				def = ", default " + f.Default
			}
			out = append(out, fmt.Sprintf("%s%s: %s, nullable %v, %s, compact %v%s", path, f.Name, f.Type, f.Nullable.Has(v), tag, fx, def))
			walk(f.Fields, path+f.Name+".")
		}
	}
	walk(fs, "")
	return out
}

// diffWire says how ours differs from Kafka's at one version, one sentence
// a difference: fields are matched by their path, so that one field too
// many or too few is one difference, not a shift of all that follow.
func diffWire(at string, ours, kafka []string) []string {
	path := func(line string) string { p, _, _ := strings.Cut(line, ":"); return p }
	index := func(lines []string) map[string]string {
		m := map[string]string{}
		for _, l := range lines {
			m[path(l)] = l
		}
		return m
	}
	o, k := index(ours), index(kafka)
	var diffs []string
	for _, kl := range kafka {
		switch ol, ok := o[path(kl)]; {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: missing %s", at, kl))
		case ol != kl:
			diffs = append(diffs, fmt.Sprintf("%s: %s here, %s in Kafka", at, ol, kl))
		}
	}
	for _, ol := range ours {
		if _, ok := k[path(ol)]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: %s is not in Kafka's", at, ol))
		}
	}
	if len(diffs) == 0 && !slices.Equal(ours, kafka) {
		diffs = append(diffs, fmt.Sprintf("%s: the fields are in another order than Kafka's", at))
	}
	return diffs
}

// defFacts is one definition read as facts.
type defFacts struct {
	jd    jsonDef
	valid Versions
	flex  Versions
	fs    []fieldFacts
}

// readDefFacts reads a definition in Kafka's format, // comments allowed.
func readDefFacts(src []byte) (defFacts, error) {
	var d defFacts
	dec := json.NewDecoder(bytes.NewReader(jsonc.Strip(src)))
	dec.DisallowUnknownFields() // a facts file holds nothing it is not checked for
	if err := dec.Decode(&d.jd); err != nil {
		return d, err
	}
	commons := map[string][]jsonField{}
	for _, c := range d.jd.CommonStructs {
		commons[c.Name] = c.Fields
	}
	var err1, err2, err3 error
	d.valid, err1 = parseVersions(d.jd.ValidVersions)
	d.flex, err2 = parseVersions(d.jd.FlexibleVersions)
	d.fs, err3 = factsOfJSON(d.jd.Fields, commons)
	return d, errorsJoin(err1, err2, err3)
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// kafkaFacts are the facts of Kafka's definitions, by message name
// (RequestHeader) or by API key and direction ("30 request"), newest
// layer first.
type kafkaFacts map[string][]defFacts

func factKey(d jsonDef) string {
	if d.APIKey == nil {
		return d.Name
	}
	return fmt.Sprintf("%d %s", *d.APIKey, d.Type)
}

func loadKafkaFacts(t *testing.T, dir string) kafkaFacts {
	t.Helper()
	out := kafkaFacts{}
	for _, layer := range factLayers {
		files, err := filepath.Glob(filepath.Join(dir, layer, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no facts in %s/%s: %v", dir, layer, err)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d, err := readDefFacts(src)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if d.valid.Lo > d.valid.Hi {
				continue // Kafka keeps the file of a removed API with no versions
			}
			out[factKey(d.jd)] = append(out[factKey(d.jd)], d)
		}
	}
	return out
}

// decider is the layer that defines version v.
func (k kafkaFacts) decider(key string, v int16) *defFacts {
	for i, d := range k[key] {
		if d.valid.Has(v) {
			return &k[key][i]
		}
	}
	return nil
}

// diffDef compares one of our definitions with Kafka's facts of it.
func diffDef(ours []byte, kafka kafkaFacts) ([]string, error) {
	o, err := readDefFacts(ours)
	if err != nil {
		return nil, fmt.Errorf("ours: %v", err)
	}
	key := factKey(o.jd)
	layers := kafka[key]
	if len(layers) == 0 {
		return []string{fmt.Sprintf("%s: Kafka defines no %s", o.jd.Name, key)}, nil
	}
	var diffs []string
	if o.jd.Name != layers[0].jd.Name {
		diffs = append(diffs, fmt.Sprintf("%s is Kafka's %s", o.jd.Name, layers[0].jd.Name))
	}
	lo, hi := int16(math.MaxInt16), int16(-1)
	for _, l := range layers {
		lo, hi = min(lo, l.valid.Lo), max(hi, l.valid.Hi)
		if l.flex != o.flex {
			diffs = append(diffs, fmt.Sprintf("%s: flexibleVersions %s here, %s in Kafka", o.jd.Name, o.flex, l.flex))
		}
	}
	if want := (Versions{lo, hi}); o.valid != want {
		diffs = append(diffs, fmt.Sprintf("%s: validVersions %s here, %s in Kafka", o.jd.Name, o.valid, want))
	}
	for v := o.valid.Lo; v <= o.valid.Hi && v >= 0; v++ {
		k := kafka.decider(key, v)
		if k == nil {
			diffs = append(diffs, fmt.Sprintf("%s v%d: no Kafka definition of it", o.jd.Name, v))
			continue
		}
		diffs = append(diffs, diffWire(fmt.Sprintf("%s v%d", o.jd.Name, v), wireAt(o.fs, v, o.flex), wireAt(k.fs, v, k.flex))...)
		if v == math.MaxInt16 {
			break
		}
	}
	return diffs, nil
}

func TestDefsMatchKafka(t *testing.T) {
	kafka := loadKafkaFacts(t, filepath.Join("testdata", "kafka"))
	files, err := builtinDefs.ReadDir("defs")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, f := range files {
		ours, err := builtinDefs.ReadFile("defs/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		d, err := readDefFacts(ours)
		if err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		if f.Name() != d.jd.Name+".json" {
			t.Errorf("%s holds %s", f.Name(), d.jd.Name)
		}
		covered[factKey(d.jd)] = true
		diffs, err := diffDef(ours, kafka)
		if err != nil {
			t.Errorf("%s: %v", f.Name(), err)
		}
		for _, d := range diffs {
			t.Error(d)
		}
	}
	// Every request and response Kafka defines, at some version, is ours.
	for key, layers := range kafka {
		if layers[0].jd.APIKey != nil && !covered[key] {
			t.Errorf("no definition of %s (%s)", layers[0].jd.Name, key)
		}
	}
}

// The facts in testdata are Kafka's files, less their descriptions: where
// the files themselves are at hand (../shared/kafka-messages), every
// version of every file reads the same in both.
func TestFactsAreKafkas(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "kafka-messages")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("Kafka's definitions are not at hand: %v", err)
	}
	for _, layer := range factLayers {
		base := dir
		if layer == "kmsg" {
			// Ours, not Kafka's: defgen's own folder holds its sources.
			base = filepath.Join("..", "internal", "testtools", "defgen")
		}
		files, _ := filepath.Glob(filepath.Join(base, layer, "*.json"))
		if len(files) == 0 {
			t.Fatalf("nothing in %s", filepath.Join(base, layer))
		}
		for _, f := range files {
			orig, err1 := os.ReadFile(f)
			ours, err2 := os.ReadFile(filepath.Join("testdata", "kafka", layer, filepath.Base(f)))
			if err := errorsJoin(err1, err2); err != nil {
				t.Error(err)
				continue
			}
			k, err1 := readKafkaFile(orig)
			o, err2 := readDefFacts(ours)
			if err := errorsJoin(err1, err2); err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if o.jd.Name != k.jd.Name || factKey(o.jd) != factKey(k.jd) || o.valid != k.valid || o.flex != k.flex {
				t.Errorf("%s/%s: %s %s %s, Kafka's %s %s %s", layer, filepath.Base(f), factKey(o.jd), o.valid, o.flex, factKey(k.jd), k.valid, k.flex)
			}
			for v := k.valid.Lo; v <= k.valid.Hi; v++ {
				for _, d := range diffWire(fmt.Sprintf("%s/%s v%d", layer, k.jd.Name, v), wireAt(o.fs, v, o.flex), wireAt(k.fs, v, k.flex)) {
					t.Error(d)
				}
			}
		}
	}
}

// readKafkaFile reads one of Kafka's own files, with the attributes the
// facts leave out (about, entityType, ...) and a tag written as a string.
func readKafkaFile(src []byte) (defFacts, error) {
	var loose map[string]any
	if err := json.Unmarshal(jsonc.Strip(src), &loose); err != nil {
		return defFacts{}, err
	}
	keep := map[string]bool{"apiKey": true, "type": true, "name": true, "validVersions": true,
		"flexibleVersions": true, "fields": true, "commonStructs": true, "versions": true,
		"nullableVersions": true, "taggedVersions": true, "tag": true, "default": true}
	var clean func(v any) any
	clean = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch {
				case !keep[k]:
					delete(x, k)
				case k == "tag":
					if s, ok := e.(string); ok {
						n, _ := strconv.Atoi(s)
						x[k] = n
					}
				default:
					x[k] = clean(e)
				}
			}
		case []any:
			for i := range x {
				x[i] = clean(x[i])
			}
		}
		return v
	}
	b, err := json.Marshal(clean(loose))
	if err != nil {
		return defFacts{}, err
	}
	return readDefFacts(b)
}

// The comparison finds what it is there to find.
func TestDiffDefReportsDifferences(t *testing.T) {
	ours, err := builtinDefs.ReadFile("defs/CreateAclsResponse.json")
	if err != nil {
		t.Fatal(err)
	}
	factsFile := filepath.Join("testdata", "kafka", "8b119e51", "CreateAclsResponse.json")
	orig, err := os.ReadFile(factsFile)
	if err != nil {
		t.Fatal(err)
	}
	const (
		tt1 = "ThrottleTimeMs: int32, nullable false, untagged, compact false"
		tt3 = "ThrottleTimeMs: int32, nullable false, untagged, compact true"
	)
	for _, c := range []struct {
		from, to string
		want     []string // among the differences found
		n        int      // how many there are: one a field and version
	}{
		{`"validVersions": "1-3"`, `"validVersions": "1-4"`,
			[]string{"CreateAclsResponse: validVersions 0-3 here, 0-4 in Kafka"}, 1},
		{`"flexibleVersions": "2+"`, `"flexibleVersions": "3+"`, []string{
			"CreateAclsResponse: flexibleVersions 2+ here, 3+ in Kafka",
			"CreateAclsResponse v2: " + tt3 + " here, " + tt1 + " in Kafka",
			"CreateAclsResponse v2: Results.ErrorMessage: string, nullable true, untagged, compact true here, " +
				"Results.ErrorMessage: string, nullable true, untagged, compact false in Kafka"}, 5},
		{`"nullableVersions": "0+"`, `"nullableVersions": "2+"`, []string{
			"CreateAclsResponse v1: Results.ErrorMessage: string, nullable true, untagged, compact false here, " +
				"Results.ErrorMessage: string, nullable false, untagged, compact false in Kafka"}, 1},
		{`"type": "int16"`, `"type": "int32"`, []string{
			"CreateAclsResponse v3: Results.ErrorCode: int16, nullable false, untagged, compact true here, " +
				"Results.ErrorCode: int32, nullable false, untagged, compact true in Kafka"}, 3},
		{`{ "name": "ThrottleTimeMs", "type": "int32", "versions": "0+" }`,
			`{ "name": "ThrottleTimeMs", "type": "int32", "versions": "3+", "taggedVersions": "3+", "tag": 0 }`, []string{
				"CreateAclsResponse v1: " + tt1 + " is not in Kafka's",
				"CreateAclsResponse v3: " + tt3 + " here, ThrottleTimeMs: int32, nullable false, tag 0, compact true in Kafka"}, 3},
		{`"name": "ErrorMessage"`, `"name": "Message"`, []string{
			"CreateAclsResponse v1: missing Results.Message: string, nullable true, untagged, compact false",
			"CreateAclsResponse v1: Results.ErrorMessage: string, nullable true, untagged, compact false is not in Kafka's"}, 6},
		{`{ "name": "ThrottleTimeMs", "type": "int32", "versions": "0+" },`, ``, []string{
			"CreateAclsResponse v2: " + tt3 + " is not in Kafka's"}, 3},
	} {
		changed := strings.Replace(string(orig), c.from, c.to, 1)
		if changed == string(orig) {
			t.Fatalf("%q is not in the facts", c.from)
		}
		kafka := kafkaFacts{}
		for _, layer := range []string{"8b119e51", "1eb76443"} {
			src := []byte(changed)
			if layer == "1eb76443" {
				if src, err = os.ReadFile(filepath.Join("testdata", "kafka", layer, "CreateAclsResponse.json")); err != nil {
					t.Fatal(err)
				}
			}
			d, err := readDefFacts(src)
			if err != nil {
				t.Fatal(err)
			}
			kafka[factKey(d.jd)] = append(kafka[factKey(d.jd)], d)
		}
		diffs, err := diffDef(ours, kafka)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !slices.Contains(diffs, w) {
				t.Errorf("with %s: %q not among\n%s", c.to, w, strings.Join(diffs, "\n"))
			}
		}
		if len(diffs) != c.n {
			t.Errorf("with %s: %d differences, want %d:\n%s", c.to, len(diffs), c.n, strings.Join(diffs, "\n"))
		}
	}
}

func TestHeadersMatchKafka(t *testing.T) {
	kafka := loadKafkaFacts(t, filepath.Join("testdata", "kafka"))
	kafkaName := map[string]string{
		"request_api_key":     "RequestApiKey",
		"request_api_version": "RequestApiVersion",
		"correlation_id":      "CorrelationId",
		"client_id":           "ClientId",
	}
	for _, h := range []struct {
		name     string
		fields   []*Field
		flexFrom int16
		version  func(key, v int16) int16
	}{
		{"RequestHeader", requestHeaderFields, requestHeaderFlexFrom,
			func(key, v int16) int16 { return requestHeaderVersion(key, v, Builtin().isFlexible(key, v)) }},
		{"ResponseHeader", responseHeaderFields, responseHeaderFlexFrom,
			func(key, v int16) int16 { return responseHeaderVersion(key, Builtin().isFlexible(key, v)) }},
	} {
		layers := kafka[h.name]
		if len(layers) == 0 {
			t.Fatalf("no facts of %s", h.name)
		}
		ours := factsOfFields(h.fields, kafkaName)
		flex := Versions{h.flexFrom, math.MaxInt16}
		valid := layers[0].valid
		for _, l := range layers {
			if l.flex != flex {
				t.Errorf("%s: flexible from %s here, %s in Kafka", h.name, flex, l.flex)
			}
			valid = Versions{min(valid.Lo, l.valid.Lo), max(valid.Hi, l.valid.Hi)}
		}
		for v := valid.Lo; v <= valid.Hi; v++ {
			k := kafka.decider(h.name, v)
			for _, d := range diffWire(fmt.Sprintf("%s v%d", h.name, v), wireAt(ours, v, flex), wireAt(k.fs, v, k.flex)) {
				t.Error(d)
			}
		}
		// Every header version kdissect expects is one Kafka defines.
		for key := int16(0); key <= MaxAPIKey; key++ {
			for v := int16(0); v <= MaxVersion(key); v++ {
				if hv := h.version(key, v); !valid.Has(hv) {
					t.Errorf("%s v%d: %s v%d, Kafka's are %s", APIName(key), v, h.name, hv, valid)
				}
			}
		}
	}
}

// Every version of every API key Kafka defines has a definition, and the
// definitions cover what the API table (kmsg's) knows, except the versions
// no Kafka definition in reach describes.
func TestEveryAPIDefined(t *testing.T) {
	// Versions kmsg knows that no Kafka file here defines (see
	// ../shared/kafka-messages/SOURCES.md): they are dissected as the
	// newest version there is, with a problem saying so.
	beyondFacts := map[int16]int16{63: 1, 88: 0, 89: 0}
	var noFacts []int16 // 93 and 94 are defgen's kmsg layer
	r := Builtin()
	n := 0
	for key := int16(0); key <= MaxAPIKey; key++ {
		for _, req := range []bool{true, false} {
			d := r.respDef(key)
			if req {
				d = r.reqDef(key)
			}
			if slices.Contains(noFacts, key) {
				if d != nil {
					t.Errorf("%s: a definition without Kafka's facts", APIName(key))
				}
				continue
			}
			if d == nil {
				t.Errorf("%s: no definition (request %v)", APIName(key), req)
				continue
			}
			want := MaxVersion(key)
			if hi, ok := beyondFacts[key]; ok {
				want = hi
			}
			if d.Valid.Lo != 0 || d.Valid.Hi < want {
				t.Errorf("%s: versions %s, want 0-%d", d.Name, d.Valid, want)
			}
			n += int(d.Valid.Hi-d.Valid.Lo) + 1
		}
	}
	t.Logf("%d message versions defined", n)
}

// Kafka's own files load as --schema-dir definitions: the attributes
// kdissect does not read (about, entityType, mapKey, ...) are passed over,
// and a tag written as a string is read as Kafka's generator reads it.
func TestKafkaFilesLoad(t *testing.T) {
	dirs := []string{filepath.Join("testdata", "kafka")}
	if _, err := os.Stat(filepath.Join("..", "..", "shared", "kafka-messages")); err == nil {
		dirs = append(dirs, filepath.Join("..", "..", "shared", "kafka-messages"))
	}
	n := 0
	for _, dir := range dirs {
		for _, layer := range factLayers {
			files, _ := filepath.Glob(filepath.Join(dir, layer, "*.json"))
			for _, f := range files {
				src, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(src, []byte(`"type": "header"`)) {
					continue // headers are not messages a registry holds
				}
				d, err := parseDef(src)
				if err != nil {
					t.Errorf("%s: %v", f, err)
					continue
				}
				n++
				if strings.Contains(string(src), `"tag": "0"`) && !slices.ContainsFunc(d.Fields, func(f *Field) bool { return f.Tag == 0 }) {
					t.Errorf("%s: the tag written as a string is lost", f)
				}
			}
		}
	}
	if n < 360*len(dirs) { // 368 message files a folder
		t.Errorf("only %d files loaded from %v", n, dirs)
	}
}

// The descriptions of our definitions are ours: where Kafka's files are at
// hand, none of our texts is one of Kafka's (case and a final period
// aside).
func TestDescriptionsAreOurs(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "kafka-messages")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("Kafka's definitions are not at hand: %v", err)
	}
	norm := func(s string) string { return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".") }
	abouts := func(src []byte) []string {
		var out []string
		eachObject(t, src, func(x map[string]any) {
			if a, ok := x["about"].(string); ok {
				out = append(out, norm(a))
			}
		})
		return out
	}
	kafka := map[string]bool{}
	for _, layer := range factLayers {
		files, _ := filepath.Glob(filepath.Join(dir, layer, "*.json"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range abouts(src) {
				kafka[a] = true
			}
		}
	}
	files, _ := builtinDefs.ReadDir("defs")
	n := 0
	for _, f := range files {
		src, _ := builtinDefs.ReadFile("defs/" + f.Name())
		for _, a := range abouts(src) {
			n++
			if a == "" {
				t.Errorf("%s: a field without a description", f.Name())
			} else if kafka[a] {
				t.Errorf("%s: %q is Kafka's description", f.Name(), a)
			}
		}
	}
	if n < 1500 || len(kafka) < 500 {
		t.Errorf("%d descriptions of ours, %d of Kafka's", n, len(kafka))
	}
}

// eachObject calls fn for every JSON object of a definition file, nested
// ones included.
func eachObject(t *testing.T, src []byte, fn func(map[string]any)) {
	t.Helper()
	var loose map[string]any
	if err := json.Unmarshal(jsonc.Strip(src), &loose); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			fn(x)
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(loose)
}

// A records field is dissected (batches, records, or a problem where they
// cannot be read): no description may still call it bytes.
func TestRecordsDescriptionsSayDissected(t *testing.T) {
	files, _ := builtinDefs.ReadDir("defs")
	n := 0
	for _, f := range files {
		src, _ := builtinDefs.ReadFile("defs/" + f.Name())
		eachObject(t, src, func(x map[string]any) {
			if x["type"] != "records" {
				return
			}
			n++
			if a, _ := x["about"].(string); strings.Contains(a, "not dissected") || strings.Contains(a, "as bytes") {
				t.Errorf("%s: %s: %q", f.Name(), x["name"], a)
			}
		})
	}
	if n < 3 {
		t.Errorf("%d records fields, want Produce's, Fetch's and ShareFetch's at least", n)
	}
}
