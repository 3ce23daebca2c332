package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// pcapRecord is one packet of a classic little-endian Ethernet pcap, with
// its record header, and the TCP payload length it carries.
type pcapRecord struct {
	raw     []byte
	payload int
}

// splitPcap cuts a capture written by kdissect -w (little-endian pcap,
// Ethernet, IPv4) into its file header and records.
func splitPcap(t *testing.T, b []byte) ([]byte, []pcapRecord) {
	t.Helper()
	if len(b) < 24 || binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 || binary.LittleEndian.Uint32(b[20:]) != 1 {
		t.Fatal("not a little-endian Ethernet pcap")
	}
	hdr, b := b[:24], b[24:]
	var recs []pcapRecord
	for len(b) > 0 {
		n := 16 + int(binary.LittleEndian.Uint32(b[8:]))
		raw := b[:n]
		ip := raw[16+14:]
		ihl := int(ip[0]&15) * 4
		tcp := ip[ihl:]
		payload := int(binary.BigEndian.Uint16(ip[2:])) - ihl - int(tcp[12]>>4)*4
		recs = append(recs, pcapRecord{raw: raw, payload: payload})
		b = b[n:]
	}
	return hdr, recs
}

// ndjson runs kdissect --json --all on a capture given as bytes and
// returns its lines as generic objects.
func ndjson(t *testing.T, pcap []byte, args ...string) []map[string]any {
	t.Helper()
	out, stderr, code := runCLI(t, string(pcap), append(append([]string{"--json", "--all"}, args...), "-")...)
	if code != exitOK && code != exitMalformed {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" {
			continue // no output at all
		}
		// The tree stays text: comparing it as such is what keeps the
		// hundred runs of this test cheap.
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &raw); err != nil {
			t.Fatalf("bad NDJSON line %q: %v", l, err)
		}
		m := map[string]any{}
		for k, v := range raw {
			if k == "tree" {
				m[k] = string(v)
				continue
			}
			var x any
			json.Unmarshal(v, &x)
			m[k] = x
		}
		lines = append(lines, m)
	}
	return lines
}

// where names a message or event by its place in the capture, which does
// not change when other packets are dropped.
func where(m map[string]any) string {
	return fmt.Sprintf("%v>%v@%v", m["src"], m["dst"], m["stream_offset"])
}

func packetsOf(m map[string]any) []int {
	var out []int
	for _, p := range m["packets"].([]any) {
		out = append(out, int(p.(float64)))
	}
	return out
}

func has(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// TestDropAnyDataPacket is issue 7's acceptance test: drop any single TCP
// data packet of a capture of real client traffic, in either direction;
// every request and response whose own bytes are all still there decodes
// exactly as in the intact capture, and every such response is matched to
// its request when that request's header was captured (and the other way
// round when the response is complete).
func TestDropAnyDataPacket(t *testing.T) {
	forEachShippedCapture(t, true, func(t *testing.T, hdr []byte, recs []pcapRecord, intact []map[string]any, args []string) {
		byIndex := messagesByIndex(t, intact)
		drops := 0
		for d := 1; d <= len(recs); d++ {
			if recs[d-1].payload == 0 {
				continue
			}
			drops++
			lossy := append([]byte(nil), hdr...)
			for i, r := range recs {
				if i != d-1 {
					lossy = append(lossy, r.raw...)
				}
			}
			checkDropped(t, d, intact, byIndex, ndjson(t, lossy, args...))
		}
		t.Logf("%d data packets dropped in turn", drops)
	})
}

// forEachShippedCapture runs check on each capture in testdata/pcaps with
// the broker's port given and, with detect, also with it found by --detect
// (on by default) from the first request captured; check gets the intact
// output.
func forEachShippedCapture(t *testing.T, detect bool, check func(t *testing.T, hdr []byte, recs []pcapRecord, intact []map[string]any, args []string)) {
	for _, name := range []string{"kadm-acls", "raw-versions", "sarama-acls"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile("../../testdata/pcaps/" + name + ".expect.json")
			if err != nil {
				t.Fatal(err)
			}
			var sc sidecar
			if err := json.Unmarshal(raw, &sc); err != nil {
				t.Fatal(err)
			}
			capture, err := os.ReadFile("../../testdata/pcaps/" + name + ".pcap")
			if err != nil {
				t.Fatal(err)
			}
			hdr, recs := splitPcap(t, capture)
			runs := [][]string{{"--port", strconv.Itoa(sc.BrokerPort)}}
			if detect {
				runs = append(runs, nil)
			}
			for _, args := range runs {
				t.Run(strings.Join(append([]string{"flags"}, args...), " "), func(t *testing.T) {
					check(t, hdr, recs, ndjson(t, capture, args...), args)
				})
			}
		})
	}
}

