package main

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// A controller's listener in KRaft: a broker (192.0.2.10:50700) forwards
// its clients' admin requests in Envelopes. The capture holds a forwarded
// CreateAcls (one creation accepted, one refused) and a forwarded SCRAM
// upsertion, whose salt must show nowhere.

const (
	envSalt   = "env-salt:Wq3!zK8#"
	envSalted = "env-salted:Hn6$rT1@"
)

func envelopeCapture(t *testing.T) string {
	t.Helper()
	b := newPcap(t)
	c := openConn(b, 50700, 9092)
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(2)
	c.Send(true, testkit.KmsgRequest(av, 1, testkit.Ptr("broker-1")))
	avr := kmsg.NewPtrApiVersionsResponse()
	avr.SetVersion(2)
	c.Send(false, testkit.KmsgResponse(avr, 1))

	acl := kmsg.NewPtrCreateACLsRequest()
	acl.SetVersion(3)
	for _, name := range []string{"orders", "payments"} {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, name, kmsg.ACLResourcePatternTypeLiteral
		cr.Principal, cr.Host = "User:bob", "*"
		cr.Operation, cr.PermissionType = kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
		acl.Creations = append(acl.Creations, cr)
	}
	aclResp := kmsg.NewPtrCreateACLsResponse()
	aclResp.SetVersion(3)
	ok, bad := kmsg.NewCreateACLsResponseResult(), kmsg.NewCreateACLsResponseResult()
	bad.ErrorCode = 31
	aclResp.Results = append(aclResp.Results, ok, bad)
	c.Send(true, testkit.EnvelopeRequest(acl, 7, testkit.Ptr("kafka-acls"), "User", "alice", netip.MustParseAddr("10.0.0.5"), 2, testkit.Ptr("broker-1")))
	c.Send(false, testkit.EnvelopeResponse(aclResp, 7, 2))

	scram := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations = "carol", 1, 4096
	u.Salt, u.SaltedPassword = []byte(envSalt), []byte(envSalted)
	scram.Upsertions = append(scram.Upsertions, u)
	scramResp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
	res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
	res.User = "carol"
	scramResp.Results = append(scramResp.Results, res)
	c.Send(true, testkit.EnvelopeRequest(scram, 8, nil, "User", "admin", netip.MustParseAddr("10.0.0.6"), 3, testkit.Ptr("broker-1")))
	c.Send(false, testkit.EnvelopeResponse(scramResp, 8, 3))
	return b.File(t)
}

func TestEnvelopeNDJSONAndFilter(t *testing.T) {
	pcap := envelopeCapture(t)
	out, stderr, code := runCLI(t, "", "--all", "--json", pcap)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := parseNDJSON(t, out)
	if len(lines) != 6 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	for i, l := range lines {
		fwd, has := l["forwarded"]
		if !has {
			t.Fatalf("line %d has no forwarded key", i)
		}
		if l["api_key"].(float64) != 58 {
			if fwd != nil {
				t.Errorf("line %d (%v): forwarded %v", i, l["api_name"], fwd)
			}
			continue
		}
		f, _ := fwd.(map[string]any)
		if f["broker"] != "192.0.2.10:50700" || f["broker_principal"] != "User:ANONYMOUS" {
			t.Errorf("line %d: forwarded %v", i, fwd)
		}
		if l["direction"] == "request" && (f["principal"] == nil || f["client"] == nil) {
			t.Errorf("line %d: forwarded %v", i, fwd)
		}
	}
	if f := lines[2]["forwarded"].(map[string]any); f["principal"] != "User:alice" || f["client"] != "10.0.0.5" {
		t.Errorf("CreateAcls envelope: forwarded %v", f)
	}
	if s := lines[2]["summary"].(string); !strings.HasPrefix(s, "Envelope v0 request corr=2: forwarded CreateAcls v3 request corr=7 by User:alice from 10.0.0.5: ALLOW User:bob WRITE on TOPIC orders") {
		t.Errorf("summary %q", s)
	}
	if s := lines[3]["summary"].(string); !strings.Contains(s, "forwarded CreateAcls v3 response corr=7") {
		t.Errorf("response summary %q", s)
	}
	for what, args := range map[string][]string{"json": {"--all", "--json"}, "text -x": {"--all", "-x"}, "summary": {"--all", "--summary"}} {
		o, _, _ := runCLI(t, "", append(args, pcap)...)
		for _, s := range []string{envSalt, envSalted, hex.EncodeToString([]byte(envSalt))[:12], hex.EncodeToString([]byte(envSalted))[:12]} {
			if strings.Contains(o, s) {
				t.Errorf("%s shows %q", what, s)
			}
		}
		if what == "text -x" && !strings.Contains(o, "Salt") {
			t.Errorf("%s: the forwarded SCRAM request is not dissected", what)
		}
	}
	o, _, _ := runCLI(t, "", "--all", "-x", "--show-secrets", pcap)
	if !strings.Contains(o, hex.EncodeToString([]byte(envSalt))) {
		t.Error("--show-secrets does not show the forwarded salt")
	}

	for expr, want := range map[string]int{
		`Principal == "User:bob"`:                     1, // the CreateAcls inside the Envelope request
		`forwarded`:                                   4,
		`!forwarded`:                                  2,
		`forwarded && Name == "carol"`:                1,
		`Iterations == 4096 && forwarded`:             1,
		`api == "Envelope" && ErrorCode == 31`:        1,
		`forwarded.principal == "User:admin"`:         1,
		`forwarded.client == 10.0.0.0/24`:             2,
		`forwarded.client matches "^10[.]0[.]0[.]5$"`: 1,
	} {
		o, stderr, _ := runCLI(t, "", "--all", "--summary", "-Y", expr, pcap)
		if got := strings.Count(o, "\n"); got != want {
			t.Errorf("-Y %s: %d lines, want %d (%s):\n%s", expr, got, want, stderr, o)
		}
	}
}

