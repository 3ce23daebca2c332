package dissect

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// The round trip encodes messages with franz-go's kmsg, an encoder written
// independently of our definitions, decodes them with dissect and checks
// every node: name, value, null, element count, size, child count and
// order. 130 extra elements make array counts multi-byte uvarints.
const roundTripExtra = 130

func TestRoundTripCreateAclsRequest(t *testing.T) {
	for v := int16(0); v <= 3; v++ {
		t.Run(vname(v), func(t *testing.T) {
			req := sampleCreateReq(v, roundTripExtra)
			client := testkit.Ptr("kdissect-" + unicodeRN)
			frame := testkit.KmsgRequest(req, 1<<30, client)
			e := expect{flex: req.IsFlexible()}
			var elems []want
			for i := range req.Creations {
				c := &req.Creations[i]
				fields := []want{
					e.int("ResourceType", int64(c.ResourceType), 1),
					e.str("ResourceName", c.ResourceName),
				}
				if v >= 1 {
					fields = append(fields, e.int("ResourcePatternType", int64(c.ResourcePatternType), 1))
				}
				fields = append(fields,
					e.str("Principal", c.Principal),
					e.str("Host", c.Host),
					e.int("Operation", int64(c.Operation), 1),
					e.int("PermissionType", int64(c.PermissionType), 1),
				)
				elems = append(elems, e.elem("AclCreation["+itoa(int64(i))+"]", &c.UnknownTags, fields...))
			}
			w := frameWant("CreateAclsRequest", frame, requestHeaderWant(req, 1<<30, client),
				e.body("CreateAclsRequest", &req.UnknownTags, e.array("Creations", elems)))
			m := Builtin().Decode(frame, Options{})
			checkDecoded(t, m, frame, w)
			checkMessage(t, m, 30, v, 1<<30)
			if got := m.Tree.Find("CreateAclsRequest", "Creations", "AclCreation[0]", "ResourcePatternType"); (got != nil) != (v >= 1) {
				t.Errorf("ResourcePatternType present=%v at v%d", got != nil, v)
			}
		})
	}
}

func TestRoundTripCreateAclsResponse(t *testing.T) {
	for v := int16(0); v <= 3; v++ {
		t.Run(vname(v), func(t *testing.T) {
			resp := sampleCreateResp(v, roundTripExtra)
			frame := testkit.KmsgResponse(resp, -7)
			e := expect{flex: resp.IsFlexible()}
			var elems []want
			for i := range resp.Results {
				r := &resp.Results[i]
				elems = append(elems, e.elem("AclCreationResult["+itoa(int64(i))+"]", &r.UnknownTags,
					e.int("ErrorCode", int64(r.ErrorCode), 2),
					e.nstr("ErrorMessage", r.ErrorMessage),
				))
			}
			w := frameWant("CreateAclsResponse", frame, responseHeaderWant(resp, -7),
				e.body("CreateAclsResponse", &resp.UnknownTags,
					e.int("ThrottleTimeMs", int64(resp.ThrottleMillis), 4),
					e.array("Results", elems)))
			m := Builtin().Decode(frame, Options{Direction: Response, APIKey: 30, APIVersion: v})
			checkDecoded(t, m, frame, w)
			checkMessage(t, m, 30, v, -7)
		})
	}
}

func TestRoundTripDeleteAclsRequest(t *testing.T) {
	for v := int16(0); v <= 3; v++ {
		t.Run(vname(v), func(t *testing.T) {
			req := sampleDeleteReq(v, roundTripExtra)
			frame := testkit.KmsgRequest(req, 0, nil)
			e := expect{flex: req.IsFlexible()}
			var elems []want
			for i := range req.Filters {
				f := &req.Filters[i]
				fields := []want{
					e.int("ResourceTypeFilter", int64(f.ResourceType), 1),
					e.nstr("ResourceNameFilter", f.ResourceName),
				}
				if v >= 1 {
					fields = append(fields, e.int("PatternTypeFilter", int64(f.ResourcePatternType), 1))
				}
				fields = append(fields,
					e.nstr("PrincipalFilter", f.Principal),
					e.nstr("HostFilter", f.Host),
					e.int("Operation", int64(f.Operation), 1),
					e.int("PermissionType", int64(f.PermissionType), 1),
				)
				elems = append(elems, e.elem("DeleteAclsFilter["+itoa(int64(i))+"]", &f.UnknownTags, fields...))
			}
			w := frameWant("DeleteAclsRequest", frame, requestHeaderWant(req, 0, nil),
				e.body("DeleteAclsRequest", &req.UnknownTags, e.array("Filters", elems)))
			m := Builtin().Decode(frame, Options{})
			checkDecoded(t, m, frame, w)
			checkMessage(t, m, 31, v, 0)
			if got := m.Tree.Find("DeleteAclsRequest", "Filters", "DeleteAclsFilter[0]", "PatternTypeFilter"); (got != nil) != (v >= 1) {
				t.Errorf("PatternTypeFilter present=%v at v%d", got != nil, v)
			}
		})
	}
}

