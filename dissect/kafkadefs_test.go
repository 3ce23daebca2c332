package dissect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The definitions in defs/ and the headers of frame.go are checked field by
// field against the facts of Kafka's own message definitions, kept in
// testdata/kafka (franz-go checks its generated code the same way). Ours may
// know versions Kafka has since dropped (v0 of the ACL APIs, removed in
// Kafka 4.0); everything else must match.

// fieldFacts is what the comparison looks at in one field: the shape of the
// bytes, not the descriptions, defaults or kdissect's enum attributes.
type fieldFacts struct {
	Name, Type                 string
	Versions, Nullable, Tagged Versions
	Tag                        int       // -1: not a tagged field
	Flexible                   *Versions // nil: the message's flexible versions
	Fields                     []fieldFacts
}

func factsOfJSON(fs []jsonField) ([]fieldFacts, error) {
	var out []fieldFacts
	for _, jf := range fs {
		f := fieldFacts{Name: jf.Name, Type: jf.Type, Tag: -1}
		var errs [4]error
		f.Versions, errs[0] = ParseVersions(jf.Versions)
		f.Nullable, errs[1] = ParseVersions(jf.NullableVersions)
		f.Tagged, errs[2] = ParseVersions(jf.TaggedVersions)
		if jf.FlexibleVersions != nil {
			v, err := ParseVersions(*jf.FlexibleVersions)
			f.Flexible, errs[3] = &v, err
		}
		for _, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("%s: %v", jf.Name, err)
			}
		}
		if jf.Tag != nil {
			f.Tag = *jf.Tag
		}
		var err error
		if f.Fields, err = factsOfJSON(jf.Fields); err != nil {
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
		out = append(out, fieldFacts{Name: name, Type: f.Type, Versions: f.Versions, Nullable: f.Nullable,
			Tagged: f.Tagged, Tag: f.Tag, Flexible: f.flexible, Fields: factsOfFields(f.Fields, kafkaName)})
	}
	return out
}

// diffFields lists how ours differs from Kafka's, one sentence a difference.
func diffFields(path string, ours, kafka []fieldFacts) []string {
	var diffs []string
	names := func(fs []fieldFacts) []string {
		var n []string
		for _, f := range fs {
			n = append(n, f.Name)
		}
		return n
	}
	if !slices.Equal(names(ours), names(kafka)) {
		return []string{fmt.Sprintf("%s: fields %v here, %v in Kafka", path, names(ours), names(kafka))}
	}
	vs := func(v *Versions) string {
		if v == nil {
			return "the message's"
		}
		return v.String()
	}
	for i, o := range ours {
		k, at := kafka[i], path+"."+o.Name
		for _, c := range []struct {
			what      string
			here, kaf string
		}{
			{"type", o.Type, k.Type},
			{"versions", o.Versions.String(), k.Versions.String()},
			{"nullableVersions", o.Nullable.String(), k.Nullable.String()},
			{"taggedVersions", o.Tagged.String(), k.Tagged.String()},
			{"tag", fmt.Sprint(o.Tag), fmt.Sprint(k.Tag)},
			{"flexibleVersions", vs(o.Flexible), vs(k.Flexible)},
		} {
			if c.here != c.kaf {
				diffs = append(diffs, fmt.Sprintf("%s: %s %s here, %s in Kafka", at, c.what, c.here, c.kaf))
			}
		}
		diffs = append(diffs, diffFields(at, o.Fields, k.Fields)...)
	}
	return diffs
}

// readDefJSON reads a definition in Kafka's format, // comments allowed.
func readDefJSON(src []byte) (jsonDef, []fieldFacts, error) {
	var jd jsonDef
	dec := json.NewDecoder(bytes.NewReader(stripComments(src)))
	dec.DisallowUnknownFields() // a facts file holds nothing it is not checked for
	if err := dec.Decode(&jd); err != nil {
		return jd, nil, err
	}
	fs, err := factsOfJSON(jd.Fields)
	return jd, fs, err
}

// diffDef compares one of our definitions with Kafka's facts of it.
func diffDef(ours, kafka []byte) ([]string, error) {
	o, of, err := readDefJSON(ours)
	if err != nil {
		return nil, fmt.Errorf("ours: %v", err)
	}
	k, kf, err := readDefJSON(kafka)
	if err != nil {
		return nil, fmt.Errorf("Kafka's: %v", err)
	}
	var diffs []string
	if o.Name != k.Name || o.Type != k.Type || o.APIKey == nil || k.APIKey == nil || *o.APIKey != *k.APIKey {
		diffs = append(diffs, fmt.Sprintf("%s %s is not Kafka's %s %s", o.Name, o.Type, k.Name, k.Type))
	}
	ov, err1 := ParseVersions(o.ValidVersions)
	kv, err2 := ParseVersions(k.ValidVersions)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("validVersions: %v, %v", err1, err2)
	}
	if ov.Lo > kv.Lo || ov.Hi < kv.Hi {
		diffs = append(diffs, fmt.Sprintf("%s: validVersions %s does not cover Kafka's %s", o.Name, ov, kv))
	}
	if o.FlexibleVersions != k.FlexibleVersions {
		diffs = append(diffs, fmt.Sprintf("%s: flexibleVersions %s here, %s in Kafka", o.Name, o.FlexibleVersions, k.FlexibleVersions))
	}
	return append(diffs, diffFields(o.Name, of, kf)...), nil
}

