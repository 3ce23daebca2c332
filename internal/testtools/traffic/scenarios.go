package traffic

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Exchange is one CreateAcls or DeleteAcls request and the response the
// client received for it.
type Exchange struct {
	API           int16 // APICreateAcls or APIDeleteAcls
	Version       int16 // the version in the request header on the wire
	CorrelationID int32 // the correlation ID in the request header on the wire
	// Request is *kmsg.CreateACLsRequest or *kmsg.DeleteACLsRequest.
	Request any
	// Response is *kmsg.CreateACLsResponse or *kmsg.DeleteACLsResponse.
	Response any

	ClientPort int    // the client's TCP port: with the broker port it names the stream
	User       string // the SASL user of the connection ("" without SASL)
}

// Scenario names, in the order Names returns them.
const (
	ScenarioKadm        = "kadm"
	ScenarioRawVersions = "raw-versions"
	ScenarioSarama      = "sarama"
)

// Names lists the scenarios.
func Names() []string { return []string{ScenarioKadm, ScenarioRawVersions, ScenarioSarama} }

// Result is everything a scenario run recorded.
type Result struct {
	Scenario  string
	Addr      string     // broker address, 127.0.0.1:PORT
	Exchanges []Exchange // CreateAcls/DeleteAcls exchanges in request order
	Frames    []*Frame   // every request the clients wrote (ACL or not), in order

	// Synthesized captures only (BuildTLSCapture): key log file names and
	// the client connections.
	Keylog, PartialKeylog string
	Connections           []ConnectionJSON
}

// DefaultTimeout bounds one scenario run started by Run.
const DefaultTimeout = 60 * time.Second

// Run runs the named scenario against the broker at addr (started with
// StartBroker) and returns its ACL exchanges in request order.
func Run(name, addr string) ([]Exchange, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	res, err := RunContext(ctx, name, addr)
	if err != nil {
		return nil, err
	}
	return res.Exchanges, nil
}

// RunContext is Run with a context, returning every frame recorded.
func RunContext(ctx context.Context, name, addr string) (*Result, error) {
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	rec := new(Recorder)
	var err error
	switch name {
	case ScenarioKadm:
		err = Kadm(ctx, addr, rec)
	case ScenarioRawVersions:
		err = RawVersions(ctx, addr, rec)
	case ScenarioSarama:
		err = Sarama(ctx, addr, rec)
	default:
		return nil, fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(Names(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	ex, err := rec.Exchanges()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	return &Result{Scenario: name, Addr: addr, Exchanges: ex, Frames: rec.Frames()}, nil
}

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host != "127.0.0.1" {
		return fmt.Errorf("broker address %s: only 127.0.0.1 is allowed", addr)
	}
	return nil
}

// dial opens a recorded TCP connection to addr.
func dial(ctx context.Context, rec *Recorder, addr, user string) (net.Conn, error) {
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return rec.Wrap(c, user), nil
}

////////////////////////////////////////////////////////////////////////////
// RawVersions
////////////////////////////////////////////////////////////////////////////

// rawConn writes kmsg requests on a TCP connection of its own, one at a
// time, and reads their responses.
type rawConn struct {
	conn net.Conn
	fmtr *kmsg.RequestFormatter
	corr int32
}

func dialRaw(ctx context.Context, rec *Recorder, addr, user, pass, clientID string) (*rawConn, error) {
	c, err := dial(ctx, rec, addr, user)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	rc := &rawConn{conn: c, fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))}

	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(3)
	av.ClientSoftwareName = "kdissect-traffic"
	av.ClientSoftwareVersion = "1.0.0"
	if _, err := rc.request(av); err != nil {
		c.Close()
		return nil, fmt.Errorf("ApiVersions: %w", err)
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "PLAIN"
	r, err := rc.request(hs)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("SaslHandshake: %w", err)
	}
	if ec := r.(*kmsg.SASLHandshakeResponse).ErrorCode; ec != 0 {
		c.Close()
		return nil, fmt.Errorf("SaslHandshake: error code %d", ec)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.SetVersion(1)
	au.SASLAuthBytes = []byte("\x00" + user + "\x00" + pass)
	r, err = rc.request(au)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("SaslAuthenticate: %w", err)
	}
	if ec := r.(*kmsg.SASLAuthenticateResponse).ErrorCode; ec != 0 {
		c.Close()
		return nil, fmt.Errorf("SaslAuthenticate: error code %d", ec)
	}
	return rc, nil
}

func (rc *rawConn) Close() error { return rc.conn.Close() }

// request writes req at the version set on it and reads its response.
func (rc *rawConn) request(req kmsg.Request) (kmsg.Response, error) {
	rc.corr++
	if err := rc.send(req, rc.corr); err != nil {
		return nil, err
	}
	return rc.recv(req, rc.corr)
}

// LongName is a resource name longer than 127 bytes: its compact-string
// length needs a two-byte uvarint in flexible versions.
var LongName = "very-long-topic-name." + strings.Repeat("abcdefghij", 16) + ".end"