// messagesByIndex indexes the messages of an intact capture's output, which
// has no event but port_detected.
func messagesByIndex(t *testing.T, lines []map[string]any) map[float64]map[string]any {
	t.Helper()
	byIndex := map[float64]map[string]any{}
	for _, m := range lines {
		if m["event"] == "port_detected" {
			continue
		}
		if m["event"] != nil {
			t.Fatalf("intact capture: event %v", m)
		}
		byIndex[m["index"].(float64)] = m
	}
	return byIndex
}

// Issue 7 §3: a capture that starts in the middle of connections (here:
// each shipped capture with its first packets cut off, at every packet)
// decodes every message it holds whole as the intact capture does; a
// response whose request was cut off is reported once as unmatched, with
// its correlation id and size; every other response is matched.
//
// The broker's port is given: without the handshake, --detect takes the
// first plausible request header for the client's, and a response with
// correlation id 0 reads as a Produce v0 request.
func TestCaptureStartingMidConnection(t *testing.T) {
	forEachShippedCapture(t, false, func(t *testing.T, hdr []byte, recs []pcapRecord, intact []map[string]any, args []string) {
		byIndex := messagesByIndex(t, intact)
		// Messages are named by connection, direction and correlation id:
		// stream offsets count from the first captured byte here.
		name := func(m map[string]any) string {
			dir := m["direction"]
			if dir == nil {
				dir = "response"
			}
			return fmt.Sprintf("%v>%v/%v/%v", m["src"], m["dst"], dir, m["correlation_id"])
		}
		for from := 2; from <= len(recs); from++ {
			cut := append([]byte(nil), hdr...)
			for _, r := range recs[from-1:] {
				cut = append(cut, r.raw...)
			}
			got := map[string]map[string]any{}
			gotIndex := map[float64]map[string]any{}
			for _, m := range ndjson(t, cut, args...) {
				switch m["event"] {
				case nil, "unmatched_response":
					if got[name(m)] != nil {
						t.Errorf("from %d: twice: %v", from, name(m))
					}
					got[name(m)] = m
					gotIndex[m["index"].(float64)] = m
				case "port_detected":
				default:
					t.Errorf("from %d: %v", from, m)
				}
			}
			for _, want := range intact {
				if want["event"] != nil || packetsOf(want)[0] < from {
					continue
				}
				m := got[name(want)]
				delete(got, name(want))
				peer := byIndex[want["peer"].(float64)]
				if want["direction"] == "response" && packetsOf(peer)[0] < from {
					var root struct{ Size float64 }
					json.Unmarshal([]byte(want["tree"].(string)), &root)
					if m == nil || m["event"] != "unmatched_response" || m["size"] != root.Size {
						t.Errorf("from %d: %s: %v, want unmatched_response of %v bytes", from, name(want), m, root.Size)
					}
					continue
				}
				if m == nil || m["event"] != nil {
					t.Errorf("from %d: %s: %v", from, name(want), m)
					continue
				}
				// How a SASL token reads comes from the connection's handshake,
				// which may be before the capture's start.
				fromOthers := want["api_key"] == 36.0 || want["api_key"] == -1.0
				for _, k := range []string{"api_key", "api_version", "summary", "problems", "tree", "latency_us"} {
					if fromOthers && (k == "summary" || k == "problems" || k == "tree") {
						continue
					}
					if !reflect.DeepEqual(m[k], want[k]) {
						t.Errorf("from %d: %s: %s = %v, want %v", from, name(want), k, m[k], want[k])
					}
				}
				gotPeer, _ := m["peer"].(float64)
				if p := gotIndex[gotPeer]; packetsOf(peer)[0] >= from && (p == nil || name(p) != name(peer)) {
					t.Errorf("from %d: %s: peer %v, want %s", from, name(want), m["peer"], name(peer))
				}
			}
			for n := range got {
				t.Errorf("from %d: %s not in the intact capture", from, n)
			}
		}
	})
}

