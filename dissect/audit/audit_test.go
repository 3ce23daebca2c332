package audit

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// ---- frames built with kmsg, decoded by the real decoder ----

var (
	t0     = time.Date(2026, 11, 29, 18, 24, 47, 281861000, time.UTC)
	client = netip.MustParseAddrPort("192.0.2.10:50500")
	broker = netip.MustParseAddrPort("192.0.2.1:9092")
)

func reqMeta(index int) Meta {
	return Meta{Index: index, Time: t0, Client: client, Broker: broker, Principal: testkit.Ptr("User:admin")}
}

func respMeta(index int) Meta {
	return Meta{Index: index, Time: t0.Add(time.Millisecond), Client: client, Broker: broker,
		Principal: testkit.Ptr("User:admin"), Latency: 231 * time.Microsecond, HasLatency: true}
}

func decodeReq(t *testing.T, r kmsg.Request, corr int32, clientID *string) *dissect.Message {
	t.Helper()
	m := dissect.Builtin().Decode(testkit.KmsgRequest(r, corr, clientID), dissect.Options{})
	if len(m.Problems) > 0 {
		t.Fatalf("request: %v", m.Problems)
	}
	return m
}

func decodeResp(t *testing.T, r kmsg.Response, key int16, corr int32) *dissect.Message {
	t.Helper()
	m := dissect.Builtin().Decode(testkit.KmsgResponse(r, corr), dissect.Options{Direction: dissect.Response, APIKey: key, APIVersion: r.GetVersion()})
	if len(m.Problems) > 0 {
		t.Fatalf("response: %v", m.Problems)
	}
	return m
}

func createExchange(t *testing.T, v int16) (*Request, *Response) {
	req := kmsg.NewPtrCreateACLsRequest()
	req.Version = v
	for _, c := range []struct {
		rt   kmsg.ACLResourceType
		name string
		pt   kmsg.ACLResourcePatternType
		who  string
		op   kmsg.ACLOperation
		perm kmsg.ACLPermissionType
	}{
		{kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow},
		{kmsg.ACLResourceTypeGroup, "consumers-", kmsg.ACLResourcePatternTypePrefixed, "User:bob", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeDeny},
		{9, "what", 3, "User:eve", 42, 3},
	} {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = c.rt, c.name, c.pt
		cr.Principal, cr.Host, cr.Operation, cr.PermissionType = c.who, "*", c.op, c.perm
		req.Creations = append(req.Creations, cr)
	}
	resp := kmsg.NewPtrCreateACLsResponse()
	resp.Version = v
	for _, e := range []struct {
		code int16
		msg  *string
	}{{0, nil}, {31, testkit.Ptr("CLUSTER_AUTHORIZATION_FAILED")}, {42, testkit.Ptr("invalid resource type")}} {
		res := kmsg.NewCreateACLsResponseResult()
		res.ErrorCode, res.ErrorMessage = e.code, e.msg
		resp.Results = append(resp.Results, res)
	}
	return ReadRequest(decodeReq(t, req, 7, testkit.Ptr("kadm")), reqMeta(15)),
		ReadResponse(decodeResp(t, resp, 30, 7), respMeta(16))
}

func bind(rt, name, pt, who, host, op, perm *string) Binding {
	return Binding{rt, name, pt, who, host, op, perm}
}

