// Package audit turns decoded CreateAcls and DeleteAcls exchanges into an
// ACL change log: one row per binding created or deleted, with who asked,
// when, from where and what the broker answered. It does no I/O beyond the
// io.Writer its renderers are handed: messages in, rows out.
//
// The decoder that feeds it may reuse its trees, so ReadRequest and
// ReadResponse copy what a row needs out of a message at once; Rows pairs
// the two copies later.
package audit

import (
	"net/netip"
	"sort"
	"strconv"
	"time"

	"github.com/kdissect/kdissect/dissect"
)

// Action is what a row does to the cluster's security state.
type Action string

const (
	Create   Action = "create" // an ACL binding, a delegation token
	Delete   Action = "delete" // an ACL binding, a SCRAM credential, a config key
	Upsert   Action = "upsert" // a SCRAM credential
	Renew    Action = "renew"  // a delegation token
	Expire   Action = "expire"
	Set      Action = "set" // a quota, a config key
	Remove   Action = "remove"
	Append   Action = "append"
	Subtract Action = "subtract"
	Replace  Action = "replace" // a config key given to the legacy AlterConfigs
	Describe Action = "describe"
)

// Kind is what a row changes.
type Kind string

const (
	KindACL    Kind = "acl"
	KindSCRAM  Kind = "scram"
	KindToken  Kind = "token"
	KindQuota  Kind = "quota"
	KindConfig Kind = "config"
)

// Kinds are every kind, in the order the table's summary names them.
var Kinds = []Kind{KindACL, KindSCRAM, KindToken, KindQuota, KindConfig}

// Result values of a row.
const (
	ResultOK         = "ok"
	ResultError      = "error"
	ResultNoMatch    = "no_match"
	ResultNoResponse = "no_response"
)

// Meta is where and when a message was captured; the decoder does not know
// it.
type Meta struct {
	Index  int // the message's index in kdissect --json; 0 when unknown
	Time   time.Time
	Client netip.AddrPort
	Broker netip.AddrPort
	// Principal is who the connection authenticated as, nil when unknown.
	Principal *string
	// Latency runs from the request's last byte to the response's first;
	// only responses carry it.
	Latency    time.Duration
	HasLatency bool
	// Inferred: a response whose request was not captured, decoded as the
	// first ACL response definition that fits it (dissect.Exchange.Inferred).
	Inferred bool
	// ShowSecrets: sensitive config values are copied as they are, not
	// redacted (--show-secrets). It is here because what a row keeps is
	// decided when the message is read.
	ShowSecrets bool
	// Software is what the connection's ApiVersions v3+ request said the
	// client is (Exchange.Software), nil before one or without one.
	Software *dissect.ClientSoftware
	// ForwardedBy is the broker that forwarded the message in an
	// Envelope, nil when it came straight from its client.
	ForwardedBy *ForwardedBy
}

// Binding is an ACL binding, or a DeleteAcls filter. Enums are Kafka's
// names (a value without one is its number); nil is a null filter field,
// or a field the frame was cut before.
type Binding struct {
	ResourceType *string
	ResourceName *string
	PatternType  *string
	Principal    *string
	Host         *string
	Operation    *string
	Permission   *string
}

// Request is what the change log needs of a CreateAcls or DeleteAcls
// request.
type Request struct {
	Meta
	Kind          Kind
	APIKey        int16
	Action        Action // ACL requests; the other kinds' are per change
	APIVersion    int16
	CorrelationID int32
	ClientID      *string
	Bindings      []Binding // creations or filters, in request order
	// Changes are the other kinds' entries, in request order.
	Changes      []Change
	ValidateOnly bool
	// token is the HMAC's digest of a renew or expire, to find the
	// token's create; the HMAC itself is never kept.
	token string
}

// Response is what the change log needs of a CreateAcls or DeleteAcls
// response.
type Response struct {
	Meta
	Kind          Kind
	APIKey        int16
	Action        Action
	APIVersion    int16
	CorrelationID int32
	// RequestIndex is the request's index when the request itself could not
	// be read (a frame cut after its header), else 0.
	RequestIndex int
	Results      []Outcome // per creation, or per filter
	// Entries are the other kinds' answers.
	Entries []Entry
	// created is what a CreateDelegationToken response says of its token.
	created *tokenInfo
}

