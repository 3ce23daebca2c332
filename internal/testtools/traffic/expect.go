package traffic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ExpectFormat names the sidecar format; it is the "format" member of every
// .expect.json file.
const ExpectFormat = "kdissect-traffic-expect/1"

// ExpectFile is a whole .expect.json sidecar.
//
//	{
//	  "format": "kdissect-traffic-expect/1",
//	  "scenario": "raw-versions",
//	  "brokerPort": 40123,
//	  "exchanges": [ExpectedExchange...],   // CreateAcls/DeleteAcls only, in request order
//	  "otherFrames": [OtherFrame...]        // every other request the clients wrote
//	}
type ExpectFile struct {
	Format      string             `json:"format"`
	Scenario    string             `json:"scenario,omitempty"`
	BrokerPort  int                `json:"brokerPort,omitempty"`
	Exchanges   []ExpectedExchange `json:"exchanges"`
	OtherFrames []OtherFrame       `json:"otherFrames,omitempty"`

	// Set by the captures synthesized from recorded bytes (BuildTLSCapture):
	// the key log files next to the pcap ("" when none) and every client
	// connection with its authentication and TLS parameters.
	Keylog        string           `json:"keylog,omitempty"`
	PartialKeylog string           `json:"partialKeylog,omitempty"`
	Connections   []ConnectionJSON `json:"connections,omitempty"`
}

// ConnectionJSON is one client connection of a synthesized capture.
type ConnectionJSON struct {
	ClientPort int    `json:"clientPort"`
	User       string `json:"user,omitempty"`      // the SASL user the client logged in as
	Mechanism  string `json:"mechanism,omitempty"` // PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; "" without SASL
	// AuthSource is "sasl", "tls" (client certificate, no SASL) or "none".
	AuthSource string `json:"authSource"`
	// Authenticated: SASL connections once the last SaslAuthenticate
	// response said error 0 (a refused login is false); always true for
	// "tls" and "none".
	Authenticated bool `json:"authenticated"`
	// Principal as Kafka's default principal builder names it:
	// "User:alice", "User:CN=...,C=CH", "User:ANONYMOUS"; "" when the login
	// failed.
	Principal string   `json:"principal"`
	TLS       *TLSJSON `json:"tls"` // null on plaintext
	// BareTokens lists, in order, the SASL tokens sent without a Kafka
	// header after a SaslHandshake v0 (absent otherwise).
	BareTokens []BareTokenJSON `json:"bareTokens,omitempty"`
}

// BareTokenJSON is one bare SASL token: who sent it and its length
// without the 4-byte length prefix.
type BareTokenJSON struct {
	FromClient bool `json:"fromClient"`
	Length     int  `json:"length"`
}

// TLSJSON is what the client's crypto/tls reported after the handshake.
type TLSJSON struct {
	Version           string `json:"version"` // "1.2", "1.3"
	Cipher            string `json:"cipher"`  // IANA name, e.g. TLS_AES_128_GCM_SHA256
	SNI               string `json:"sni"`
	ClientRandom      string `json:"clientRandom"` // hex, as in the key log
	Resumed           bool   `json:"resumed"`
	HelloRetry        bool   `json:"helloRetry"`
	ClientCertSubject string `json:"clientCertSubject,omitempty"` // RFC 2253
	// KeylogLines counts this connection's lines in the key log: 4 for
	// TLS 1.3, 1 (CLIENT_RANDOM) for TLS 1.2, 0 for a resumed TLS 1.2
	// session, which the master secret of the session it resumed decrypts.
	KeylogLines int `json:"keylogLines"`
	// InPartialKeylog is set when a partial key log was written: whether
	// this connection's secrets are in it.
	InPartialKeylog *bool `json:"inPartialKeylog,omitempty"`
}

// ExpectedExchange is one CreateAcls or DeleteAcls exchange in a sidecar.
// Request and Response hold the message fields under Kafka's JSON field
// names (see the *JSON types); exactly one of the typed views is set after
// LoadExpect, matching API.
type ExpectedExchange struct {
	API           int16           `json:"api"`
	APIName       string          `json:"apiName"` // "CreateAcls" or "DeleteAcls"
	Version       int16           `json:"version"`
	CorrelationID int32           `json:"correlationId"`
	ClientPort    int             `json:"clientPort"`          // client side TCP port of the stream
	User          string          `json:"user"`                // SASL user of the connection
	Principal     string          `json:"principal,omitempty"` // the connection's principal (synthesized captures)
	Request       json.RawMessage `json:"request"`
	Response      json.RawMessage `json:"response"`

	CreateRequest  *CreateAclsRequestJSON  `json:"-"`
	CreateResponse *CreateAclsResponseJSON `json:"-"`
	DeleteRequest  *DeleteAclsRequestJSON  `json:"-"`
	DeleteResponse *DeleteAclsResponseJSON `json:"-"`
}