func TestCreateRows(t *testing.T) {
	for v := int16(0); v <= 3; v++ {
		req, resp := createExchange(t, v)
		rows := Rows(req, resp)
		lit, pre := testkit.Ptr("LITERAL"), testkit.Ptr("PREFIXED")
		if v == 0 {
			pre = lit // v0 carries no pattern type: Kafka implies LITERAL
		}
		base := Row{Kind: KindACL, APIKey: 30, Time: t0, Client: client, Broker: broker, Principal: testkit.Ptr("User:admin"), ClientID: testkit.Ptr("kadm"),
			Action: Create, APIVersion: v, CorrelationID: 7, LatencyUs: testkit.Ptr(int64(231)),
			RequestIndex: testkit.Ptr(15), ResponseIndex: testkit.Ptr(16)}
		want := []Row{base, base, base}
		want[0].Binding = bind(testkit.Ptr("TOPIC"), testkit.Ptr("orders"), lit, testkit.Ptr("User:alice"), testkit.Ptr("*"), testkit.Ptr("WRITE"), testkit.Ptr("ALLOW"))
		want[0].Result = "ok"
		want[1].Binding = bind(testkit.Ptr("GROUP"), testkit.Ptr("consumers-"), pre, testkit.Ptr("User:bob"), testkit.Ptr("*"), testkit.Ptr("READ"), testkit.Ptr("DENY"))
		want[1].Result, want[1].ErrorCode, want[1].ErrorName, want[1].ErrorMessage = "error", testkit.Ptr(int16(31)), testkit.Ptr("CLUSTER_AUTHORIZATION_FAILED"), testkit.Ptr("CLUSTER_AUTHORIZATION_FAILED")
		// Values without a Kafka name are their numbers.
		want[2].Binding = bind(testkit.Ptr("9"), testkit.Ptr("what"), lit, testkit.Ptr("User:eve"), testkit.Ptr("*"), testkit.Ptr("42"), testkit.Ptr("ALLOW"))
		want[2].Result, want[2].ErrorCode, want[2].ErrorName, want[2].ErrorMessage = "error", testkit.Ptr(int16(42)), testkit.Ptr("INVALID_REQUEST"), testkit.Ptr("invalid resource type")
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("v%d:\n got %s\nwant %s", v, jsonOf(t, rows), jsonOf(t, want))
		}
	}
}

func jsonOf(t *testing.T, rows []Row) string {
	var b bytes.Buffer
	if err := WriteJSON(&b, rows); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func deleteExchange(t *testing.T, v int16) (*dissect.Message, *dissect.Message) {
	req := kmsg.NewPtrDeleteACLsRequest()
	req.Version = v
	f0 := kmsg.NewDeleteACLsRequestFilter() // everything on topic orders
	f0.ResourceType, f0.ResourceName, f0.ResourcePatternType = kmsg.ACLResourceTypeTopic, testkit.Ptr("orders"), kmsg.ACLResourcePatternTypeLiteral
	f0.Operation, f0.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	f1 := f0 // matches nothing
	f1.ResourceName, f1.Principal, f1.Host = testkit.Ptr("nothing"), testkit.Ptr("User:nobody"), testkit.Ptr("*")
	f2 := f0 // refused
	f2.ResourceType = kmsg.ACLResourceTypeCluster
	f2.ResourceName = nil
	req.Filters = []kmsg.DeleteACLsRequestFilter{f0, f1, f2}

	resp := kmsg.NewPtrDeleteACLsResponse()
	resp.Version = v
	r0 := kmsg.NewDeleteACLsResponseResult()
	for i, who := range []string{"User:alice", "User:bob"} {
		ma := kmsg.NewDeleteACLsResponseResultMatchingACL()
		ma.ResourceType, ma.ResourceName, ma.ResourcePatternType = kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral
		ma.Principal, ma.Host, ma.Operation, ma.PermissionType = who, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		if i == 1 {
			ma.ErrorCode, ma.ErrorMessage = -1, testkit.Ptr("disk on fire")
		}
		r0.MatchingACLs = append(r0.MatchingACLs, ma)
	}
	r1 := kmsg.NewDeleteACLsResponseResult()
	r2 := kmsg.NewDeleteACLsResponseResult()
	r2.ErrorCode, r2.ErrorMessage = 31, testkit.Ptr("not allowed")
	resp.Results = []kmsg.DeleteACLsResponseResult{r0, r1, r2}
	return decodeReq(t, req, 9, nil), decodeResp(t, resp, 31, 9)
}

func TestDeleteRows(t *testing.T) {
	for v := int16(0); v <= 3; v++ {
		mreq, mresp := deleteExchange(t, v)
		rows := Rows(ReadRequest(mreq, reqMeta(25)), ReadResponse(mresp, respMeta(26)))
		lit := testkit.Ptr("LITERAL")
		base := Row{Kind: KindACL, APIKey: 31, Time: t0, Client: client, Broker: broker, Principal: testkit.Ptr("User:admin"),
			Action: Delete, APIVersion: v, CorrelationID: 9, LatencyUs: testkit.Ptr(int64(231)),
			RequestIndex: testkit.Ptr(25), ResponseIndex: testkit.Ptr(26), FilterIndex: testkit.Ptr(0)}
		want := []Row{base, base, base, base}
		// Filter 0 matched two bindings: one deleted, one not.
		want[0].Binding = bind(testkit.Ptr("TOPIC"), testkit.Ptr("orders"), lit, testkit.Ptr("User:alice"), testkit.Ptr("*"), testkit.Ptr("READ"), testkit.Ptr("ALLOW"))
		want[0].Result = "ok"
		want[1].Binding = bind(testkit.Ptr("TOPIC"), testkit.Ptr("orders"), lit, testkit.Ptr("User:bob"), testkit.Ptr("*"), testkit.Ptr("READ"), testkit.Ptr("ALLOW"))
		want[1].Result, want[1].ErrorCode, want[1].ErrorName, want[1].ErrorMessage = "error", testkit.Ptr(int16(-1)), testkit.Ptr("UNKNOWN_SERVER_ERROR"), testkit.Ptr("disk on fire")
		// Filter 1 matched nothing: the filter is the binding.
		want[2].FilterIndex = testkit.Ptr(1)
		want[2].Binding = bind(testkit.Ptr("TOPIC"), testkit.Ptr("nothing"), lit, testkit.Ptr("User:nobody"), testkit.Ptr("*"), testkit.Ptr("ANY"), testkit.Ptr("ANY"))
		want[2].Result = "no_match"
		// Filter 2 failed: the filter is the binding, null fields null.
		want[3].FilterIndex = testkit.Ptr(2)
		want[3].Binding = bind(testkit.Ptr("CLUSTER"), nil, lit, nil, nil, testkit.Ptr("ANY"), testkit.Ptr("ANY"))
		want[3].Result, want[3].ErrorCode, want[3].ErrorName, want[3].ErrorMessage = "error", testkit.Ptr(int16(31)), testkit.Ptr("CLUSTER_AUTHORIZATION_FAILED"), testkit.Ptr("not allowed")
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("v%d:\n got %s\nwant %s", v, jsonOf(t, rows), jsonOf(t, want))
		}
	}
}