// checkDropped compares the output for the capture without packet d with
// the intact output.
func checkDropped(t *testing.T, d int, intact []map[string]any, intactByIndex map[float64]map[string]any, lossy []map[string]any) {
	t.Helper()
	at := map[string]map[string]any{}
	unmatched := map[string]map[string]any{}
	byIndex := map[float64]map[string]any{}
	for _, m := range lossy {
		if ix, ok := m["index"].(float64); ok {
			byIndex[ix] = m
		}
		switch m["event"] {
		case nil:
			at[where(m)] = m
		case "unmatched_response":
			if unmatched[where(m)] != nil {
				t.Errorf("drop %d: unmatched twice: %v", d, m)
			}
			unmatched[where(m)] = m
		}
		if m["event"] == "unparseable" {
			t.Errorf("drop %d: %v", d, m)
		}
	}
	complete := func(m map[string]any) bool { return !has(packetsOf(m), d) }
	for _, want := range intact {
		if want["event"] != nil || !complete(want) {
			continue
		}
		peer := intactByIndex[want["peer"].(float64)]
		if want["direction"] == "response" && packetsOf(peer)[0] == d {
			// Its request's header was lost: it cannot be decoded, only
			// reported, once.
			u := unmatched[where(want)]
			if u == nil || u["correlation_id"] != want["correlation_id"] || at[where(want)] != nil {
				t.Errorf("drop %d: response at %s without its request: %v, want unmatched_response", d, where(want), u)
			}
			delete(unmatched, where(want))
			continue
		}
		got := at[where(want)]
		if got == nil {
			t.Errorf("drop %d: %s %v corr %v at %s: not decoded", d, want["direction"], want["api_name"], want["correlation_id"], where(want))
			continue
		}
		var renumbered []int
		for _, p := range packetsOf(want) {
			if p > d {
				p--
			}
			renumbered = append(renumbered, p)
		}
		if !reflect.DeepEqual(packetsOf(got), renumbered) {
			t.Errorf("drop %d: %s: packets %v, want %v", d, where(want), packetsOf(got), renumbered)
		}
		same := func(k string) bool { return reflect.DeepEqual(got[k], want[k]) }
		// Who stood behind the connection, the client software it named,
		// and how a SASL token reads, come from other frames of it (its
		// ApiVersions, handshake, authentication): a dropped packet there
		// may leave them unknown or sniffed.
		fromOthers := want["api_key"] == 36.0 || want["api_key"] == -1.0
		for k := range want {
			switch k {
			case "index", "peer", "packets", "principal", "auth", "client_software":
			case "tree", "summary", "problems":
				if !fromOthers && !same(k) {
					t.Errorf("drop %d: %s: %s differs:\n%v\nwant\n%v", d, where(want), k, got[k], want[k])
				}
			case "latency_us":
				if complete(peer) && !same(k) {
					t.Errorf("drop %d: %s: latency %v, want %v", d, where(want), got[k], want[k])
				}
			default:
				if !same(k) {
					t.Errorf("drop %d: %s: %s differs:\n%v\nwant\n%v", d, where(want), k, got[k], want[k])
				}
			}
		}
		// A request names its response when that is complete; a response
		// names its request when the request's header was captured.
		named := complete(peer)
		if want["direction"] == "response" {
			named = packetsOf(peer)[0] != d
		}
		if !named {
			continue
		}
		gotPeer, _ := got["peer"].(float64)
		if p := byIndex[gotPeer]; p == nil || where(p) != where(peer) {
			t.Errorf("drop %d: %s %s corr %v: peer %v is %v, want the message at %s", d, want["direction"], want["api_name"], want["correlation_id"], got["peer"], p, where(peer))
		}
	}
	for _, u := range unmatched {
		t.Errorf("drop %d: response wrongly reported without its request: %v", d, u)
	}
}

