package filter

import (
	"context"
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/dissect/audit"
	"github.com/kdissect/kdissect/internal/capture"
)

// Every way a filter can be wrong is one sentence that says where.
func TestErrorsPointAtTheColumn(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{`Principle == "x"`, `unknown field "Principle" at 1; did you mean "Principal"?`},
		{`api == "DeleteAcls" && principl == "User:bob"`, `unknown field "principl" at 24; did you mean "principal"?`},
		{`Creations.Principle contains "a"`, `unknown field "Creations.Principle" at 1; did you mean "Creations.Principal"?`},
		{`Zzyzx`, `unknown field "Zzyzx" at 1`},
		{`api == "CreateAcl"`, `"CreateAcl" is not a value of api at 8; did you mean "CreateAcls"?`},
		{`direction == "reqest"`, `"reqest" is not a value of direction at 14; did you mean "request"?`},
		{`event in {"gap" "evicted" "gapp"}`, `"gapp" is not a value of event at 27; did you mean "gap"?`},
		{`latency_us > "abc"`, `cannot compare latency_us (a number) with "abc" at 14`},
		{`Operation == "WRTIE"`, `cannot compare Operation (a number or a name of one) with "WRTIE" at 14; did you mean "WRITE"?`},
		{`api_key == "CreateAcl"`, `cannot compare api_key (a number or a name of one) with "CreateAcl" at 12; did you mean "CreateAcls"?`},
		{`Operation > "WRITE"`, `">" orders numbers: "WRITE" is a name, give its number at 13`},
		{`src == 300.1.2.3`, `cannot compare src (an address) with "300.1.2.3" at 8`},
		{`time > "yesterday"`, `cannot compare time (a time) with "yesterday" at 8`},
		{`malformed > 1`, `">" compares numbers, strings, bytes and times; malformed is true or false at 11`},
		{`malformed == yes`, `cannot compare malformed (true or false) with "yes" at 14`},
		{`latency_us contains "1"`, `"contains" reads text, bytes and the names of numbers; latency_us is a number at 12`},
		{`api ==`, `"==" needs a value after it at 7`},
		{`api == &&`, `unexpected "&&"; "==" needs a value after it at 8`},
		{`(malformed || tls`, `"(" is never closed at 1`},
		{`malformed )`, `")" closes no "(" at 11`},
		{`malformed tls`, `unexpected "tls"; tests are joined with && or || at 11`},
		{`api = "CreateAcls"`, `'=' is not an operator (== compares) at 5`},
		{`malformed & tls`, `'&' is not an operator (&& and || join tests) at 11`},
		{`api == "CreateAcls`, `string not closed at 8`},
		{`ResourceName matches "(("`, `invalid regular expression "((": missing closing ) at 22`},
		{`ResourceName matches orders`, `matches takes a regular expression in double quotes at 22`},
		{`Principal == principal`, `principal names a field: comparing two fields is not supported (quote it to compare with the text "principal") at 14`},
		{`len(Principal) > 3`, `len(): functions are not supported at 1`},
		{`ResourceName[0:2] == "or"`, `slices ([...]) are not supported at 13`},
		{`30 == api_key`, `"30" is not a field name; a test starts with one at 1`},
		{`api == "CreateAcls" and`, `the filter ends where a test should follow at 24`},
		{`all api`, `"all" needs a comparison after api at 8`},
		{`api in {}`, `the set is empty at 8`},
		{`api in {"CreateAcls"`, `"{" is never closed at 8`},
		{`api in "CreateAcls"`, `"in" takes a set of values in braces, {a b c} at 8`},
		{`packets in {1 .. }`, `unexpected "}"; ".." needs a value after it at 18`},
		{`ResourceName in {..5}`, `a range needs a value before ".." at 18`},
		{`principal == "é" && Principl == "x"`, `unknown field "Principl" at 21; did you mean "Principal"?`},
		{`tls.version == 1.3 || $x`, `'$' (field references, raw values and layers) is not supported at 23`},
	} {
		_, err := Compile(c.expr)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.expr, err, c.want)
		}
	}
}

// The parts kdissect dissects inside a field (SASL tokens, record
// batches) are fields too, although no definition names them.
func TestTreeOnlyNames(t *testing.T) {
	for _, e := range []string{`username == "alice"`, `key contains "user-" && value contains "{"`,
		`producer_id == 7 && base_offset > 0 && headers`} {
		if _, err := Compile(e); err != nil {
			t.Errorf("%s: %v", e, err)
		}
	}
}

func TestBlankIsNoFilter(t *testing.T) {
	for _, s := range []string{"", "  \t"} {
		f, err := Compile(s)
		if f != nil || err != nil {
			t.Errorf("%q: %v, %v", s, f, err)
		}
		if !f.Record(&capture.Record{}) || f.NeedsBody() || f.NeedsRecords() || f.String() != "" {
			t.Errorf("a nil filter must match everything")
		}
	}
}