func TestNoResponse(t *testing.T) {
	mreq, _ := deleteExchange(t, 2)
	rows := Rows(ReadRequest(mreq, reqMeta(3)), nil)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want one per filter: %s", len(rows), jsonOf(t, rows))
	}
	for i, r := range rows {
		if r.Result != "no_response" || *r.FilterIndex != i || r.ResponseIndex != nil || r.LatencyUs != nil || r.ErrorCode != nil || *r.RequestIndex != 3 {
			t.Errorf("row %d: %s", i, jsonOf(t, rows[i:i+1]))
		}
	}
	if got := *rows[1].Binding.ResourceName; got != "nothing" {
		t.Errorf("filter 1 resource name %q", got)
	}
	req, _ := createExchange(t, 1)
	rows = Rows(req, nil)
	if len(rows) != 3 || rows[2].Result != "no_response" || rows[2].FilterIndex != nil || *rows[2].Binding.ResourceName != "what" {
		t.Errorf("create without response: %s", jsonOf(t, rows))
	}
}

// A response decoded from an incomplete request's header: the request's
// fields are unknown, the bindings the response names are still rows.
func TestResponseWithoutRequest(t *testing.T) {
	_, mresp := deleteExchange(t, 3)
	resp := ReadResponse(mresp, respMeta(41))
	resp.RequestIndex = 40
	rows := Rows(nil, resp)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want the 2 matching ACLs: %s", len(rows), jsonOf(t, rows))
	}
	want := Row{Kind: KindACL, APIKey: 31, Time: t0.Add(time.Millisecond), Client: client, Broker: broker, Principal: testkit.Ptr("User:admin"),
		Action: Delete, APIVersion: 3, CorrelationID: 9, LatencyUs: testkit.Ptr(int64(231)),
		RequestIndex: testkit.Ptr(40), ResponseIndex: testkit.Ptr(41), FilterIndex: testkit.Ptr(0), Result: "ok",
		Binding: bind(testkit.Ptr("TOPIC"), testkit.Ptr("orders"), testkit.Ptr("LITERAL"), testkit.Ptr("User:alice"), testkit.Ptr("*"), testkit.Ptr("READ"), testkit.Ptr("ALLOW"))}
	if !reflect.DeepEqual(rows[0], want) {
		t.Errorf("got %s\nwant %s", jsonOf(t, rows[:1]), jsonOf(t, []Row{want}))
	}
	if rows[1].Result != "error" || *rows[1].ErrorCode != -1 || *rows[1].Binding.Principal != "User:bob" {
		t.Errorf("second row %s", jsonOf(t, rows[1:]))
	}
	_, cresp := createExchange(t, 3)
	cresp.RequestIndex = 15
	if rows := Rows(nil, cresp); rows != nil {
		t.Errorf("a CreateAcls response names no binding, got %s", jsonOf(t, rows))
	}
}

