package dissect

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAPITable checks apis.go against franz-go's kmsg, a table maintained
// independently from Kafka's definitions: same API keys, newest version
// and first flexible version. Names follow Kafka's spelling; kmsg
// capitalises some acronyms, and AlterPartitionReassignments is the one
// real rename.
func TestAPITable(t *testing.T) {
	nameExceptions := map[int16]string{ // ours -> kmsg's
		4:  "LeaderAndISR",
		17: "SASLHandshake",
		22: "InitProducerID",
		29: "DescribeACLs",
		30: "CreateACLs",
		31: "DeleteACLs",
		36: "SASLAuthenticate",
		45: "AlterPartitionAssignments",
		50: "DescribeUserSCRAMCredentials",
		51: "AlterUserSCRAMCredentials",
		67: "AllocateProducerIDs",
	}
	for k := int16(0); k <= MaxAPIKey+20; k++ {
		r := kmsg.RequestForKey(k)
		if k > MaxAPIKey {
			if r != nil {
				t.Errorf("kmsg knows API key %d (%s), we stop at %d", k, kmsg.NameForKey(k), MaxAPIKey)
			}
			if MaxVersion(k) != -1 || !strings.HasPrefix(APIName(k), "Unknown(") {
				t.Errorf("key %d: MaxVersion %d, name %s", k, MaxVersion(k), APIName(k))
			}
			continue
		}
		if r == nil {
			t.Errorf("we name key %d %s, kmsg does not know it", k, APIName(k))
			continue
		}
		if got, want := MaxVersion(k), r.MaxVersion(); got != want {
			t.Errorf("%s: max version %d, kmsg %d", APIName(k), got, want)
		}
		flexFrom := int16(-1)
		for v := int16(0); v <= r.MaxVersion(); v++ {
			r.SetVersion(v)
			if r.IsFlexible() != isFlexibleBuiltin(k, v) {
				t.Errorf("%s v%d: flexible %v, kmsg %v", APIName(k), v, isFlexibleBuiltin(k, v), r.IsFlexible())
			}
			if r.IsFlexible() && flexFrom < 0 {
				flexFrom = v
			}
		}
		if apis[k].flexFrom != flexFrom {
			t.Errorf("%s: flexible from %d, kmsg %d", APIName(k), apis[k].flexFrom, flexFrom)
		}
		want := kmsg.NameForKey(k)
		if ex, ok := nameExceptions[k]; ok {
			if want != ex {
				t.Errorf("key %d: kmsg now calls it %s; update the exception", k, want)
			}
			continue
		}
		if APIName(k) != want {
			t.Errorf("key %d: %s, kmsg %s", k, APIName(k), want)
		}
		if got, ok := APIKeyByName(strings.ToUpper(want)); !ok || got != k {
			t.Errorf("APIKeyByName(%s) = %d, %v", want, got, ok)
		}
	}
	if _, ok := APIKeyByName("NoSuchApi"); ok {
		t.Error("APIKeyByName found NoSuchApi")
	}
	if APIName(-1) != "Unknown(-1)" || MaxVersion(-1) != -1 {
		t.Errorf("key -1: %s, max %d", APIName(-1), MaxVersion(-1))
	}
}

// TestBuiltinDefsAgreeWithTable: the definitions we ship agree with the
// API table and kmsg on valid and flexible versions.
func TestBuiltinDefsAgreeWithTable(t *testing.T) {
	// Where Kafka's definitions and kmsg disagree on the newest version:
	// Kafka defines InitProducerId v6 (not yet stable); kmsg knows versions
	// no Kafka definition in reach describes.
	newest := map[int16]int16{22: 6, 63: 1, 88: 0, 89: 0}
	for _, d := range Builtin().Defs() {
		want, ok := newest[d.APIKey]
		if !ok {
			want = MaxVersion(d.APIKey)
		}
		if d.Valid.Hi != want {
			t.Errorf("%s: valid up to v%d, want v%d", d.Name, d.Valid.Hi, want)
		}
		for v := d.Valid.Lo; v <= max(d.Valid.Hi, MaxVersion(d.APIKey)); v++ {
			if d.Flexible.Has(v) != isFlexibleBuiltin(d.APIKey, v) {
				t.Errorf("%s v%d: flexible %v, table %v", d.Name, v, d.Flexible.Has(v), !d.Flexible.Has(v))
			}
		}
		wantName := APIName(d.APIKey) + map[bool]string{true: "Request", false: "Response"}[d.Request]
		if d.Name != wantName {
			t.Errorf("definition %s for key %d", d.Name, d.APIKey)
		}
	}
}