// OtherFrame is a non-ACL request (ApiVersions, SaslHandshake, Metadata, ...)
// seen on the clients' connections, listed for reference.
type OtherFrame struct {
	API           int16  `json:"api"`
	APIName       string `json:"apiName"`
	Version       int16  `json:"version"`
	CorrelationID int32  `json:"correlationId"`
	ClientPort    int    `json:"clientPort"`
	Answered      bool   `json:"answered"`
}

// CreateAclsRequestJSON is a CreateAcls request, Kafka's field names.
type CreateAclsRequestJSON struct {
	Creations []AclCreationJSON `json:"Creations"`
}

// AclCreationJSON is one CreateAcls creation. ResourcePatternType is absent
// (nil) in v0.
type AclCreationJSON struct {
	ResourceType        int8   `json:"ResourceType"`
	ResourceName        string `json:"ResourceName"`
	ResourcePatternType *int8  `json:"ResourcePatternType,omitempty"`
	Principal           string `json:"Principal"`
	Host                string `json:"Host"`
	Operation           int8   `json:"Operation"`
	PermissionType      int8   `json:"PermissionType"`
}

// CreateAclsResponseJSON is a CreateAcls response, Kafka's field names.
type CreateAclsResponseJSON struct {
	ThrottleTimeMs int32                   `json:"ThrottleTimeMs"`
	Results        []AclCreationResultJSON `json:"Results"`
}

// AclCreationResultJSON is one CreateAcls result. ErrorMessage is null
// when the broker sent null.
type AclCreationResultJSON struct {
	ErrorCode    int16   `json:"ErrorCode"`
	ErrorMessage *string `json:"ErrorMessage"`
}

// DeleteAclsRequestJSON is a DeleteAcls request, Kafka's field names.
type DeleteAclsRequestJSON struct {
	Filters []DeleteAclsFilterJSON `json:"Filters"`
}

// DeleteAclsFilterJSON is one DeleteAcls filter. The nullable strings are
// null when the client sent null; PatternTypeFilter is absent (nil) in v0.
type DeleteAclsFilterJSON struct {
	ResourceTypeFilter int8    `json:"ResourceTypeFilter"`
	ResourceNameFilter *string `json:"ResourceNameFilter"`
	PatternTypeFilter  *int8   `json:"PatternTypeFilter,omitempty"`
	PrincipalFilter    *string `json:"PrincipalFilter"`
	HostFilter         *string `json:"HostFilter"`
	Operation          int8    `json:"Operation"`
	PermissionType     int8    `json:"PermissionType"`
}

// DeleteAclsResponseJSON is a DeleteAcls response, Kafka's field names.
type DeleteAclsResponseJSON struct {
	ThrottleTimeMs int32                        `json:"ThrottleTimeMs"`
	FilterResults  []DeleteAclsFilterResultJSON `json:"FilterResults"`
}

// DeleteAclsFilterResultJSON is the result of one filter.
type DeleteAclsFilterResultJSON struct {
	ErrorCode    int16                       `json:"ErrorCode"`
	ErrorMessage *string                     `json:"ErrorMessage"`
	MatchingAcls []DeleteAclsMatchingAclJSON `json:"MatchingAcls"`
}

// DeleteAclsMatchingAclJSON is one ACL a filter matched. PatternType is
// absent (nil) in v0.
type DeleteAclsMatchingAclJSON struct {
	ErrorCode      int16   `json:"ErrorCode"`
	ErrorMessage   *string `json:"ErrorMessage"`
	ResourceType   int8    `json:"ResourceType"`
	ResourceName   string  `json:"ResourceName"`
	PatternType    *int8   `json:"PatternType,omitempty"`
	Principal      string  `json:"Principal"`
	Host           string  `json:"Host"`
	Operation      int8    `json:"Operation"`
	PermissionType int8    `json:"PermissionType"`
}

func i8p(v int8) *int8 { return &v }

// patternIf returns the pattern type if the version has the field (v1+).
func patternIf(version int16, v int8) *int8 {
	if version < 1 {
		return nil
	}
	return i8p(v)
}