// A response cut before its last results: the rows it does not answer
// are errors without a code.
func TestTruncatedResponse(t *testing.T) {
	req, resp := createExchange(t, 3)
	resp.Results = resp.Results[:1]
	rows := Rows(req, resp)
	if len(rows) != 3 || rows[0].Result != "ok" || rows[1].Result != "error" || rows[1].ErrorCode != nil || rows[2].ErrorName != nil {
		t.Errorf("%s", jsonOf(t, rows))
	}
}

func sampleRows(t *testing.T) []Row {
	req, resp := createExchange(t, 3)
	rows := Rows(req, resp)
	mreq, mresp := deleteExchange(t, 1)
	rows = append(rows, Rows(ReadRequest(mreq, reqMeta(25)), ReadResponse(mresp, respMeta(26)))...)
	return rows
}

var jsonKeys = []string{"time", "client", "broker", "principal", "client_id", "action", "api_version",
	"correlation_id", "binding", "result", "error_code", "error_name", "error_message", "filter_index",
	"latency_us", "request_index", "response_index", "kind", "target", "client_software", "forwarded_by"}

func TestJSON(t *testing.T) {
	rows := sampleRows(t)
	out := jsonOf(t, rows)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(rows) {
		t.Fatalf("%d lines for %d rows", len(lines), len(rows))
	}
	for i, l := range lines {
		dec := json.NewDecoder(strings.NewReader(l))
		var keys []string
		tok, _ := dec.Token()
		if tok != json.Delim('{') {
			t.Fatalf("line %d: %s", i, l)
		}
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("line %d: %v", i, err)
			}
		}
		if !reflect.DeepEqual(keys, jsonKeys) {
			t.Errorf("line %d keys %v", i, keys)
		}
	}
	var r map[string]any
	json.Unmarshal([]byte(lines[4]), &r)
	want := map[string]any{
		"time": "2026-11-29T18:24:47.281861Z", "client": "192.0.2.10:50500", "broker": "192.0.2.1:9092",
		"principal": "User:admin", "client_id": nil, "action": "delete", "api_version": 1.0, "correlation_id": 9.0,
		"binding": map[string]any{"resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "LITERAL",
			"principal": "User:bob", "host": "*", "operation": "READ", "permission": "ALLOW"},
		"result": "error", "error_code": -1.0, "error_name": "UNKNOWN_SERVER_ERROR", "error_message": "disk on fire",
		"filter_index": 0.0, "latency_us": 231.0, "request_index": 25.0, "response_index": 26.0,
		"kind": "acl", "target": nil, "client_software": nil, "forwarded_by": nil,
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("line 4:\n got %v\nwant %v", r, want)
	}
	json.Unmarshal([]byte(lines[0]), &r)
	if r["filter_index"] != nil || r["error_code"] != nil || r["error_name"] != nil || r["error_message"] != nil || r["result"] != "ok" {
		t.Errorf("a create row that succeeded: %s", lines[0])
	}
}

