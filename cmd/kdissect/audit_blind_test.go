package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

// What the log could not see (issue 16): every blind spot of a capture is
// a blind_spot line, a sentence on stderr and in the table's footer, and
// exit status 3; what a response alone proves is inferred.

// splitAudit separates an audit's NDJSON into rows and blind spots.
func splitAudit(t *testing.T, out string) (rows, blind []map[string]any) {
	t.Helper()
	for _, r := range parseNDJSON(t, out) {
		if r["event"] == "blind_spot" {
			blind = append(blind, r)
		} else {
			rows = append(rows, r)
		}
	}
	return rows, blind
}

// expectedBlind derives the blind spots from kdissect --json of the same
// capture: each event that hides a connection's traffic is one, with the
// same time and addresses.
func expectedBlind(t *testing.T, file string, args ...string) []map[string]any {
	t.Helper()
	out, _, _ := runCLI(t, "", append([]string{"--json", "--all"}, append(args, file)...)...)
	var want []map[string]any
	for _, e := range parseNDJSON(t, out) {
		ev, _ := e["event"].(string)
		b := map[string]any{"event": "blind_spot", "time": e["time"], "file": file}
		side := func() {
			b["client"], b["broker"], b["from"] = e["src"], e["dst"], "client"
			if !strings.HasSuffix(e["dst"].(string), ":"+args[1]) {
				b["client"], b["broker"], b["from"] = e["dst"], e["src"], "broker"
			}
			b["stream_offset"] = e["stream_offset"]
		}
		switch ev {
		case "gap", "unparseable":
			if e["leading"] == true && e["unframed"] != true {
				continue // the tail of a frame sent before the capture began
			}
			b["reason"] = ev
			side()
			b["length"] = e["length"]
			if e["tls"] == true {
				b["tls"] = true // TLS records of a connection picked up inside one
			}
		case "unmatched_response":
			b["reason"] = ev
			side()
			b["index"], b["correlation_id"], b["size"] = e["index"], e["correlation_id"], e["size"]
		case "evicted":
			b["reason"], b["client"], b["broker"] = ev, e["src"], e["dst"]
			b["last_seen"], b["max_conns"] = e["last_seen"], e["max_conns"]
		case "tls_session":
			if e["decrypted"] == true || e["refused"] == true {
				continue
			}
			b["reason"], b["client"], b["broker"] = "tls_no_keys", e["src"], e["dst"]
			b["version"], b["cipher"], b["sni"], b["why"] = e["version"], e["cipher"], e["sni"], e["reason"]
		case "incomplete":
			b["reason"] = ev
			side()
			b["have"], b["want"], b["cause"] = e["have"], e["want"], e["reason"]
			for _, k := range []string{"index", "correlation_id", "api_key", "api_name", "api_version"} {
				if v, ok := e[k]; ok {
					b[k] = v
				}
			}
		default:
			continue
		}
		want = append(want, b)
	}
	return want
}

// sameBlind compares blind spots, leaving out the keys the main command's
// events do not carry (principal, inferred_rows), which callers check.
func sameBlind(t *testing.T, got, want []map[string]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d blind spots, want %d:\n%v\nwant\n%v", len(got), len(want), got, want)
	}
	for i := range min(len(got), len(want)) {
		g := map[string]any{}
		for k, v := range got[i] {
			if k != "principal" && k != "inferred_rows" {
				g[k] = v
			}
		}
		if !reflect.DeepEqual(g, want[i]) {
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(want[i])
			t.Errorf("blind spot %d:\n got %s\nwant %s", i, gj, wj)
		}
	}
}