// aclRequest is a CreateAcls v3 request frame of exactly size bytes (one
// creation whose resource name takes up the rest).
func aclRequest(t *testing.T, corr int32, size int) []byte {
	t.Helper()
	build := func(n int) []byte {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType = kmsg.ACLResourceTypeTopic
		cr.ResourceName = strings.Repeat("t", n)
		cr.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
		cr.Principal, cr.Host = "User:alice", "*"
		cr.Operation, cr.PermissionType = kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
		r := kmsg.NewCreateACLsRequest()
		r.Version = 3
		r.Creations = append(r.Creations, cr)
		return testkit.KmsgRequest(&r, corr, testkit.Ptr("kadm"))
	}
	for n := 0; n < size; n++ {
		if f := build(n); len(f) == size {
			return f
		}
	}
	t.Fatalf("no request of %d bytes", size)
	return nil
}

// aclResponse is a CreateAcls v3 response frame with one result per code.
func aclResponse(corr int32, codes ...int16) []byte {
	return testkit.Response(corr, true, createResp(codes...))
}

// jsonLines runs kdissect with args and returns its NDJSON lines as
// objects without their trees, times and summaries. A negative wantCode
// accepts exit status 0 or 2.
func jsonLines(t *testing.T, wantCode int, args ...string) []string {
	t.Helper()
	out, stderr, code := runCLI(t, "", append([]string{"--json"}, args...)...)
	if code != wantCode && (wantCode >= 0 || code != exitOK && code != exitMalformed) {
		t.Fatalf("exit %d, want %d: %s\n%s", code, wantCode, stderr, out)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad NDJSON line %q: %v", l, err)
		}
		delete(m, "tree")
		delete(m, "time")
		delete(m, "summary")
		delete(m, "file")       // the temporary file's path
		b, _ := json.Marshal(m) // keys sorted
		lines = append(lines, string(b))
	}
	return lines
}

func wantJSONLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Issue 7 §2: a request cut by a lost packet still names its response: the
// incomplete event carries what its captured header says and an index, and
// the response is decoded with that API key and version.
func TestIncompleteRequestNamesItsResponse(t *testing.T) {
	b := newPcap(t)
	c := openConn(b, 50500, 9092)
	q := aclRequest(t, 7, 330)
	c.Send(true, q[:120])
	c.Drop(true, 90) // lost by the capture, acknowledged by the broker
	c.Send(true, q[210:])
	c.Send(false, aclResponse(7, 0))
	file := b.File(t)
	wantJSONLines(t, jsonLines(t, 0, file),
		`{"dst":"192.0.2.1:9092","event":"gap","length":90,"src":"192.0.2.10:50500","stream_offset":120}`,
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"correlation_id":7,"dst":"192.0.2.1:9092","event":"incomplete","have":240,"index":1,"peer":2,"reason":"gap","src":"192.0.2.10:50500","stream_offset":0,"want":330}`,
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"auth":null,"client_software":null,"correlation_id":7,"direction":"response","dst":"192.0.2.10:50500","forwarded":null,"index":2,"latency_us":1000,"packets":[5],"peer":1,"principal":null,"problems":[],"src":"192.0.2.1:9092","stream_offset":0,"tls":null}`,
	)
	// The gap is declared when the broker's acknowledgement (packet 5)
	// comes; the incomplete request's time is that of its last byte.
	out, _, _ := runCLI(t, "", "--summary", file)
	want := "!! 2026-03-01T12:00:00.005000Z 192.0.2.10:50500 → 192.0.2.1:9092 @120 gap: 90 bytes not captured\n" +
		"!! 2026-03-01T12:00:00.004000Z 192.0.2.10:50500 → 192.0.2.1:9092 @0 incomplete frame: 240 of 330 bytes (gap), #1 CreateAcls v3 request corr=7 (response #2)\n" +
		"#2 2026-03-01T12:00:00.005000Z 192.0.2.1:9092 → 192.0.2.10:50500 CreateAcls v3 response corr=7: 1 result, all ok (request #1, 1.000 ms)\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// Issue 7 §1: a response whose request is still held behind a hole that no