func TestRoundTripDeleteAclsResponse(t *testing.T) {
	for v := int16(0); v <= 3; v++ {
		t.Run(vname(v), func(t *testing.T) {
			resp := sampleDeleteResp(v, roundTripExtra)
			frame := testkit.KmsgResponse(resp, 123456)
			e := expect{flex: resp.IsFlexible()}
			var results []want
			for i := range resp.Results {
				r := &resp.Results[i]
				var acls []want
				for j := range r.MatchingACLs {
					a := &r.MatchingACLs[j]
					fields := []want{
						e.int("ErrorCode", int64(a.ErrorCode), 2),
						e.nstr("ErrorMessage", a.ErrorMessage),
						e.int("ResourceType", int64(a.ResourceType), 1),
						e.str("ResourceName", a.ResourceName),
					}
					if v >= 1 {
						fields = append(fields, e.int("PatternType", int64(a.ResourcePatternType), 1))
					}
					fields = append(fields,
						e.str("Principal", a.Principal),
						e.str("Host", a.Host),
						e.int("Operation", int64(a.Operation), 1),
						e.int("PermissionType", int64(a.PermissionType), 1),
					)
					acls = append(acls, e.elem("DeleteAclsMatchingAcl["+itoa(int64(j))+"]", &a.UnknownTags, fields...))
				}
				results = append(results, e.elem("DeleteAclsFilterResult["+itoa(int64(i))+"]", &r.UnknownTags,
					e.int("ErrorCode", int64(r.ErrorCode), 2),
					e.nstr("ErrorMessage", r.ErrorMessage),
					e.array("MatchingAcls", acls),
				))
			}
			w := frameWant("DeleteAclsResponse", frame, responseHeaderWant(resp, 123456),
				e.body("DeleteAclsResponse", &resp.UnknownTags,
					e.int("ThrottleTimeMs", int64(resp.ThrottleMillis), 4),
					e.array("FilterResults", results)))
			m := Builtin().Decode(frame, Options{Direction: Response, APIKey: 31, APIVersion: v})
			checkDecoded(t, m, frame, w)
			checkMessage(t, m, 31, v, 123456)
			if got := m.Tree.Find("DeleteAclsResponse", "FilterResults", "DeleteAclsFilterResult[1]", "MatchingAcls", "DeleteAclsMatchingAcl[0]", "PatternType"); (got != nil) != (v >= 1) {
				t.Errorf("PatternType present=%v at v%d", got != nil, v)
			}
		})
	}
}

// TestRoundTripKmsgReads checks the frames themselves against kmsg's own
// decoder, so that a mistake in the frame builders cannot hide one in
// dissect: kmsg must read back every sample body we decode.
func TestRoundTripKmsgReads(t *testing.T) {
	for _, s := range sampleFrames(roundTripExtra) {
		m := s.decode()
		var body interface{ ReadFrom([]byte) error }
		var bodyOff int
		if s.request {
			r := kmsg.RequestForKey(s.key)
			r.SetVersion(s.ver)
			body = r
		} else {
			r := kmsg.ResponseForKey(s.key)
			r.SetVersion(s.ver)
			body = r
		}
		for _, c := range m.Tree.Children {
			if c.Category == CatRequestBody || c.Category == CatResponseBody {
				bodyOff = c.Offset
			}
		}
		if bodyOff == 0 {
			t.Errorf("%s: no body node", s.name)
			continue
		}
		if err := body.ReadFrom(s.frame[bodyOff:]); err != nil {
			t.Errorf("%s: kmsg cannot read the body dissect found at %d: %v", s.name, bodyOff, err)
		}
	}
}

func vname(v int16) string { return "v" + itoa(int64(v)) }
