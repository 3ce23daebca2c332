package audit

import (
	"io"
	"strconv"

	"github.com/kdissect/kdissect/dissect"
)

// OCSF is the form SIEMs ingest (Amazon Security Lake, Splunk, ...): one
// OCSF 1.x "API Activity" event (class 6003, category 6) a row. The
// mapping is in README.md's Audit section.
const (
	OCSFVersion  = "1.1.0"
	ocsfClass    = 6003
	ocsfCategory = 6
)

// ocsfActivity is the API Activity activity_id of an action: 1 Create,
// 2 Read, 3 Update, 4 Delete.
func ocsfActivity(a Action) (int, string) {
	switch a {
	case Create:
		return 1, "Create"
	case Describe:
		return 2, "Read"
	case Delete, Remove, Expire:
		return 4, "Delete"
	}
	return 3, "Update"
}

// apiName is the Kafka API a row came from.
func apiName(r *Row) string {
	if r.APIKey != 0 {
		return dissect.APIName(r.APIKey)
	}
	if r.Action == Delete {
		return "DeleteAcls"
	}
	return "CreateAcls"
}

// WriteOCSF writes one OCSF API Activity event a row (NDJSON).
func WriteOCSF(w io.Writer, rows []Row) error { return writeLines(w, rows, appendOCSF) }

func appendOCSF(b []byte, r *Row) []byte {
	act, actName := ocsfActivity(r.Action)
	b = append(b, `{"class_uid":6003,"class_name":"API Activity","category_uid":6,"category_name":"Application Activity","activity_id":`...)
	b = strconv.AppendInt(b, int64(act), 10)
	b = append(b, `,"activity_name":`...)
	b = dissect.AppendJSONString(b, actName)
	b = append(b, `,"type_uid":`...)
	b = strconv.AppendInt(b, int64(ocsfClass*100+act), 10)
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, r.Time.UnixMilli(), 10)
	b = append(b, `,"severity_id":1,"severity":"Informational","metadata":{"version":"`+OCSFVersion+`","product":{"name":"kdissect","vendor_name":"kdissect"}},"cloud":{"provider":"unknown"}`...)
	// status: the broker's answer; an unanswered change is unknown.
	status, statusID := "Unknown", 0
	switch r.Result {
	case ResultOK, ResultNoMatch:
		status, statusID = "Success", 1
	case ResultError:
		status, statusID = "Failure", 2
	}
	b = append(b, `,"status":`...)
	b = dissect.AppendJSONString(b, status)
	b = append(b, `,"status_id":`...)
	b = strconv.AppendInt(b, int64(statusID), 10)
	if r.ErrorName != nil {
		b = append(b, `,"status_code":`...)
		b = dissect.AppendJSONString(b, *r.ErrorName)
	}
	b = append(b, `,"status_detail":`...)
	detail := r.Result
	if r.ErrorMessage != nil {
		detail = *r.ErrorMessage
	}
	b = dissect.AppendJSONString(b, detail)
	// actor: the principal, else a user of unknown type (the class asks
	// for an actor); the client id names the application.
	b = append(b, `,"actor":{"user":`...)
	if r.Principal != nil {
		b = append(b, `{"name":`...)
		b = dissect.AppendJSONString(b, *r.Principal)
		b = append(b, '}')
	} else {
		b = append(b, `{"type":"Unknown","type_id":0}`...)
	}
	if r.ClientID != nil {
		b = append(b, `,"app_name":`...)
		b = dissect.AppendJSONString(b, *r.ClientID)
	}
	if f := r.ForwardedBy; f != nil {
		// The broker that forwarded the change invoked it on the
		// client's behalf; unmapped.forwarded_by has it as JSON.
		b = append(b, `,"invoked_by":`...)
		b = dissect.AppendJSONString(b, "broker "+addr(f.Broker)+forwardedPrincipal(f))
	}
	b = append(b, '}')
	b = appendEndpoint(b, "src_endpoint", r.Client.Addr().String(), int(r.Client.Port()), r.Client.IsValid())
	b = appendEndpoint(b, "dst_endpoint", r.Broker.Addr().String(), int(r.Broker.Port()), r.Broker.IsValid())
	b = append(b, `,"api":{"operation":`...)
	b = dissect.AppendJSONString(b, apiName(r))
	b = append(b, `,"version":`...)
	b = dissect.AppendJSONString(b, strconv.Itoa(int(r.APIVersion)))
	b = append(b, `,"request":{"uid":`...)
	b = dissect.AppendJSONString(b, strconv.Itoa(int(r.CorrelationID)))
	b = append(b, `}`...)
	if r.Result == ResultError {
		b = append(b, `,"response":{"code":`...)
		b = jsonInt(b, r.ErrorCode)
		b = append(b, `,"error":`...)
		b = jsonStr(b, r.ErrorName)
		b = append(b, `,"error_message":`...)
		b = jsonStr(b, r.ErrorMessage)
		b = append(b, '}')
	}
	b = append(b, `},"resources":[`...)
	b = appendOCSFResource(b, r)
	b = append(b, `],"unmapped":{"kind":"`...)
	b = append(b, r.kind()...)
	b = append(b, `","action":"`...)
	b = append(b, r.Action...)
	b = append(b, `","result":"`...)
	b = append(b, r.Result...)
	b = append(b, '"')
	b = appendRowPlace(b, r)
	b = append(b, `,"inferred":`...)
	b = strconv.AppendBool(b, r.Inferred)
	b = append(b, `,"validate_only":`...)
	b = strconv.AppendBool(b, r.ValidateOnly)
	// OCSF 1.x has no place for a client library's name and version
	// outside http_request.user_agent (HTTP's), and actor.app_name holds
	// the client id already: unmapped, as the row's JSON has it.
	b = append(b, `,"client_software":`...)
	b = appendSoftwareJSON(b, r.Software)
	b = append(b, `,"forwarded_by":`...)
	b = appendForwardedJSON(b, r.ForwardedBy)
	if r.Effect != "" {
		b = append(b, `,"effect":"`...)
		b = append(b, r.Effect...)
		b = append(b, '"')
	}
	return append(b, "}}\n"...)
}

