package dissect

// Helpers shared by the tests of this package (frames come from
// internal/testtools/testkit, built with franz-go's kmsg encoder): sample messages, the
// expected-tree walker and the structural invariants every tree must keep.

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// ---- sample messages ----

// Values chosen to exercise the encoding: unicode, a string over 127 bytes
// (a two-byte compact length) and over 255 bytes, nulls where nullable.
var (
	longName  = strings.Repeat("orders.eu-west-1.", 18) // 306 bytes
	unicodeP  = "User:Zoë"
	unicodeRN = "主题-消费者"
	hostile   = "evil\x1b[31m\u202eTXT\x07\n"
)

// bigTag is a tagged-field payload longer than 127 bytes, so its size is a
// two-byte uvarint.
var bigTag = []byte(strings.Repeat("T", 200))

// userType is USER (7) from v3 on, when it became legal, TOPIC before.
func userType(v int16) kmsg.ACLResourceType {
	if v >= 3 {
		return kmsg.ACLResourceTypeUser
	}
	return kmsg.ACLResourceTypeTopic
}

// sampleCreateReq is a CreateAcls request with three varied creations and
// extra more (so that extra >= 125 makes the count a two-byte uvarint).
// Flexible versions carry unknown tags at both levels.
func sampleCreateReq(v int16, extra int) *kmsg.CreateACLsRequest {
	r := kmsg.NewPtrCreateACLsRequest()
	r.SetVersion(v)
	add := func(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) *kmsg.CreateACLsRequestCreation {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pt
		c.Principal, c.Host, c.Operation, c.PermissionType = principal, host, op, perm
		r.Creations = append(r.Creations, c)
		return &r.Creations[len(r.Creations)-1]
	}
	add(kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral, "User:alice", "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow)
	c := add(kmsg.ACLResourceTypeGroup, unicodeRN, kmsg.ACLResourcePatternTypePrefixed, unicodeP, "10.0.0.1", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeDeny)
	c.UnknownTags.Set(7, []byte{1, 2, 3})
	c.UnknownTags.Set(1000, bigTag) // a two-byte tag number too
	add(userType(v), longName, kmsg.ACLResourcePatternTypeLiteral, "User:"+longName, "", kmsg.ACLOperationAll, kmsg.ACLPermissionTypeAllow)
	for i := range extra {
		add(kmsg.ACLResourceTypeTopic, "t"+strconv.Itoa(i), kmsg.ACLResourcePatternTypeLiteral, "User:bob", "*", kmsg.ACLOperationDescribe, kmsg.ACLPermissionTypeAllow)
	}
	r.UnknownTags.Set(99, []byte("top"))
	return r
}

func sampleCreateResp(v int16, extra int) *kmsg.CreateACLsResponse {
	r := kmsg.NewPtrCreateACLsResponse()
	r.SetVersion(v)
	r.ThrottleMillis = 250
	ok := kmsg.NewCreateACLsResponseResult()
	r.Results = append(r.Results, ok)
	bad := kmsg.NewCreateACLsResponseResult()
	bad.ErrorCode = 31 // CLUSTER_AUTHORIZATION_FAILED
	bad.ErrorMessage = testkit.Ptr("主题: " + longName)
	bad.UnknownTags.Set(5, []byte{0xff})
	r.Results = append(r.Results, bad)
	empty := kmsg.NewCreateACLsResponseResult()
	empty.ErrorCode = -1
	empty.ErrorMessage = testkit.Ptr("")
	r.Results = append(r.Results, empty)
	for range extra {
		r.Results = append(r.Results, kmsg.NewCreateACLsResponseResult())
	}
	r.UnknownTags.Set(0, nil) // an empty tagged field
	return r
}

func sampleDeleteReq(v int16, extra int) *kmsg.DeleteACLsRequest {
	r := kmsg.NewPtrDeleteACLsRequest()
	r.SetVersion(v)
	wild := kmsg.NewDeleteACLsRequestFilter() // nulls match anything
	wild.ResourceType = kmsg.ACLResourceTypeAny
	wild.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	wild.Operation, wild.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	r.Filters = append(r.Filters, wild)
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType = userType(v)
	f.ResourceName = testkit.Ptr(longName)
	f.ResourcePatternType = kmsg.ACLResourcePatternTypeMatch
	f.Principal = testkit.Ptr(unicodeP)
	f.Host = testkit.Ptr("")
	f.Operation, f.PermissionType = kmsg.ACLOperationAlterConfigs, kmsg.ACLPermissionTypeDeny
	f.UnknownTags.Set(3, bigTag)
	r.Filters = append(r.Filters, f)
	for i := range extra {
		g := kmsg.NewDeleteACLsRequestFilter()
		g.ResourceType = kmsg.ACLResourceTypeTopic
		g.ResourceName = testkit.Ptr("t" + strconv.Itoa(i))
		g.ResourcePatternType = kmsg.ACLResourcePatternTypePrefixed
		g.Operation, g.PermissionType = kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		r.Filters = append(r.Filters, g)
	}
	r.UnknownTags.Set(130, []byte{0}) // a two-byte tag number
	return r
}

// sampleDeleteResp has a failed filter, and a filter matching 2+extra ACLs.
func sampleDeleteResp(v int16, extra int) *kmsg.DeleteACLsResponse {
	r := kmsg.NewPtrDeleteACLsResponse()
	r.SetVersion(v)
	r.ThrottleMillis = 0
	failed := kmsg.NewDeleteACLsResponseResult()
	failed.ErrorCode = 42 // INVALID_REQUEST
	failed.ErrorMessage = testkit.Ptr("filter " + unicodeRN + " is invalid")
	r.Results = append(r.Results, failed)
	res := kmsg.NewDeleteACLsResponseResult()
	acl := func(code int16, msg *string, name, principal string) kmsg.DeleteACLsResponseResultMatchingACL {
		a := kmsg.NewDeleteACLsResponseResultMatchingACL()
		a.ErrorCode, a.ErrorMessage = code, msg
		a.ResourceType, a.ResourceName = kmsg.ACLResourceTypeTopic, name
		a.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
		a.Principal, a.Host = principal, "*"
		a.Operation, a.PermissionType = kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
		return a
	}
	res.MatchingACLs = append(res.MatchingACLs, acl(0, nil, "orders", "User:alice"))
	a := acl(29, testkit.Ptr("not allowed"), longName, unicodeP) // TOPIC_AUTHORIZATION_FAILED
	a.UnknownTags.Set(12, []byte("x"))
	res.MatchingACLs = append(res.MatchingACLs, a)
	for i := range extra {
		res.MatchingACLs = append(res.MatchingACLs, acl(0, nil, "t"+strconv.Itoa(i), "User:bob"))
	}
	res.UnknownTags.Set(1, []byte{9, 9})
	r.Results = append(r.Results, res)
	return r
}

// seedFrame is one frame the seed corpus and tests share.
type seedFrame struct {
	name     string
	request  bool
	key, ver int16 // for responses: the request they answer
	frame    []byte
}

// sampleFrames builds every sample message at every version 0-3, with
// extra additional array elements each.
func sampleFrames(extra int) []seedFrame {
	var out []seedFrame
	for v := int16(0); v <= 3; v++ {
		vs := "v" + strconv.Itoa(int(v))
		client := []*string{testkit.Ptr("kdissect-test"), nil, testkit.Ptr(unicodeP), testkit.Ptr("adminclient-1")}[v]
		out = append(out,
			seedFrame{"CreateAclsRequest " + vs, true, 30, v, testkit.KmsgRequest(sampleCreateReq(v, extra), 7+int32(v), client)},
			seedFrame{"CreateAclsResponse " + vs, false, 30, v, testkit.KmsgResponse(sampleCreateResp(v, extra), 7+int32(v))},
			seedFrame{"DeleteAclsRequest " + vs, true, 31, v, testkit.KmsgRequest(sampleDeleteReq(v, extra), -2+int32(v), client)},
			seedFrame{"DeleteAclsResponse " + vs, false, 31, v, testkit.KmsgResponse(sampleDeleteResp(v, extra), -2+int32(v))},
		)
	}
	return out
}

func (s seedFrame) decode() *Message { return decodeWith(Builtin(), s.request, s.frame, s.key, s.ver) }

func decodeWith(r *Registry, request bool, frame []byte, key, ver int16) *Message {
	if request {
		return r.Decode(frame, Options{})
	}
	return r.Decode(frame, Options{Direction: Response, APIKey: key, APIVersion: ver})
}

// ---- expected trees ----

// want is the expected shape of one node: its name, its Value(), its size
// (-1 when the size is only checked by the invariants) and, for composite
// nodes, every child in order.
type want struct {
	name string
	val  any
	size int
	kids []want
}

// ignoreVal marks a value the comparison does not check.
type ignoreVal struct{}

// compareTree checks got against w, every child, name, value and size.
func compareTree(t testing.TB, got *Node, w want) {
	t.Helper()
	var errs []string
	compareNode(&errs, "", got, w)
	for i, e := range errs {
		if i == 10 {
			t.Errorf("... %d more differences", len(errs)-i)
			break
		}
		t.Error(e)
	}
}

func compareNode(errs *[]string, path string, n *Node, w want) {
	path += "/" + w.name
	if n == nil {
		*errs = append(*errs, path+": missing")
		return
	}
	if n.Name != w.name {
		*errs = append(*errs, fmt.Sprintf("%s: name %q", path, n.Name))
	}
	if _, skip := w.val.(ignoreVal); !skip && fmt.Sprint(n.Value()) != fmt.Sprint(w.val) {
		*errs = append(*errs, fmt.Sprintf("%s: value %v (%T), want %v (%T)", path, n.Value(), n.Value(), w.val, w.val))
	}
	if w.size >= 0 && n.Size != w.size {
		*errs = append(*errs, fmt.Sprintf("%s: size %d, want %d", path, n.Size, w.size))
	}
	if len(n.Children) != len(w.kids) {
		var names []string
		for _, c := range n.Children {
			names = append(names, c.Name)
		}
		*errs = append(*errs, fmt.Sprintf("%s: %d children %v, want %d", path, len(n.Children), names, len(w.kids)))
	}
	for i := range min(len(n.Children), len(w.kids)) {
		compareNode(errs, path, n.Children[i], w.kids[i])
	}
}

// expect builds want trees for one version's encoding.
type expect struct{ flex bool }

func (e expect) int(name string, v int64, size int) want { return want{name, v, size, nil} }

func (e expect) str(name, s string) want {
	if e.flex {
		return want{name, s, uvarintLen(uint32(len(s)+1)) + len(s), nil}
	}
	return want{name, s, 2 + len(s), nil}
}

func (e expect) nstr(name string, s *string) want {
	if s != nil {
		return e.str(name, *s)
	}
	if e.flex {
		return want{name, nil, 1, nil}
	}
	return want{name, nil, 2, nil}
}

// array is an array node: its length child, then elems.
func (e expect) array(name string, elems []want) want {
	n := int64(len(elems))
	ln := want{"length", n, 4, nil}
	if e.flex {
		ln = want{"length", n + 1, uvarintLen(uint32(n + 1)), nil}
	}
	return want{name, n, -1, append([]want{ln}, elems...)}
}

// elem is a struct element: its fields, then (flexible) its tagged fields.
func (e expect) elem(name string, tags *kmsg.Tags, fields ...want) want {
	if e.flex {
		fields = append(fields, e.tags(tags))
	}
	return want{name, nil, -1, fields}
}

// tags is a tagged-field section holding tags, none of which our
// definitions know.
func (e expect) tags(tags *kmsg.Tags) want {
	w := want{name: "tagged_fields", val: int64(tags.Len()), size: -1}
	if tags.Len() == 0 {
		w.size = 1
	}
	i := 0
	tags.Each(func(tag uint32, data []byte) {
		w.kids = append(w.kids, want{"TaggedField[" + strconv.Itoa(i) + "]", int64(tag), -1, []want{
			{"tag", int64(tag), uvarintLen(tag), nil},
			{"size", int64(len(data)), uvarintLen(uint32(len(data))), nil},
			{"data", hex.EncodeToString(data), len(data), nil},
		}})
		i++
	})
	return w
}

func uvarintLen(v uint32) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// frameWant is the expected root: frame, header and body.
func frameWant(root string, frame []byte, header, body want) want {
	return want{root, nil, len(frame), []want{
		{"Frame", nil, 4, []want{{"size", int64(len(frame) - 4), 4, nil}}},
		header,
		body,
	}}
}

func requestHeaderWant(r kmsg.Request, corr int32, clientID *string) want {
	e := expect{}
	kids := []want{
		e.int("request_api_key", int64(r.Key()), 2),
		e.int("request_api_version", int64(r.GetVersion()), 2),
		e.int("correlation_id", int64(corr), 4),
		e.nstr("client_id", clientID), // never compact
	}
	if r.IsFlexible() {
		kids = append(kids, want{"tagged_fields", int64(0), 1, nil})
	}
	return want{"RequestHeader", nil, -1, kids}
}

func responseHeaderWant(r kmsg.Response, corr int32) want {
	kids := []want{{"correlation_id", int64(corr), 4, nil}}
	if r.IsFlexible() {
		kids = append(kids, want{"tagged_fields", int64(0), 1, nil})
	}
	return want{"ResponseHeader", nil, -1, kids}
}

// body is a message body struct: fields, then (flexible) tagged fields.
func (e expect) body(name string, tags *kmsg.Tags, fields ...want) want {
	if e.flex {
		fields = append(fields, e.tags(tags))
	}
	return want{name, nil, -1, fields}
}

// checkDecoded compares a decoded well-formed frame with its expected tree
// and checks the invariants and renderings.
func checkDecoded(t *testing.T, m *Message, frame []byte, w want) {
	t.Helper()
	if err := checkShape(m, frame, true); err != nil {
		t.Fatal(err)
	}
	compareTree(t, m.Tree, w)
	if err := checkRendered(m); err != nil {
		t.Error(err)
	}
}

func checkMessage(t *testing.T, m *Message, key, ver int16, corr int32) {
	t.Helper()
	if m.APIKey != key || m.APIVersion != ver || m.CorrelationID != corr || m.APIName != APIName(key) {
		t.Errorf("message says %s (%d) v%d corr %d, want %d v%d corr %d", m.APIName, m.APIKey, m.APIVersion, m.CorrelationID, key, ver, corr)
	}
	if len(m.Problems) != 0 {
		t.Errorf("problems: %v", m.Problems)
	}
}

// ---- invariants ----

// checkShape reports the first violation of the invariants every tree
// keeps, whatever the input: the root covers the frame exactly, every
// node lies within its parent and the frame, siblings are in order and do
// not overlap. With strict (well-formed frames) children also tile their
// parent exactly, and no problem is reported.
func checkShape(m *Message, frame []byte, strict bool) error {
	root := m.Tree
	if root == nil {
		return fmt.Errorf("no tree")
	}
	if root.Offset != 0 || root.Size != len(frame) {
		return fmt.Errorf("root [%d, %d] does not cover the %d-byte frame", root.Offset, root.Size, len(frame))
	}
	if strict && len(m.Problems) > 0 {
		return fmt.Errorf("problems in a well-formed frame: %v", m.Problems)
	}
	var err error
	var check func(n *Node, path string)
	check = func(n *Node, path string) {
		path += "/" + n.Name
		lim := len(frame)
		if n.Source != 0 { // a decompressed source's node counts in its bytes
			lim = len(m.SourceData(int(n.Source)))
		}
		if n.Offset < 0 || n.Size < 0 || n.Offset+n.Size > lim {
			err = fmt.Errorf("%s [%d, %d] outside the %d bytes of source %d", path, n.Offset, n.Size, lim, n.Source)
			return
		}
		for _, p := range n.Problems {
			if p.Offset < 0 || p.Offset > len(frame) {
				err = fmt.Errorf("%s: problem offset %d outside the frame", path, p.Offset)
				return
			}
		}
		at := n.Offset
		if n.Name == "tagged_fields" && n.HasValue() {
			// The section's own bytes are its count; one child per field follows.
			at += uvarintLen(uint32(n.Int))
		}
		if n.Kind == KindBytes && n.Bytes != nil && len(n.Children) > 0 && n.Children[0].Source == n.Source {
			at += n.Size - len(n.Bytes) // the length prefix: what the bytes carry follows it
		}
		inner := 0 // the end of the previous child in another source
		for _, c := range n.Children {
			if c.Source != n.Source {
				if c.Offset < inner {
					err = fmt.Errorf("%s/%s starts at %d of source %d, previous sibling ends at %d", path, c.Name, c.Offset, c.Source, inner)
					return
				}
				inner = c.Offset + c.Size
				if check(c, path); err != nil {
					return
				}
				continue
			}
			if c.Offset < at || (strict && c.Offset != at) {
				err = fmt.Errorf("%s/%s starts at %d, previous sibling ends at %d", path, c.Name, c.Offset, at)
				return
			}
			at = c.Offset + c.Size
			if at > n.Offset+n.Size {
				err = fmt.Errorf("%s/%s [%d, %d] overruns its parent [%d, %d]", path, c.Name, c.Offset, c.Size, n.Offset, n.Size)
				return
			}
			if check(c, path); err != nil {
				return
			}
		}
		if strict && len(n.Children) > 0 && n.Children[0].Source == n.Source && at != n.Offset+n.Size {
			err = fmt.Errorf("%s: children end at %d, node at %d", path, at, n.Offset+n.Size)
		}
	}
	check(root, "")
	return err
}

// checkRendered reports output a terminal or JSON reader could not take:
// text with a control byte other than '\n', or invalid JSON.
func checkRendered(m *Message) error {
	txt := AppendText(nil, m.Tree)
	for i, c := range txt {
		if (c < 0x20 && c != '\n') || c == 0x7f {
			return fmt.Errorf("text has byte %#x at %d: %q", c, i, lineAt(txt, i))
		}
	}
	if js := AppendJSON(nil, m); !json.Valid(js) {
		return fmt.Errorf("invalid JSON: %.200s", js)
	}
	return nil
}

func lineAt(b []byte, i int) string {
	s := strings.LastIndexByte(string(b[:i]), '\n') + 1
	e := strings.IndexByte(string(b[i:]), '\n')
	if e < 0 {
		return string(b[s:])
	}
	return string(b[s : i+e])
}

// ---- text lines ----

// lines splits rendered text into lines without the final empty one.
func lines(b []byte) []string { return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") }

// ---- files and bytes ----

// readTestdata reads a file of the repository's shared test data: the seed
// frames and reference trees (testdata/frames) and the example definitions
// for --schema-dir (testdata/schemas), which the CLI tests use too.
func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	for _, dir := range []string{"testdata", "../testdata/frames", "../testdata/schemas"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			return b
		}
	}
	t.Fatalf("%s: not in testdata, ../testdata/frames or ../testdata/schemas", name)
	return nil
}

// hexBytes reads hex with spaces for readability; it panics on bad input
// since its arguments are constants of the tests.
func hexBytes(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// hostileCreateResp carries a terminal escape sequence, a bidi override,
// a bell, a newline and invalid UTF-8 in its error messages.
func hostileCreateResp() *kmsg.CreateACLsResponse {
	r := kmsg.NewPtrCreateACLsResponse()
	r.SetVersion(1)
	for _, msg := range []string{hostile, "bad\xff\xfeutf8\xc3", "\u2028line\u2029sep\u0085\u009b2J"} {
		res := kmsg.NewCreateACLsResponseResult()
		res.ErrorCode = 58 // SASL_AUTHENTICATION_FAILED
		res.ErrorMessage = testkit.Ptr(msg)
		r.Results = append(r.Results, res)
	}
	return r
}

// withOpts is o with the frame's reading (direction, API, raw token) of how.
func withOpts(o, how Options) Options {
	o.Direction, o.APIKey, o.APIVersion, o.RawToken = how.Direction, how.APIKey, how.APIVersion, how.RawToken
	return o
}