func TestCSV(t *testing.T) {
	rows := sampleRows(t)
	var b bytes.Buffer
	if err := WriteCSV(&b, rows, CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(rows)+1 || !reflect.DeepEqual(recs[0], CSVHeader) {
		t.Fatalf("%d records, header %v", len(recs), recs[0])
	}
	want := []string{"2026-11-29T18:24:47.281861Z", "192.0.2.10:50500", "192.0.2.1:9092", "User:admin", "kadm",
		"create", "3", "7", "GROUP", "consumers-", "PREFIXED", "User:bob", "*", "READ", "DENY",
		"error", "31", "CLUSTER_AUTHORIZATION_FAILED", "CLUSTER_AUTHORIZATION_FAILED", "", "231", "15", "16",
		"acl", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", ""}
	if !reflect.DeepEqual(recs[2], want) {
		t.Errorf("record 2\n got %q\nwant %q", recs[2], want)
	}
	if got := recs[7]; got[9] != "" || got[15] != "error" || got[19] != "2" || got[4] != "" {
		t.Errorf("the failed filter: %q", got)
	}
}

func TestTableFitsWidth(t *testing.T) {
	rows := sampleRows(t)
	for _, width := range []int{80, 100, 60} {
		var b bytes.Buffer
		if err := WriteTable(&b, rows, width, false); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != len(rows)+2 {
			t.Fatalf("%d lines for %d rows", len(lines), len(rows))
		}
		for _, l := range lines[:len(lines)-1] {
			if w := runewidth.StringWidth(l); w > width {
				t.Errorf("width %d: line of %d columns: %q", width, w, l)
			}
		}
		if width >= 80 && !strings.HasPrefix(lines[0], "#   TIME") {
			t.Errorf("heading %q", lines[0])
		}
		if got, want := lines[len(lines)-1], "7 changes by 1 principal: 1 created, 1 deleted, 4 failed, 1 matched nothing"; got != want {
			t.Errorf("summary %q, want %q", got, want)
		}
	}
	var b bytes.Buffer
	WriteTable(&b, rows, 80, false)
	t.Logf("\n%s", b.String())
	b.Reset()
	WriteTable(&b, rows, 0, false)
	if !strings.Contains(b.String(), "ALLOW User:alice WRITE on TOPIC orders  ") ||
		!strings.Contains(b.String(), "DENY User:bob READ on GROUP consumers- (PREFIXED)  ") ||
		!strings.Contains(b.String(), "ANY (any) ANY on CLUSTER (any) from (any)  ") ||
		!strings.Contains(b.String(), "INVALID_REQUEST: invalid resource type") {
		t.Errorf("unlimited width cuts nothing:\n%s", b.String())
	}
}

func TestHostileText(t *testing.T) {
	evil := "\x1b[2J\x1b]0;pwned\x07\u202eUser:\xff"
	req, resp := createExchange(t, 3)
	req.Bindings[0].Principal = testkit.Ptr(evil)
	req.Bindings[0].ResourceName = testkit.Ptr(evil)
	req.Principal = testkit.Ptr(evil)
	resp.Results[1].ErrorMessage = testkit.Ptr(evil)
	rows := Rows(req, resp)
	var tb, cb, jb bytes.Buffer
	WriteTable(&tb, rows, 0, false)
	WriteCSV(&cb, rows, CSVOptions{})
	WriteJSON(&jb, rows)
	for name, out := range map[string]string{"table": tb.String(), "csv": cb.String()} {
		for _, bad := range []string{"\x1b", "\x07", "\u202e", "\xff"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s holds %q:\n%s", name, bad, out)
			}
		}
		if !strings.Contains(out, `\x1b[2J\x1b]0;pwned\a\u202eUser:\xff`) {
			t.Errorf("%s does not show the escaped text:\n%s", name, out)
		}
	}
	for _, l := range strings.Split(strings.TrimSuffix(jb.String(), "\n"), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("invalid JSON %q: %v", l, err)
		}
		if r["principal"] != "\x1b[2J\x1b]0;pwned\a\u202eUser:\ufffd" {
			t.Errorf("principal %q", r["principal"])
		}
	}
	if strings.Contains(jb.String(), "\x1b") {
		t.Errorf("raw escape in JSON")
	}
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{
		{"User:alice", "User:alice", true},
		{"User:alice", "User:alice2", false},
		{"User:*", "User:alice", true},
		{"User:*", "Group:ops", false},
		{"*:kafka/*@EXAMPLE.COM", "User:kafka/broker1@EXAMPLE.COM", true}, // * crosses /
		{"User:?ob", "User:bob", true},
		{"User:?b", "User:öb", true}, // ? is a character, not a byte
		{"User:?ob", "User:bbob", false},
		{`User:\*`, "User:*", true},
		{`User:\*`, "User:x", false},
		{"*a*b*c*", "xxaxxbxxcxx", true},
		{"*a*b*c", "xxaxxbxxcxx", false},
		{"", "", true},
		{"*", "", true},
		{"user:*", "User:alice", false}, // case-sensitive
	} {
		if got := Glob(c.p, c.s); got != c.ok {
			t.Errorf("Glob(%q, %q) = %v", c.p, c.s, got)
		}
	}
	if !Glob(strings.Repeat("*a", 30)+"b", strings.Repeat("a", 200)+"b") || Glob(strings.Repeat("*a", 30)+"b", strings.Repeat("a", 200)) {
		t.Error("many stars")
	}
}

