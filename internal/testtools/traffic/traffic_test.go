package traffic

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// runScenario runs one scenario against a fresh broker on a random port.
func runScenario(t *testing.T, name string) *Result {
	t.Helper()
	b, err := StartBroker(0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := RunContext(ctx, name, b.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) == 0 {
		t.Fatal("no exchanges")
	}
	checkCommon(t, res)
	return res
}

// checkCommon checks what every scenario promises: well-formed exchanges
// (one result per creation/filter), distinct correlation IDs per stream,
// authorization failures for mallory and successes for admin, and a
// sidecar that reads back to the same values.
func checkCommon(t *testing.T, res *Result) {
	t.Helper()
	type key struct {
		port int
		corr int32
	}
	seen := map[key]bool{}
	var adminOK, malloryDenied int
	for i, e := range res.Exchanges {
		k := key{e.ClientPort, e.CorrelationID}
		if seen[k] {
			t.Errorf("exchange %d: duplicate correlation ID %d on port %d", i, e.CorrelationID, e.ClientPort)
		}
		seen[k] = true
		if e.ClientPort == 0 {
			t.Errorf("exchange %d: no client port", i)
		}
		var codes []int16
		switch e.API {
		case APICreateAcls:
			req := e.Request.(*kmsg.CreateACLsRequest)
			resp := e.Response.(*kmsg.CreateACLsResponse)
			if req.Version != e.Version || resp.Version != e.Version {
				t.Errorf("exchange %d: versions %d/%d, header says %d", i, req.Version, resp.Version, e.Version)
			}
			if len(req.Creations) != len(resp.Results) {
				t.Errorf("exchange %d: %d creations, %d results", i, len(req.Creations), len(resp.Results))
			}
			for _, r := range resp.Results {
				codes = append(codes, r.ErrorCode)
			}
		case APIDeleteAcls:
			req := e.Request.(*kmsg.DeleteACLsRequest)
			resp := e.Response.(*kmsg.DeleteACLsResponse)
			if req.Version != e.Version || resp.Version != e.Version {
				t.Errorf("exchange %d: versions %d/%d, header says %d", i, req.Version, resp.Version, e.Version)
			}
			if len(req.Filters) != len(resp.Results) {
				t.Errorf("exchange %d: %d filters, %d results", i, len(req.Filters), len(resp.Results))
			}
			for _, r := range resp.Results {
				codes = append(codes, r.ErrorCode)
			}
		default:
			t.Errorf("exchange %d: api %d", i, e.API)
		}
		for _, c := range codes {
			switch e.User {
			case MalloryUser:
				if c != kerr.ClusterAuthorizationFailed.Code {
					t.Errorf("exchange %d: mallory got error code %d", i, c)
				}
				malloryDenied++
			case AdminUser:
				if c == 0 {
					adminOK++
				} else if c == kerr.ClusterAuthorizationFailed.Code {
					t.Errorf("exchange %d: admin was denied", i)
				}
			default:
				t.Errorf("exchange %d: user %q", i, e.User)
			}
		}
	}
	if adminOK == 0 || malloryDenied == 0 {
		t.Errorf("admin successes %d, mallory denials %d: want both > 0", adminOK, malloryDenied)
	}

	// Sidecar round trip.
	data, err := res.ExpectJSON(1234)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseExpect(data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Scenario != res.Scenario || f.BrokerPort != 1234 || len(f.Exchanges) != len(res.Exchanges) {
		t.Fatalf("sidecar header: %+v", f)
	}
	for i, x := range f.Exchanges {
		want, err := Expected(res.Exchanges[i])
		if err != nil {
			t.Fatal(err)
		}
		got := x
		got.Request, got.Response, want.Request, want.Response = nil, nil, nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("exchange %d: sidecar reads back as\n%+v\nwant\n%+v", i, got, want)
		}
	}
	if len(f.OtherFrames) == 0 {
		t.Error("no other frames (ApiVersions, SASL) recorded")
	}
}

func hasError(ex []Exchange, api int16, code int16) bool {
	for _, e := range ex {
		switch r := e.Response.(type) {
		case *kmsg.CreateACLsResponse:
			for _, x := range r.Results {
				if api == APICreateAcls && x.ErrorCode == code {
					return true
				}
			}
		case *kmsg.DeleteACLsResponse:
			for _, x := range r.Results {
				if api == APIDeleteAcls && x.ErrorCode == code {
					return true
				}
			}
		}
	}
	return false
}

func TestRawVersions(t *testing.T) {
	res := runScenario(t, ScenarioRawVersions)
	ex := res.Exchanges
	all := []int16{0, 1, 2, 3}
	v := Versions(ex)
	if !reflect.DeepEqual(v[APICreateAcls], all) || !reflect.DeepEqual(v[APIDeleteAcls], all) {
		t.Errorf("versions %v, want 0-3 of both", v)
	}
	var nullFilter, longName, bulk, bulkMatches, v0Pattern bool
	for _, e := range ex {
		switch r := e.Request.(type) {
		case *kmsg.CreateACLsRequest:
			if len(r.Creations) > 127 && e.Version >= 2 {
				bulk = true
			}
			for _, c := range r.Creations {
				if len(c.ResourceName) > 127 && e.Version >= 2 {
					longName = true
				}
			}
		case *kmsg.DeleteACLsRequest:
			for _, f := range r.Filters {
				if f.ResourceName == nil && f.Principal == nil && f.Host == nil {
					nullFilter = true
				}
			}
			for _, fr := range e.Response.(*kmsg.DeleteACLsResponse).Results {
				if len(fr.MatchingACLs) > 127 {
					bulkMatches = true
				}
				if e.Version == 0 && len(fr.MatchingACLs) > 0 {
					v0Pattern = true
				}
			}
		}
	}
	if !nullFilter || !longName || !bulk || !bulkMatches || !v0Pattern {
		t.Errorf("null filter %v, long name %v, >127 creations %v, >127 matches %v, v0 match %v: want all",
			nullFilter, longName, bulk, bulkMatches, v0Pattern)
	}
	if !hasError(ex, APICreateAcls, kerr.InvalidRequest.Code) || !hasError(ex, APIDeleteAcls, kerr.InvalidRequest.Code) {
		t.Error("want INVALID_REQUEST results in both APIs")
	}

	// The raw scenario wrote its requests itself: the recorded, re-decoded
	// request must encode back to the same bytes.
	for i, e := range ex {
		req := e.Request.(kmsg.Request)
		again := kmsg.RequestForKey(e.API)
		again.SetVersion(e.Version)
		if err := again.ReadFrom(req.AppendTo(nil)); err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		if !reflect.DeepEqual(again, req) {
			t.Errorf("exchange %d does not round-trip", i)
		}
	}
}

func TestKadm(t *testing.T) {
	res := runScenario(t, ScenarioKadm)
	v := Versions(res.Exchanges)
	if !reflect.DeepEqual(v[APICreateAcls], []int16{3}) || !reflect.DeepEqual(v[APIDeleteAcls], []int16{3}) {
		t.Errorf("versions %v, want v3 only (kadm against kfake)", v)
	}
	if !hasError(res.Exchanges, APICreateAcls, kerr.InvalidRequest.Code) {
		t.Error("want the delegation-token creation rejected")
	}
	var zoe bool
	for _, e := range res.Exchanges {
		if r, ok := e.Request.(*kmsg.CreateACLsRequest); ok {
			for _, c := range r.Creations {
				if c.Principal == "User:Zoë" && c.PermissionType == kmsg.ACLPermissionTypeDeny && c.Host == "192.0.2.7" {
					zoe = true
				}
			}
		}
	}
	if !zoe {
		t.Error("no DENY for User:Zoë")
	}
}

func TestSarama(t *testing.T) {
	res := runScenario(t, ScenarioSarama)
	v := Versions(res.Exchanges)
	if !reflect.DeepEqual(v[APICreateAcls], []int16{0, 1, 2}) || !reflect.DeepEqual(v[APIDeleteAcls], []int16{0, 2}) {
		t.Errorf("versions %v, want CreateAcls 0,1,2 and DeleteAcls 0,2", v)
	}
	if !hasError(res.Exchanges, APICreateAcls, kerr.InvalidRequest.Code) {
		t.Error("want the ANY-resource creation rejected")
	}
}

func TestRunRejectsNonLoopback(t *testing.T) {
	if _, err := Run(ScenarioKadm, "192.0.2.1:9092"); err == nil {
		t.Fatal("want an error for a non-loopback address")
	}
	if _, err := Run("nope", "127.0.0.1:1"); err == nil {
		t.Fatal("want an error for an unknown scenario")
	}
}

// TestCommittedSidecars reads back every committed sidecar, if any.
func TestCommittedSidecars(t *testing.T) {
	files, _ := filepath.Glob("../../../testdata/pcaps/*.expect.json")
	for _, f := range files {
		if strings.HasSuffix(f, ScenarioRecords+".expect.json") {
			// Records, not ACL exchanges: a format of its own.
			if e, err := LoadRecordsExpect(f); err != nil || len(e.Produced) == 0 || len(e.Consumed) == 0 {
				t.Errorf("%s: %v, no records", f, err)
			}
			continue
		}
		ex, err := LoadExpect(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(ex) == 0 {
			t.Errorf("%s: no exchanges", f)
		}
	}
}
