package main

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// validateOCSF checks an event against what OCSF 1.x requires of an API
// Activity (class 6003): the base event's classification, time, severity
// and metadata (product, version), and the class's actor, api (with its
// operation), cloud (with its provider) and src_endpoint; the enums are
// ones the class defines and type_uid is class_uid*100+activity_id.
func validateOCSF(e map[string]any) error {
	num := func(k string) (float64, bool) { v, ok := e[k].(float64); return v, ok }
	obj := func(m map[string]any, k string) map[string]any { v, _ := m[k].(map[string]any); return v }
	str := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	class, _ := num("class_uid")
	cat, _ := num("category_uid")
	act, ok := num("activity_id")
	switch {
	case class != 6003 || cat != 6:
		return fmt.Errorf("class %v category %v", class, cat)
	case !ok || act < 0 || act > 4 && act != 99:
		return fmt.Errorf("activity_id %v", e["activity_id"])
	}
	if tu, _ := num("type_uid"); tu != class*100+act {
		return fmt.Errorf("type_uid %v", e["type_uid"])
	}
	if tm, ok := num("time"); !ok || tm <= 0 || tm != float64(int64(tm)) {
		return fmt.Errorf("time %v", e["time"])
	}
	if sv, ok := num("severity_id"); !ok || sv < 0 || sv > 6 && sv != 99 {
		return fmt.Errorf("severity_id %v", e["severity_id"])
	}
	md := obj(e, "metadata")
	if p := obj(md, "product"); md == nil || str(md, "version") == "" || str(md, "version")[:2] != "1." || str(p, "name") == "" || str(p, "vendor_name") == "" {
		return fmt.Errorf("metadata %v", md)
	}
	actor := obj(e, "actor")
	if user := obj(actor, "user"); len(actor) == 0 || user == nil || (str(user, "name") == "" && user["type_id"] == nil) {
		return fmt.Errorf("actor %v", actor)
	}
	if api := obj(e, "api"); str(api, "operation") == "" || str(obj(api, "request"), "uid") == "" {
		return fmt.Errorf("api %v", api)
	}
	if str(obj(e, "cloud"), "provider") == "" {
		return fmt.Errorf("cloud %v", e["cloud"])
	}
	if src := obj(e, "src_endpoint"); str(src, "ip") == "" {
		return fmt.Errorf("src_endpoint %v", src)
	}
	if st, ok := num("status_id"); !ok || st < 0 || st > 2 && st != 99 {
		return fmt.Errorf("status_id %v", e["status_id"])
	}
	if _, ok := e["resources"].([]any); !ok {
		return fmt.Errorf("resources %v", e["resources"])
	}
	return nil
}

func TestAuditOCSF(t *testing.T) {
	sc, _, pcap := loadAuditCase(t, "kadm-acls")
	port := strconv.Itoa(sc.BrokerPort)
	out, stderr, code := runCLI(t, "", "audit", "--format", "ocsf", "--port", port, pcap)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	events := parseNDJSON(t, out)
	jout, _, _ := runCLI(t, "", "audit", "--format", "json", "--port", port, pcap)
	rows := parseNDJSON(t, jout)
	if len(events) != len(rows) || len(rows) == 0 {
		t.Fatalf("%d events for %d rows", len(events), len(rows))
	}
	for i, e := range events {
		if err := validateOCSF(e); err != nil {
			t.Fatalf("event %d: %v\n%v", i, err, e)
		}
		r := rows[i]
		tm, _ := time.Parse(time.RFC3339Nano, r["time"].(string))
		api := e["api"].(map[string]any)
		res := e["resources"].([]any)[0].(map[string]any)
		b := r["binding"].(map[string]any)
		actor := e["actor"].(map[string]any)
		wantOp, wantAct := "CreateAcls", 1.0
		if r["action"] == "delete" {
			wantOp, wantAct = "DeleteAcls", 4.0
		}
		wantStatus := "Success"
		if r["result"] == "error" {
			wantStatus = "Failure"
			if e["status_code"] != r["error_name"] || e["status_detail"] != r["error_message"] {
				t.Errorf("event %d status %v %v, row %v", i, e["status_code"], e["status_detail"], r)
			}
		}
		src := e["src_endpoint"].(map[string]any)
		if e["time"] != float64(tm.UnixMilli()) || api["operation"] != wantOp || e["activity_id"] != wantAct ||
			api["request"].(map[string]any)["uid"] != strconv.Itoa(int(r["correlation_id"].(float64))) ||
			actor["user"].(map[string]any)["name"] != r["principal"] || actor["app_name"] != r["client_id"] ||
			fmt.Sprintf("%v:%v", src["ip"], src["port"]) != r["client"] || e["status"] != wantStatus ||
			res["type"] != b["resource_type"] || res["name"] != b["resource_name"] ||
			fmt.Sprint(res["data"]) != fmt.Sprint(b) || e["unmapped"].(map[string]any)["result"] != r["result"] {
			t.Errorf("event %d\n%v\nfor row\n%v", i, e, r)
		}
	}
}