// Outcome is the broker's answer to one creation or one filter.
type Outcome struct {
	ErrorCode    *int16 // nil when the frame was cut before it
	ErrorMessage *string
	Matching     []Match // DeleteAcls: the bindings the filter matched
}

// Match is one binding a DeleteAcls filter matched, with its own outcome.
type Match struct {
	ErrorCode    *int16
	ErrorMessage *string
	Binding      Binding
}

// Row is one line of the change log. Pointers are null in JSON.
type Row struct {
	Kind          Kind
	APIKey        int16
	Time          time.Time
	Client        netip.AddrPort
	Broker        netip.AddrPort
	Principal     *string
	ClientID      *string
	Action        Action
	APIVersion    int16
	CorrelationID int32
	Binding       Binding // acl rows; zero (null) when not captured
	Target        *Target // the other kinds' rows
	Result        string
	ErrorCode     *int16
	ErrorName     *string
	ErrorMessage  *string
	FilterIndex   *int // delete rows only
	LatencyUs     *int64
	RequestIndex  *int
	ResponseIndex *int
	// Inferred: the row comes from a response alone, its API and version
	// guessed (Meta.Inferred).
	Inferred bool
	// ValidateOnly: the request asked the broker to check the change, not
	// to make it.
	ValidateOnly bool
	// Effect is "added" or "removed" on the rows Effect returns, else "".
	Effect string
	// Software is the client software of the request's connection (the
	// response's when the request was not read), nil when unknown.
	Software *dissect.ClientSoftware
	// ForwardedBy: the change came forwarded in an Envelope by this
	// broker; Principal and Client are then the envelope's.
	ForwardedBy *ForwardedBy
}

// Failed reports whether the broker refused the change.
func (r *Row) Failed() bool { return r.Result == ResultError }

// ReadRequest copies the change log's view of a CreateAcls or DeleteAcls
// request out of m; it returns nil for any other message. A frame cut
// short yields the bindings it holds, their missing fields nil; an element
// without a single field is not a binding.
func ReadRequest(m *dissect.Message, meta Meta) *Request {
	if m == nil || m.Direction != dissect.Request {
		return nil
	}
	act, ok := actionOf(m.APIKey)
	if !ok {
		return readKindRequest(m, meta)
	}
	r := &Request{Meta: meta, Kind: KindACL, APIKey: m.APIKey, Action: act, APIVersion: m.APIVersion, CorrelationID: m.CorrelationID}
	if hdr := m.Tree.Child("RequestHeader"); hdr != nil {
		r.ClientID = str(hdr.Child("client_id"))
	}
	body := bodyOf(m.Tree)
	list := "Creations"
	if act == Delete {
		list = "Filters"
	}
	for _, e := range elems(body.Child(list)) {
		names := creationFields
		if act == Delete {
			names = filterFields
		}
		b := bindingOf(e, names, m.APIVersion)
		if b == (Binding{}) {
			break // an element the frame announced but ended before
		}
		r.Bindings = append(r.Bindings, b)
	}
	return r
}

// ReadResponse copies the change log's view of a CreateAcls or DeleteAcls
// response out of m (decoded with its request's API key and version); it
// returns nil for any other message.
func ReadResponse(m *dissect.Message, meta Meta) *Response {
	if m == nil || m.Direction != dissect.Response {
		return nil
	}
	act, ok := actionOf(m.APIKey)
	if !ok {
		return readKindResponse(m, meta)
	}
	r := &Response{Meta: meta, Kind: KindACL, APIKey: m.APIKey, Action: act, APIVersion: m.APIVersion, CorrelationID: m.CorrelationID}
	body := bodyOf(m.Tree)
	list := "Results"
	if act == Delete {
		list = "FilterResults"
	}
	for _, e := range elems(body.Child(list)) {
		o := Outcome{ErrorCode: code(e.Child("ErrorCode")), ErrorMessage: str(e.Child("ErrorMessage"))}
		if act == Delete {
			for _, a := range elems(e.Child("MatchingAcls")) {
				o.Matching = append(o.Matching, Match{
					ErrorCode:    code(a.Child("ErrorCode")),
					ErrorMessage: str(a.Child("ErrorMessage")),
					Binding:      bindingOf(a, matchingFields, m.APIVersion),
				})
			}
		}
		r.Results = append(r.Results, o)
	}
	return r
}

