package audit

import (
	"bytes"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// A change forwarded in an Envelope is the client's: by the envelope's
// principal, from its client address, answered by the forwarded
// response; the broker that forwarded it is forwarded_by.

var (
	fwdClient  = netip.MustParseAddr("10.0.0.5")
	fwdBroker  = netip.MustParseAddrPort("192.0.2.20:41000")
	fwdCtrl    = netip.MustParseAddrPort("192.0.2.30:9093")
	fwdSalt    = "fwd-salt:Qx8!mN2#"
	fwdSalted  = "fwd-salted:Lp5$vB9@"
	fwdT0      = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	brokerName = "User:broker-1"
)

// forwardedRows runs Envelope exchanges through a Log, as the CLI does.
func forwardedRows(t *testing.T, kinds []Kind, exchanges ...[2][]byte) []Row {
	t.Helper()
	l := NewLog()
	l.Kinds = kinds
	idx := 0
	for _, ex := range exchanges {
		req := dissect.Builtin().Decode(ex[0], dissect.Options{})
		if req.Inner == nil {
			t.Fatalf("no inner request: %s", req.Summary)
		}
		inner := req.Inner
		idx++
		bp := brokerName
		l.Add(req, Meta{Index: idx, Time: fwdT0.Add(time.Duration(idx) * time.Second), Client: fwdBroker, Broker: fwdCtrl, Principal: &bp}, idx+1)
		resp := dissect.Builtin().Decode(ex[1], dissect.Options{Direction: dissect.Response, APIKey: 58,
			Inner: dissect.InnerAPI{Known: true, APIKey: inner.APIKey, APIVersion: inner.APIVersion}})
		idx++
		l.Add(resp, Meta{Index: idx, Time: fwdT0.Add(time.Duration(idx) * time.Second), Client: fwdBroker, Broker: fwdCtrl, Principal: &bp,
			Latency: time.Millisecond, HasLatency: true}, idx-1)
	}
	return l.Finish()
}

func fwdCreateAcls() [2][]byte {
	r := kmsg.NewPtrCreateACLsRequest()
	r.SetVersion(3)
	for _, name := range []string{"orders", "payments"} {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, name, kmsg.ACLResourcePatternTypeLiteral
		c.Principal, c.Host = "User:bob", "*"
		c.Operation, c.PermissionType = kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
		r.Creations = append(r.Creations, c)
	}
	resp := kmsg.NewPtrCreateACLsResponse()
	resp.SetVersion(3)
	ok, bad := kmsg.NewCreateACLsResponseResult(), kmsg.NewCreateACLsResponseResult()
	bad.ErrorCode, bad.ErrorMessage = 31, testkit.Ptr("not allowed")
	resp.Results = append(resp.Results, ok, bad)
	return [2][]byte{
		testkit.EnvelopeRequest(r, 7, testkit.Ptr("kafka-acls"), "User", "alice", fwdClient, 100, testkit.Ptr("broker-1")),
		testkit.EnvelopeResponse(resp, 7, 100),
	}
}

func fwdScram() [2][]byte {
	r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations = "carol", 2, 8192
	u.Salt, u.SaltedPassword = []byte(fwdSalt), []byte(fwdSalted)
	r.Upsertions = append(r.Upsertions, u)
	resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
	res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
	res.User = "carol"
	resp.Results = append(resp.Results, res)
	return [2][]byte{
		testkit.EnvelopeRequest(r, 8, nil, "User", "admin", netip.MustParseAddr("2001:db8::9"), 101, nil),
		testkit.EnvelopeResponse(resp, 8, 101),
	}
}

func TestForwardedRows(t *testing.T) {
	rows := forwardedRows(t, nil, fwdCreateAcls(), fwdScram())
	if len(rows) != 3 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	for i, want := range []struct {
		kind      Kind
		principal string
		client    string
		result    string
	}{
		{KindACL, "User:alice", "10.0.0.5", ResultOK},
		{KindACL, "User:alice", "10.0.0.5", ResultError},
		{KindSCRAM, "User:admin", "2001:db8::9", ResultOK},
	} {
		r := rows[i]
		if r.Kind != want.kind || r.Principal == nil || *r.Principal != want.principal || addr(r.Client) != want.client || r.Result != want.result {
			t.Errorf("row %d: kind %s principal %v client %s result %s, want %+v", i, r.Kind, r.Principal, addr(r.Client), r.Result, want)
		}
		if f := r.ForwardedBy; f == nil || f.Broker != fwdBroker || f.Principal == nil || *f.Principal != brokerName {
			t.Errorf("row %d: forwarded_by %+v", i, r.ForwardedBy)
		}
		if r.Broker != fwdCtrl {
			t.Errorf("row %d: broker %s", i, r.Broker)
		}
	}
	if rows[0].APIKey != 30 || rows[0].CorrelationID != 7 || rows[0].ClientID == nil || *rows[0].ClientID != "kafka-acls" ||
		rows[0].Binding.ResourceName == nil || *rows[0].Binding.ResourceName != "orders" || rows[0].LatencyUs == nil {
		t.Errorf("row 0: %+v", rows[0])
	}
	if e := rows[1].ErrorName; e == nil || *e != "CLUSTER_AUTHORIZATION_FAILED" || *rows[1].Binding.ResourceName != "payments" {
		t.Errorf("row 1: %+v", rows[1])
	}
	if tg := rows[2].Target; tg == nil || tg.User == nil || *tg.User != "carol" {
		t.Errorf("row 2 target %+v", rows[2].Target)
	}

	var js, ocsf, csvOut, table bytes.Buffer
	if err := WriteJSON(&js, rows); err != nil {
		t.Fatal(err)
	}
	WriteOCSF(&ocsf, rows)
	WriteCSV(&csvOut, rows, CSVOptions{})
	WriteTable(&table, rows, 0, false)
	line := strings.SplitN(js.String(), "\n", 2)[0]
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	if fb, _ := m["forwarded_by"].(map[string]any); fb["broker"] != "192.0.2.20:41000" || fb["principal"] != brokerName || m["client"] != "10.0.0.5" || m["principal"] != "User:alice" {
		t.Errorf("json: %s", line)
	}
	recs, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	col := func(name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	if recs[1][col("forwarded_by_broker")] != "192.0.2.20:41000" || recs[1][col("forwarded_by_principal")] != brokerName || recs[1][col("client")] != "10.0.0.5" {
		t.Errorf("csv: %q", recs[1])
	}
	var o map[string]any
	json.Unmarshal([]byte(strings.SplitN(ocsf.String(), "\n", 2)[0]), &o)
	actor, _ := o["actor"].(map[string]any)
	user, _ := actor["user"].(map[string]any)
	src, _ := o["src_endpoint"].(map[string]any)
	if user["name"] != "User:alice" || !strings.Contains(actor["invoked_by"].(string), "192.0.2.20:41000") || src["ip"] != "10.0.0.5" || src["port"] != nil {
		t.Errorf("ocsf: %s", ocsf.String())
	}
	if !strings.Contains(table.String(), "via 192.0.2.20:41000") {
		t.Errorf("table:\n%s", table.String())
	}
	for what, out := range map[string]string{"json": js.String(), "ocsf": ocsf.String(), "csv": csvOut.String(), "table": table.String()} {
		for _, s := range []string{fwdSalt, fwdSalted, hex.EncodeToString([]byte(fwdSalt))[:12]} {
			if strings.Contains(out, s) {
				t.Errorf("%s shows %q", what, s)
			}
		}
	}
}

// A forwarded DeleteAcls: one row per binding the forwarded response
// says its filter matched, by the envelope's principal.
func TestForwardedDeleteAcls(t *testing.T) {
	r := kmsg.NewPtrDeleteACLsRequest()
	r.SetVersion(3)
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourceName, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, testkit.Ptr("orders"), kmsg.ACLResourcePatternTypeLiteral
	f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	r.Filters = append(r.Filters, f)
	resp := kmsg.NewPtrDeleteACLsResponse()
	resp.SetVersion(3)
	fr := kmsg.NewDeleteACLsResponseResult()
	for _, p := range []string{"User:bob", "User:eve"} {
		m := kmsg.NewDeleteACLsResponseResultMatchingACL()
		m.ResourceType, m.ResourceName, m.ResourcePatternType = kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral
		m.Principal, m.Host, m.Operation, m.PermissionType = p, "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		fr.MatchingACLs = append(fr.MatchingACLs, m)
	}
	resp.Results = append(resp.Results, fr)
	rows := forwardedRows(t, nil, [2][]byte{
		testkit.EnvelopeRequest(r, 11, nil, "User", "ops", fwdClient, 200, nil),
		testkit.EnvelopeResponse(resp, 11, 200),
	})
	if len(rows) != 2 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	for i, who := range []string{"User:bob", "User:eve"} {
		r := rows[i]
		if r.Action != Delete || *r.Principal != "User:ops" || addr(r.Client) != "10.0.0.5" || r.Result != ResultOK ||
			r.Binding.Principal == nil || *r.Binding.Principal != who || r.ForwardedBy == nil || r.ForwardedBy.Broker != fwdBroker {
			t.Errorf("row %d: %+v", i, r)
		}
	}
}

// --kind acl keeps a forwarded ACL change and leaves a forwarded SCRAM
// change out; a change not forwarded has forwarded_by null.
func TestForwardedKindsAndNull(t *testing.T) {
	rows := forwardedRows(t, []Kind{KindACL}, fwdCreateAcls(), fwdScram())
	if len(rows) != 2 || rows[0].Kind != KindACL || rows[1].Kind != KindACL {
		t.Errorf("rows %+v", rows)
	}
	for _, r := range sampleRows(t) {
		if r.ForwardedBy != nil {
			t.Errorf("a direct change is forwarded: %+v", r)
		}
	}
	// An Envelope response alone (its request not captured): the client
	// behind it is not known, the broker is.
	l := NewLog()
	resp := dissect.Builtin().Decode(fwdCreateAcls()[1], dissect.Options{Direction: dissect.Response, APIKey: 58})
	bp := brokerName
	l.Add(resp, Meta{Index: 2, Client: fwdBroker, Broker: fwdCtrl, Principal: &bp}, 0)
	for _, r := range l.Finish() {
		if r.Principal != nil || r.Client.IsValid() || r.ForwardedBy == nil || r.ForwardedBy.Broker != fwdBroker {
			t.Errorf("response-only forwarded row %+v", r)
		}
	}
}