// acknowledgement explains (here the capture saw the segments out of
// order) waits for it and is matched.
func TestResponseWaitsForItsHeldRequest(t *testing.T) {
	b := newPcap(t)
	c := openConn(b, 50500, 9092)
	q1, q2 := aclRequest(t, 1, 100), aclRequest(t, 2, 120)
	s, ack := c.CSeq, c.SSeq
	c.RawAck(true, s+100, ack, "A", q2, -1) // 3: q2 before q1
	r2 := aclResponse(2, 0)
	c.RawAck(false, c.SSeq, s, "A", r2, -1) // 4: acknowledges neither
	c.RawAck(true, s, ack, "A", q1, -1)     // 5
	c.CSeq += 220
	c.SSeq += uint32(len(r2))
	c.Send(false, aclResponse(1, 0, 0)) // 6
	wantJSONLines(t, jsonLines(t, 0, b.File(t)),
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"auth":null,"client_software":null,"correlation_id":2,"direction":"response","dst":"192.0.2.10:50500","forwarded":null,"index":1,"latency_us":1000,"packets":[4],"peer":3,"principal":null,"problems":[],"src":"192.0.2.1:9092","stream_offset":0,"tls":null}`,
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"auth":null,"client_software":null,"correlation_id":1,"direction":"request","dst":"192.0.2.1:9092","forwarded":null,"index":2,"packets":[5],"peer":4,"principal":null,"problems":[],"src":"192.0.2.10:50500","stream_offset":0,"tls":null}`,
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"auth":null,"client_software":null,"correlation_id":2,"direction":"request","dst":"192.0.2.1:9092","forwarded":null,"index":3,"packets":[3],"peer":1,"principal":null,"problems":[],"src":"192.0.2.10:50500","stream_offset":100,"tls":null}`,
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"auth":null,"client_software":null,"correlation_id":1,"direction":"response","dst":"192.0.2.10:50500","forwarded":null,"index":4,"latency_us":1000,"packets":[6],"peer":2,"principal":null,"problems":[],"src":"192.0.2.1:9092","stream_offset":19,"tls":null}`,
	)
}