// TestErrorCodes checks our ErrorCode table against franz-go's kerr, code
// by code in both directions. Kafka renamed NOT_LEADER_FOR_PARTITION to
// NOT_LEADER_OR_FOLLOWER (KIP-392); we use Kafka's current name.
func TestErrorCodes(t *testing.T) {
	renamed := map[int16][2]string{6: {"NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_FOR_PARTITION"}}
	const maxCode = 1000
	known := 0
	for c := int16(-1); c < maxCode; c++ {
		ours, ok := errorCode.Lookup(int64(c))
		if c == 0 {
			if ours != "NONE" {
				t.Errorf("code 0 is %q", ours)
			}
			continue
		}
		e := kerr.TypedErrorForCode(c)
		kerrKnows := e != nil && (e != kerr.UnknownServerError || c == -1)
		if ok != kerrKnows {
			t.Errorf("code %d: ours %q (%v), kerr knows it: %v", c, ours, ok, kerrKnows)
			continue
		}
		if !ok {
			continue
		}
		known++
		if r, isRenamed := renamed[c]; isRenamed {
			if ours != r[0] || e.Message != r[1] {
				t.Errorf("code %d: %s / %s, want the rename %s / %s", c, ours, e.Message, r[0], r[1])
			}
			continue
		}
		if ours != e.Message {
			t.Errorf("code %d: %s, kerr %s", c, ours, e.Message)
		}
	}
	if known < 130 {
		t.Errorf("only %d codes compared", known)
	}
	if got := errorCode.Name(9999); got != "unknown ErrorCode" {
		t.Errorf("Name(9999) = %q", got)
	}
}

// TestACLEnums checks the ACL enums against kmsg's. Kafka added
// TWO_PHASE_COMMIT (15) to the operations after kmsg v1.15.1 was cut.
func TestACLEnums(t *testing.T) {
	check := func(e *Enum, kname func(int8) string, newer map[int64]string) {
		t.Helper()
		for v := int64(-2); v < 40; v++ {
			ours, ok := e.Lookup(v)
			if name, isNewer := newer[v]; isNewer {
				if ours != name {
					t.Errorf("%s %d: %q, want %q", e.title, v, ours, name)
				}
				continue
			}
			theirs := kname(int8(v))
			// kmsg prints UNKNOWN for 0 and for every value it lacks.
			if v == 0 || theirs != "UNKNOWN" {
				if !ok || ours != theirs {
					t.Errorf("%s %d: ours %q, kmsg %q", e.title, v, ours, theirs)
				}
			} else if ok {
				t.Errorf("%s %d: we name it %q, kmsg does not know it", e.title, v, ours)
			}
		}
	}
	check(resourceType, func(v int8) string { return kmsg.ACLResourceType(v).String() }, nil)
	check(patternType, func(v int8) string { return kmsg.ACLResourcePatternType(v).String() }, nil)
	check(aclPermissionType, func(v int8) string { return kmsg.ACLPermissionType(v).String() }, nil)
	check(aclOperation, func(v int8) string { return kmsg.ACLOperation(v).String() }, map[int64]string{15: "TWO_PHASE_COMMIT"})
	if got := resourceType.Name(42); got != "unknown ResourceType" {
		t.Errorf("Name(42) = %q", got)
	}
}

// TestEnumsBelongToTheirField: a table names a field's values only where
// the definition says so, whatever the field is called; Kafka's error codes
// are the one table every API shares.
func TestEnumsBelongToTheirField(t *testing.T) {
	// DescribeConfigs' ResourceType is another table than the ACL one:
	// 4 is BROKER there, not CLUSTER.
	const describeConfigs = `{"apiKey": 32, "type": "request", "name": "DescribeConfigsRequest",
	  "validVersions": "0", "flexibleVersions": "none", "fields": [
	    {"name": "ResourceType", "type": "int8", "versions": "0+"},
	    {"name": "Operation", "type": "int8", "versions": "0+", "enum": "AclOperation"},
	    {"name": "ErrorCode", "type": "int16", "versions": "0+"}]}`
	r := NewRegistry()
	if _, err := r.AddJSON([]byte(describeConfigs)); err != nil {
		t.Fatal(err)
	}
	frame := []byte{0, 0, 0, 14, 0, 32, 0, 0, 0, 0, 0, 9, 0xff, 0xff, 4, 3, 0, 31}
	m := r.Decode(frame, Options{})
	if len(m.Problems) > 0 {
		t.Fatalf("problems: %v", m.Problems)
	}
	for _, c := range []struct{ field, name string }{
		{"ResourceType", ""}, {"Operation", "READ"}, {"ErrorCode", "CLUSTER_AUTHORIZATION_FAILED"},
	} {
		if n := m.Tree.Find("DescribeConfigsRequest", c.field); n == nil || n.EnumName() != c.name {
			t.Errorf("%s: %v, want name %q", c.field, n, c.name)
		}
	}
	known := slices.Sorted(maps.Keys(enums))
	for _, c := range []struct{ field, err string }{
		{`{"name": "X", "type": "int8", "versions": "0+", "enum": "Colour"}`, `unknown enum "Colour" (known: ` + strings.Join(known, ", ") + `)`},
		{`{"name": "X", "type": "string", "versions": "0+", "enum": "ResourceType"}`, `enum "ResourceType" on a field of type string: enums name int8, int16 or int32 values`},
		{`{"name": "X", "type": "[]string", "versions": "0+", "enum": "ResourceType"}`, `enum "ResourceType" on a field of type []string: enums name int8, int16 or int32 values`},
		{`{"name": "X", "type": "[]X", "versions": "0+", "enum": "ResourceType", "fields": [{"name": "Y", "type": "int8", "versions": "0+"}]}`, `enum "ResourceType" on a field of type []X: enums name int8, int16 or int32 values`},
	} {
		src := `{"apiKey": 32, "type": "request", "name": "D", "validVersions": "0", "fields": [` + c.field + `]}`
		if _, err := NewRegistry().AddJSON([]byte(src)); err == nil || err.Error() != "D.X: "+c.err {
			t.Errorf("%s: error %v, want %q", c.field, err, "D.X: "+c.err)
		}
	}
}
