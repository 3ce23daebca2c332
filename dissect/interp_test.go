package dissect

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/jsonc"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The wire types the ACL APIs never used, read by the same interpreter:
// nullable structs, records, UUIDs, float64s, arrays of enum values and
// versions newer than the definitions; each malformed as well as well
// formed.

// describeTopicPartitions is a DescribeTopicPartitions v0 request (75, a
// nullable Cursor struct at its end) with the cursor's marker byte given.
func describeTopicPartitions(marker string) []byte {
	return rawRequest(75, 0, "02 0274 00 00000064 "+marker)
}

func TestNullableStruct(t *testing.T) {
	for _, c := range []struct {
		name, body string
		null       bool
		problems   []Problem
	}{
		{"present", "01 0274 00000003 00 00", false, nil},
		{"null", "ff 00", true, nil},
		// Kafka reads any marker that is not negative as "present".
		{"odd marker", "07 0274 00000003 00 00", false, []Problem{{0x18, "nullable struct marker is 7, not -1 or 1"}}},
		{"other negative marker", "80 00", true, []Problem{{0x18, "nullable struct marker is -128, not -1 or 1"}}},
		{"cut before the marker", "", false, []Problem{{0x18, "truncated: needs 1 bytes, 0 left"}}},
		{"cut inside", "01 0274 0000", false, []Problem{{0x1b, "truncated: needs 4 bytes, 2 left"}}},
	} {
		frame := describeTopicPartitions(c.body)
		m := Builtin().Decode(frame, Options{})
		if !reflect.DeepEqual(m.Problems, c.problems) {
			t.Errorf("%s: problems %v, want %v", c.name, m.Problems, c.problems)
		}
		if err := checkShape(m, frame, len(c.problems) == 0); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		cur := m.Tree.Find("DescribeTopicPartitionsRequest", "Cursor")
		if cur == nil || cur.Offset != 0x18 {
			t.Fatalf("%s: Cursor %+v", c.name, cur)
		}
		marker := cur.Child("present")
		if marker == nil || marker.Offset != 0x18 {
			t.Errorf("%s: no marker child: %+v", c.name, cur.Children)
		}
		if cur.Null != c.null {
			t.Errorf("%s: null %v", c.name, cur.Null)
		}
		if c.null {
			if cur.Display() != "null" || len(cur.Children) != 1 || cur.Size != 1 {
				t.Errorf("%s: %q with %d children, %d bytes", c.name, cur.Display(), len(cur.Children), cur.Size)
			}
			if cur.Value() != nil || !strings.Contains(string(AppendJSON(nil, m)), `"name":"Cursor","type":"Cursor","value":null,"display":"null"`) {
				t.Errorf("%s: JSON %s", c.name, AppendJSON(nil, m))
			}
		}
		if c.name == "present" {
			if n := cur.Child("PartitionIndex"); n == nil || n.Int != 3 || cur.Display() != "struct" {
				t.Errorf("present: %+v", cur)
			}
		}
	}
	// kmsg writes the same bytes for both.
	r := kmsg.NewPtrDescribeTopicPartitionsRequest()
	rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	rt.Topic = "t"
	r.Topics = append(r.Topics, rt)
	r.ResponsePartitionLimit = 100
	if got, want := r.AppendTo(nil), describeTopicPartitions("ff 00")[16:]; string(got) != string(want) {
		t.Errorf("kmsg writes %x, the test %x", got, want)
	}
}