// bindingFields names the fields of one binding in a message's element:
// the three ACL element types spell them differently.
type bindingFields struct{ resourceType, resourceName, patternType, principal, host string }

var (
	creationFields = bindingFields{"ResourceType", "ResourceName", "ResourcePatternType", "Principal", "Host"}
	filterFields   = bindingFields{"ResourceTypeFilter", "ResourceNameFilter", "PatternTypeFilter", "PrincipalFilter", "HostFilter"}
	matchingFields = bindingFields{"ResourceType", "ResourceName", "PatternType", "Principal", "Host"}
)

// bindingOf reads the binding of element e; version says whether a
// missing pattern type is implied (v0).
func bindingOf(e *dissect.Node, f bindingFields, version int16) Binding {
	return Binding{
		ResourceType: enum(e.Child(f.resourceType), resourceTypes),
		ResourceName: str(e.Child(f.resourceName)),
		PatternType:  pattern(e.Child(f.patternType), version),
		Principal:    str(e.Child(f.principal)),
		Host:         str(e.Child(f.host)),
		Operation:    enum(e.Child("Operation"), aclOperations),
		Permission:   enum(e.Child("PermissionType"), aclPermissions),
	}
}

func actionOf(key int16) (Action, bool) {
	switch key {
	case 30:
		return Create, true
	case 31:
		return Delete, true
	}
	return "", false
}

func bodyOf(root *dissect.Node) *dissect.Node {
	if root == nil {
		return nil
	}
	for _, c := range root.Children {
		if c.Category == dissect.CatRequestBody || c.Category == dissect.CatResponseBody {
			return c
		}
	}
	return nil
}

// elems are the struct elements of an array node (its "length" child is
// wire detail).
func elems(n *dissect.Node) []*dissect.Node {
	if n == nil {
		return nil
	}
	var out []*dissect.Node
	for _, c := range n.Children {
		if c.Kind == dissect.KindStruct {
			out = append(out, c)
		}
	}
	return out
}

func str(n *dissect.Node) *string {
	if n == nil || !n.HasValue() || n.Null || n.Kind != dissect.KindString {
		return nil
	}
	s := n.Str
	return &s
}

func enum(n *dissect.Node, e *dissect.Enum) *string {
	if n == nil || !n.HasValue() || n.Kind != dissect.KindInt {
		return nil
	}
	s := EnumName(e, n.Int)
	return &s
}

// pattern is enum for a pattern type, which v0 does not carry: Kafka
// implies LITERAL there.
func pattern(n *dissect.Node, version int16) *string {
	if version == 0 && n == nil {
		s := "LITERAL"
		return &s
	}
	return enum(n, patternTypes)
}

func code(n *dissect.Node) *int16 {
	if n == nil || !n.HasValue() || n.Kind != dissect.KindInt {
		return nil
	}
	c := int16(n.Int)
	return &c
}

// EnumName is Kafka's name for v, or v as a decimal string when the table
// has no name for it.
func EnumName(e *dissect.Enum, v int64) string {
	if s, ok := e.Lookup(v); ok {
		return s
	}
	return strconv.FormatInt(v, 10)
}

// Rows turns an exchange into change-log rows. req is nil when the request
// could not be read (its frame was cut after the header): DeleteAcls rows
// then come from the bindings the response names. resp is nil when no
// response was captured: the request's bindings are rows with result
// no_response.
func Rows(req *Request, resp *Response) []Row {
	rows := rowsOf(req, resp)
	// Stamped here rather than by each kind's builder: every row of an
	// exchange is by the same connection.
	var sw *dissect.ClientSoftware
	var fwd *ForwardedBy
	switch {
	case req != nil:
		sw, fwd = req.Software, req.ForwardedBy
	case resp != nil:
		sw, fwd = resp.Software, resp.ForwardedBy
	}
	for i := range rows {
		rows[i].Software, rows[i].ForwardedBy = sw, fwd
	}
	return rows
}