func TestAuditTLSWithoutKeysIsIncomplete(t *testing.T) {
	pcap := shippedTLS + ".pcap"
	out, stderr, code := runCLI(t, "", "audit", "--format", "json", pcap)
	if code != exitIncomplete {
		t.Fatalf("exit %d, want %d: %s", code, exitIncomplete, stderr)
	}
	rows, blind := splitAudit(t, out)
	if len(rows) != 0 {
		t.Errorf("rows from connections not decrypted: %v", rows)
	}
	want := expectedBlind(t, pcap, "--port", "9092")
	if len(want) != 3 {
		t.Fatalf("the capture has %d connections without keys, want 3", len(want))
	}
	sameBlind(t, blind, want)
	for i, b := range blind {
		if b["client"] != fmt.Sprintf("127.0.0.1:%d", 50100+i) || b["sni"] != "broker.kdissect.test" || b["version"] != "1.3" {
			t.Errorf("blind spot %d: %v", i, b)
		}
	}
	line := "3 TLS connections to 127.0.0.1:9092 not decrypted (no keys): changes on them are not in this log"
	if stderr != "kdissect: "+line+"\n" {
		t.Errorf("stderr %q", stderr)
	}
	table, stderr2, code := runCLI(t, "", "audit", pcap)
	if code != exitIncomplete || stderr2 != stderr {
		t.Errorf("table: exit %d, stderr %q", code, stderr2)
	}
	if want := "0 changes by 0 principals: 0 created, 0 deleted, 0 failed\nblind spot: " + line + "\n"; !strings.HasSuffix(table, want) {
		t.Errorf("table footer:\n%s", table)
	}
	for _, f := range []string{"csv", "ocsf"} {
		o, e, c := runCLI(t, "", "audit", "--format", f, pcap)
		if c != exitIncomplete || e != stderr || strings.Contains(o, "blind_spot") {
			t.Errorf("%s: exit %d, stderr %q, out %q", f, c, e, o)
		}
	}
	// With its key log the log is complete.
	out, stderr, code = runCLI(t, "", "audit", "--format", "json", "--tls-keylog", shippedTLS+".keylog", pcap)
	if _, blind := splitAudit(t, out); code != exitOK || stderr != "" || len(blind) != 0 {
		t.Errorf("with the key log: exit %d, %q, %v", code, stderr, blind)
	}
}

// lostRequest is kadm-acls without the packet of the request of the
// exchange on port with correlation id corr.
func lostRequest(t *testing.T, port int, corr int32) (sc *traffic.ExpectFile, cut string, ex traffic.ExpectedExchange, orig map[string]jsonMessage) {
	sc, msgs, pcap := loadAuditCase(t, "kadm-acls")
	for _, e := range sc.Exchanges {
		if e.ClientPort == port && e.CorrelationID == corr {
			ex = e
		}
	}
	req := msgs[fmt.Sprintf("%d/%d/request", port, corr)]
	out, _, _ := runCLI(t, "", "--json", "--port", strconv.Itoa(sc.BrokerPort), pcap)
	packet := 0
	for _, l := range parseNDJSON(t, out) {
		if l["index"] == float64(req.Index) && l["event"] == nil {
			ps := l["packets"].([]any)
			if len(ps) != 1 {
				t.Fatalf("request in %d packets", len(ps))
			}
			packet = int(ps[0].(float64))
		}
	}
	cut = rewritePcap(t, pcap, func(i int, data []byte) []byte {
		if i == packet {
			return nil
		}
		return data
	})
	return sc, cut, ex, msgs
}