func appendEndpoint(b []byte, key, ip string, port int, ok bool) []byte {
	b = append(b, `,"`+key+`":`...)
	if !ok {
		return append(b, `{}`...)
	}
	b = append(b, `{"ip":`...)
	b = dissect.AppendJSONString(b, ip)
	if port == 0 {
		return append(b, '}') // a forwarded client: its envelope names no port
	}
	b = append(b, `,"port":`...)
	b = strconv.AppendInt(b, int64(port), 10)
	return append(b, '}')
}

// appendOCSFResource is the binding or target as an OCSF resource: its
// type and name, and the whole of it as the row's JSON has it in data.
func appendOCSFResource(b []byte, r *Row) []byte {
	var typ, name, uid *string
	t := r.Target
	switch {
	case r.kind() == KindACL:
		typ, name = r.Binding.ResourceType, r.Binding.ResourceName
	case t == nil:
	case r.kind() == KindSCRAM:
		typ, name = ptr("user"), t.User
	case r.kind() == KindToken:
		typ, name, uid = ptr("delegation_token"), t.Owner, t.TokenID
	case r.kind() == KindQuota:
		typ, name = ptr("client_quota"), ptr(EntityText(t.Entity))
	case r.kind() == KindConfig:
		typ, name = t.ResourceType, t.ResourceName
	}
	b = append(b, `{"type":`...)
	b = jsonStr(b, typ)
	b = append(b, `,"name":`...)
	b = jsonStr(b, name)
	if uid != nil {
		b = append(b, `,"uid":`...)
		b = dissect.AppendJSONString(b, *uid)
	}
	b = append(b, `,"data":`...)
	if r.kind() == KindACL {
		if r.Binding == (Binding{}) {
			b = append(b, "null"...)
		} else {
			b = appendBindingJSON(b, &r.Binding)
		}
	} else {
		b = appendTargetJSON(b, r)
	}
	return append(b, '}')
}