// The audit, run as a user runs it: the forwarded changes by the clients
// behind the broker, the broker in forwarded_by.
func TestEnvelopeAuditBinary(t *testing.T) {
	pcap := envelopeCapture(t)
	cmd := exec.Command(kdissectBinary(t), "audit", "--format", "json", pcap)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	rows := parseNDJSON(t, out.String())
	if len(rows) != 3 {
		t.Fatalf("%d rows:\n%s", len(rows), out.String())
	}
	want := []struct{ kind, principal, client, result string }{
		{"acl", "User:alice", "10.0.0.5", "ok"},
		{"acl", "User:alice", "10.0.0.5", "error"},
		{"scram", "User:admin", "10.0.0.6", "ok"},
	}
	for i, w := range want {
		r := rows[i]
		if r["kind"] != w.kind || r["principal"] != w.principal || r["client"] != w.client || r["result"] != w.result || r["broker"] != "192.0.2.1:9092" {
			t.Errorf("row %d: %v", i, r)
		}
		fb, _ := r["forwarded_by"].(map[string]any)
		if fb["broker"] != "192.0.2.10:50700" || fb["principal"] != "User:ANONYMOUS" {
			t.Errorf("row %d: forwarded_by %v", i, r["forwarded_by"])
		}
	}
	if rows[1]["error_name"] != "CLUSTER_AUTHORIZATION_FAILED" {
		t.Errorf("row 1: %v", rows[1])
	}
	if strings.Contains(out.String(), envSalt) || strings.Contains(out.String(), hex.EncodeToString([]byte(envSalt))[:12]) {
		t.Error("the audit shows the salt")
	}
	// The main command's NDJSON, from the binary too.
	js, err := exec.Command(kdissectBinary(t), "--all", "--json", pcap).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := parseNDJSON(t, string(js))
	if f, _ := lines[2]["forwarded"].(map[string]any); len(lines) != 6 || f["principal"] != "User:alice" || f["broker"] != "192.0.2.10:50700" || lines[0]["forwarded"] != nil {
		t.Errorf("--json: %s", js)
	}
	// The rows' filter keys.
	for expr, n := range map[string]int{`forwarded_by.principal == "User:ANONYMOUS"`: 3, `forwarded_by.broker == 192.0.2.10:50700`: 3, `!forwarded_by.broker`: 0} {
		o, stderr, _ := runCLI(t, "", "audit", "--format", "json", "-Y", expr, pcap)
		if got := len(parseNDJSON(t, o)); got != n {
			t.Errorf("-Y %s: %d rows, want %d (%s)", expr, got, n, stderr)
		}
	}
}

// On a controller's listener the ACL changes arrive in Envelopes: the
// default view (the ACL APIs) shows the ones that forward a CreateAcls, with
// their response, and not the Envelope of the SCRAM upsertion.
func TestEnvelopeShownByDefaultWhenItForwardsAnACLChange(t *testing.T) {
	pcap := envelopeCapture(t)
	out, stderr, code := runCLI(t, "", "--summary", pcap)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "Envelope v0 request corr=2: ") ||
		!strings.Contains(lines[0], "forwarded CreateAcls v3 request corr=7 by User:alice from 10.0.0.5") ||
		!strings.Contains(lines[1], "Envelope v0 response corr=2: forwarded CreateAcls v3 response corr=7: 2 results, 1 failed") {
		t.Fatalf("default --summary of the envelope capture:\n%s", out)
	}
	out, _, _ = runCLI(t, "", "--summary", "--api", "AlterUserScramCredentials", pcap)
	if n := strings.Count(out, "\n"); n != 2 || !strings.Contains(out, "forwarded AlterUserScramCredentials") {
		t.Fatalf("--api AlterUserScramCredentials:\n%s", out)
	}
}