// The rows of the exchanges not lost are those of the whole capture; only
// their message indexes move.
func checkOtherRows(t *testing.T, rows []map[string]any, sc *traffic.ExpectFile, msgs map[string]jsonMessage, lost traffic.ExpectedExchange) {
	t.Helper()
	var want []map[string]any
	for _, r := range expectedRows(t, sc, msgs) {
		if r["correlation_id"] == float64(lost.CorrelationID) && strings.HasSuffix(r["client"].(string), ":"+strconv.Itoa(lost.ClientPort)) {
			continue
		}
		want = append(want, r)
	}
	var got []map[string]any
	for _, r := range rows {
		if r["inferred"] != true {
			got = append(got, r)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows not inferred, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := maps(got[i]), maps(want[i])
		for _, m := range []map[string]any{g, w} {
			delete(m, "request_index")
			delete(m, "response_index")
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("row %d:\n got %v\nwant %v", i, g, w)
		}
	}
}

func maps(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func TestAuditInfersDeletionsWhenTheRequestIsLost(t *testing.T) {
	// The DeleteAcls of port 46042, correlation id 6: one filter, one
	// binding deleted.
	sc, cut, ex, msgs := lostRequest(t, 46042, 6)
	port := strconv.Itoa(sc.BrokerPort)
	out, stderr, code := runCLI(t, "", "audit", "--format", "json", "--port", port, cut)
	if code != exitIncomplete {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows, blind := splitAudit(t, out)
	sameBlind(t, blind, expectedBlind(t, cut, "--port", port))
	var unmatched map[string]any
	for _, b := range blind {
		if b["reason"] == "unmatched_response" {
			unmatched = b
		}
	}
	if unmatched == nil || unmatched["inferred_rows"] != 1.0 || unmatched["principal"] != "User:admin" || len(blind) != 2 || blind[1]["reason"] != "gap" {
		t.Fatalf("blind spots %v", blind)
	}
	resp := msgs[fmt.Sprintf("%d/%d/response", ex.ClientPort, ex.CorrelationID)]
	var want []map[string]any
	for i, fr := range ex.DeleteResponse.FilterResults {
		for _, m := range fr.MatchingAcls {
			want = append(want, map[string]any{
				"time": resp.Time, "client": resp.Dst, "broker": resp.Src, "principal": "User:admin", "client_id": nil,
				"action": "delete", "api_version": 3.0, "correlation_id": 6.0,
				"binding": map[string]any{"resource_type": kafkaName(m.ResourceType, kmsg.ACLResourceType(m.ResourceType)),
					"resource_name": m.ResourceName, "pattern_type": patternName(m.PatternType), "principal": m.Principal,
					"host": m.Host, "operation": kafkaName(m.Operation, kmsg.ACLOperation(m.Operation)),
					"permission": kafkaName(m.PermissionType, kmsg.ACLPermissionType(m.PermissionType))},
				"result": "ok", "error_code": nil, "error_name": nil, "error_message": nil, "filter_index": float64(i),
				"latency_us": nil, "request_index": nil, "response_index": unmatched["index"],
				"kind": "acl", "target": nil, "inferred": true, "client_software": resp.ClientSoftware, "forwarded_by": nil,
			})
		}
	}
	var inferred []map[string]any
	for _, r := range rows {
		if r["inferred"] == true {
			inferred = append(inferred, r)
		}
	}
	if len(want) != 1 || !reflect.DeepEqual(inferred, want) {
		t.Errorf("inferred rows\n got %v\nwant %v", inferred, want)
	}
	checkOtherRows(t, rows, sc, msgs, ex)
	wantErr := "kdissect: 1 gap on connections to 127.0.0.1:" + port + " (61 bytes not captured): changes in them are not in this log\n" +
		"kdissect: 1 response without its request on connections to 127.0.0.1:" + port + ": 1 row inferred from it (marked inferred), others may be missing\n"
	if stderr != wantErr {
		t.Errorf("stderr\n%s\nwant\n%s", stderr, wantErr)
	}
	table, _, _ := runCLI(t, "", "audit", "--width", "200", "--port", port, cut)
	if !strings.Contains(table, "  delete  ALLOW User:alice WRITE on TOPIC orders (inferred)  ") ||
		!strings.HasSuffix(table, strings.ReplaceAll(wantErr, "kdissect: ", "blind spot: ")) {
		t.Errorf("table:\n%s", table)
	}
}

func TestAuditInfersCreationsWhenTheRequestIsLost(t *testing.T) {
	sc, cut, ex, msgs := lostRequest(t, 46058, 3)
	port := strconv.Itoa(sc.BrokerPort)
	out, stderr, code := runCLI(t, "", "audit", "--format", "json", "--port", port, cut)
	if code != exitIncomplete {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows, blind := splitAudit(t, out)
	sameBlind(t, blind, expectedBlind(t, cut, "--port", port))
	resp := msgs[fmt.Sprintf("%d/%d/response", ex.ClientPort, ex.CorrelationID)]
	var inferred []map[string]any
	for _, r := range rows {
		if r["inferred"] == true {
			inferred = append(inferred, r)
		}
	}
	if len(inferred) != len(ex.CreateResponse.Results) || len(inferred) == 0 {
		t.Fatalf("%d inferred rows for %d results", len(inferred), len(ex.CreateResponse.Results))
	}
	for i, res := range ex.CreateResponse.Results {
		r := inferred[i]
		if r["binding"] != nil || r["action"] != "create" || r["time"] != resp.Time || r["client_id"] != nil ||
			r["request_index"] != nil || r["principal"] != "User:admin" || (res.ErrorCode == 0) != (r["result"] == "ok") {
			t.Errorf("inferred row %d: %v", i, r)
		}
	}
	checkOtherRows(t, rows, sc, msgs, ex)
}

// A response lost: the request's rows are unanswered, and the gap says
// the log may be incomplete.
func TestAuditLostResponseIsABlindSpot(t *testing.T) {
	sc, msgs, pcap := loadAuditCase(t, "kadm-acls")
	port := strconv.Itoa(sc.BrokerPort)
	resp := msgs["46042/6/response"]
	out, _, _ := runCLI(t, "", "--json", "--port", port, pcap)
	packet := 0
	for _, l := range parseNDJSON(t, out) {
		if l["index"] == float64(resp.Index) && l["event"] == nil {
			packet = int(l["packets"].([]any)[0].(float64))
		}
	}
	cut := rewritePcap(t, pcap, func(i int, d []byte) []byte {
		if i == packet {
			return nil
		}
		return d
	})
	jout, stderr, code := runCLI(t, "", "audit", "--format", "json", "--port", port, cut)
	rows, blind := splitAudit(t, jout)
	if code != exitIncomplete {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sameBlind(t, blind, expectedBlind(t, cut, "--port", port))
	if len(blind) != 1 || blind[0]["reason"] != "gap" || blind[0]["from"] != "broker" {
		t.Errorf("blind spots %v", blind)
	}
	n := 0
	for _, r := range rows {
		if r["result"] == "no_response" {
			n++
			if r["correlation_id"] != 6.0 || r["inferred"] != nil {
				t.Errorf("unanswered row %v", r)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d unanswered rows, want the 1 filter", n)
	}
}

// Evicted connections are blind spots, one per eviction.
func TestAuditEvictionIsABlindSpot(t *testing.T) {
	sc, _, pcap := loadAuditCase(t, "kadm-acls")
	port := strconv.Itoa(sc.BrokerPort)
	out, _, code := runCLI(t, "", "audit", "--format", "json", "--max-conns", "1", "--port", port, pcap)
	_, blind := splitAudit(t, out)
	if code != exitIncomplete {
		t.Fatalf("exit %d", code)
	}
	want := expectedBlind(t, pcap, "--port", port, "--max-conns", "1")
	sameBlind(t, blind, want)
	evicted := 0
	for _, b := range blind {
		if b["reason"] == "evicted" {
			evicted++
		}
	}
	if evicted == 0 {
		t.Errorf("no evicted blind spot: %v", blind)
	}
}

// Malformed data wins over an incomplete log: exit 2, the blind spots
// still said.
func TestAuditExitPrecedence(t *testing.T) {
	b := newPcap(t)
	c := openConn(b, 50500, 9092)
	req := kmsg.NewPtrCreateACLsRequest()
	req.Version = 3
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.Principal, cr.Host, cr.ResourceName = "User:alice", "*", "orders"
	req.Creations = append(req.Creations, cr)
	frame := testkit.KmsgRequest(req, 1, nil)
	frame[15] = 3                // the creations' compact length: 2, one there
	frame = frame[:len(frame)-1] // without the body's tagged fields
	frame[3]--
	c.Send(true, frame)
	c.Send(false, aclResponse(1, 0))
	c.Send(false, aclResponse(99, 0)) // a response to no request
	pcap := b.File(t)
	out, stderr, code := runCLI(t, "", "audit", "--format", "json", pcap)
	if code != exitMalformed {
		t.Fatalf("exit %d, want %d: %s", code, exitMalformed, stderr)
	}
	_, blind := splitAudit(t, out)
	if len(blind) != 1 || blind[0]["reason"] != "unmatched_response" || blind[0]["correlation_id"] != 99.0 {
		t.Errorf("blind spots %v", blind)
	}
	if !strings.Contains(stderr, "1 response without its request on connections to 192.0.2.1:9092") {
		t.Errorf("stderr %q", stderr)
	}
}