// A filter needs the records of a batch decoded when it reads a body
// field or a message's problems, which a damaged record puts there; not
// for the header, the exchange or the summary.
func TestNeedsRecords(t *testing.T) {
	for expr, want := range map[string]bool{
		`api == "Produce"`:                 false,
		`summary contains "orders"`:        false,
		`principal == "User:bob" && tls`:   false,
		`malformed`:                        true,
		`_ws.malformed`:                    true,
		`!malformed`:                       true,
		`problems.message contains "CRC"`:  true,
		`problems.offset > 10`:             true,
		`api == "Fetch" || malformed`:      true,
		`kafka.message_key == "k"`:         true,
		`ErrorCode != 0`:                   true,
		`api == "Produce" && Topic == "t"`: true,
	} {
		f, err := Compile(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if f.NeedsRecords() != want {
			t.Errorf("%s: NeedsRecords %v, want %v", expr, !want, want)
		}
	}
}

// item is an entry-like accessor, as the explorer would hand one.
type item struct {
	fields map[string][]Value
	msg    *dissect.Message
}

func (it item) Field(name string, yield func(Value) bool) {
	for _, v := range it.fields[name] {
		if !yield(v) {
			return
		}
	}
}

func (it item) Message() *dissect.Message { return it.msg }

// Wireshark 4's semantics: any occurrence satisfies ==, != is !(==), ~=
// is "some occurrence differs", an absent field equals and differs from
// nothing.
func TestOccurrenceSemantics(t *testing.T) {
	when := time.Date(2026, 11, 29, 18, 24, 47, 500_000_000, time.UTC)
	it := item{fields: map[string][]Value{
		"packets":   {Int(3, ""), Int(5, "")},
		"principal": {String("User:alice")},
		"src":       {Addr(netip.MustParseAddrPort("192.0.2.10:50500"))},
		"malformed": {Bool(false)},
		"tls":       {Bool(true)},
		"inferred":  {Bool(false)},
		"time":      {Time(when)},
		"api_key":   {Int(30, "CreateAcls")},
	}}
	for _, c := range []struct {
		expr string
		want bool
	}{
		{`packets == 3`, true}, {`packets eq 5`, true}, {`packets == 4`, false},
		{`packets != 3`, false}, {`packets != 4`, true}, {`packets ne 4`, true},
		{`packets ~= 3`, true}, {`packets ~= 3 && packets ~= 5`, true}, {`packets any_ne 3`, true},
		{`packets !== 3`, true}, {`packets === 3`, false}, {`packets all_eq 3`, false},
		{`any packets != 3`, true}, {`all packets != 4`, true}, {`all packets ~= 3`, false},
		{`packets > 4`, true}, {`packets < 3`, false}, {`packets <= 3`, true}, {`packets ge 6`, false},
		{`all packets > 2`, true}, {`all packets > 3`, false}, {`all packets == 3`, false},
		{`packets in {4..6}`, true}, {`packets in {4 .. 4}`, false}, {`packets in {1, 2, 3}`, true},
		{`packets not in {3 5}`, false}, {`packets not in {4}`, true}, {`packets == 0x3`, true},
		{`packets == 03`, true}, {`packets == 0b11`, true}, {`packets == '\x03'`, true},
		// absent: latency_us, peer
		{`latency_us == 5`, false}, {`latency_us != 5`, true}, {`latency_us ~= 5`, false},
		{`!latency_us`, true}, {`latency_us`, false}, {`all latency_us > 1`, false}, {`latency_us not in {1}`, true},
		// flags are their truth; present either way
		{`malformed`, false}, {`!malformed`, true}, {`malformed == false`, true}, {`malformed == 0`, true},
		{`tls`, true}, {`tls == TRUE`, true},
		// not > and > xor > or, left to right
		{`tls || malformed && inferred`, true}, {`(tls || malformed) && inferred`, false},
		{`tls ^^ malformed`, true}, {`tls xor tls`, false}, {`not tls`, false}, {`!!tls`, true},
		{`malformed && inferred || tls`, true}, {`malformed ^^ tls || tls`, true},
		{`tls and not malformed`, true}, {`!(tls && malformed) && tls`, true},
		// strings: matches is case-insensitive unless (?-i)
		{`principal == "User:alice"`, true}, {`principal == User:alice`, true}, {`principal == "user:alice"`, false},
		{`principal matches "^user:"`, true}, {`principal ~ "^user:"`, true}, {`principal matches "(?-i)^user:"`, false},
		{`principal contains "ali"`, true}, {`principal contains "Ali"`, false},
		{`principal < "User:b"`, true}, {`principal > "User:b"`, false},
		{`principal == "User:\x61lice"`, true}, {`principal == "User:\141lice"`, true}, {`principal == "User:\u0061lice"`, true},
		{`principal in {"User:bob" "User:alice"}`, true}, {`principal in {"User:a" .. "User:b"}`, true},
		// addresses: with a port, without, a prefix; text for contains
		{`src == 192.0.2.10`, true}, {`src == 192.0.2.10:50500`, true}, {`src == 192.0.2.10:1`, false},
		{`src == 192.0.2.0/24`, true}, {`src == 10.0.0.0/8`, false}, {`src == "[2001:db8::1]:9092"`, false},
		{`src contains ":505"`, true}, {`src in {10.0.0.1 192.0.2.10}`, true},
		// times: ISO 8601, UTC without a zone
		{`time >= "2026-11-29"`, true}, {`time < "2026-11-29T18:24:47"`, false}, {`time > "2026-11-29 18:24:47"`, true},
		{`time == "2026-11-29T18:24:47.5Z"`, true}, {`time < "2026-11-29T19:00:00+01:00"`, false},
		{`time in {"2026-11-29" .. "2026-11-30"}`, true}, {`time contains "18:24:47.5"`, true},
		// a number with names
		{`api_key == "CreateAcls"`, true}, {`api_key == 30`, true}, {`api_key < "DeleteAcls"`, true},
		{`api_key matches "acl"`, true}, {`api_key contains "Delete"`, false},
	} {
		f, err := Compile(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := f.Match(it); got != c.want {
			t.Errorf("%s = %v, want %v", c.expr, got, c.want)
		}
		if f.NeedsBody() {
			t.Errorf("%s reads no body field", c.expr)
		}
	}
}

// records reads a shipped capture, calling fn with each record.
func records(t *testing.T, file string, o capture.Options, fn func(r *capture.Record)) {
	t.Helper()
	r, err := capture.Open(o, []string{"../../testdata/pcaps/" + file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Read(context.Background(), capture.ListenerFunc(fn)); err != nil {
		t.Fatal(err)
	}
}

// nodesNamed are the values of the nodes called name anywhere in a body,
// found without the filter's own walk.
func nodesNamed(m *dissect.Message, name string) []*dissect.Node {
	var out []*dissect.Node
	for _, c := range m.Tree.Children {
		if c.Category != dissect.CatRequestBody && c.Category != dissect.CatResponseBody {
			continue
		}
		c.Walk(func(n *dissect.Node, _ int) {
			if n.Name == name {
				out = append(out, n)
			}
		})
	}
	return out
}

// Body fields at any depth and by path, against the trees themselves.
func TestBodyFieldsOnShippedCaptures(t *testing.T) {
	type check struct {
		expr string
		want func(r *capture.Record) bool
	}
	anyNode := func(name string, ok func(n *dissect.Node) bool) func(r *capture.Record) bool {
		return func(r *capture.Record) bool {
			if r.Kind != capture.KindMessage {
				return false
			}
			return slices.ContainsFunc(nodesNamed(r.Message, name), ok)
		}
	}
	str := func(s string) func(n *dissect.Node) bool {
		return func(n *dissect.Node) bool { return n.Kind == dissect.KindString && !n.Null && n.Str == s }
	}
	checks := []check{
		{`Principal == "User:bob"`, anyNode("Principal", str("User:bob"))},
		{`Creations.Principal == "User:bob"`, func(r *capture.Record) bool {
			return r.Kind == capture.KindMessage && r.Message.Direction == dissect.Request && r.Message.APIKey == 30 &&
				slices.ContainsFunc(nodesNamed(r.Message, "Principal"), str("User:bob"))
		}},
		{`FilterResults.MatchingAcls.Principal == "User:bob"`, func(r *capture.Record) bool {
			return r.Kind == capture.KindMessage && r.Message.APIKey == 31 && r.Message.Direction == dissect.Response &&
				slices.ContainsFunc(nodesNamed(r.Message, "Principal"), str("User:bob"))
		}},
		{`ErrorCode ~= 0`, anyNode("ErrorCode", func(n *dissect.Node) bool { return n.Int != 0 })},
		{`ErrorCode == "CLUSTER_AUTHORIZATION_FAILED"`, anyNode("ErrorCode", func(n *dissect.Node) bool { return n.Int == 31 })},
		{`!(ErrorCode == 0) && ErrorCode`, func(r *capture.Record) bool {
			ns := nodesNamed(r.Message, "ErrorCode")
			return len(ns) > 0 && !slices.ContainsFunc(ns, func(n *dissect.Node) bool { return n.Int == 0 })
		}},
		{`Operation in {"WRITE" "ALL"}`, anyNode("Operation", func(n *dissect.Node) bool { return n.Int == 4 || n.Int == 2 })},
		{`ResourceType == 2`, anyNode("ResourceType", func(n *dissect.Node) bool { return n.Int == 2 })},
		{`ResourceName matches "^orders"`, anyNode("ResourceName", func(n *dissect.Node) bool { return strings.HasPrefix(n.Str, "orders") })},
		{`Creations > 2`, anyNode("Creations", func(n *dissect.Node) bool { return n.Int > 2 })},
		{`ErrorMessage`, anyNode("ErrorMessage", func(*dissect.Node) bool { return true })},
		{`ErrorMessage contains ""`, anyNode("ErrorMessage", func(n *dissect.Node) bool { return !n.Null })},
	}
	var fs []*Filter
	for _, c := range checks {
		f, err := Compile(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if !f.NeedsBody() {
			t.Errorf("%s reads a body field", c.expr)
		}
		fs = append(fs, f)
	}
	hits := make([]int, len(checks))
	o := capture.DefaultOptions()
	o.All = true
	for _, file := range []string{"sarama-acls.pcap", "sasl-scram-acls.pcap", "kadm-acls.pcap"} {
		records(t, file, o, func(r *capture.Record) {
			for i, c := range checks {
				want := r.Kind == capture.KindMessage && c.want(r)
				if got := fs[i].Record(r); got != want {
					t.Errorf("%s: %s #%d: got %v, want %v", file, c.expr, r.Exchange.Index, got, want)
				}
				if want {
					hits[i]++
				}
			}
		})
	}
	for i, c := range checks {
		if hits[i] == 0 {
			t.Errorf("%s matched nothing: the test proves nothing", c.expr)
		}
	}
}

// A filter is no way around the redaction of secrets.
func TestSecretsCannotBeMatched(t *testing.T) {
	const password = "admin-secret" // sasl-scram-acls.pcap's PLAIN login of admin
	exprs := []string{`password == "` + password + `"`, `password contains "secret"`, `AuthBytes contains "secret"`,
		`proof matches "."`}
	for _, show := range []bool{false, true} {
		o := capture.DefaultOptions()
		o.All, o.ShowSecrets = true, show
		n := 0
		for _, e := range exprs {
			f, err := Compile(e)
			if err != nil {
				t.Fatal(err)
			}
			records(t, "sasl-scram-acls.pcap", o, func(r *capture.Record) {
				if f.Record(r) {
					n++
				}
			})
		}
		if show != (n > 0) {
			t.Errorf("show secrets %v: %d matches", show, n)
		}
	}
	f, _ := Compile("password")
	n := 0
	o := capture.DefaultOptions()
	o.All = true
	records(t, "sasl-scram-acls.pcap", o, func(r *capture.Record) {
		if f.Record(r) {
			n++
		}
	})
	if n != 2 {
		t.Errorf("the redacted passwords are still there: %d, want 2", n)
	}
}

// Events are filtered by event and their keys; malformed is the run's.
func TestEvents(t *testing.T) {
	f, err := Compile(`event == "port_detected" && server == 127.0.0.1`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	records(t, "kadm-acls.pcap", capture.DefaultOptions(), func(r *capture.Record) {
		if f.Record(r) {
			n++
			if r.Kind != capture.KindEvent {
				t.Errorf("matched a record of kind %v", r.Kind)
			}
		}
	})
	if n != 1 {
		t.Errorf("%d port_detected events, want 1", n)
	}
}

// What the session knows of a connection is a field of every message on
// it, whatever APIs are shown.
func TestConnectionFields(t *testing.T) {
	f, err := Compile(`client_software.name == "kgo" && client_software.version matches "^v1\\."`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	records(t, "sasl-scram-acls.pcap", capture.DefaultOptions(), func(r *capture.Record) {
		sw := r.Exchange.Software
		want := r.Kind == capture.KindMessage && sw != nil && sw.Name == "kgo" && strings.HasPrefix(sw.Version, "v1.")
		if got := f.Record(r); got != want {
			t.Errorf("#%d: %v, want %v", r.Exchange.Index, got, want)
		}
		if want {
			n++
		}
	})
	if n == 0 {
		t.Error("no message of kgo's connection")
	}
}

// The audit's rows, by their NDJSON keys.
func TestRows(t *testing.T) {
	s := func(v string) *string { return &v }
	code := int16(31)
	rows := []audit.Row{
		{Time: time.Date(2026, 11, 29, 18, 24, 48, 0, time.UTC), Client: netip.MustParseAddrPort("127.0.0.1:49850"),
			Principal: s("User:admin"), Action: audit.Create, APIVersion: 2,
			Binding: audit.Binding{ResourceType: s("TOPIC"), ResourceName: s("orders"), Principal: s("User:alice"), Operation: s("WRITE")},
			Result:  audit.ResultOK},
		{Principal: s("User:mallory"), Action: audit.Delete, Binding: audit.Binding{ResourceName: s("orders")},
			Result: audit.ResultError, ErrorCode: &code, ErrorName: s("CLUSTER_AUTHORIZATION_FAILED")},
		{Action: audit.Create, Result: audit.ResultNoResponse},
	}
	for _, c := range []struct {
		expr string
		want []int
	}{
		{`binding.resource_name == "orders"`, []int{0, 1}},
		{`result == "error" && principal matches "mal"`, []int{1}},
		{`error_code == "CLUSTER_AUTHORIZATION_FAILED"`, []int{1}},
		{`error_code == 31`, []int{1}},
		{`principal`, []int{0, 1}},
		{`!principal`, []int{2}},
		{`principal != "User:admin"`, []int{1, 2}},
		{`kind == "acl" && action == "create"`, []int{0, 2}},
		{`binding.operation in {"WRITE" "ALL"}`, []int{0}},
		{`client == 127.0.0.1 && time >= "2026-11-29"`, []int{0}},
		{`target.user == "alice"`, nil},
		{`!inferred`, []int{0, 1, 2}},
	} {
		f, err := CompileRows(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		var got []int
		for i := range rows {
			if f.Row(&rows[i]) {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: rows %v, want %v", c.expr, got, c.want)
		}
	}
	for _, c := range []struct{ expr, want string }{
		{`bindng.principal == "x"`, `unknown field "bindng.principal" at 1; did you mean "binding.principal"?`},
		{`Principal == "x"`, `unknown field "Principal" at 1; did you mean "principal"?`},
		{`api_version > "x"`, `cannot compare api_version (a number) with "x" at 15`},
	} {
		if _, err := CompileRows(c.expr); err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.expr, err, c.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"principle", "principal", 2}, {"kitten", "sitting", 3}, {"", "ab", 2}} {
		if d := distance(c.a, c.b); d != c.d {
			t.Errorf("distance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}

// No filter needs no schema: building one parses every definition, which
// a run without -Y must not pay for.
func TestBlankFilterBuildsNoSchema(t *testing.T) {
	reg := dissect.NewRegistry()
	for _, expr := range []string{"", "  \t"} {
		if f, err := CompileWith(expr, reg); f != nil || err != nil {
			t.Fatalf("CompileWith(%q) = %v, %v; want no filter", expr, f, err)
		}
	}
	if _, ok := schemas.Load(reg); ok {
		t.Error("a blank filter built the registry's schema")
	}
	if _, err := CompileWith("api_key == 30", reg); err != nil {
		t.Fatal(err)
	}
	if _, ok := schemas.Load(reg); !ok {
		t.Error("a filter did not build the registry's schema")
	}
}

// kafka.topic_name and kafka.consumer_group are the fields Kafka's
// definitions say hold a topic's or a group's name, whatever each message
// calls them, and no other: kafka-python's run names the topic py-t in
// the APIs below, and also as an ACL's and a config's resource, which are
// no topic_name (Wireshark has kafka.acl_resource_name and
// kafka.config_resource_name for them); a config's Name is none either.
func TestWiresharkEntityNames(t *testing.T) {
	o := capture.DefaultOptions()
	o.All = true
	for _, c := range []struct {
		file, expr, kafka string
		apis              []string // the APIs of the messages the Wireshark name matches
	}{
		{"kafka-python.pcap", `kafka.topic_name == "py-t"`, `ResourceName == "py-t"`, []string{"CreateTopics", "DeleteTopics", "Fetch", "JoinGroup",
			"ListOffsets", "Metadata", "OffsetCommit", "OffsetFetch", "Produce", "SyncGroup"}},
		{"kafka-python.pcap", `kafka.topic_name == "segment.bytes"`, `Name == "segment.bytes"`, nil},
		// A header's key is no record's.
		{"kafka-python.pcap", `kafka.message_key == "origin"`, `key == "origin"`, nil},
		{"kafka-python.pcap", `kafka.header_key == "origin"`, `key == "origin"`, []string{"Fetch", "Produce"}},
		{"kafka-python.pcap", `kafka.message_key == "key-3"`, `key == "key-3"`, []string{"Fetch", "Produce"}},
		// kafkajs's transaction: AddPartitionsToTxn names its topics in a
		// common struct.
		{"kafkajs.pcap", `kafka.topic_name == "js-topic"`, `ResourceName == "js-topic"`, []string{"AddPartitionsToTxn", "CreatePartitions",
			"CreateTopics", "DeleteRecords", "DeleteTopics", "Fetch", "JoinGroup", "ListOffsets", "Metadata", "OffsetCommit", "OffsetFetch",
			"Produce", "SyncGroup"}},
		// AddPartitionsToTxn v0-3 names its transaction and producer
		// V3AndBelowTransactionalId and V3AndBelowProducerId; the Fetch
		// answer's batch carries the producer's id too.
		{"kafkajs.pcap", `kafka.transactional_id == "js-txn"`, `TransactionalId == "js-txn"`,
			[]string{"AddPartitionsToTxn", "EndTxn", "FindCoordinator", "InitProducerId", "Produce"}},
		{"kafkajs.pcap", `kafka.producer_id == 8475632171175299345`, `ProducerId == 8475632171175299345`,
			[]string{"AddPartitionsToTxn", "EndTxn", "Fetch", "InitProducerId", "Produce"}},
		// FindCoordinator's Key is a group's or a transaction's by its
		// KeyType.
		{"kafkajs.pcap", `kafka.consumer_group == "js-txn"`, `TransactionalId == "js-txn"`, nil},
		{"kafka-python.pcap", `kafka.consumer_group == "py-group"`, `GroupId == "py-group"`, []string{"FindCoordinator", "JoinGroup", "LeaveGroup",
			"ListGroups", "OffsetCommit", "OffsetFetch", "SyncGroup"}},
	} {
		ws, err := Compile(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		other, err := Compile(c.kafka)
		if err != nil {
			t.Fatal(err)
		}
		apis := map[string]bool{}
		others := 0
		records(t, c.file, o, func(r *capture.Record) {
			if ws.Record(r) {
				apis[r.Message.APIName] = true
			}
			if other.Record(r) {
				others++
			}
		})
		var got []string
		for a := range apis {
			got = append(got, a)
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, c.apis) {
			t.Errorf("%s: matched in %v, want %v", c.expr, got, c.apis)
		}
		if others == 0 {
			t.Errorf("%s matched nothing: the test proves nothing", c.kafka)
		}
	}
	// A resource named py-t in CreateAcls and DescribeConfigs.
	for _, expr := range []string{`api == "CreateAcls" && kafka.acl_resource_name == "py-t"`, `api == "DescribeConfigs" && ResourceName == "py-t"`} {
		f, err := Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		records(t, "kafka-python.pcap", o, func(r *capture.Record) {
			if f.Record(r) {
				n++
			}
		})
		if n == 0 {
			t.Errorf("%s matched nothing: the test proves nothing", expr)
		}
	}
}

// A filter written for tshark means the same here: each Wireshark name
// matches exactly the records its kdissect spelling matches, on every
// record of the shipped captures (events included), and the derived
// address and port fields follow src and dst.
func TestWiresharkNames(t *testing.T) {
	pairs := [][2]string{
		{`kafka.api_key == 30`, `api_key == 30`},
		{`kafka.api_key == "DeleteAcls"`, `api == "DeleteAcls"`},
		{`kafka.request_key == 30`, `api_key == 30 && direction == "request"`},
		{`kafka.len > 60`, `size > 64`},
		{`kafka.len == 36`, `size == 40`},
		{`kafka.response_key == "CreateAcls"`, `api_key == 30 && direction == "response"`},
		{`kafka.request.version >= 2`, `api_version >= 2 && direction == "request"`},
		{`kafka.response.version == 3`, `api_version == 3 && direction == "response"`},
		{`kafka.api_version >= 2`, `api_version >= 2`},
		{`kafka.correlation_id == 3`, `correlation_id == 3`},
		{`kafka.client_id contains "admin"`, `client_id contains "admin"`},
		{`kafka.error ~= 0`, `ErrorCode ~= 0 || PartitionErrorCode ~= 0 || TopicConfigErrorCode ~= 0 || AcknowledgeErrorCode ~= 0`},
		{`kafka.error == 0`, `ErrorCode == 0 || PartitionErrorCode == 0 || TopicConfigErrorCode == 0 || AcknowledgeErrorCode == 0`},
		{`kafka.transactional_id`, `TransactionalId || TransactionalIds || V3AndBelowTransactionalId`},
		{`kafka.error_message`, `ErrorMessage`},
		{`kafka.client_software_name == "kgo"`, `ClientSoftwareName == "kgo"`},
		{`frame.number in {20..40}`, `packets in {20..40}`},
		{`frame.time >= "2026-11-29 18:24:48.8835"`, `time >= "2026-11-29 18:24:48.8835"`},
		{`ip.src == 127.0.0.1`, `src == 127.0.0.1`},
		{`ip.dst == 10.0.0.0/8`, `dst == 10.0.0.0/8`},
		{`ip.addr == 127.0.0.1`, `src == 127.0.0.1 || dst == 127.0.0.1`},
		{`ip.addr != 127.0.0.1`, `!(src == 127.0.0.1 || dst == 127.0.0.1)`},
		// ACL and SASL fields: a binding's own name or its filter's, in the
		// ACL APIs (and an Envelope) alone.
		{`kafka.acl_principal`, `api_key in {29 30 31 58} && (Principal || PrincipalFilter)`},
		{`kafka.acl_principal contains "User:"`, `api_key in {29 30 31 58} && (Principal contains "User:" || PrincipalFilter contains "User:")`},
		{`kafka.acl_host == "*"`, `api_key in {29 30 31 58} && (Host == "*" || HostFilter == "*")`},
		{`kafka.acl_operation == WRITE`, `api_key in {29 30 31 58} && Operation == WRITE`},
		{`kafka.acl_permission_type == 3`, `api_key in {29 30 31 58} && PermissionType == ALLOW`},
		{`kafka.acl_resource_type == TOPIC`, `api_key in {29 30 31 58} && (ResourceType == TOPIC || ResourceTypeFilter == TOPIC)`},
		{`kafka.acl_resource_name`, `api_key in {29 30 31 58} && (ResourceName || ResourceNameFilter)`},
		{`kafka.acl_resource_pattern_type == LITERAL`,
			`api_key in {29 30 31 58} && (ResourcePatternType == LITERAL || PatternType == LITERAL || PatternTypeFilter == LITERAL)`},
		{`kafka.sasl_mechanism`, `api_key == 17 && (Mechanism || Mechanisms)`},
		{`kafka.sasl_mechanism == "PLAIN"`, `api_key == 17 && (Mechanism == "PLAIN" || Mechanisms == "PLAIN")`},
	}
	o := capture.DefaultOptions()
	o.All = true
	for _, file := range []string{"sarama-acls.pcap", "sasl-scram-acls.pcap", "kadm-acls.pcap"} {
		var ports []int // the broker's, and a client's
		records(t, file, o, func(r *capture.Record) {
			if len(ports) == 0 && r.Kind == capture.KindMessage && r.Message.Direction == dissect.Request {
				ports = []int{int(r.Flow.Dst.Port()), int(r.Flow.Src.Port())}
			}
		})
		if len(ports) == 0 {
			t.Fatalf("%s: no request", file)
		}
		ps := pairs
		for _, p := range ports {
			n := strconv.Itoa(p)
			ps = append(ps,
				[2]string{`tcp.port == ` + n, `src == 127.0.0.1:` + n + ` || dst == 127.0.0.1:` + n},
				[2]string{`tcp.srcport == ` + n, `src == 127.0.0.1:` + n},
				[2]string{`tcp.dstport == ` + n, `dst == 127.0.0.1:` + n},
				[2]string{`tcp.port != ` + n, `!(src == 127.0.0.1:` + n + ` || dst == 127.0.0.1:` + n + `)`})
		}
		for _, p := range ps {
			ws, err := Compile(p[0])
			if err != nil {
				t.Fatalf("%s: %v", p[0], err)
			}
			own, err := Compile(p[1])
			if err != nil {
				t.Fatalf("%s: %v", p[1], err)
			}
			hits := 0
			records(t, file, o, func(r *capture.Record) {
				got, want := ws.Record(r), own.Record(r)
				if got != want {
					t.Errorf("%s: %s: %v, %s: %v", file, p[0], got, p[1], want)
				}
				if got {
					hits++
				}
			})
			if hits == 0 && (file == "sarama-acls.pcap" || strings.HasPrefix(p[0], "tcp.")) && !strings.Contains(p[0], "10.0.0.0") &&
				!strings.Contains(p[0], "!=") && !strings.Contains(p[0], "client_software") && !strings.Contains(p[0], "sasl") &&
				!strings.Contains(p[0], "transactional") {
				t.Errorf("%s: %s matched nothing: the test proves nothing", file, p[0])
			}
		}
	}
	// Metadata's broker Host is no ACL's host.
	acl, err := Compile(`kafka.acl_host`)
	if err != nil {
		t.Fatal(err)
	}
	anyHost, err := Compile(`Host`)
	if err != nil {
		t.Fatal(err)
	}
	metadata := 0
	records(t, "sarama-acls.pcap", o, func(r *capture.Record) {
		if r.Kind == capture.KindMessage && r.Message.APIName == "Metadata" && anyHost.Record(r) {
			metadata++
			if acl.Record(r) {
				t.Errorf("Metadata corr=%d: kafka.acl_host matched its broker's Host", r.Message.CorrelationID)
			}
		}
	})
	if metadata == 0 {
		t.Error("no Metadata answer with a Host: the test proves nothing")
	}
	// The explorer's entries: derived from their src and dst too.
	it := item{fields: map[string][]Value{
		"src":       {Addr(netip.MustParseAddrPort("192.0.2.10:50500"))},
		"dst":       {Addr(netip.MustParseAddrPort("198.51.100.7:9092"))},
		"direction": {String("response")},
		"api_key":   {Int(30, "CreateAcls")},
	}}
	for expr, want := range map[string]bool{
		`kafka.response_key == CreateAcls`: true, `kafka.request_key == 30`: false, `kafka.request_key`: false,
		`tcp.port == 9092`: true, `tcp.port == 50500`: true, `tcp.port == 1`: false, `tcp.srcport == 9092`: false,
		`tcp.dstport == 9092`: true, `ip.addr == 198.51.100.0/24`: true, `ip.src == 198.51.100.7`: false,
		`tcp.port in {9000..9100} && ip.dst == 198.51.100.7`: true,
	} {
		f, err := Compile(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got := f.Match(it); got != want {
			t.Errorf("entry: %s: %v, want %v", expr, got, want)
		}
	}
	// Errors name the field as typed; an unknown kafka.* name says what to
	// write instead.
	for expr, want := range map[string]string{
		`kafka.api_key == "CreateAcl"`: `cannot compare kafka.api_key (a number or a name of one) with "CreateAcl" at 18; did you mean "CreateAcls"?`,
		`kafka.offset == 0`:            `unknown field "kafka.offset" at 1; kdissect knows Wireshark's kafka.* names of the fields it can match exactly (kafka.topic_name, kafka.partition_id, kafka.acl_principal, ...); for the others use Kafka's (Offset, CommittedOffset, FetchOffset)`,
		`tcp.port == "x"`:              `cannot compare tcp.port (a number) with "x" at 13`,
		`ip.src == 127.0.0.1:9092`:     `ip.src is an address without its port (tcp.port and tcp.srcport, tcp.dstport are the ports): "127.0.0.1:9092" at 11`,
	} {
		if _, err := Compile(expr); err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", expr, err, want)
		}
	}
}

// Each struct topicStructs names is one of the definitions', with a Name
// string: a renamed struct would make kafka.topic_name miss its topics.
func TestTopicStructsAreDefined(t *testing.T) {
	found := map[string]bool{}
	var walk func(fs []*dissect.Field)
	walk = func(fs []*dissect.Field) {
		for _, f := range fs {
			for _, c := range f.Fields {
				if c.Name == "Name" && c.Type == "string" {
					found[strings.TrimPrefix(f.Type, "[]")] = true
				}
			}
			walk(f.Fields)
		}
	}
	for _, d := range dissect.NewRegistry().Defs() {
		walk(d.Fields)
	}
	for s := range topicStructs {
		if !found[s] {
			t.Errorf("%s: no definition has this struct with a Name string", s)
		}
	}
}

// Every Kafka name a Wireshark name stands for is a field of the
// definitions (or of the trees kdissect adds): a misspelt one would match
// nothing, silently.
func TestWiresharkNamesResolve(t *testing.T) {
	s := messageSchema(dissect.NewRegistry())
	for ws, own := range wiresharkNames {
		if s.fields[own] == nil && s.body[own] == 0 {
			t.Errorf("%s stands for %s, no field", ws, own)
		}
		if _, err := s.resolve(token{kind: tWord, text: ws, src: ws, col: 1}); err != nil {
			t.Errorf("%s: %v", ws, err)
		}
	}
	for ws, a := range wiresharkBodyNames {
		for _, f := range a.fields {
			if s.body[f.name] == 0 {
				t.Errorf("%s stands for %s, no field", ws, f.name)
			}
		}
		if _, err := s.resolve(token{kind: tWord, text: ws, src: ws, col: 1}); err != nil {
			t.Errorf("%s: %v", ws, err)
		}
		if _, dup := wiresharkNames[ws]; dup {
			t.Errorf("%s is in both tables", ws)
		}
	}
}

// Every name the glossary (-G fields) lists is one a filter takes, and the
// glossary holds every kind: kdissect's keys, Wireshark's names with what
// they stand for, Kafka's fields.
func TestGlossaryNamesCompile(t *testing.T) {
	reg := dissect.NewRegistry()
	got := map[string]Field{}
	for _, f := range Glossary(reg) {
		if _, err := CompileWith(f.Name, reg); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
		if f.Types == "" || f.Source == "" {
			t.Errorf("%+v: no type or source", f)
		}
		got[f.Name] = f
	}
	for name, want := range map[string]Field{
		"api_key":             {Name: "api_key", Types: "int", Source: "kdissect"},
		"Principal":           {Name: "Principal", Types: "string", Source: "kafka"},
		"kafka.acl_principal": {Name: "kafka.acl_principal", Types: "string", Source: "wireshark", StandsFor: "Principal, PrincipalFilter"},
		"kafka.client_id":     {Name: "kafka.client_id", Types: "string", Source: "wireshark", StandsFor: "client_id"},
		"tcp.port":            {Name: "tcp.port", Types: "int", Source: "wireshark", StandsFor: "src, dst"},
		"kafka.topic_name": {Name: "kafka.topic_name", Types: "string", Source: "wireshark",
			StandsFor: "Topic, TopicName, TopicNames, RepartitionSinkTopics, SubscribedTopicNames, SourceTopics, Name, Topics"},
	} {
		if got[name] != want {
			t.Errorf("%s: %+v, want %+v", name, got[name], want)
		}
	}
}