// A records field is length-prefixed bytes (nullable) whose value is the
// record batches it holds, dissected below it.
func TestRecordsField(t *testing.T) {
	r := kmsg.NewPtrProduceRequest()
	r.SetVersion(9)
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "orders"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = oracleBatch('x')
	tp.Partitions = append(tp.Partitions, p)
	r.Topics = append(r.Topics, tp)
	m := Builtin().Decode(oracleFrame(0, 9, true, true, r.AppendTo(nil)), Options{})
	n := m.Tree.Find("ProduceRequest", "TopicData", "TopicProduceData[0]", "PartitionData", "PartitionProduceData[0]", "Records")
	if len(m.Problems) > 0 || n == nil {
		t.Fatalf("problems %v, Records %+v", m.Problems, n)
	}
	if n.Type != "records" || string(n.Bytes) != string(p.Records) || n.Size != 1+len(p.Records) || len(n.Children) == 0 {
		t.Errorf("Records %s %q, %d bytes, %d children", n.Type, n.Display(), n.Size, len(n.Children))
	}
	// Null records (a fetch that returned nothing) are legal.
	f := kmsg.NewPtrFetchResponse()
	f.SetVersion(4)
	ft := kmsg.NewFetchResponseTopic()
	ft.Partitions = append(ft.Partitions, kmsg.NewFetchResponseTopicPartition())
	f.Topics = append(f.Topics, ft)
	m = Builtin().Decode(oracleFrame(1, 4, false, false, f.AppendTo(nil)), Options{Direction: Response, APIKey: 1, APIVersion: 4})
	n = m.Tree.Find("FetchResponse", "Responses", "FetchableTopicResponse[0]", "Partitions", "PartitionData[0]", "Records")
	if len(m.Problems) > 0 || n == nil || !n.Null || !strings.HasPrefix(n.Display(), "null (int32 len=-1)") {
		t.Errorf("problems %v, Records %+v", m.Problems, n)
	}
	// A records length beyond the frame is a problem at the length, and
	// nothing is read.
	frame := oracleFrame(0, 3, true, false, []byte{0xff, 0xff, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	m = Builtin().Decode(frame, Options{})
	if len(m.Problems) != 1 || m.Problems[0] != (Problem{Offset: 0x2b, Message: "bytes length 2147483647 exceeds the 0 bytes left"}) {
		t.Errorf("problems %v", m.Problems)
	}
}

func TestUUIDAndFloat64(t *testing.T) {
	// DescribeClientQuotas v0 response: one entry with a float64 quota.
	q := kmsg.NewPtrDescribeClientQuotasResponse()
	e := kmsg.NewDescribeClientQuotasResponseEntry()
	val := kmsg.NewDescribeClientQuotasResponseEntryValue()
	val.Key, val.Value = "producer_byte_rate", 1048576.5
	e.Values = append(e.Values, val)
	q.Entries = append(q.Entries, e)
	m := Builtin().Decode(oracleFrame(48, 0, false, false, q.AppendTo(nil)), Options{Direction: Response, APIKey: 48, APIVersion: 0})
	n := m.Tree.Find("DescribeClientQuotasResponse", "Entries", "EntryData[0]", "Values", "ValueData[0]", "Value")
	if len(m.Problems) > 0 || n == nil || n.Kind != KindFloat || n.Display() != "1.0485765e+06" || n.Value() != 1048576.5 || n.Size != 8 {
		t.Errorf("problems %v, Value %+v", m.Problems, n)
	}
	// Metadata v10 request: a topic by id.
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(10)
	mt := kmsg.NewMetadataRequestTopic()
	mt.TopicID = [16]byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8}
	md.Topics = append(md.Topics, mt)
	m = Builtin().Decode(oracleFrame(3, 10, true, true, md.AppendTo(nil)), Options{})
	n = m.Tree.Find("MetadataRequest", "Topics", "MetadataRequestTopic[0]", "TopicId")
	if len(m.Problems) > 0 || n == nil || n.Kind != KindUUID || n.Display() != "12345678-9abc-def0-0102-030405060708" || n.Size != 16 {
		t.Errorf("problems %v, TopicId %+v", m.Problems, n)
	}
	// Infinity and NaN are numbers JSON cannot hold; the JSON stays valid.
	val.Value = math.Inf(1)
	m = Builtin().Decode(oracleFrame(48, 0, false, false, q.AppendTo(nil)), Options{Direction: Response, APIKey: 48, APIVersion: 0})
	if !json.Valid(AppendJSON(nil, m)) {
		t.Errorf("JSON of an infinite quota is not valid: %s", AppendJSON(nil, m))
	}
}

// Arrays of integers name their elements with the field's table.
func TestArrayOfEnums(t *testing.T) {
	r := kmsg.NewPtrShareAcknowledgeRequest()
	r.SetVersion(1)
	tp := kmsg.NewShareAcknowledgeRequestTopic()
	p := kmsg.NewShareAcknowledgeRequestTopicPartition()
	b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	b.AcknowledgeTypes = []int8{1, 3, 9}
	p.AcknowledgementBatches = append(p.AcknowledgementBatches, b)
	tp.Partitions = append(tp.Partitions, p)
	r.Topics = append(r.Topics, tp)
	m := Builtin().Decode(oracleFrame(79, 1, true, true, r.AppendTo(nil)), Options{})
	arr := m.Tree.Find("ShareAcknowledgeRequest", "Topics", "AcknowledgeTopic[0]", "Partitions", "AcknowledgePartition[0]",
		"AcknowledgementBatches", "AcknowledgementBatch[0]", "AcknowledgeTypes")
	if len(m.Problems) > 0 || arr == nil {
		t.Fatalf("problems %v, %+v", m.Problems, arr)
	}
	var got []string
	for _, c := range arr.Children[1:] {
		got = append(got, c.Display())
	}
	if strings.Join(got, ", ") != "1 (ACCEPT), 3 (REJECT), 9 (unknown AcknowledgeType)" {
		t.Errorf("elements %v", got)
	}
}

// The tables named in the definitions: the values the protocol uses.
func TestFieldEnums(t *testing.T) {
	for _, c := range []struct {
		e    *Enum
		v    int64
		name string
	}{
		{configResourceType, 4, "BROKER"}, {configResourceType, 32, "GROUP"}, {configResourceType, 3, "unknown ConfigResourceType"},
		{configSource, 5, "DEFAULT_CONFIG"}, {configType, 9, "PASSWORD"}, {configOperation, 3, "SUBTRACT"},
		{coordinatorType, 2, "SHARE"}, {isolationLevel, 1, "READ_COMMITTED"}, {scramMechanism, 2, "SCRAM-SHA-512"},
		{acks, -1, "ALL"}, {groupMemberType, -1, "UNKNOWN"}, {deliveryState, 2, "ACKNOWLEDGED"}, {deliveryState, 1, "unknown DeliveryState"},
		{enums["ApiKey"], 58, "Envelope"},
	} {
		if got := c.e.Name(c.v); got != c.name {
			t.Errorf("%s %d: %s, want %s", c.e.title, c.v, got, c.name)
		}
	}
	// The tables follow their fields.
	for _, c := range []struct {
		key     int16
		request bool
		path    []string
		enum    *Enum
	}{
		{32, true, []string{"Resources", "ResourceType"}, configResourceType},
		{32, false, []string{"Results", "Configs", "ConfigSource"}, configSource},
		{32, false, []string{"Results", "Configs", "Synonyms", "Source"}, configSource},
		{44, true, []string{"Resources", "Configs", "ConfigOperation"}, configOperation},
		{29, true, []string{"ResourceTypeFilter"}, resourceType},
		{10, true, []string{"KeyType"}, coordinatorType},
		{1, true, []string{"IsolationLevel"}, isolationLevel},
		{51, true, []string{"Upsertions", "Mechanism"}, scramMechanism},
		{0, true, []string{"Acks"}, acks},
		{18, false, []string{"ApiKeys", "ApiKey"}, enums["ApiKey"]},
		{24, false, []string{"ResultsByTopicV3AndBelow", "ResultsByPartition", "PartitionErrorCode"}, errorCode},
		{78, false, []string{"Responses", "Partitions", "AcknowledgeErrorCode"}, errorCode},
	} {
		d := Builtin().reqDef(c.key)
		if !c.request {
			d = Builtin().respDef(c.key)
		}
		fs, f := d.Fields, (*Field)(nil)
		for _, name := range c.path {
			f = nil
			for _, x := range fs {
				if x.Name == name {
					f = x
				}
			}
			if f == nil {
				break
			}
			fs = f.Fields
		}
		if f == nil || f.enum != c.enum {
			t.Errorf("%s %v: enum %v, want %s", d.Name, c.path, f, c.enum.title)
		}
	}
}

// A response or request of a version newer than every definition is read
// as the newest one, with the problem first.
func TestNewerVersionDissectedAsNewest(t *testing.T) {
	r := kmsg.NewPtrMetadataRequest()
	r.SetVersion(13)
	r.Topics = append(r.Topics, kmsg.NewMetadataRequestTopic())
	body := r.AppendTo(nil)
	frame := oracleFrame(3, 14, true, true, body)
	m := Builtin().Decode(frame, Options{})
	if len(m.Problems) != 1 || m.Problems[0] != (Problem{Offset: 6, Message: "unsupported version v14 of MetadataRequest, dissected as v13"}) {
		t.Fatalf("problems %v", m.Problems)
	}
	b := m.Tree.Child("MetadataRequest")
	if b == nil || b.Doc != "message body, dissected as version 13, the newest kdissect knows" || m.Tree.Type != "message v14" || m.APIVersion != 14 {
		t.Fatalf("body %+v, root %s", b, m.Tree.Type)
	}
	if err := checkShape(m, frame, false); err != nil {
		t.Error(err)
	}
	if c := b.Find("Topics", "MetadataRequestTopic[0]", "Name"); c == nil || !c.Null {
		t.Errorf("Topics[0].Name %+v", c)
	}
}

// FuzzDecodeAnyAPI feeds arbitrary bytes to every definition, as a request
// (whose header names its API) and as a response of any API and version:
// no panic, and every tree keeps the invariants FuzzDecode checks.
func FuzzDecodeAnyAPI(f *testing.F) {
	for _, key := range []int16{0, 1, 3, 8, 11, 19, 32, 44, 51, 68, 75, 78} {
		req := kmsg.RequestForKey(key)
		v := req.MaxVersion()
		req.SetVersion(v)
		resp := req.ResponseKind()
		resp.SetVersion(v)
		f.Add(oracleFrame(key, v, true, req.IsFlexible(), req.AppendTo(nil)), uint8(key), uint8(v))
		f.Add(oracleFrame(key, v, false, resp.IsFlexible(), resp.AppendTo(nil)), uint8(key), uint8(v))
	}
	f.Fuzz(func(t *testing.T, frame []byte, key, ver uint8) {
		frame = frame[:len(frame):len(frame)]
		checkFuzzed(t, Builtin().Decode(frame, Options{}), frame)
		o := Options{Direction: Response, APIKey: int16(key) % (MaxAPIKey + 1), APIVersion: int16(ver % 32)}
		checkFuzzed(t, Builtin().Decode(frame, o), frame)
		o.Head = true
		if err := checkRendered(Builtin().Decode(frame, o)); err != nil {
			t.Fatalf("head decode: %v", err)
		}
	})
}

// A string from a known set shows as it is; one outside the set is noted
// (not a problem: brokers may add states), whatever its case.
func TestStringEnums(t *testing.T) {
	r := kmsg.NewPtrListGroupsResponse()
	r.SetVersion(5)
	for _, st := range []string{"Stable", "stable", "Bogus"} {
		g := kmsg.NewListGroupsResponseGroup()
		g.Group, g.GroupState, g.GroupType = "g", st, "consumer"
		r.Groups = append(r.Groups, g)
	}
	m := Builtin().Decode(oracleFrame(16, 5, false, true, r.AppendTo(nil)), Options{Direction: Response, APIKey: 16, APIVersion: 5})
	if len(m.Problems) > 0 {
		t.Fatal(m.Problems)
	}
	var got []string
	for i := range 3 {
		g := m.Tree.Find("ListGroupsResponse", "Groups", "ListedGroup["+itoa(int64(i))+"]")
		got = append(got, g.Child("GroupState").Display(), g.Child("GroupType").Display())
	}
	want := `"Stable" (compact, len+1=7)|"consumer" (compact, len+1=9)|"stable" (compact, len+1=7)|"consumer" (compact, len+1=9)|` +
		`"Bogus" (unknown GroupState) (compact, len+1=6)|"consumer" (compact, len+1=9)`
	if strings.Join(got, "|") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, "|"), want)
	}
	for _, c := range []struct{ field, err string }{
		{`{"name": "X", "type": "int8", "versions": "0+", "enum": "GroupState"}`, `enum "GroupState" on a field of type int8: it names string values`},
		{`{"name": "X", "type": "[]string", "versions": "0+", "enum": "GroupState"}`, ``},
	} {
		src := `{"apiKey": 16, "type": "request", "name": "D", "validVersions": "0", "fields": [` + c.field + `]}`
		_, err := NewRegistry().AddJSON([]byte(src))
		if (err == nil) != (c.err == "") || err != nil && err.Error() != "D.X: "+c.err {
			t.Errorf("%s: error %v, want %q", c.field, err, c.err)
		}
	}
	for _, c := range []struct {
		key  int16
		path []string
		enum *Enum
	}{
		{66, []string{"StateFilters"}, transactionState},
		{16, []string{"StatesFilter"}, groupState},
		{48, []string{"Components", "EntityType"}, quotaEntityType},
	} {
		fs, f := Builtin().reqDef(c.key).Fields, (*Field)(nil)
		for _, name := range c.path {
			for _, x := range fs {
				if x.Name == name {
					f = x
				}
			}
			fs = f.Fields
		}
		if f == nil || f.enum != c.enum {
			t.Errorf("%s %v: %+v", APIName(c.key), c.path, f)
		}
	}
}