func rowsOf(req *Request, resp *Response) []Row {
	switch {
	case req == nil && resp == nil:
		return nil
	case req == nil && resp.Kind != KindACL:
		return kindResponseOnlyRows(resp)
	case req == nil:
		return responseOnlyRows(resp)
	case req.Kind != KindACL:
		return kindRows(req, resp)
	}
	base := Row{
		Kind: KindACL, APIKey: req.APIKey, Time: req.Time, Client: req.Client, Broker: req.Broker, Principal: req.Principal,
		ClientID: req.ClientID, Action: req.Action, APIVersion: req.APIVersion,
		CorrelationID: req.CorrelationID, RequestIndex: index(req.Index),
	}
	if resp != nil {
		base.ResponseIndex = index(resp.Index)
		if resp.HasLatency {
			us := resp.Latency.Microseconds()
			base.LatencyUs = &us
		}
	}
	var rows []Row
	for i, b := range req.Bindings {
		r := base
		r.Binding = b
		if req.Action == Delete {
			r.FilterIndex = ptr(i)
		}
		switch {
		case resp == nil:
			r.Result = ResultNoResponse
		case i >= len(resp.Results):
			// A response cut short: the broker's answer is not known, but
			// there was one. An error without a code says so.
			r.Result = ResultError
		case req.Action == Create:
			setOutcome(&r, resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage)
		default:
			o := resp.Results[i]
			if o.ErrorCode == nil || *o.ErrorCode != 0 {
				setOutcome(&r, o.ErrorCode, o.ErrorMessage)
				break
			}
			if len(o.Matching) == 0 {
				r.Result = ResultNoMatch
				break
			}
			for _, mt := range o.Matching {
				d := r
				d.Binding = mt.Binding
				setOutcome(&d, mt.ErrorCode, mt.ErrorMessage)
				rows = append(rows, d)
			}
			continue
		}
		rows = append(rows, r)
	}
	return rows
}

// responseOnlyRows are the rows of a response whose request is unknown:
// the bindings a DeleteAcls response names, and, when the response's API
// was guessed, one row per CreateAcls result, its binding unknown. (A
// CreateAcls response whose request was cut is a blind spot instead: the
// cut frame is reported.)
func responseOnlyRows(resp *Response) []Row {
	if resp.Action != Delete && !resp.Inferred {
		return nil
	}
	base := Row{
		Kind: KindACL, APIKey: resp.APIKey, Inferred: resp.Inferred,
		// The request's time is unknown: the response's stands in.
		Time: resp.Time, Client: resp.Client, Broker: resp.Broker, Principal: resp.Principal,
		Action: resp.Action, APIVersion: resp.APIVersion, CorrelationID: resp.CorrelationID,
		RequestIndex: index(resp.RequestIndex), ResponseIndex: index(resp.Index),
	}
	if resp.HasLatency {
		us := resp.Latency.Microseconds()
		base.LatencyUs = &us
	}
	var rows []Row
	for i, o := range resp.Results {
		if resp.Action == Create {
			r := base
			setOutcome(&r, o.ErrorCode, o.ErrorMessage)
			rows = append(rows, r)
			continue
		}
		for _, mt := range o.Matching {
			r := base
			r.FilterIndex = ptr(i)
			r.Binding = mt.Binding
			setOutcome(&r, mt.ErrorCode, mt.ErrorMessage)
			rows = append(rows, r)
		}
	}
	return rows
}

func setOutcome(r *Row, code *int16, msg *string) {
	if code != nil && *code == 0 {
		r.Result = ResultOK
		return
	}
	r.Result = ResultError
	r.ErrorCode, r.ErrorMessage = code, msg
	if code != nil {
		r.ErrorName = ptr(EnumName(errorCodes, int64(*code)))
	}
}

func index(i int) *int {
	if i <= 0 {
		return nil
	}
	return &i
}

func ptr[T any](v T) *T { return &v }

// Sort orders rows as the capture did: by request, then response, keeping
// each exchange's rows in request order.
func Sort(rows []Row) {
	sort.SliceStable(rows, func(i, j int) bool { return order(&rows[i]) < order(&rows[j]) })
}

func order(r *Row) int {
	if r.RequestIndex != nil {
		return *r.RequestIndex
	}
	if r.ResponseIndex != nil {
		return *r.ResponseIndex
	}
	return 0
}

// The tables the change log names values with.
var (
	resourceTypes  = dissect.EnumNamed("ResourceType")
	patternTypes   = dissect.EnumNamed("PatternType")
	aclOperations  = dissect.EnumNamed("AclOperation")
	aclPermissions = dissect.EnumNamed("AclPermissionType")
	errorCodes     = dissect.EnumNamed("ErrorCode")
)
