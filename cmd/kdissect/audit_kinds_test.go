package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

// The kinds beyond ACLs (issue 16), from kadm against kfake (SCRAM
// credentials, client quotas, incremental and legacy configs, and their
// describes) and from scripted kmsg frames where kfake has no such API
// (delegation tokens). Every row is checked against what the client sent
// and kfake answered, as the recorder decoded them with kmsg.

var (
	scramSalt   = []byte("Zq7!salt-for-alice-only")
	scramSalted = bytes.Repeat([]byte{0x5a, 0xc3, 0x11, 0x7e}, 16)
	jaasSecret  = "org.apache.kafka.common.security.plain.PlainLoginModule required password=\"hunter2-jaas\";"
	// A password-typed broker config of Kafka before 4.0 whose name says
	// neither password nor secret.
	masterKey = "hunter2-master-key"
	tokenHMAC = []byte("hmac-of-the-token-very-secret!!")
)

// kindsCapture runs the admin calls against kfake and returns the pcap and
// every frame the client wrote with kfake's answer.
func kindsCapture(t *testing.T) (string, int, []*traffic.Frame) {
	t.Helper()
	b, err := traffic.StartBroker(0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	wire, rec := traffic.NewWire(), new(traffic.Recorder)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ClientID("kdissect-kinds"),
		kgo.SASL(plain.Auth{User: traffic.AdminUser, Pass: traffic.AdminPass}.AsMechanism()),
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, host)
			if err != nil {
				return nil, err
			}
			return rec.Wrap(wire.Wrap(c), traffic.AdminUser), nil
		}), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	must := func(what string, err error) {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err = adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 8192, Salt: scramSalt, SaltedPassword: scramSalted},
		{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "bob-password-123"},
	})
	must("upsert scram", err)
	_, err = adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "alice", Mechanism: kadm.ScramSha512}, {User: "carol", Mechanism: kadm.ScramSha256}}, nil)
	must("delete scram", err)
	user, cid, ip := "alice", "ingest", "10.0.0.5"
	_, err = adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &user}, {Type: "client-id", Name: &cid}},
			Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1024}, {Key: "consumer_byte_rate", Value: 2048}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id"}}, Ops: []kadm.AlterClientQuotaOp{{Key: "request_percentage", Value: 25}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "ip", Name: &ip}}, Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 5}}},
	})
	must("quotas", err)
	_, err = adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &user}, {Type: "client-id", Name: &cid}},
			Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Remove: true}}}})
	must("quota remove", err)
	v := func(s string) *string { return &s }
	_, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: v("3600000")},
		{Op: kadm.DeleteConfig, Name: "segment.ms"},
		{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: v("compact")},
		{Op: kadm.SubtractConfig, Name: "cleanup.policy", Value: v("delete")},
	}, "orders")
	must("topic configs", err)
	_, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "log.retention.ms", Value: v("86400000")},
		{Op: kadm.SetConfig, Name: "listener.name.sasl_plaintext.plain.sasl.jaas.config", Value: &jaasSecret},
		{Op: kadm.SetConfig, Name: "delegation.token.master.key", Value: &masterKey},
	}, 0)
	must("broker configs", err)
	_, err = adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: v("7200000")}, {Name: "max.message.bytes", Value: v("2097152")}}, "orders")
	must("legacy configs", err)
	_, err = adm.DescribeUserSCRAMs(ctx, "bob")
	must("describe scram", err)
	_, err = adm.DescribeBrokerConfigs(ctx, 0)
	must("describe broker", err)
	cl.Close()
	var pcap bytes.Buffer
	if _, err := traffic.WritePcap(&pcap, wire); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "kinds.pcap")
	if err := os.WriteFile(f, pcap.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f, b.Port, rec.Frames()
}

func errName(code int16) any {
	if code == 0 {
		return nil
	}
	return kerr.ErrorForCode(code).(*kerr.Error).Message
}

// rowFacts is what a test compares of a row: its kind, action, target and
// the broker's answer.
func rowFacts(r map[string]any) string {
	return fmt.Sprintf("%v %v %v %v %v", r["kind"], r["action"], r["target"], r["result"], r["error_name"])
}

func outcomeFacts(kind, action string, target map[string]any, code int16) string {
	res := "ok"
	if code != 0 {
		res = "error"
	}
	return fmt.Sprintf("%v %v %v %v %v", kind, action, target, res, errName(code))
}