// scanDef, the quick reader of definitions, reads every definition there
// is exactly as encoding/json does.
func TestScanDefReadsAsEncodingJSON(t *testing.T) {
	var srcs [][]byte
	files, _ := builtinDefs.ReadDir("defs")
	for _, f := range files {
		b, _ := builtinDefs.ReadFile("defs/" + f.Name())
		srcs = append(srcs, b)
	}
	for _, layer := range factLayers {
		fs, _ := filepath.Glob(filepath.Join("testdata", "kafka", layer, "*.json"))
		for _, f := range fs {
			b, _ := os.ReadFile(f)
			srcs = append(srcs, b)
		}
	}
	if len(srcs) < 500 {
		t.Fatalf("%d definitions", len(srcs))
	}
	for i, src := range srcs {
		quick, ok := scanDef(src)
		if !ok {
			t.Errorf("definition %d: the scanner gave up", i)
			continue
		}
		if slow := slowDef(t, src); !reflect.DeepEqual(quick, slow) {
			t.Errorf("definition %d reads otherwise", i)
		}
	}
	// Shapes it leaves to encoding/json: another type, a key that differs
	// in case only, an escape, a number that is not an integer.
	for _, src := range []string{`{"apiKey": "1"}`, `{"ApiKey": 1}`, `{"apiKey": 1.0}`, `{"fields": {}}`, `[1]`, `{"apiKey": 01}`} {
		if _, ok := scanDef([]byte(src)); ok {
			t.Errorf("%s: read by the scanner", src)
		}
	}
	for _, src := range []string{`{"name": "a\u00e9\"b", "apiKey": -3, "fields": [], "x": [true, {"y": null}, -1]}`, "// c\n{\"fields\": null}  trailing"} {
		quick, ok := scanDef([]byte(src))
		if !ok || !reflect.DeepEqual(quick, slowDef(t, []byte(src))) {
			t.Errorf("%s: %v, %+v", src, ok, quick)
		}
	}
}

func slowDef(t testing.TB, src []byte) jsonDef {
	var jd jsonDef
	if err := json.NewDecoder(bytes.NewReader(jsonc.Strip(src))).Decode(&jd); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return jd
}

// FuzzScanDef: whatever the scanner reads, encoding/json reads the same.
func FuzzScanDef(f *testing.F) {
	for _, name := range []string{"defs/FetchRequest.json", "defs/CreateAclsRequest.json", "defs/LeaderAndIsrRequest.json"} {
		b, _ := builtinDefs.ReadFile(name)
		f.Add(b)
	}
	f.Add([]byte(`{"apiKey": 1, "fields": [{"tag": "3", "default": {"a": [1, "x"]}}]}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		quick, ok := scanDef(src)
		if !ok {
			return
		}
		var slow jsonDef
		if err := json.NewDecoder(bytes.NewReader(jsonc.Strip(src))).Decode(&slow); err != nil {
			t.Fatalf("the scanner read what encoding/json refuses (%v): %+v", err, quick)
		}
		if !reflect.DeepEqual(quick, slow) {
			t.Fatalf("read otherwise:\n quick %+v\n  slow %+v", quick, slow)
		}
	})
}
