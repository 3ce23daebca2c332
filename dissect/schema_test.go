package dissect

import (
	"math"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

func TestParseVersions(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Versions
		str  string
	}{
		{"0+", Versions{0, math.MaxInt16}, "0+"},
		{"3+", Versions{3, math.MaxInt16}, "3+"},
		{"1-3", Versions{1, 3}, "1-3"},
		{"2", Versions{2, 2}, "2"},
		{" 2 - 4 ", Versions{2, 4}, "2-4"},
		{"0-0", Versions{0, 0}, "0"},
		{"none", noVersions, "none"},
		{"", noVersions, "none"}, // as Kafka reads an absent nullableVersions
		{"32767", Versions{math.MaxInt16, math.MaxInt16}, "32767+"},
	} {
		got, err := parseVersions(c.in)
		if err != nil || got != c.want || got.String() != c.str {
			t.Errorf("ParseVersions(%q) = %v (%s), %v; want %v (%s)", c.in, got, got, err, c.want, c.str)
		}
	}
	for _, c := range []struct{ in, err string }{
		{"3-1", `version range "3-1" is empty`},
		{"abc", `bad version "abc"`},
		{"-1", `bad version ""`},
		{"+", `bad version ""`},
		{"1-", `bad version ""`},
		{"1-2-3", `bad version "2-3"`},
		{"40000", `bad version "40000"`},
		{"1.5+", `bad version "1.5"`},
	} {
		if got, err := parseVersions(c.in); err == nil || err.Error() != c.err {
			t.Errorf("ParseVersions(%q) = %v, %v; want error %q", c.in, got, err, c.err)
		}
	}
	r := Versions{1, 3}
	for v, want := range map[int16]bool{0: false, 1: true, 3: true, 4: false, -1: false} {
		if r.Has(v) != want {
			t.Errorf("%v.Has(%d) = %v", r, v, !want)
		}
	}
	if noVersions.Has(0) || noVersions.Has(1) {
		t.Error("none has a version")
	}
}