// expectedKindRows derives the rows from the recorder's frames alone.
func expectedKindRows(frames []*traffic.Frame, reads bool) []string {
	var out []string
	scramName := map[int8]string{1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
	resType := map[int8]string{2: "TOPIC", 4: "BROKER"}
	for _, f := range frames {
		switch req := f.Request.(type) {
		case *kmsg.AlterUserSCRAMCredentialsRequest:
			resp := f.Response.(*kmsg.AlterUserSCRAMCredentialsResponse)
			code := func(user string) int16 {
				for _, r := range resp.Results {
					if r.User == user {
						return r.ErrorCode
					}
				}
				return -99
			}
			for _, d := range req.Deletions {
				out = append(out, outcomeFacts("scram", "delete", map[string]any{"user": d.Name, "mechanism": scramName[d.Mechanism], "iterations": nil}, code(d.Name)))
			}
			for _, u := range req.Upsertions {
				out = append(out, outcomeFacts("scram", "upsert", map[string]any{"user": u.Name, "mechanism": scramName[u.Mechanism], "iterations": float64(u.Iterations)}, code(u.Name)))
			}
		case *kmsg.AlterClientQuotasRequest:
			resp := f.Response.(*kmsg.AlterClientQuotasResponse)
			for i, e := range req.Entries {
				var ent []any
				for _, c := range e.Entity {
					ent = append(ent, map[string]any{"type": c.Type, "name": strOrNil(c.Name)})
				}
				for _, op := range e.Ops {
					act, val := "set", any(op.Value)
					if op.Remove {
						act, val = "remove", nil
					}
					out = append(out, outcomeFacts("quota", act, map[string]any{"entity": ent, "key": op.Key, "value": val}, resp.Entries[i].ErrorCode))
				}
			}
		case *kmsg.IncrementalAlterConfigsRequest:
			resp := f.Response.(*kmsg.IncrementalAlterConfigsResponse)
			for i, r := range req.Resources {
				for _, c := range r.Configs {
					act := map[kmsg.IncrementalAlterConfigOp]string{0: "set", 1: "delete", 2: "append", 3: "subtract"}[c.Op]
					val := strOrNil(c.Value)
					if strings.Contains(c.Name, "jaas") || c.Name == "delegation.token.master.key" {
						val = "<redacted, " + strconv.Itoa(len(*c.Value)) + " bytes>"
					}
					if act == "delete" {
						val = nil
					}
					out = append(out, outcomeFacts("config", act, map[string]any{"resource_type": resType[int8(r.ResourceType)],
						"resource_name": r.ResourceName, "key": c.Name, "value": val}, resp.Resources[i].ErrorCode))
				}
			}
		case *kmsg.AlterConfigsRequest:
			resp := f.Response.(*kmsg.AlterConfigsResponse)
			for i, r := range req.Resources {
				for _, c := range r.Configs {
					out = append(out, outcomeFacts("config", "replace", map[string]any{"resource_type": resType[int8(r.ResourceType)],
						"resource_name": r.ResourceName, "key": c.Name, "value": strOrNil(c.Value)}, resp.Resources[i].ErrorCode))
				}
			}
		case *kmsg.DescribeUserSCRAMCredentialsRequest:
			if reads {
				resp := f.Response.(*kmsg.DescribeUserSCRAMCredentialsResponse)
				for _, u := range req.Users {
					out = append(out, outcomeFacts("scram", "describe", map[string]any{"user": u.Name, "mechanism": nil, "iterations": nil}, resp.ErrorCode))
				}
			}
		case *kmsg.DescribeConfigsRequest:
			if reads {
				resp := f.Response.(*kmsg.DescribeConfigsResponse)
				for i, r := range req.Resources {
					if r.ResourceType == 4 {
						out = append(out, outcomeFacts("config", "describe", map[string]any{"resource_type": "BROKER",
							"resource_name": r.ResourceName, "key": nil, "value": nil}, resp.Resources[i].ErrorCode))
					}
				}
			}
		}
	}
	return out
}

func TestAuditKindsFromKadmAgainstKfake(t *testing.T) {
	pcap, port, frames := kindsCapture(t)
	p := strconv.Itoa(port)
	for _, reads := range []bool{false, true} {
		args := []string{"audit", "--format", "json", "--port", p, pcap}
		if reads {
			args = append(args, "--reads")
		}
		out, stderr, code := runCLI(t, "", args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		rows, blind := splitAudit(t, out)
		if len(blind) != 0 {
			t.Errorf("blind spots %v", blind)
		}
		var got []string
		for _, r := range rows {
			got = append(got, rowFacts(r))
			if r["principal"] != "User:"+traffic.AdminUser || r["client_id"] != "kdissect-kinds" || r["binding"] != nil {
				t.Errorf("row %v", r)
			}
		}
		want := expectedKindRows(frames, reads)
		if len(want) < 16 || !reflect.DeepEqual(got, want) {
			t.Errorf("reads=%v rows\n%s\nwant\n%s", reads, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// The table names each change in words.
	table, _, _ := runCLI(t, "", "audit", "--width", "200", "--port", p, pcap)
	for _, w := range []string{
		"scram upsert  alice SCRAM-SHA-512 (8192 iterations)",
		"scram delete  carol SCRAM-SHA-256",
		"quota set     user=alice,client-id=ingest producer_byte_rate=1024",
		"quota set     client-id=<default> request_percentage=25",
		"quota remove  user=alice,client-id=ingest consumer_byte_rate",
		"config set    BROKER 0 log.retention.ms=86400000",
		"config set    BROKER 0 listener.name.sasl_plaintext.plain.sasl.jaas.config=<redacted, ",
		"config set    BROKER 0 delegation.token.master.key=<redacted, 18 bytes>",
		"config delete TOPIC orders segment.ms",
		"config replace  TOPIC orders retention.ms=7200000",
	} {
		if !strings.Contains(strings.Join(strings.Fields(table), " "), strings.Join(strings.Fields(w), " ")) {
			t.Errorf("table has no %q:\n%s", w, table)
		}
	}
	// --kind keeps one kind; --effect is the last accepted value per key.
	out, _, _ := runCLI(t, "", "audit", "--format", "json", "--kind", "scram", "--port", p, pcap)
	for _, r := range parseNDJSON(t, out) {
		if r["kind"] != "scram" {
			t.Errorf("--kind scram kept %v", r)
		}
	}
	out, _, _ = runCLI(t, "", "audit", "--format", "json", "--effect", "--kind", "scram,config", "--port", p, pcap)
	effects := map[string]string{}
	for _, r := range parseNDJSON(t, out) {
		tg := r["target"].(map[string]any)
		effects[fmt.Sprint(r["kind"], " ", tg["user"], tg["resource_name"], " ", tg["mechanism"], tg["key"])] = fmt.Sprint(r["effect"], " ", tg["value"])
	}
	for k, v := range map[string]string{
		"scram alice<nil> SCRAM-SHA-512<nil>":       "deleted <nil>", // upserted, then deleted
		"scram bob<nil> SCRAM-SHA-256<nil>":         "upserted <nil>",
		"config <nil>orders <nil>retention.ms":      "set 7200000", // the legacy replace came last
		"config <nil>orders <nil>max.message.bytes": "set 2097152",
		"config <nil>0 <nil>log.retention.ms":       "set 86400000",
		"config <nil>orders <nil>segment.ms":        "deleted <nil>",
	} {
		if effects[k] != v {
			t.Errorf("--effect %s: %q, want %q (all: %v)", k, effects[k], v, effects)
		}
	}
	if _, ok := effects["scram carol<nil> SCRAM-SHA-256<nil>"]; ok {
		t.Errorf("a refused deletion has an effect: %v", effects)
	}
	checkNoSecrets(t, pcap, "--port", p)
	// --show-secrets shows the sensitive config value.
	out, _, _ = runCLI(t, "", "audit", "--format", "json", "--show-secrets", "--kind", "config", "--port", p, pcap)
	if !strings.Contains(out, "hunter2-jaas") {
		t.Errorf("--show-secrets: the jaas config is not shown")
	}
}

// checkNoSecrets: no salt, salted password, HMAC or sensitive config value
// in any output form of the audit, nor in the main command's NDJSON and
// byte layout.
func checkNoSecrets(t *testing.T, pcap string, args ...string) {
	t.Helper()
	secrets := [][]byte{scramSalt, scramSalted, []byte("hunter2-jaas"), []byte(masterKey), tokenHMAC}
	var forms [][]string
	for _, f := range []string{"table", "csv", "json", "ocsf"} {
		forms = append(forms, []string{"audit", "--format", f, "--reads"}, []string{"audit", "--format", f, "--effect"})
	}
	forms = append(forms, []string{"--json", "--all"}, []string{"-x", "--all"})
	for _, form := range forms {
		out, _, _ := runCLI(t, "", append(form, append(args, pcap)...)...)
		for _, s := range secrets {
			for _, enc := range []string{string(s), hex.EncodeToString(s), base64.StdEncoding.EncodeToString(s), fmt.Sprintf("% x", s[:8])} {
				if strings.Contains(out, enc) {
					t.Errorf("%v: a secret is in the output (%q)", form, enc[:min(len(enc), 12)])
				}
			}
		}
	}
}

// tokenCapture is a scripted exchange of delegation tokens (kfake has no
// such API): a create, a renew and an expire of that token, and a renew of
// a token the capture did not see created.
func tokenCapture(t *testing.T) string {
	b := newPcap(t)
	c := openConn(b, 50600, 9092)
	cid := "kafka-delegation-tokens"
	create := kmsg.NewPtrCreateDelegationTokenRequest()
	create.Version = 3
	create.OwnerPrincipalType, create.OwnerPrincipalName = testkit.Ptr("User"), testkit.Ptr("svc-etl")
	r := kmsg.NewCreateDelegationTokenRequestRenewer()
	r.PrincipalType, r.PrincipalName = "User", "ops"
	create.Renewers = append(create.Renewers, r)
	create.MaxLifetimeMillis = 86400000
	c.Send(true, testkit.KmsgRequest(create, 1, &cid))
	cresp := kmsg.NewPtrCreateDelegationTokenResponse()
	cresp.Version = 3
	cresp.PrincipalType, cresp.PrincipalName = "User", "svc-etl"
	cresp.TokenRequesterPrincipalType, cresp.TokenRequesterPrincipalName = "User", "admin"
	cresp.TokenID, cresp.HMAC = "tok-1234", tokenHMAC
	c.Send(false, testkit.KmsgResponse(cresp, 1))
	renew := kmsg.NewPtrRenewDelegationTokenRequest()
	renew.Version = 2
	renew.HMAC, renew.RenewTimeMillis = tokenHMAC, 3600000
	c.Send(true, testkit.KmsgRequest(renew, 2, &cid))
	rresp := kmsg.NewPtrRenewDelegationTokenResponse()
	rresp.Version = 2
	c.Send(false, testkit.KmsgResponse(rresp, 2))
	other := kmsg.NewPtrRenewDelegationTokenRequest()
	other.Version = 2
	other.HMAC, other.RenewTimeMillis = []byte("another-hmac"), 60000
	c.Send(true, testkit.KmsgRequest(other, 3, &cid))
	oresp := kmsg.NewPtrRenewDelegationTokenResponse()
	oresp.Version, oresp.ErrorCode = 2, 62 // DELEGATION_TOKEN_NOT_FOUND
	c.Send(false, testkit.KmsgResponse(oresp, 3))
	expire := kmsg.NewPtrExpireDelegationTokenRequest()
	expire.Version = 2
	expire.HMAC, expire.ExpiryPeriodMillis = tokenHMAC, -1
	c.Send(true, testkit.KmsgRequest(expire, 4, &cid))
	eresp := kmsg.NewPtrExpireDelegationTokenResponse()
	eresp.Version = 2
	c.Send(false, testkit.KmsgResponse(eresp, 4))
	return b.File(t)
}

func TestAuditDelegationTokens(t *testing.T) {
	pcap := tokenCapture(t)
	out, stderr, code := runCLI(t, "", "audit", "--format", "json", pcap)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []string
	for _, r := range parseNDJSON(t, out) {
		got = append(got, rowFacts(r))
	}
	want := []string{
		outcomeFacts("token", "create", map[string]any{"owner": "User:svc-etl", "renewers": []any{"User:ops"}, "max_lifetime_ms": 86400000.0, "token_id": "tok-1234"}, 0),
		outcomeFacts("token", "renew", map[string]any{"owner": "User:svc-etl", "renewers": []any{"User:ops"}, "renew_period_ms": 3600000.0, "token_id": "tok-1234"}, 0),
		outcomeFacts("token", "renew", map[string]any{"owner": nil, "renewers": []any{}, "renew_period_ms": 60000.0, "token_id": nil}, 62),
		outcomeFacts("token", "expire", map[string]any{"owner": "User:svc-etl", "renewers": []any{"User:ops"}, "expiry_period_ms": -1.0, "token_id": "tok-1234"}, 0),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	out, _, _ = runCLI(t, "", "audit", "--format", "json", "--effect", pcap)
	rows := parseNDJSON(t, out)
	if len(rows) != 1 || rows[0]["effect"] != "expired" {
		t.Errorf("--effect: %v", rows)
	}
	table, _, _ := runCLI(t, "", "audit", "--width", "200", pcap)
	if !strings.Contains(table, "token create  of User:svc-etl id tok-1234 renewers User:ops max lifetime 86400000 ms") {
		t.Errorf("table:\n%s", table)
	}
	checkNoSecrets(t, pcap)
}