// BulkCreations is how many creations the bulk flexible CreateAcls request
// holds: more than 127, so its compact-array length is a two-byte uvarint.
const BulkCreations = 130

func creation(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType = rt
	c.ResourceName = name
	c.ResourcePatternType = pt
	c.Principal = principal
	c.Host = host
	c.Operation = op
	c.PermissionType = perm
	return c
}

func filter(rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType, principal, host *string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.DeleteACLsRequestFilter {
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType = rt
	f.ResourceName = name
	f.ResourcePatternType = pt
	f.Principal = principal
	f.Host = host
	f.Operation = op
	f.PermissionType = perm
	return f
}

// Short names for the kmsg enums used below.
const (
	rtAny     = kmsg.ACLResourceTypeAny
	rtTopic   = kmsg.ACLResourceTypeTopic
	rtGroup   = kmsg.ACLResourceTypeGroup
	rtCluster = kmsg.ACLResourceTypeCluster
	rtTxn     = kmsg.ACLResourceTypeTransactionalId
	rtToken   = kmsg.ACLResourceTypeDelegationToken
	rtUser    = kmsg.ACLResourceType(7) // USER (KIP-679 era); kfake rejects it

	ptAny      = kmsg.ACLResourcePatternTypeAny
	ptMatch    = kmsg.ACLResourcePatternTypeMatch
	ptLiteral  = kmsg.ACLResourcePatternTypeLiteral
	ptPrefixed = kmsg.ACLResourcePatternTypePrefixed

	opAny      = kmsg.ACLOperationAny
	opAll      = kmsg.ACLOperationAll
	opRead     = kmsg.ACLOperationRead
	opWrite    = kmsg.ACLOperationWrite
	opCreate   = kmsg.ACLOperationCreate
	opAlter    = kmsg.ACLOperationAlter
	opDescribe = kmsg.ACLOperationDescribe

	permAny   = kmsg.ACLPermissionTypeAny
	permDeny  = kmsg.ACLPermissionTypeDeny
	permAllow = kmsg.ACLPermissionTypeAllow
)

func sp(s string) *string { return &s }

// RawVersions writes CreateAcls and DeleteAcls at every version 0-3 on raw
// TCP connections (kmsg frames written by hand, so the version on the wire is
// exactly the one asked for):
//
//   - admin: CreateAcls v0, v1, v2, v3 (topics, a prefixed group, cluster,
//     transactional ID, a DENY for "User:Zoë" on a host, a >127-byte
//     resource name, and invalid creations the broker rejects: operation ANY,
//     USER resource type at v3);
//   - admin: DeleteAcls v0, v1, v2, v3 with exact filters, filters whose
//     name/principal/host are null, MATCH and ANY pattern filters;
//   - admin: CreateAcls v2 with BulkCreations (>127) creations and DeleteAcls
//     v3 with one all-null filter that matches all of them (>127 matching
//     ACLs in the response);
//   - mallory: CreateAcls v0/v2 and DeleteAcls v1/v3, all answered with
//     CLUSTER_AUTHORIZATION_FAILED.
func RawVersions(ctx context.Context, addr string, rec *Recorder) error {
	admin, err := dialRaw(ctx, rec, addr, AdminUser, AdminPass, "kdissect-raw-admin")
	if err != nil {
		return err
	}
	defer admin.Close()

	// Metadata: some ordinary traffic between the handshake and the ACLs.
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(9)
	if _, err := admin.request(md); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}

	creates := map[int16][]kmsg.CreateACLsRequestCreation{
		0: { // v0 has no pattern type: every binding is LITERAL
			creation(rtTopic, "orders", ptLiteral, "User:alice", "*", opWrite, permAllow),
			creation(rtTopic, "orders", ptLiteral, "User:Zoë", "192.0.2.7", opRead, permDeny),
			creation(rtGroup, "billing", ptLiteral, "User:bob", "*", opRead, permAllow),
			creation(rtTopic, LongName, ptLiteral, "User:alice", "*", opDescribe, permAllow),
		},
		1: {
			creation(rtGroup, "consumers-", ptPrefixed, "User:bob", "*", opRead, permAllow),
			creation(rtTopic, "logs.", ptPrefixed, "User:carol", "10.0.0.5", opRead, permAllow),
			creation(rtCluster, "kafka-cluster", ptLiteral, "User:ops", "*", opAlter, permAllow),
			creation(rtTopic, "orders", ptLiteral, "User:alice", "*", opAny, permAllow), // invalid: operation ANY
		},
		2: {
			creation(rtTxn, "txn-checkout", ptLiteral, "User:alice", "*", opWrite, permAllow),
			creation(rtTopic, LongName, ptPrefixed, "User:Zoë", "*", opAll, permDeny),
			creation(rtTopic, "payments", ptLiteral, "User:dave", "203.0.113.10", opCreate, permAllow),
		},
		3: {
			creation(rtUser, "User:bob", ptLiteral, "User:alice", "*", opDescribe, permAllow), // USER resource: rejected by kfake
			creation(rtToken, "token-1", ptLiteral, "User:alice", "*", opDescribe, permAllow), // DELEGATION_TOKEN: rejected by kfake
			creation(rtTopic, "métriques", ptLiteral, "User:Zoë", "*", opRead, permAllow),
			creation(rtGroup, "analytics-", ptPrefixed, "User:carol", "*", opRead, permDeny),
		},
	}
	for v := int16(0); v <= 3; v++ {
		req := kmsg.NewPtrCreateACLsRequest()
		req.SetVersion(v)
		req.Creations = creates[v]
		if _, err := admin.request(req); err != nil {
			return fmt.Errorf("CreateAcls v%d: %w", v, err)
		}
	}

	deletes := map[int16][]kmsg.DeleteACLsRequestFilter{
		0: { // v0: no pattern type (implied LITERAL)
			filter(rtTopic, sp("orders"), ptLiteral, sp("User:alice"), sp("*"), opWrite, permAllow),
			filter(rtTopic, sp("no-such-topic"), ptLiteral, nil, nil, opAny, permAny), // matches nothing
		},
		1: {
			filter(rtGroup, sp("consumers-"), ptPrefixed, nil, nil, opAny, permAny),
			filter(rtTopic, nil, ptMatch, sp("User:Zoë"), nil, opAny, permDeny),
			filter(rtTopic, nil, 0, nil, nil, opAny, permAny), // invalid: UNKNOWN pattern
		},
		2: {
			filter(rtTopic, sp(LongName), ptAny, nil, nil, opAny, permAny),
			filter(rtCluster, sp("kafka-cluster"), ptLiteral, sp("User:ops"), sp("*"), opAlter, permAllow),
		},
		3: {
			filter(rtAny, nil, ptAny, nil, nil, opAny, permAny), // everything left
		},
	}
	for v := int16(0); v <= 3; v++ {
		req := kmsg.NewPtrDeleteACLsRequest()
		req.SetVersion(v)
		req.Filters = deletes[v]
		if _, err := admin.request(req); err != nil {
			return fmt.Errorf("DeleteAcls v%d: %w", v, err)
		}
	}

	// Bulk: > 127 creations in a flexible version, then one null filter.
	bulk := kmsg.NewPtrCreateACLsRequest()
	bulk.SetVersion(2)
	for i := 0; i < BulkCreations; i++ {
		bulk.Creations = append(bulk.Creations, creation(rtTopic, fmt.Sprintf("bulk-%03d", i), ptLiteral,
			fmt.Sprintf("User:svc-%d", i%7), "*", opRead, permAllow))
	}
	if _, err := admin.request(bulk); err != nil {
		return fmt.Errorf("bulk CreateAcls: %w", err)
	}
	del := kmsg.NewPtrDeleteACLsRequest()
	del.SetVersion(3)
	del.Filters = []kmsg.DeleteACLsRequestFilter{filter(rtTopic, nil, ptAny, nil, nil, opAny, permAny)}
	if _, err := admin.request(del); err != nil {
		return fmt.Errorf("bulk DeleteAcls: %w", err)
	}

	// An unauthorized principal.
	mal, err := dialRaw(ctx, rec, addr, MalloryUser, MalloryPass, "kdissect-raw-mallory")
	if err != nil {
		return err
	}
	defer mal.Close()
	for _, v := range []int16{0, 2} {
		req := kmsg.NewPtrCreateACLsRequest()
		req.SetVersion(v)
		req.Creations = []kmsg.CreateACLsRequestCreation{
			creation(rtTopic, "orders", ptLiteral, "User:mallory", "*", opAll, permAllow),
			creation(rtCluster, "kafka-cluster", ptLiteral, "User:mallory", "*", opAlter, permAllow),
		}
		if _, err := mal.request(req); err != nil {
			return fmt.Errorf("mallory CreateAcls v%d: %w", v, err)
		}
	}
	for _, v := range []int16{1, 3} {
		req := kmsg.NewPtrDeleteACLsRequest()
		req.SetVersion(v)
		req.Filters = []kmsg.DeleteACLsRequestFilter{filter(rtAny, nil, ptAny, nil, nil, opAny, permAny)}
		if _, err := mal.request(req); err != nil {
			return fmt.Errorf("mallory DeleteAcls v%d: %w", v, err)
		}
	}
	return nil
}

// versionsOf lists the distinct versions of an API among exchanges.
func versionsOf(ex []Exchange, api int16) []int16 {
	seen := map[int16]bool{}
	var out []int16
	for _, e := range ex {
		if e.API == api && !seen[e.Version] {
			seen[e.Version] = true
			out = append(out, e.Version)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Versions returns, per API key, the sorted distinct versions among the
// exchanges.
func Versions(ex []Exchange) map[int16][]int16 {
	return map[int16][]int16{
		APICreateAcls: versionsOf(ex, APICreateAcls),
		APIDeleteAcls: versionsOf(ex, APIDeleteAcls),
	}
}
