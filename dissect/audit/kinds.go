package audit

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/dissect"
)

// The kinds of change beyond ACLs, read from the decoded trees by Kafka's
// field names, as the ACL rows are.

// Target is what a row of another kind than acl changes (or, for a
// describe, reads). Which fields a kind uses is its own: see WriteJSON.
type Target struct {
	// scram
	User       *string
	Mechanism  *string
	Iterations *int64 // nil on delete
	// token
	Owner          *string
	Renewers       []string
	MaxLifetimeMs  *int64 // create
	RenewPeriodMs  *int64 // renew
	ExpiryPeriodMs *int64 // expire
	TokenID        *string
	// quota
	Entity     []EntityPart
	QuotaValue *float64 // nil on remove
	// config
	ResourceType *string
	ResourceName *string
	// Key is a quota's or a config's key.
	Key *string
	// Value is a config's value, "<redacted, N bytes>" for a sensitive
	// key unless the log shows secrets.
	Value *string
}

// EntityPart is one component of a client quota entity: user, client-id
// or ip, with a name or nil for the default entity.
type EntityPart struct {
	Type string
	Name *string
}

// Change is one entry of a request of another kind than acl.
type Change struct {
	Action Action
	Target Target
	// key names the response entry that answers it ("" when the response
	// has one answer for the whole request).
	key string
}

// Entry is the broker's answer to the changes of one key.
type Entry struct {
	key          string
	ErrorCode    *int16
	ErrorMessage *string
}

// tokenInfo is what a CreateDelegationToken showed of its token, for the
// renewals and expiries of the same capture.
type tokenInfo struct {
	owner    *string
	renewers []string
	id       *string
	hash     string // digest of the HMAC
}

// kindOf is the kind of an API key and whether its changes are reads.
func kindOf(key int16) (k Kind, read, ok bool) {
	switch key {
	case 29:
		return KindACL, true, true
	case 51:
		return KindSCRAM, false, true
	case 50:
		return KindSCRAM, true, true
	case 38, 39, 40:
		return KindToken, false, true
	case 41:
		return KindToken, true, true
	case 49:
		return KindQuota, false, true
	case 48:
		return KindQuota, true, true
	case 44, 33:
		return KindConfig, false, true
	case 32:
		return KindConfig, true, true
	case 30, 31:
		return KindACL, false, true
	}
	return "", false, false
}

// APIs are the API keys the change log reads for these kinds (nil: every
// kind), with the reads when reads is set.
func APIs(kinds []Kind, reads bool) map[int16]bool {
	m := map[int16]bool{}
	for key := int16(0); key <= 100; key++ {
		k, read, ok := kindOf(key)
		if ok && (reads || !read) && (kinds == nil || contains(kinds, k)) {
			m[key] = true
		}
	}
	m[envelopeKey] = true // it may forward a change of any kind
	return m
}

// ParseKinds takes --kind's comma-separated list; "" is every kind (nil).
func ParseKinds(s string) ([]Kind, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []Kind
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		if !contains(Kinds, Kind(k)) {
			return nil, fmt.Errorf("--kind %q: not acl, scram, token, quota or config", k)
		}
		out = append(out, Kind(k))
	}
	return out, nil
}