// CreateRequestJSON converts a kmsg CreateAcls request.
func CreateRequestJSON(r *kmsg.CreateACLsRequest) *CreateAclsRequestJSON {
	out := &CreateAclsRequestJSON{Creations: []AclCreationJSON{}}
	for _, c := range r.Creations {
		out.Creations = append(out.Creations, AclCreationJSON{
			ResourceType:        int8(c.ResourceType),
			ResourceName:        c.ResourceName,
			ResourcePatternType: patternIf(r.Version, int8(c.ResourcePatternType)),
			Principal:           c.Principal,
			Host:                c.Host,
			Operation:           int8(c.Operation),
			PermissionType:      int8(c.PermissionType),
		})
	}
	return out
}

// CreateResponseJSON converts a kmsg CreateAcls response.
func CreateResponseJSON(r *kmsg.CreateACLsResponse) *CreateAclsResponseJSON {
	out := &CreateAclsResponseJSON{ThrottleTimeMs: r.ThrottleMillis, Results: []AclCreationResultJSON{}}
	for _, res := range r.Results {
		out.Results = append(out.Results, AclCreationResultJSON{ErrorCode: res.ErrorCode, ErrorMessage: res.ErrorMessage})
	}
	return out
}

// DeleteRequestJSON converts a kmsg DeleteAcls request.
func DeleteRequestJSON(r *kmsg.DeleteACLsRequest) *DeleteAclsRequestJSON {
	out := &DeleteAclsRequestJSON{Filters: []DeleteAclsFilterJSON{}}
	for _, f := range r.Filters {
		out.Filters = append(out.Filters, DeleteAclsFilterJSON{
			ResourceTypeFilter: int8(f.ResourceType),
			ResourceNameFilter: f.ResourceName,
			PatternTypeFilter:  patternIf(r.Version, int8(f.ResourcePatternType)),
			PrincipalFilter:    f.Principal,
			HostFilter:         f.Host,
			Operation:          int8(f.Operation),
			PermissionType:     int8(f.PermissionType),
		})
	}
	return out
}

// DeleteResponseJSON converts a kmsg DeleteAcls response.
func DeleteResponseJSON(r *kmsg.DeleteACLsResponse) *DeleteAclsResponseJSON {
	out := &DeleteAclsResponseJSON{ThrottleTimeMs: r.ThrottleMillis, FilterResults: []DeleteAclsFilterResultJSON{}}
	for _, fr := range r.Results {
		o := DeleteAclsFilterResultJSON{ErrorCode: fr.ErrorCode, ErrorMessage: fr.ErrorMessage, MatchingAcls: []DeleteAclsMatchingAclJSON{}}
		for _, m := range fr.MatchingACLs {
			o.MatchingAcls = append(o.MatchingAcls, DeleteAclsMatchingAclJSON{
				ErrorCode:      m.ErrorCode,
				ErrorMessage:   m.ErrorMessage,
				ResourceType:   int8(m.ResourceType),
				ResourceName:   m.ResourceName,
				PatternType:    patternIf(r.Version, int8(m.ResourcePatternType)),
				Principal:      m.Principal,
				Host:           m.Host,
				Operation:      int8(m.Operation),
				PermissionType: int8(m.PermissionType),
			})
		}
		out.FilterResults = append(out.FilterResults, o)
	}
	return out
}

// apiName is Kafka's name for the two ACL APIs.
func apiName(api int16) string {
	switch api {
	case APICreateAcls:
		return "CreateAcls"
	case APIDeleteAcls:
		return "DeleteAcls"
	}
	return kmsg.NameForKey(api)
}

// Expected converts one exchange to its sidecar form.
func Expected(e Exchange) (ExpectedExchange, error) {
	out := ExpectedExchange{
		API: e.API, APIName: apiName(e.API), Version: e.Version, CorrelationID: e.CorrelationID,
		ClientPort: e.ClientPort, User: e.User,
	}
	switch e.API {
	case APICreateAcls:
		req, ok1 := e.Request.(*kmsg.CreateACLsRequest)
		resp, ok2 := e.Response.(*kmsg.CreateACLsResponse)
		if !ok1 || !ok2 {
			return out, fmt.Errorf("CreateAcls exchange holds %T/%T", e.Request, e.Response)
		}
		out.CreateRequest, out.CreateResponse = CreateRequestJSON(req), CreateResponseJSON(resp)
	case APIDeleteAcls:
		req, ok1 := e.Request.(*kmsg.DeleteACLsRequest)
		resp, ok2 := e.Response.(*kmsg.DeleteACLsResponse)
		if !ok1 || !ok2 {
			return out, fmt.Errorf("DeleteAcls exchange holds %T/%T", e.Request, e.Response)
		}
		out.DeleteRequest, out.DeleteResponse = DeleteRequestJSON(req), DeleteResponseJSON(resp)
	default:
		return out, fmt.Errorf("exchange of API %d is not CreateAcls/DeleteAcls", e.API)
	}
	var err error
	if out.Request, out.Response, err = out.marshalBodies(); err != nil {
		return out, err
	}
	return out, nil
}