// Issue 7 §3: a capture that starts in the middle of a connection, with
// the tail of one response and two complete ACL responses whose requests
// were not captured, then a whole exchange. The two are reported once
// each; --guess decodes them as the first ACL response definition that
// fits, marked inferred.
func TestMidConnectionResponsesAreReportedAndGuessed(t *testing.T) {
	b := newPcap(t)
	c := midConn(b, 50500, 9092)
	r7, r8 := aclResponse(7, 0), aclResponse(8, 0, 42)
	tail := aclResponse(6, 0, 0)[9:]
	c.Send(false, append(append(append([]byte(nil), tail...), r7...), r8...)) // 1
	c.Send(true, aclRequest(t, 9, 60))                                        // 2
	c.Send(false, aclResponse(9, 0))                                          // 3
	file := b.File(t)
	// The tail before the first frame boundary of a connection captured
	// without its SYN is reported as leading, not as malformed: exit 0.
	wantJSONLines(t, jsonLines(t, exitOK, file),
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"auth":null,"client_software":null,"correlation_id":9,"direction":"request","dst":"192.0.2.1:9092","forwarded":null,"index":1,"packets":[2],"peer":4,"principal":null,"problems":[],"src":"192.0.2.10:50500","stream_offset":0,"tls":null}`,
		`{"dst":"192.0.2.10:50500","event":"unparseable","leading":true,"length":`+strconv.Itoa(len(tail))+`,"src":"192.0.2.1:9092","stream_offset":0}`,
		`{"correlation_id":7,"dst":"192.0.2.10:50500","event":"unmatched_response","index":2,"size":`+strconv.Itoa(len(r7))+`,"src":"192.0.2.1:9092","stream_offset":`+strconv.Itoa(len(tail))+`}`,
		`{"correlation_id":8,"dst":"192.0.2.10:50500","event":"unmatched_response","index":3,"size":`+strconv.Itoa(len(r8))+`,"src":"192.0.2.1:9092","stream_offset":`+strconv.Itoa(len(tail)+len(r7))+`}`,
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"auth":null,"client_software":null,"correlation_id":9,"direction":"response","dst":"192.0.2.10:50500","forwarded":null,"index":4,"latency_us":1000,"packets":[3],"peer":1,"principal":null,"problems":[],"src":"192.0.2.1:9092","stream_offset":`+strconv.Itoa(len(tail)+len(r7)+len(r8))+`,"tls":null}`,
	)
	got := jsonLines(t, exitOK, "--guess", file)
	if len(got) != 7 {
		t.Fatalf("--guess: %d lines:\n%s", len(got), strings.Join(got, "\n"))
	}
	wantJSONLines(t, got[2:6],
		`{"correlation_id":7,"dst":"192.0.2.10:50500","event":"unmatched_response","index":2,"size":`+strconv.Itoa(len(r7))+`,"src":"192.0.2.1:9092","stream_offset":`+strconv.Itoa(len(tail))+`}`,
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"auth":null,"client_software":null,"correlation_id":7,"direction":"response","dst":"192.0.2.10:50500","forwarded":null,"index":2,"inferred":true,"packets":[1],"peer":null,"principal":null,"problems":[],"src":"192.0.2.1:9092","stream_offset":`+strconv.Itoa(len(tail))+`,"tls":null}`,
		`{"correlation_id":8,"dst":"192.0.2.10:50500","event":"unmatched_response","index":3,"size":`+strconv.Itoa(len(r8))+`,"src":"192.0.2.1:9092","stream_offset":`+strconv.Itoa(len(tail)+len(r7))+`}`,
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"auth":null,"client_software":null,"correlation_id":8,"direction":"response","dst":"192.0.2.10:50500","forwarded":null,"index":3,"inferred":true,"packets":[1],"peer":null,"principal":null,"problems":[],"src":"192.0.2.1:9092","stream_offset":`+strconv.Itoa(len(tail)+len(r7))+`,"tls":null}`,
	)
	out, _, _ := runCLI(t, "", "--summary", "--guess", file)
	lines := strings.Split(out, "\n")
	if len(lines) < 7 {
		t.Fatalf("--summary --guess:\n%s", out)
	}
	want := []string{
		"!! 2026-03-01T12:00:00.001000Z #2 192.0.2.1:9092 → 192.0.2.10:50500 response corr=7 unmatched: its request was not captured (" + strconv.Itoa(len(r7)) + " bytes)",
		"#2 2026-03-01T12:00:00.001000Z 192.0.2.1:9092 → 192.0.2.10:50500 CreateAcls v3 response corr=7: 1 result, all ok (inferred)",
		"!! 2026-03-01T12:00:00.001000Z #3 192.0.2.1:9092 → 192.0.2.10:50500 response corr=8 unmatched: its request was not captured (" + strconv.Itoa(len(r8)) + " bytes)",
		"#3 2026-03-01T12:00:00.001000Z 192.0.2.1:9092 → 192.0.2.10:50500 CreateAcls v3 response corr=8: 2 results, 1 failed: INVALID_REQUEST (inferred)",
	}
	if got := strings.Join(lines[2:6], "\n"); got != strings.Join(want, "\n") {
		t.Errorf("--summary --guess:\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

// A response cut short names its request and the request names it: the
// incomplete event has an index and the request's API.
func TestIncompleteResponseNamesItsRequest(t *testing.T) {
	b := newPcap(t)
	c := openConn(b, 50500, 9092)
	c.Send(true, aclRequest(t, 3, 90))
	resp := aclResponse(3, 0, 0, 0)
	c.Send(false, resp[:12]) // the capture ends inside the response
	wantJSONLines(t, jsonLines(t, 0, b.File(t)),
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"auth":{"authenticated":true,"failed":false,"mechanism":null,"source":"none"},"client_software":null,"correlation_id":3,"direction":"request","dst":"192.0.2.1:9092","forwarded":null,"index":1,"packets":[3],"peer":2,"principal":"User:ANONYMOUS","problems":[],"src":"192.0.2.10:50500","stream_offset":0,"tls":null}`,
		`{"api_key":30,"api_name":"CreateAcls","api_version":3,"correlation_id":3,"dst":"192.0.2.10:50500","event":"incomplete","have":12,"index":2,"peer":1,"reason":"end of capture","src":"192.0.2.1:9092","stream_offset":0,"want":`+strconv.Itoa(len(resp))+`}`,
	)
}