func contains(kinds []Kind, k Kind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

// IsRead says whether an API key's rows are describes.
func IsRead(key int16) bool {
	_, read, ok := kindOf(key)
	return ok && read
}

// KindOfAPI is the kind of an API key the log reads, or "".
func KindOfAPI(key int16) Kind {
	k, _, _ := kindOf(key)
	return k
}

func readKindRequest(m *dissect.Message, meta Meta) *Request {
	k, _, ok := kindOf(m.APIKey)
	if !ok {
		return nil
	}
	r := &Request{Meta: meta, Kind: k, APIKey: m.APIKey, APIVersion: m.APIVersion, CorrelationID: m.CorrelationID}
	if hdr := m.Tree.Child("RequestHeader"); hdr != nil {
		r.ClientID = str(hdr.Child("client_id"))
	}
	body := bodyOf(m.Tree)
	if v := body.Child("ValidateOnly"); v != nil && v.HasValue() && v.Int != 0 {
		r.ValidateOnly = true
	}
	add := func(a Action, t Target, key string) {
		r.Changes = append(r.Changes, Change{Action: a, Target: t, key: key})
	}
	switch m.APIKey {
	case 29: // DescribeAcls: the filter is the binding read
		r.Action = Describe
		r.Bindings = []Binding{bindingOf(body, filterFields, m.APIVersion)}
	case 51:
		for _, e := range elems(body.Child("Deletions")) {
			add(Delete, Target{User: str(e.Child("Name")), Mechanism: mechanism(e.Child("Mechanism"))}, keyOf(str(e.Child("Name"))))
		}
		for _, e := range elems(body.Child("Upsertions")) {
			// Salt and SaltedPassword are the credential: never read.
			add(Upsert, Target{User: str(e.Child("Name")), Mechanism: mechanism(e.Child("Mechanism")),
				Iterations: integer(e.Child("Iterations"))}, keyOf(str(e.Child("Name"))))
		}
	case 50:
		users := body.Child("Users")
		if users == nil || users.Null || len(elems(users)) == 0 {
			add(Describe, Target{}, "")
		}
		for _, e := range elems(users) {
			add(Describe, Target{User: str(e.Child("Name"))}, "")
		}
	case 38:
		t := Target{Owner: principal(body.Child("OwnerPrincipalType"), body.Child("OwnerPrincipalName")),
			Renewers: []string{}, MaxLifetimeMs: integer(body.Child("MaxLifetimeMs"))}
		for _, e := range elems(body.Child("Renewers")) {
			if p := principal(e.Child("PrincipalType"), e.Child("PrincipalName")); p != nil {
				t.Renewers = append(t.Renewers, *p)
			}
		}
		add(Create, t, "")
	case 39, 40:
		t := Target{Renewers: []string{}}
		a := Renew
		if m.APIKey == 39 {
			t.RenewPeriodMs = integer(body.Child("RenewPeriodMs"))
		} else {
			a = Expire
			t.ExpiryPeriodMs = integer(body.Child("ExpiryTimePeriodMs"))
		}
		r.token = digest(body.Child("Hmac"))
		add(a, t, "")
	case 41:
		owners := body.Child("Owners")
		if owners == nil || owners.Null || len(elems(owners)) == 0 {
			add(Describe, Target{Renewers: []string{}}, "")
		}
		for _, e := range elems(owners) {
			add(Describe, Target{Owner: principal(e.Child("PrincipalType"), e.Child("PrincipalName")), Renewers: []string{}}, "")
		}
	case 49:
		for _, e := range elems(body.Child("Entries")) {
			ent := entity(e.Child("Entity"), "EntityName")
			for _, op := range elems(e.Child("Ops")) {
				t := Target{Entity: ent, Key: str(op.Child("Key"))}
				a := Set
				if rm := op.Child("Remove"); rm != nil && rm.HasValue() && rm.Int != 0 {
					a = Remove
				} else if v := op.Child("Value"); v != nil && v.HasValue() && v.Kind == dissect.KindFloat {
					f := v.Float
					t.QuotaValue = &f
				}
				add(a, t, entityKey(ent))
			}
		}
	case 48:
		add(Describe, Target{Entity: entity(body.Child("Components"), "Match")}, "")
	case 44, 33:
		for _, e := range elems(body.Child("Resources")) {
			rt, rn := configResource(e.Child("ResourceType")), str(e.Child("ResourceName"))
			for _, c := range elems(e.Child("Configs")) {
				a := Replace
				if m.APIKey == 44 {
					a = configOp(c.Child("ConfigOperation"))
				}
				t := Target{ResourceType: rt, ResourceName: rn, Key: str(c.Child("Name"))}
				if a != Delete {
					t.Value = configValue(t.Key, c.Child("Value"), meta.ShowSecrets)
				}
				add(a, t, resourceKey(rt, rn))
			}
		}
	case 32:
		for _, e := range elems(body.Child("Resources")) {
			rt := configResource(e.Child("ResourceType"))
			if rt == nil || *rt != "BROKER" {
				continue // only a broker's configs are reconnaissance
			}
			rn := str(e.Child("ResourceName"))
			add(Describe, Target{ResourceType: rt, ResourceName: rn}, resourceKey(rt, rn))
		}
	}
	return r
}

func readKindResponse(m *dissect.Message, meta Meta) *Response {
	k, _, ok := kindOf(m.APIKey)
	if !ok {
		return nil
	}
	r := &Response{Meta: meta, Kind: k, APIKey: m.APIKey, APIVersion: m.APIVersion, CorrelationID: m.CorrelationID}
	body := bodyOf(m.Tree)
	one := func(e *dissect.Node, key string) {
		r.Entries = append(r.Entries, Entry{key: key, ErrorCode: code(e.Child("ErrorCode")), ErrorMessage: str(e.Child("ErrorMessage"))})
	}
	switch m.APIKey {
	case 29:
		r.Action = Describe
		r.Results = []Outcome{{ErrorCode: code(body.Child("ErrorCode")), ErrorMessage: str(body.Child("ErrorMessage"))}}
	case 51:
		for _, e := range elems(body.Child("Results")) {
			one(e, keyOf(str(e.Child("User"))))
		}
	case 38:
		one(body, "")
		h := digest(body.Child("Hmac"))
		if h != "" {
			r.created = &tokenInfo{owner: principal(body.Child("PrincipalType"), body.Child("PrincipalName")),
				id: nonEmpty(str(body.Child("TokenId"))), hash: h}
		}
	case 49:
		for _, e := range elems(body.Child("Entries")) {
			one(e, entityKey(entity(e.Child("Entity"), "EntityName")))
		}
	case 44, 33, 32:
		list := "Responses"
		if m.APIKey == 32 {
			list = "Results"
		}
		for _, e := range elems(body.Child(list)) {
			one(e, resourceKey(configResource(e.Child("ResourceType")), str(e.Child("ResourceName"))))
		}
	default: // 39, 40, 41, 48, 50: one answer for the whole request
		one(body, "")
	}
	return r
}

// kindRows pairs a request of another kind than acl with its response
// (nil: none captured): one row per change.
func kindRows(req *Request, resp *Response) []Row {
	base := Row{
		Kind: req.Kind, APIKey: req.APIKey, Time: req.Time, Client: req.Client, Broker: req.Broker,
		Principal: req.Principal, ClientID: req.ClientID, APIVersion: req.APIVersion,
		CorrelationID: req.CorrelationID, RequestIndex: index(req.Index), ValidateOnly: req.ValidateOnly,
	}
	if resp != nil {
		base.ResponseIndex = index(resp.Index)
		if resp.HasLatency {
			us := resp.Latency.Microseconds()
			base.LatencyUs = &us
		}
	}
	if req.APIKey == 29 { // DescribeAcls has a binding, not a target
		r := base
		r.Action, r.Binding = Describe, req.Bindings[0]
		switch {
		case resp == nil:
			r.Result = ResultNoResponse
		case len(resp.Results) == 0:
			r.Result = ResultError
		default:
			setOutcome(&r, resp.Results[0].ErrorCode, resp.Results[0].ErrorMessage)
		}
		return []Row{r}
	}
	rows := make([]Row, 0, len(req.Changes))
	for _, c := range req.Changes {
		r := base
		r.Action = c.Action
		t := c.Target
		r.Target = &t
		if resp == nil {
			r.Result = ResultNoResponse
			rows = append(rows, r)
			continue
		}
		e, ok := answer(resp, c.key)
		if !ok {
			// Not answered in a response cut short: there was one.
			r.Result = ResultError
		} else {
			setOutcome(&r, e.ErrorCode, e.ErrorMessage)
		}
		if c := resp.created; c != nil && req.APIKey == 38 {
			if c.owner != nil && *c.owner != ":" {
				t.Owner = c.owner
			}
			t.TokenID = c.id
		}
		rows = append(rows, r)
	}
	return rows
}

// answer is the response entry for key: the one with that key, or for a
// response with one answer, that one.
func answer(resp *Response, key string) (Entry, bool) {
	for _, e := range resp.Entries {
		if e.key == key {
			return e, true
		}
	}
	if len(resp.Entries) == 1 && resp.Entries[0].key == "" {
		return resp.Entries[0], true
	}
	return Entry{}, false
}

// kindResponseOnlyRows: a response of another kind without its request
// does not say what changed (a SCRAM result names the user, not the
// mechanism nor the operation): no rows, the blind spot says so.
func kindResponseOnlyRows(*Response) []Row { return nil }

func keyOf(s *string) string {
	if s == nil {
		return "\x00"
	}
	return *s
}

func resourceKey(rt, rn *string) string { return keyOf(rt) + "\x00" + keyOf(rn) }

func entityKey(ent []EntityPart) string {
	var b strings.Builder
	for _, p := range ent {
		b.WriteString(p.Type)
		b.WriteByte(0)
		b.WriteString(keyOf(p.Name))
		b.WriteByte(0)
	}
	return b.String()
}

func entity(list *dissect.Node, nameField string) []EntityPart {
	out := []EntityPart{}
	for _, e := range elems(list) {
		t := str(e.Child("EntityType"))
		if t == nil {
			continue
		}
		out = append(out, EntityPart{Type: *t, Name: str(e.Child(nameField))})
	}
	return out
}

func integer(n *dissect.Node) *int64 {
	if n == nil || !n.HasValue() || n.Kind != dissect.KindInt {
		return nil
	}
	v := n.Int
	return &v
}

// principal is a principal as Kafka writes it, type:name; nil when the
// fields are absent (before v3) or null.
func principal(typ, name *dissect.Node) *string {
	t, n := str(typ), str(name)
	if t == nil || n == nil {
		return nil
	}
	s := *t + ":" + *n
	return &s
}

func nonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

// digest identifies an HMAC without keeping it.
func digest(n *dissect.Node) string {
	if n == nil || !n.HasValue() || n.Kind != dissect.KindBytes || n.Null || len(n.Bytes) == 0 {
		return ""
	}
	h := sha256.Sum256(n.Bytes)
	return string(h[:])
}

var scramMechanisms = map[int64]string{1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}

func mechanism(n *dissect.Node) *string {
	if n == nil || !n.HasValue() || n.Kind != dissect.KindInt {
		return nil
	}
	s, ok := scramMechanisms[n.Int]
	if !ok {
		s = strconv.FormatInt(n.Int, 10)
	}
	return &s
}

var configResources = map[int64]string{2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}

func configResource(n *dissect.Node) *string {
	if n == nil || !n.HasValue() || n.Kind != dissect.KindInt {
		return nil
	}
	s, ok := configResources[n.Int]
	if !ok {
		s = strconv.FormatInt(n.Int, 10)
	}
	return &s
}

func configOp(n *dissect.Node) Action {
	if n != nil && n.HasValue() {
		switch n.Int {
		case 0:
			return Set
		case 1:
			return Delete
		case 2:
			return Append
		case 3:
			return Subtract
		}
		return Action(strconv.FormatInt(n.Int, 10))
	}
	return Set
}

// configValue is a config entry's value as a row shows it: redacted when
// its key is sensitive (or the decoder marked it so) unless show.
func configValue(key *string, v *dissect.Node, show bool) *string {
	if v == nil || !v.HasValue() || v.Null || v.Kind != dissect.KindString {
		return nil
	}
	if !show && (v.Redacted() || key == nil || dissect.SensitiveConfig(*key)) {
		s := "<redacted, " + strconv.Itoa(len(v.Str)) + " bytes>"
		return &s
	}
	s := v.Str
	return &s
}