func TestDefsMatchKafka(t *testing.T) {
	files, err := builtinDefs.ReadDir("defs")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 8 {
		t.Errorf("%d definitions in defs/, want the 8 of CreateAcls, DeleteAcls, SaslHandshake, SaslAuthenticate", len(files))
	}
	for _, f := range files {
		ours, err := builtinDefs.ReadFile("defs/" + f.Name())
		if err != nil {
			t.Fatal(err)
		}
		kafka, err := os.ReadFile(filepath.Join("testdata", "kafka", f.Name()))
		if err != nil {
			t.Errorf("%s: no facts of Kafka's definition: %v", f.Name(), err)
			continue
		}
		diffs, err := diffDef(ours, kafka)
		if err != nil {
			t.Errorf("%s: %v", f.Name(), err)
		}
		for _, d := range diffs {
			t.Error(d)
		}
	}
}

// The comparison finds what it is there to find.
func TestDiffDefReportsDifferences(t *testing.T) {
	ours, err := builtinDefs.ReadFile("defs/CreateAclsResponse.json")
	if err != nil {
		t.Fatal(err)
	}
	kafka, err := os.ReadFile("testdata/kafka/CreateAclsResponse.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"validVersions": "1-3"`, `"validVersions": "1-4"`, "CreateAclsResponse: validVersions 0-3 does not cover Kafka's 1-4"},
		{`"flexibleVersions": "2+"`, `"flexibleVersions": "3+"`, "CreateAclsResponse: flexibleVersions 2+ here, 3+ in Kafka"},
		{`"nullableVersions": "0+"`, `"nullableVersions": "1+"`, "CreateAclsResponse.Results.ErrorMessage: nullableVersions 0+ here, 1+ in Kafka"},
		{`"type": "int16"`, `"type": "int32"`, "CreateAclsResponse.Results.ErrorCode: type int16 here, int32 in Kafka"},
		{`{ "name": "ThrottleTimeMs", "type": "int32", "versions": "0+" }`,
			`{ "name": "ThrottleTimeMs", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }`,
			"CreateAclsResponse.ThrottleTimeMs: versions 0+ here, 1+ in Kafka; " +
				"CreateAclsResponse.ThrottleTimeMs: taggedVersions none here, 1+ in Kafka; " +
				"CreateAclsResponse.ThrottleTimeMs: tag -1 here, 0 in Kafka"},
		{`"name": "ErrorMessage"`, `"name": "Message"`, "CreateAclsResponse.Results: fields [ErrorCode ErrorMessage] here, [ErrorCode Message] in Kafka"},
	} {
		changed := strings.Replace(string(kafka), c.from, c.to, 1)
		if changed == string(kafka) {
			t.Fatalf("%q is not in the facts", c.from)
		}
		diffs, err := diffDef(ours, []byte(changed))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(diffs, "; "); got != c.want {
			t.Errorf("with %s:\n got %s\nwant %s", c.to, got, c.want)
		}
	}
}

func TestHeadersMatchKafka(t *testing.T) {
	kafkaName := map[string]string{
		"request_api_key":     "RequestApiKey",
		"request_api_version": "RequestApiVersion",
		"correlation_id":      "CorrelationId",
		"client_id":           "ClientId",
	}
	for _, h := range []struct {
		file     string
		fields   []*Field
		flexFrom int16
		version  func(key, v int16) int16
	}{
		{"RequestHeader.json", requestHeaderFields, requestHeaderFlexFrom,
			func(key, v int16) int16 { return requestHeaderVersion(key, v, isFlexibleBuiltin(key, v)) }},
		{"ResponseHeader.json", responseHeaderFields, responseHeaderFlexFrom,
			func(key, v int16) int16 { return responseHeaderVersion(key, isFlexibleBuiltin(key, v)) }},
	} {
		src, err := os.ReadFile(filepath.Join("testdata", "kafka", h.file))
		if err != nil {
			t.Fatal(err)
		}
		k, kf, err := readDefJSON(src)
		if err != nil {
			t.Fatalf("%s: %v", h.file, err)
		}
		for _, d := range diffFields(k.Name, factsOfFields(h.fields, kafkaName), kf) {
			t.Error(d)
		}
		flex, err1 := ParseVersions(k.FlexibleVersions)
		valid, err2 := ParseVersions(k.ValidVersions)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v, %v", h.file, err1, err2)
		}
		if got := (Versions{h.flexFrom, math.MaxInt16}); got != flex {
			t.Errorf("%s: flexible from %s here, %s in Kafka", k.Name, got, flex)
		}
		// Every header version kdissect expects is one Kafka defines.
		for key := int16(0); key <= MaxAPIKey; key++ {
			for v := int16(0); v <= MaxVersion(key); v++ {
				if hv := h.version(key, v); !valid.Has(hv) {
					t.Errorf("%s v%d: %s v%d, Kafka's are %s", APIName(key), v, k.Name, hv, valid)
				}
			}
		}
	}
}