func TestFilters(t *testing.T) {
	rows := sampleRows(t)
	rows[0].Principal = testkit.Ptr("User:alice")
	rows[1].Principal = nil
	if got := Who(rows, "User:ali*"); len(got) != 1 || got[0].RequestIndex == nil || *got[0].Binding.ResourceName != "orders" {
		t.Errorf("Who: %s", jsonOf(t, got))
	}
	if got := Who(rows, "*"); len(got) != len(rows)-1 {
		t.Errorf("an unknown principal matched *: %d rows", len(got))
	}
	failed := Failed(rows)
	if len(failed) != 4 {
		t.Errorf("Failed: %s", jsonOf(t, failed))
	}
	for _, r := range failed {
		if r.Result != "error" {
			t.Errorf("Failed kept %s", r.Result)
		}
	}
}

func TestEffect(t *testing.T) {
	mk := func(act Action, res string, idx int, name string) Row {
		return Row{Action: act, Result: res, RequestIndex: testkit.Ptr(idx), Principal: testkit.Ptr("User:admin"),
			Binding: bind(testkit.Ptr("TOPIC"), testkit.Ptr(name), testkit.Ptr("LITERAL"), testkit.Ptr("User:x"), testkit.Ptr("*"), testkit.Ptr("READ"), testkit.Ptr("ALLOW"))}
	}
	rows := []Row{
		mk(Create, "ok", 1, "b"),       // added
		mk(Create, "ok", 2, "a"),       // added, later deleted: cancels
		mk(Create, "error", 3, "c"),    // refused: no effect
		mk(Delete, "ok", 4, "a"),       // cancels 2
		mk(Delete, "ok", 5, "z"),       // removed (it existed before the capture)
		mk(Delete, "no_match", 6, "y"), // nothing happened
		mk(Create, "ok", 7, "b"),       // again: the first stands
		mk(Delete, "ok", 8, "x"),       // removed, then created again: cancels
		mk(Create, "ok", 9, "x"),
		mk(Create, "no_response", 10, "w"),
	}
	got := Effect(rows)
	var desc []string
	for _, r := range got {
		desc = append(desc, r.Effect+" "+*r.Binding.ResourceName+" #"+string(jsonInt(nil, r.RequestIndex)))
	}
	want := []string{"added b #1", "removed z #5"}
	if !reflect.DeepEqual(desc, want) {
		t.Errorf("Effect = %v, want %v", desc, want)
	}
	var b bytes.Buffer
	WriteTable(&b, got, 80, true)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "EFFECT") || !strings.HasPrefix(lines[1], "added") ||
		lines[3] != "net effect: 1 binding added, 1 removed" {
		t.Errorf("effect table:\n%s", b.String())
	}
	b.Reset()
	WriteJSON(&b, got)
	if !strings.Contains(b.String(), `"response_index":null,"kind":"acl","target":null,"client_software":null,"forwarded_by":null,"effect":"added"}`) {
		t.Errorf("effect JSON: %s", b.String())
	}
	b.Reset()
	WriteCSV(&b, nil, CSVOptions{Effect: true})
	if !strings.HasSuffix(b.String(), ",response_index,kind,inferred,validate_only,target_user,target_mechanism,target_iterations,target_owner,target_renewers,target_max_lifetime_ms,target_renew_period_ms,target_expiry_period_ms,target_token_id,target_entity,target_resource_type,target_resource_name,target_key,target_value,client_software_name,client_software_version,forwarded_by_broker,forwarded_by_principal,effect\n") {
		t.Errorf("effect CSV header: %s", b.String())
	}
}

// A CreateAcls request announcing two creations and holding one: the
// missing one is no binding.
func TestCutRequest(t *testing.T) {
	req := kmsg.NewPtrCreateACLsRequest()
	req.Version = 3
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.Principal = "User:alice"
	req.Creations = append(req.Creations, cr)
	frame := testkit.KmsgRequest(req, 1, nil)
	frame[15] = 3                // compact array length: 2 elements
	frame = frame[:len(frame)-1] // without the body's tagged fields
	frame[3]--                   // the size prefix: the frame is whole, its body short
	m := dissect.Builtin().Decode(frame, dissect.Options{})
	if len(m.Problems) == 0 {
		t.Fatal("the cut frame decoded without problems")
	}
	r := ReadRequest(m, reqMeta(1))
	if len(r.Bindings) != 1 || *r.Bindings[0].Principal != "User:alice" {
		t.Errorf("bindings %+v", r.Bindings)
	}
}
