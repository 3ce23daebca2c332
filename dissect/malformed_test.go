package dissect

import (
	"bytes"
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// rawRequest frames a hand-written body behind a request header with
// client id "c": header v2 (body at 0x10) when the built-in table says the
// version is flexible, v1 (body at 0x0f) otherwise.
func rawRequest(key, ver int16, body string) []byte {
	b := hexBytes("00000000")
	b = append(b, byte(key>>8), byte(key), byte(ver>>8), byte(ver))
	b = append(b, hexBytes("00000001 0001 63")...)
	if Builtin().isFlexible(key, ver) {
		b = append(b, 0)
	}
	return testkit.SetSize(append(b, hexBytes(body)...))
}

// rawResponse frames a hand-written body behind a response header with
// correlation id 1: v1 (body at 0x09) when flexible, v0 (body at 0x08).
func rawResponse(flexible bool, body string) []byte {
	b := hexBytes("00000000 00000001")
	if flexible {
		b = append(b, 0)
	}
	return testkit.SetSize(append(b, hexBytes(body)...))
}

// TestMalformed checks the exact problems (offset and message) for each
// kind of damage, and that the tree still keeps its invariants.
func TestMalformed(t *testing.T) {
	seed := readTestdata(t, "createacls-v3-request.bin")
	withTrailing := testkit.SetSize(append(bytes.Clone(seed), 0xde, 0xad))
	afterFrame := append(bytes.Clone(seed), 1, 2, 3)
	hostileFrame := testkit.KmsgResponse(hostileCreateResp(), 1)
	type P = Problem
	cases := []struct {
		name     string
		frame    []byte
		request  bool
		key, ver int16 // for responses
		want     []P
	}{
		// Frame and header.
		{"no size", hexBytes("0000"), true, 0, 0, []P{{0, "truncated: needs 4 bytes, 2 left"}}},
		{"negative size", hexBytes("ffffffff 001e"), true, 0, 0, []P{{0, "size -1 is negative"}}},
		{"empty frame", hexBytes("00000000"), true, 0, 0, []P{{4, "truncated: needs 2 bytes, 0 left"}}},
		{"huge size", hexBytes("7fffffff 001e 0003 0000"), true, 0, 0, []P{
			{0, "frame is truncated: size says 2147483647 bytes follow, 6 present"},
			{8, "truncated: needs 4 bytes, 2 left"},
		}},
		{"header cut in client id", hexBytes("0000000c 001e 0001 00000005 0003 6162"), true, 0, 0, []P{
			{12, "string length 3 exceeds the 2 bytes left"},
		}},
		{"response header cut", hexBytes("00000002 0000"), false, 30, 3, []P{{4, "truncated: needs 4 bytes, 2 left"}}},

		// Strings.
		{"negative string length", rawRequest(30, 1, "00000001 02 fffe 00000000000000000000"), true, 0, 0, []P{{0x14, "string length -2 is negative"}}},
		{"string longer than the frame", rawRequest(30, 1, "00000001 02 7fff 4141 000000000000000000"), true, 0, 0, []P{
			{0x14, "string length 32767 exceeds the 11 bytes left"},
		}},
		{"huge compact string", rawRequest(30, 3, "02 02 ffffffff0f 00000000"), true, 0, 0, []P{
			{0x12, "string length 4294967294 exceeds the 4 bytes left"},
		}},
		{"null string not nullable", rawRequest(30, 0, "00000001 02 ffff 000141 00012a 04 03"), true, 0, 0, []P{
			{0x14, "ResourceName is null but not nullable in v0"},
		}},
		{"null compact string not nullable", rawRequest(30, 2, "02 02 00 03 0241 022a 04 03 00 00"), true, 0, 0, []P{
			{0x12, "ResourceName is null but not nullable in v2"},
		}},
		{"invalid UTF-8", hostileFrame, false, 30, 1, []P{{0x29, "ErrorMessage is not valid UTF-8"}}},

		// Arrays.
		{"negative array length", rawRequest(30, 1, "fffffffe"), true, 0, 0, []P{{0x0f, "array length -2 is negative"}}},
		{"2^31-1 elements", rawRequest(30, 1, "7fffffff 00000000000000000000"), true, 0, 0, []P{
			{0x0f, "array length 2147483647 exceeds the 10 bytes left"},
		}},
		{"compact 2^31 elements", rawRequest(30, 3, "8180808008 00000000000000000000"), true, 0, 0, []P{
			{0x10, "array length 2147483648 exceeds the 10 bytes left"},
		}},
		{"more elements than bytes", rawRequest(30, 1, "00000005 02 0000 03 0000 0000 04 03"), true, 0, 0, []P{
			{0x1d, "truncated: needs 1 bytes, 0 left"}, // the first element fits and is shown
		}},
		{"null array not nullable", rawRequest(30, 1, "ffffffff"), true, 0, 0, []P{{0x0f, "Creations is null but not nullable in v1"}}},
		{"null compact array not nullable", rawRequest(30, 3, "00 00"), true, 0, 0, []P{{0x10, "Creations is null but not nullable in v3"}}},

		// Varints.
		{"uvarint over 5 bytes", rawRequest(30, 3, "808080808001 00"), true, 0, 0, []P{{0x10, "varint longer than 5 bytes or above 2^32-1"}}},
		{"uvarint above 2^32-1", rawRequest(30, 3, "8080808010 00"), true, 0, 0, []P{{0x10, "varint longer than 5 bytes or above 2^32-1"}}},
		{"uvarint cut", rawRequest(30, 3, "8080"), true, 0, 0, []P{{0x10, "truncated: varint runs past the end"}}},

		// Tagged fields.
		{"tags out of order", rawRequest(30, 3, "01 02 0700 0500"), true, 0, 0, []P{{0x14, "tag 5 is not above the previous tag 7"}}},
		{"tagged size past the end", rawRequest(30, 3, "01 01 07 05 aa"), true, 0, 0, []P{{0x13, "tagged field size 5 exceeds the 1 bytes left"}}},
		{"too many tagged fields", rawRequest(30, 3, "01 05 0000"), true, 0, 0, []P{{0x11, "5 tagged fields cannot fit in the 2 bytes left"}}},

		// API key and version.
		{"unknown API key", rawRequest(999, 0, "6f7061717565"), true, 0, 0, []P{{4, "unknown API key 999"}}},
		// A version newer than the definitions is read as the newest as far
		// as the bytes allow, never silently.
		{"unsupported version", rawRequest(30, 7, "0102"), true, 0, 0, []P{{6, "unsupported version v7 of CreateAclsRequest, dissected as v3"}, {17, "2 tagged fields cannot fit in the 0 bytes left"}}},
		{"negative version", rawRequest(30, -1, "0102"), true, 0, 0, []P{{6, "CreateAclsRequest v-1 is not a known version (known: 0-3)"}}},
		{"version newer than every definition", rawRequest(0, 99, "0102"), true, 0, 0, []P{{6, "unsupported version v99 of ProduceRequest, dissected as v13"}, {17, "truncated: needs 2 bytes, 1 left"}}},
		{"version newer than the table", rawRequest(93, 99, "0102"), true, 0, 0, []P{{6, "StreamsGroupTopologyDescriptionUpdate v99 is newer than kdissect knows (up to v0)"}}},
		{"negative version without definition", rawRequest(93, -3, ""), true, 0, 0, []P{{6, "version -3 is negative"}}},
		{"unsupported response version", rawResponse(true, "0102"), false, 30, 7, []P{{9, "unsupported version v7 of CreateAclsResponse, dissected as v3"}, {9, "truncated: needs 4 bytes, 2 left"}}},
		{"unknown response API key", rawResponse(false, "0102"), false, 999, 0, []P{{8, "unknown API key 999"}}},

		// Extra bytes.
		{"trailing bytes", withTrailing, true, 0, 0, []P{{len(seed), "2 bytes after the end of the message body"}}},
		{"bytes after the frame", afterFrame, true, 0, 0, []P{{len(seed), "3 bytes after the end of the frame its size gives"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := decodeWith(undefined93(), c.request, c.frame, c.key, c.ver)
			if !reflect.DeepEqual(m.Problems, c.want) {
				t.Errorf("problems\n got %v\nwant %v", m.Problems, c.want)
			}
			if err := checkShape(m, c.frame, false); err != nil {
				t.Error(err)
			}
			if err := checkRendered(m); err != nil {
				t.Error(err)
			}
			// Every problem is also on the node it concerns, and the text
			// shows it.
			var onNodes []Problem
			m.Tree.Walk(func(n *Node, _ int) { onNodes = append(onNodes, n.Problems...) })
			if len(onNodes) != len(m.Problems) {
				t.Errorf("%d problems on nodes, %d on the message", len(onNodes), len(m.Problems))
			}
			txt := string(AppendText(nil, m.Tree))
			for _, p := range m.Problems {
				if !strings.Contains(txt, string(appendProblem(nil, p))) {
					t.Errorf("text does not show %v", p)
				}
			}
		})
	}
}

// undefined93 is the built-in registry without StreamsGroupTopologyDescriptionUpdate:
// every API key kdissect names has a definition, and these tests need one
// that is named and not defined.
func undefined93() *Registry {
	r := NewRegistry()
	delete(r.req, 93)
	delete(r.resp, 93)
	return r
}

// TestOpaqueBody: a frame kdissect has no definition for still shows its
// header, and its body as one opaque node covering the rest of the frame.
func TestOpaqueBody(t *testing.T) {
	for _, c := range []struct {
		frame    []byte
		key, ver int16
		hdr      string
		bodyOff  int
	}{
		{rawRequest(999, 0, "6f7061717565"), 999, 0, "v1", 0x0f},
		{rawRequest(93, 0, "0102"), 93, 0, "v2", 0x10},
	} {
		m := undefined93().Decode(c.frame, Options{})
		if m.APIKey != c.key || m.APIVersion != c.ver || m.CorrelationID != 1 {
			t.Errorf("message says key %d v%d corr %d", m.APIKey, m.APIVersion, m.CorrelationID)
		}
		h := m.Tree.Child("RequestHeader")
		if h == nil || h.Type != c.hdr || h.Find("client_id").Str != "c" {
			t.Errorf("header not decoded as %s: %+v", c.hdr, h)
			continue
		}
		body := m.Tree.Child("body")
		if body == nil || body.Offset != c.bodyOff || body.Offset+body.Size != len(c.frame) || body.Category != CatRequestBody {
			t.Errorf("opaque body %+v, want [%d, %d)", body, c.bodyOff, len(c.frame))
		}
	}
}

// TestNullNotNullableShown: a null where the version forbids it is shown
// as null (the walk goes on) with the problem on that node.
func TestNullNotNullableShown(t *testing.T) {
	m := Builtin().Decode(rawRequest(30, 0, "00000001 02 ffff 000141 00012a 04 03"), Options{})
	n := m.Tree.Find("CreateAclsRequest", "Creations", "AclCreation[0]", "ResourceName")
	if n == nil || !n.Null || n.Display() != "null (int16 len=-1)" || len(n.Problems) != 1 {
		t.Fatalf("ResourceName: %+v", n)
	}
	if h := m.Tree.Find("CreateAclsRequest", "Creations", "AclCreation[0]", "Host"); h == nil || h.Str != "*" {
		t.Errorf("walk stopped at the null: Host %+v", h)
	}
}

// TestTruncatedShowsNoValue: a field the frame was cut in shows no value
// (rather than a made-up zero) and a JSON null.
func TestTruncatedShowsNoValue(t *testing.T) {
	seed := readTestdata(t, "createacls-v3-request.bin")
	m := Builtin().Decode(seed[:10], Options{}) // cut inside correlation_id
	c := m.Tree.Find("RequestHeader", "correlation_id")
	if c == nil || c.HasValue() || c.Value() != nil || c.Size != 0 {
		t.Fatalf("correlation_id: %+v", c)
	}
	if got := stripDoc(string(appendLabel(nil, c))); got != "correlation_id int32 [0x0008, 0B]" {
		t.Errorf("label %q", got)
	}
	if !bytes.Contains(AppendJSON(nil, m), []byte(`{"name":"correlation_id","type":"int32","value":null,"display":""`)) {
		t.Errorf("JSON does not show correlation_id as null")
	}
	if m.APIKey != 30 || m.APIVersion != 3 || m.CorrelationID != 0 {
		t.Errorf("message says key %d v%d corr %d", m.APIKey, m.APIVersion, m.CorrelationID)
	}
}

// TestTruncatedPrefixes decodes every prefix of every sample frame: no
// panic, the invariants hold, the part decoded agrees with the full
// decode, and the problem that stopped the walk sits at the start of a
// field the full frame has and the prefix cuts.
func TestTruncatedPrefixes(t *testing.T) {
	frames := sampleFrames(1)
	frames = append(frames,
		seedFrame{"seed request", true, 30, 3, readTestdata(t, "createacls-v3-request.bin")},
		seedFrame{"seed response", false, 30, 3, readTestdata(t, "createacls-v3-response.bin")})
	for _, s := range frames {
		full := s.decode()
		// For each node offset, the furthest end of a node starting there or
		// of its parent: a walk cut short stops at the start of a field
		// that the cut falls in (a string, an array whose count cannot
		// fit), or at the size of a tagged field the cut falls in.
		reach := map[int]int{}
		var index func(n, parent *Node)
		index = func(n, parent *Node) {
			end := n.Offset + n.Size
			if parent != nil {
				end = max(end, parent.Offset+parent.Size)
			}
			reach[n.Offset] = max(reach[n.Offset], end)
			for _, c := range n.Children {
				index(c, n)
			}
		}
		for _, c := range full.Tree.Children { // the root's end is the frame's
			index(c, nil)
		}
		for cut := range len(s.frame) {
			prefix := s.frame[:cut:cut] // no capacity: a read past the end panics
			m := decodeWith(Builtin(), s.request, prefix, s.key, s.ver)
			fail := func(format string, args ...any) {
				t.Helper()
				t.Errorf("%s cut at %d: "+format, append([]any{s.name, cut}, args...)...)
			}
			if err := checkShape(m, prefix, false); err != nil {
				fail("%v", err)
				continue
			}
			if err := checkRendered(m); err != nil {
				fail("%v", err)
			}
			if len(m.Problems) == 0 {
				fail("no problem reported")
				continue
			}
			first, last := m.Problems[0], m.Problems[len(m.Problems)-1]
			if cut >= 4 {
				want := Problem{0, "frame is truncated: size says " + itoa(int64(len(s.frame)-4)) + " bytes follow, " + itoa(int64(cut-4)) + " present"}
				if first != want {
					fail("first problem %v, want %v", first, want)
				}
			}
			if end, ok := reach[last.Offset]; !ok || end <= cut || last.Offset > cut {
				fail("walk stopped by %v, not at a field the cut falls in", last)
			}
			if msg := comparePartial(m.Tree, full.Tree, true); msg != "" {
				fail("%s", msg)
			}
		}
	}
}

// comparePartial checks that a truncated decode is a prefix of the full
// one: same children in the same places, and every value it shows is the
// value the full frame has.
// The root's name is left out: a frame cut before its API key names none.
func comparePartial(part, full *Node, root bool) string {
	if (!root && part.Name != full.Name) || part.Offset != full.Offset {
		return "node " + part.Name + " at " + itoa(int64(part.Offset)) + " is " + full.Name + " at " + itoa(int64(full.Offset)) + " in the full frame"
	}
	if part.HasValue() && (part.Display() != full.Display() || (len(full.Children) == 0 && part.Size != full.Size)) {
		return part.Name + " shows " + part.Display() + ", full frame " + full.Display()
	}
	if len(part.Children) > len(full.Children) {
		return part.Name + " has more children than in the full frame"
	}
	for i, c := range part.Children {
		if msg := comparePartial(c, full.Children[i], false); msg != "" {
			return msg
		}
	}
	return ""
}

// TestHostileText: wire strings with terminal escapes, bidi overrides,
// bells, newlines, C1 controls and invalid UTF-8 never reach the text
// output raw, in the tree, the summary, the byte layout or the problems.
func TestHostileText(t *testing.T) {
	req := kmsg.NewPtrCreateACLsRequest()
	req.SetVersion(3)
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceName = hostile
	c.Principal = "User:\xff\xfe\u009b31m"
	c.Host = "\u2066rtl\u2069\u200f"
	req.Creations = append(req.Creations, c)
	frames := []*Message{
		Builtin().Decode(testkit.KmsgRequest(req, 1, testkit.Ptr("cli\x1b]0;title\x07")), Options{}),
		Builtin().Decode(testkit.KmsgResponse(hostileCreateResp(), 1), Options{Direction: Response, APIKey: 30, APIVersion: 1}),
	}
	raw := []string{"\x1b", "\a", "\u202e", "\u2066", "\u2069", "\u200f", "\u009b", "\u2028", "\u2029", "\u0085", "\xff"}
	for _, m := range frames {
		outputs := map[string]string{
			"text":    string(AppendText(nil, m.Tree)),
			"summary": m.Summary,
			"hexdump": string(AppendHexDump(nil, m.Raw, m.Tree)),
		}
		for what, out := range outputs {
			for _, r := range raw {
				if strings.Contains(out, r) {
					t.Errorf("%s of %s contains %q raw", what, m.APIName, r)
				}
			}
			if what != "text" && what != "hexdump" && strings.Contains(out, "\n") {
				t.Errorf("%s contains a newline", what)
			}
		}
		if err := checkRendered(m); err != nil {
			t.Error(err)
		}
	}
	// The escaped form is still readable: the ESC is shown as \x1b.
	if n := frames[0].Tree.Find("CreateAclsRequest", "Creations", "AclCreation[0]", "ResourceName"); n == nil || !strings.HasPrefix(n.Display(), `"evil\x1b[31m\u202eTXT\a\n"`) {
		t.Errorf("ResourceName displays as %v", n)
	}
}

// TestInvalidUTF8JSON: invalid UTF-8 on the wire still gives valid JSON,
// which standard decoders read back, with U+FFFD for the bad bytes and
// every valid string intact.
func TestInvalidUTF8JSON(t *testing.T) {
	m := Builtin().Decode(testkit.KmsgResponse(hostileCreateResp(), 1), Options{Direction: Response, APIKey: 30, APIVersion: 1})
	js := AppendJSON(nil, m)
	if !json.Valid(js) {
		t.Fatalf("invalid JSON: %s", js)
	}
	type jnode struct {
		Name     string  `json:"name"`
		Value    any     `json:"value"`
		Children []jnode `json:"children"`
	}
	var doc struct {
		Problems []Problem `json:"problems"`
		Tree     jnode     `json:"tree"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(doc.Problems, m.Problems) {
		t.Errorf("problems %v, want %v", doc.Problems, m.Problems)
	}
	var msgs []any
	var walk func(n jnode)
	walk = func(n jnode) {
		if n.Name == "ErrorMessage" {
			msgs = append(msgs, n.Value)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(doc.Tree)
	want := []any{hostile, "bad\ufffd\ufffdutf8\ufffd", "\u2028line\u2029sep\u0085\u009b2J"}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("ErrorMessage values %q, want %q", msgs, want)
	}
}

// TestNoAllocationFromWireLengths: a frame claiming 2^31 elements (or a
// 2 GiB string) costs what a small frame costs; nothing is sized from a
// length before the bytes behind it are known to be there.
func TestNoAllocationFromWireLengths(t *testing.T) {
	small := rawRequest(30, 1, "00000000")
	claims := []seedFrame{
		{"2^31-1 elements", true, 0, 0, rawRequest(30, 1, "7fffffff 00000000000000000000")},
		{"compact 2^31 elements", true, 0, 0, rawRequest(30, 3, "8180808008 00000000000000000000")},
		{"4 GiB compact string", true, 0, 0, rawRequest(30, 3, "02 02 ffffffff0f 00000000")},
		{"5 elements in 10 bytes", true, 0, 0, rawRequest(30, 1, "00000005 02 0000 03 0000 0000 04 03")},
		{"2^32-2 filters", true, 0, 0, rawRequest(31, 3, "ffffffff0f")},
		{"2^31-2 results", false, 31, 3, rawResponse(true, "00000000 ffffffff07 000000000000")},
		{"2^31 tagged fields", true, 0, 0, rawRequest(30, 3, "01 8080808008 0000")},
		{"2 GiB frame", true, 0, 0, hexBytes("7fffffff 001e 0003 00000001 0000 00 8180808008")},
	}
	base := allocBytes(func() { Builtin().Decode(small, Options{}) })
	for _, c := range claims {
		decode := func() { decodeWith(Builtin(), c.request, c.frame, c.key, c.ver) }
		if m := decodeWith(Builtin(), c.request, c.frame, c.key, c.ver); len(m.Problems) == 0 {
			t.Errorf("%s: no problem reported", c.name)
		}
		// A generous constant margin over the small frame: problem
		// messages and summary, never anything near the claimed length.
		if got := allocBytes(decode); got > base+4096 {
			t.Errorf("%s: %d bytes allocated per decode, %d for a 4-byte body", c.name, got, base)
		}
		if a := testing.AllocsPerRun(20, decode); a > 40 {
			t.Errorf("%s: %v allocations per decode", c.name, a)
		}
	}
}

// allocBytes is the average heap bytes fn allocates.
func allocBytes(fn func()) uint64 {
	const runs = 50
	fn() // warm up: the built-in registry is built once
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		fn()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

// TestJSONMatchesTree reads the JSON of every sample frame, and of hostile
// and damaged ones, back with encoding/json and checks it node by node
// against the tree: name, type, value, display, offset, size, children.
// Record batches are among them (plain, compressed, two in one records
// field, cut short), whose keys and values lie inside the records field's
// bytes.
func TestJSONMatchesTree(t *testing.T) {
	type jnode struct {
		Name     string          `json:"name"`
		Type     string          `json:"type"`
		Value    json.RawMessage `json:"value"`
		Display  string          `json:"display"`
		Offset   int             `json:"offset"`
		Size     int             `json:"size"`
		Children []jnode         `json:"children"`
	}
	msgs := []*Message{
		Builtin().Decode(testkit.KmsgResponse(hostileCreateResp(), 1), Options{Direction: Response, APIKey: 30, APIVersion: 1}),
		Builtin().Decode(readTestdata(t, "createacls-v3-request.bin")[:20], Options{}),
	}
	for _, s := range sampleFrames(2) {
		msgs = append(msgs, s.decode())
	}
	rs := []kmsg.Record{rec(0, "k0", "v\"0\u00e9"), rec(1, "", "\x00\x01binary", "h", "\xff"), rec(2, "key-2", "")}
	plain := batch(t, batchSpec{base: 7, records: rs})
	for _, f := range [][]byte{
		produce(9, plain),
		produce(9, append(append([]byte{}, plain...), batch(t, batchSpec{base: 10, records: rs[1:]})...)),
		produce(9, batch(t, batchSpec{attrs: codecGzip, records: rs})),
		produce(9, plain[:len(plain)-5]),
	} {
		msgs = append(msgs, Builtin().Decode(f, Options{}))
	}
	for _, m := range msgs {
		var doc struct {
			Summary string `json:"summary"`
			Tree    jnode  `json:"tree"`
		}
		if err := json.Unmarshal(AppendJSON(nil, m), &doc); err != nil {
			t.Fatalf("%s: %v", m.Summary, err)
		}
		if doc.Summary != strings.ToValidUTF8(m.Summary, "\ufffd") {
			t.Errorf("summary %q, want %q", doc.Summary, m.Summary)
		}
		var walk func(j jnode, n *Node) bool
		walk = func(j jnode, n *Node) bool {
			display := ""
			if n.HasValue() {
				display = n.Display()
			}
			if j.Name != n.Name || j.Type != n.Type || j.Display != display || j.Offset != n.Offset || j.Size != n.Size || len(j.Children) != len(n.Children) {
				t.Errorf("%s: JSON node %+v, tree %s", m.Summary, j, appendLabel(nil, n))
				return false
			}
			var got, want any
			wantJSON, _ := json.Marshal(n.Value())
			if json.Unmarshal(j.Value, &got) != nil || json.Unmarshal(wantJSON, &want) != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s has value %s in the JSON, %s in the tree", m.Summary, n.Name, j.Value, wantJSON)
				return false
			}
			for i := range j.Children {
				if !walk(j.Children[i], n.Children[i]) {
					return false
				}
			}
			return true
		}
		walk(doc.Tree, m.Tree)
	}
}