func (x *ExpectedExchange) marshalBodies() (req, resp json.RawMessage, err error) {
	var a, b any
	if x.CreateRequest != nil {
		a, b = x.CreateRequest, x.CreateResponse
	} else {
		a, b = x.DeleteRequest, x.DeleteResponse
	}
	if req, err = marshal(a); err != nil {
		return nil, nil, err
	}
	if resp, err = marshal(b); err != nil {
		return nil, nil, err
	}
	return req, resp, nil
}

// marshal is json.Marshal without HTML escaping (so "User:Zoë" and
// ">" stay readable).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// ExpectJSON renders exchanges as a sidecar document (without scenario
// metadata or other frames).
func ExpectJSON(ex []Exchange) ([]byte, error) {
	return (&Result{Exchanges: ex}).ExpectJSON(0)
}

// ExpectJSON renders the whole result as a sidecar document; brokerPort is
// recorded as is (0 leaves it out).
func (r *Result) ExpectJSON(brokerPort int) ([]byte, error) {
	f := ExpectFile{Format: ExpectFormat, Scenario: r.Scenario, BrokerPort: brokerPort, Exchanges: []ExpectedExchange{},
		Keylog: r.Keylog, PartialKeylog: r.PartialKeylog, Connections: r.Connections}
	principals := map[int]string{}
	for _, c := range r.Connections {
		principals[c.ClientPort] = c.Principal
	}
	for i, e := range r.Exchanges {
		x, err := Expected(e)
		if err != nil {
			return nil, fmt.Errorf("exchange %d: %w", i, err)
		}
		x.Principal = principals[e.ClientPort]
		f.Exchanges = append(f.Exchanges, x)
	}
	for _, fr := range r.Frames {
		if fr.API == APICreateAcls || fr.API == APIDeleteAcls {
			continue
		}
		f.OtherFrames = append(f.OtherFrames, OtherFrame{
			API: fr.API, APIName: kmsg.NameForKey(fr.API), Version: fr.Version,
			CorrelationID: fr.CorrelationID, ClientPort: fr.ClientPort, Answered: fr.Response != nil,
		})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ParseExpect reads a sidecar document and fills the typed views.
func ParseExpect(data []byte) (*ExpectFile, error) {
	var f ExpectFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if f.Format != ExpectFormat {
		return nil, fmt.Errorf("format %q, want %q", f.Format, ExpectFormat)
	}
	for i := range f.Exchanges {
		x := &f.Exchanges[i]
		var err error
		switch x.API {
		case APICreateAcls:
			x.CreateRequest, x.CreateResponse = new(CreateAclsRequestJSON), new(CreateAclsResponseJSON)
			err = unmarshalStrict(x.Request, x.CreateRequest)
			if err == nil {
				err = unmarshalStrict(x.Response, x.CreateResponse)
			}
		case APIDeleteAcls:
			x.DeleteRequest, x.DeleteResponse = new(DeleteAclsRequestJSON), new(DeleteAclsResponseJSON)
			err = unmarshalStrict(x.Request, x.DeleteRequest)
			if err == nil {
				err = unmarshalStrict(x.Response, x.DeleteResponse)
			}
		default:
			err = fmt.Errorf("api %d is not CreateAcls/DeleteAcls", x.API)
		}
		if err != nil {
			return nil, fmt.Errorf("exchange %d: %w", i, err)
		}
	}
	return &f, nil
}

func unmarshalStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// LoadExpectFile reads a .expect.json sidecar.
func LoadExpectFile(path string) (*ExpectFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := ParseExpect(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// LoadExpect reads the exchanges of a .expect.json sidecar.
func LoadExpect(path string) ([]ExpectedExchange, error) {
	f, err := LoadExpectFile(path)
	if err != nil {
		return nil, err
	}
	return f.Exchanges, nil
}