// describeRegistry is a registry with the DescribeAcls definitions of
// testdata loaded, as --schema-dir would load them.
func describeRegistry(t *testing.T) *Registry {
	t.Helper()
	r := NewRegistry()
	for _, name := range []string{"DescribeAclsRequest.json", "DescribeAclsResponse.json"} {
		d, err := r.AddJSON(readTestdata(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.APIKey != 29 || d.Valid != (Versions{0, 3}) || d.Flexible != (Versions{2, math.MaxInt16}) {
			t.Fatalf("%s parsed as %+v", name, d)
		}
	}
	return r
}

func TestLoadedDefinitionDecodes(t *testing.T) {
	r := describeRegistry(t)
	for v := int16(0); v <= 3; v++ {
		t.Run(vname(v), func(t *testing.T) {
			req := kmsg.NewPtrDescribeACLsRequest()
			req.SetVersion(v)
			req.ResourceType = userType(v)
			req.ResourceName = testkit.Ptr(unicodeRN)
			req.ResourcePatternType = kmsg.ACLResourcePatternTypeMatch
			req.Host = testkit.Ptr(longName)
			req.Operation, req.PermissionType = kmsg.ACLOperationDescribe, kmsg.ACLPermissionTypeAny
			req.UnknownTags.Set(40, []byte("?"))
			frame := testkit.KmsgRequest(req, 5, testkit.Ptr("describer"))
			e := expect{flex: req.IsFlexible()}
			fields := []want{
				e.int("ResourceTypeFilter", int64(req.ResourceType), 1),
				e.nstr("ResourceNameFilter", req.ResourceName),
			}
			if v >= 1 {
				fields = append(fields, e.int("PatternTypeFilter", int64(req.ResourcePatternType), 1))
			}
			fields = append(fields,
				e.nstr("PrincipalFilter", req.Principal),
				e.nstr("HostFilter", req.Host),
				e.int("Operation", int64(req.Operation), 1),
				e.int("PermissionType", int64(req.PermissionType), 1))
			m := r.Decode(frame, Options{})
			checkDecoded(t, m, frame, frameWant("DescribeAclsRequest", frame, requestHeaderWant(req, 5, testkit.Ptr("describer")),
				e.body("DescribeAclsRequest", &req.UnknownTags, fields...)))
			checkMessage(t, m, 29, v, 5)
			// The enum names come with a loaded definition too.
			if n := m.Tree.Find("DescribeAclsRequest", "Operation"); n == nil || n.EnumName() != "DESCRIBE" {
				t.Errorf("Operation not named: %v", n)
			}

			resp := kmsg.NewPtrDescribeACLsResponse()
			resp.SetVersion(v)
			resp.ThrottleMillis, resp.ErrorCode, resp.ErrorMessage = 10, 0, nil
			for i, name := range []string{"orders", longName} {
				res := kmsg.NewDescribeACLsResponseResource()
				res.ResourceType, res.ResourceName = kmsg.ACLResourceTypeTopic, name
				res.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
				for j := range i + 1 {
					a := kmsg.NewDescribeACLsResponseResourceACL()
					a.Principal, a.Host = unicodeP, "*"
					a.Operation, a.PermissionType = kmsg.ACLOperation(3+j), kmsg.ACLPermissionTypeAllow
					res.ACLs = append(res.ACLs, a)
				}
				resp.Resources = append(resp.Resources, res)
			}
			resp.Resources[1].UnknownTags.Set(2, []byte{7})
			frame = testkit.KmsgResponse(resp, 5)
			var resources []want
			for i := range resp.Resources {
				res := &resp.Resources[i]
				var acls []want
				for j := range res.ACLs {
					a := &res.ACLs[j]
					acls = append(acls, e.elem("AclDescription["+itoa(int64(j))+"]", &a.UnknownTags,
						e.str("Principal", a.Principal), e.str("Host", a.Host),
						e.int("Operation", int64(a.Operation), 1), e.int("PermissionType", int64(a.PermissionType), 1)))
				}
				fields := []want{e.int("ResourceType", int64(res.ResourceType), 1), e.str("ResourceName", res.ResourceName)}
				if v >= 1 {
					fields = append(fields, e.int("PatternType", int64(res.ResourcePatternType), 1))
				}
				fields = append(fields, e.array("Acls", acls))
				resources = append(resources, e.elem("DescribeAclsResource["+itoa(int64(i))+"]", &res.UnknownTags, fields...))
			}
			m = r.Decode(frame, Options{Direction: Response, APIKey: 29, APIVersion: v})
			checkDecoded(t, m, frame, frameWant("DescribeAclsResponse", frame, responseHeaderWant(resp, 5),
				e.body("DescribeAclsResponse", &resp.UnknownTags,
					e.int("ThrottleTimeMs", 10, 4), e.int("ErrorCode", 0, 2), e.nstr("ErrorMessage", nil),
					e.array("Resources", resources))))
			checkMessage(t, m, 29, v, 5)
		})
	}
	// The built-in registry is not changed by loading into another.
	if Builtin().reqDef(29) == r.reqDef(29) || Builtin().respDef(29) == r.respDef(29) {
		t.Error("NewRegistry().AddJSON replaced Builtin()'s DescribeAcls")
	}
}

// A definition comment marker inside a string is text, not a comment.
func TestDefinitionCommentInString(t *testing.T) {
	d, err := parseDef(readTestdata(t, "DescribeAclsRequest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Fields[1].About; !strings.HasSuffix(got, "(not // a comment).") {
		t.Errorf("about: %q", got)
	}
}

// taggedDef knows two tagged fields of the request body: tag 0, a
// nullable string, and tag 3, an int32.
const taggedDef = `// A test definition with tagged fields.
{
  "apiKey": 29, "type": "request", "name": "TaggedRequest",
  "validVersions": "0-3", "flexibleVersions": "0+",
  "fields": [
    { "name": "Mode", "type": "int8", "versions": "0+", "about": "a positional field" },
    { "name": "Comment", "type": "string", "versions": "0+", "nullableVersions": "0+",
      "tag": 0, "taggedVersions": "0+", "about": "a tagged string" },
    { "name": "Limit", "type": "int32", "versions": "0+", "tag": 3, "taggedVersions": "0+",
      "about": "a tagged int32" }
  ]
}`

// taggedFrame is a TaggedRequest v0 (flexible, header v2) whose body is
// Mode 1, then the tagged section given in hex.
func taggedFrame(tagged string) []byte {
	b := hexBytes("00000000 001d 0000 00000009 ffff 00 01")
	return testkit.SetSize(append(b, hexBytes(tagged)...))
}

func TestKnownTaggedFields(t *testing.T) {
	r := NewRegistry()
	if _, err := r.AddJSON([]byte(taggedDef)); err != nil {
		t.Fatal(err)
	}
	// The body starts at 0x0f: Mode at 0x0f, the tagged count at 0x10.
	frame := taggedFrame("03 00 06 06 68656c6c6f 03 04 000003e8 63 01 00")
	m := r.Decode(frame, Options{})
	if err := checkShape(m, frame, false); err != nil {
		t.Fatal(err)
	}
	if len(m.Problems) != 0 {
		t.Fatalf("problems: %v", m.Problems)
	}
	tf := m.Tree.Find("TaggedRequest", "tagged_fields")
	if tf == nil || tf.Int != 3 || len(tf.Children) != 3 {
		t.Fatalf("tagged_fields: %+v", tf)
	}
	for i, w := range []struct{ display, child, value string }{
		{"0 (Comment)", "Comment", `"hello" (compact, len+1=6)`},
		{"3 (Limit)", "Limit", "1000"},
		{"99 (unknown tag)", "data", "0x00"},
	} {
		f := tf.Children[i]
		if f.Display() != w.display {
			t.Errorf("TaggedField[%d] = %s, want %s", i, f.Display(), w.display)
		}
		if c := f.Child(w.child); c == nil || c.Display() != w.value {
			t.Errorf("TaggedField[%d]/%s = %v, want %s", i, w.child, c, w.value)
		}
	}
	// A tagged field is not also read positionally: Mode is the only
	// field before the tagged section.
	if body := m.Tree.Child("TaggedRequest"); len(body.Children) != 2 || body.Children[0].Name != "Mode" {
		t.Errorf("body children: %v", body.Children)
	}

	// A known field shorter than its tagged size leaves bytes unread; one
	// longer runs out of its tagged size, not into the next field.
	for _, c := range []struct {
		tagged string
		want   []Problem
	}{
		{"01 03 06 000003e8 ffff", []Problem{{0x17, "2 bytes of tagged field Limit left unread"}}},
		{"01 03 02 0003 00", []Problem{{0x13, "truncated: needs 4 bytes, 2 left"}}},
	} {
		frame := taggedFrame(c.tagged)
		m := r.Decode(frame, Options{})
		if err := checkShape(m, frame, false); err != nil {
			t.Error(err)
		}
		if len(m.Problems) != len(c.want) || m.Problems[0] != c.want[0] {
			t.Errorf("%s: problems %v, want %v", c.tagged, m.Problems, c.want)
		}
	}
}

func TestBadDefinitions(t *testing.T) {
	def := func(fields string) string {
		return `{"apiKey": 29, "type": "request", "name": "X", "validVersions": "0-1", "fields": [` + fields + `]}`
	}
	for _, c := range []struct{ src, err string }{
		{`not json`, "not a Kafka message definition: invalid character 'o' in literal null (expecting 'u')"},
		{`{"type": "request", "name": "X"}`, "definition has no apiKey"},
		{`{"apiKey": 40000, "type": "request", "name": "X"}`, "apiKey 40000 out of range"},
		{`{"apiKey": 1, "type": "request"}`, "definition has no name"},
		{`{"apiKey": 1, "type": "event", "name": "X", "validVersions": "0"}`, `X: type "event" is not request or response`},
		{`{"apiKey": 1, "type": "request", "name": "X"}`, "X: validVersions is missing"},
		{`{"apiKey": 1, "type": "request", "name": "X", "validVersions": "3-1"}`, `X: validVersions: version range "3-1" is empty`},
		{`{"apiKey": 1, "type": "request", "name": "X", "validVersions": "0", "flexibleVersions": "x"}`, `X: flexibleVersions: bad version "x"`},
		{def(`{"name": "F", "type": "Nope", "versions": "0+"}`), `X.F: unknown type "Nope"`},
		{def(`{"name": "F", "type": "[]Nope", "versions": "0+"}`), `X.F: unknown type "[]Nope"`},
		{def(`{"name": "F", "type": "int8"}`), "X.F: field has no versions"},
		{def(`{"type": "int8", "versions": "0+"}`), "X.: field needs a name and a type"},
		{def(`{"name": "F", "type": "int8", "versions": "0+", "nullableVersions": "x"}`), `X.F: nullableVersions: bad version "x"`},
		{def(`{"name": "F", "type": "int8", "versions": "0+", "taggedVersions": "0+"}`), "X.F: taggedVersions without a tag"},
		{def(`{"name": "F", "type": "int8", "versions": "0+", "tag": -1, "taggedVersions": "0+"}`), "X.F: tag -1 out of range"},
		{def(`{"name": "S", "type": "S1", "versions": "0+", "fields": [{"name": "G", "type": "int9", "versions": "0+"}]}`), `X.S: S1.G: unknown type "int9"`},
		{`{"apiKey": 1, "type": "request", "name": "X", "validVersions": "0",
		  "fields": [{"name": "A", "type": "A", "versions": "0+"}],
		  "commonStructs": [{"name": "A", "versions": "0+", "fields": [{"name": "B", "type": "[]A", "versions": "0+"}]}]}`,
			`X.A: A.B: struct "A" contains itself`},
	} {
		r := NewRegistry()
		before := len(r.Defs())
		d, err := r.AddJSON([]byte(c.src))
		if err == nil || err.Error() != c.err {
			t.Errorf("%s:\n got %v\nwant %s", c.src, err, c.err)
		}
		if d != nil || len(r.Defs()) != before {
			t.Errorf("%s: a bad definition was added", c.src)
		}
	}
}

// TestRegistryReplaces: AddJSON replaces the definition of the same API and
// direction, and Defs lists them by key, request first.
func TestRegistryReplaces(t *testing.T) {
	// A registry starts out with every request and response of every API
	// kdissect names.
	r := loadBuiltin("defs/*Acls*.json").AddSASL()
	if n := len(r.Defs()); n != 10 {
		t.Fatalf("%d definitions of ACL and SASL APIs", n)
	}
	if n := len(NewRegistry().Defs()); n != 2*int(MaxAPIKey+1) {
		t.Errorf("%d built-in definitions", n)
	}
	src := `{"apiKey": 30, "type": "request", "name": "Replaced", "validVersions": "0", "fields": [
	  {"name": "Only", "type": "int32", "versions": "0+"}]}`
	if _, err := r.AddJSON([]byte(src)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range r.Defs() {
		names = append(names, d.Name)
	}
	if got := strings.Join(names, " "); got != "SaslHandshakeRequest SaslHandshakeResponse DescribeAclsRequest DescribeAclsResponse Replaced CreateAclsResponse DeleteAclsRequest DeleteAclsResponse SaslAuthenticateRequest SaslAuthenticateResponse" {
		t.Errorf("Defs: %s", got)
	}
	frame := hexBytes("00000000 001e 0000 00000001 ffff 00000007")
	m := r.Decode(testkit.SetSize(frame), Options{})
	if n := m.Tree.Find("Replaced", "Only"); n == nil || n.Int != 7 || len(m.Problems) != 0 {
		t.Errorf("replaced definition not used: %v %v", n, m.Problems)
	}
	if Builtin().Decode(frame, Options{}).Tree.Child("CreateAclsRequest") == nil {
		t.Error("the built-in registry changed")
	}
}
