package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// newPcap is an empty capture as these tests build them: Ethernet, one
// packet a millisecond from 2026-03-01 12:00:00.001.
func newPcap(t *testing.T) *testkit.Capture {
	return testkit.NewCapture(time.Date(2026, 3, 1, 12, 0, 0, int(time.Millisecond), time.UTC))
}

// midConn is a connection 192.0.2.10:cport -> 192.0.2.1:sport (ISNs 1000
// and 5000) whose SYN was not captured. Every segment acknowledges all the
// other side sent and pushes its data; short frames are padded.
func midConn(b *testkit.Capture, cport, sport uint16) *testkit.Conn {
	c := b.NewConn(netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, 10}), cport), netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, 1}), sport), 1000, 5000)
	c.Acking, c.Push = true, true
	c.Template.EthSrc, c.Template.EthDst = net.HardwareAddr{2, 0, 0, 0, 0, 1}, net.HardwareAddr{2, 0, 0, 0, 0, 2}
	c.Template.EthPad = true
	return c
}

// openConn is midConn after its SYN and SYN-ACK.
func openConn(b *testkit.Capture, cport, sport uint16) *testkit.Conn {
	c := midConn(b, cport, sport)
	c.Syn()
	c.SynAck()
	return c
}

func seed(t *testing.T, name string) []byte {
	b, err := os.ReadFile("../../testdata/frames/" + name + ".bin")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// metadataRequest is a Metadata v1 request (non-flexible) with no topics.
func metadataRequest(corr int32) []byte {
	return testkit.Request(3, 1, corr, testkit.Ptr("cli"), false, []byte{0xff, 0xff, 0xff, 0xff}) // topics: null
}

// metadataResponse is a Metadata v1 response without brokers or topics.
func metadataResponse(corr int32) []byte {
	r := kmsg.NewMetadataResponse()
	r.Version = 1
	return testkit.KmsgResponse(&r, corr)
}

func aclCapture(t *testing.T) string { return aclCaptureFrom(t, 50500) }

func aclCaptureFrom(t *testing.T, clientPort uint16) string {
	b := newPcap(t)
	c := openConn(b, clientPort, 9092)
	c.Send(true, metadataRequest(1))
	c.Send(false, metadataResponse(1))
	c.Send(true, testkit.WithCorr(seed(t, "createacls-v3-request"), 2, true))
	c.Send(false, testkit.WithCorr(seed(t, "createacls-v3-response"), 2, false))
	c.Send(false, testkit.WithCorr(seed(t, "createacls-v3-response"), 99, false)) // no such request
	return b.File(t)
}

func TestCaptureSummaryMatchesRequestsAndResponses(t *testing.T) {
	out, stderr, code := runCLI(t, "", "--summary", aclCapture(t))
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	expect := []string{
		`#3 2026-03-01T12:00:00.005000Z 192.0.2.10:50500 → 192.0.2.1:9092 CreateAcls v3 request corr=2: UNKNOWN "" UNKNOWN on UNKNOWN "" (UNKNOWN) from "" (response #4) by User:ANONYMOUS`,
		`#4 2026-03-01T12:00:00.006000Z 192.0.2.1:9092 → 192.0.2.10:50500 CreateAcls v3 response corr=2: 1 result, all ok (request #3, 1.000 ms) by User:ANONYMOUS`,
		`!! 2026-03-01T12:00:00.007000Z #5 192.0.2.1:9092 → 192.0.2.10:50500 response corr=99 unmatched: its request was not captured (19 bytes)`,
	}
	if strings.Join(lines, "\n") != strings.Join(expect, "\n") {
		t.Errorf("got\n%s\nwant\n%s", out, strings.Join(expect, "\n"))
	}
}

func TestCaptureAllAndAPIFilter(t *testing.T) {
	file := aclCapture(t)
	out, _, code := runCLI(t, "", "--summary", "--all", file)
	if code != 0 || !strings.HasPrefix(out, "#1 2026-03-01T12:00:00.003000Z 192.0.2.10:50500 → 192.0.2.1:9092 Metadata v1 request corr=1: all topics (response #2) by User:ANONYMOUS\n") {
		t.Errorf("--all: exit %d\n%s", code, out)
	}
	if !regexp.MustCompile(`(?m)^#2 2026-03-01T12:00:00.004000Z 192.0.2.1:9092 → 192.0.2.10:50500 Metadata v1 response corr=1[^\n\[]* \(request #1, 1.000 ms\) by User:ANONYMOUS$`).MatchString(out) {
		t.Errorf("--all lacks the Metadata response:\n%s", out)
	}
	out, _, _ = runCLI(t, "", "--summary", "--api", "metadata", file)
	if strings.Contains(out, "CreateAcls") || !strings.Contains(out, "Metadata v1 request") {
		t.Errorf("--api metadata:\n%s", out)
	}
}

func TestCaptureJSONContract(t *testing.T) {
	out, _, code := runCLI(t, "", "--json", aclCapture(t))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("invalid JSON line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out)
	}
	req, resp, ev := lines[0], lines[1], lines[2]
	check := func(m map[string]any, key string, want any) {
		t.Helper()
		got, _ := json.Marshal(m[key])
		w, _ := json.Marshal(want)
		if string(got) != string(w) {
			t.Errorf("%s = %s, want %s", key, got, w)
		}
	}
	check(req, "index", 3)
	check(req, "time", "2026-03-01T12:00:00.005Z")
	check(req, "src", "192.0.2.10:50500")
	check(req, "dst", "192.0.2.1:9092")
	check(req, "direction", "request")
	check(req, "stream_offset", 21) // the 21-byte Metadata request came first
	check(req, "packets", []int{5})
	check(req, "peer", 4)
	check(req, "api_key", 30)
	check(req, "correlation_id", 2)
	if _, ok := req["latency_us"]; ok {
		t.Error("a request has no latency")
	}
	check(resp, "direction", "response")
	check(resp, "peer", 3)
	check(resp, "latency_us", 1000)
	check(resp, "stream_offset", len(metadataResponse(1))) // after the Metadata response
	check(ev, "event", "unmatched_response")
	check(ev, "correlation_id", 99)
	check(ev, "index", 5)
}

func TestCaptureInputErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	text := write("notes.txt", []byte("Hello, world\n"))
	empty := write("empty.pcap", nil)
	good, _ := os.ReadFile(aclCapture(t))
	trunc := write("trunc.pcap", good[:len(good)-7])
	cases := []struct {
		file, want string
	}{
		{text, text + ": not a pcap or pcapng file"},
		{empty, empty + ": empty file"},
		{dir, dir + ": is a directory, not a capture file"},
		{filepath.Join(dir, "missing.pcap"), filepath.Join(dir, "missing.pcap") + ": no such file"},
		{trunc, trunc + ": "},
	}
	for _, c := range cases {
		_, stderr, code := runCLI(t, "", "--summary", c.file)
		if code != 1 || !strings.HasPrefix(stderr, "kdissect: "+c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and one line starting %q", filepath.Base(c.file), code, stderr, "kdissect: "+c.want)
		}
	}
}

// --schema-dir feeds the same interpreter definitions of the user's own,
// which take the place of the built-in ones: kadm's DescribeAcls in a real
// capture, with the test definition's own descriptions.
func TestSchemaDirReplacesDefinitions(t *testing.T) {
	capture := "../../testdata/pcaps/kadm-acls.pcap"
	const ours = "Only list ACLs on this kind of resource; ANY lists all kinds."
	plain, _, code := runCLI(t, "", "--api", "DescribeAcls", capture)
	if code != 0 || !strings.Contains(plain, "+-- ResourceTypeFilter int8 = 1 (ANY) [0x0022, 1B]") || strings.Contains(plain, ours) {
		t.Fatalf("the built-in DescribeAcls definition (exit %d):\n%s", code, plain)
	}
	out, _, code := runCLI(t, "", "--api", "DescribeAcls", "--schema-dir", "../../testdata/schemas", capture)
	for _, want := range []string{
		"+-- DescribeAclsRequest struct [0x0022, 8B] message body, version 3",
		"    +-- ResourceTypeFilter int8 = 1 (ANY) [0x0022, 1B] " + ours,
		"    +-- Resources []DescribeAclsResource = 5 elements [0x0010, 415B]",
		`+-- ResourceName string = "consumers-" (compact, len+1=11) [0x`,
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d; missing %q in\n%s", code, want, out)
		}
	}
	_, stderr, code := runCLI(t, "", "--schema-dir", t.TempDir(), capture)
	if code != 1 || !strings.Contains(stderr, "no *.json message definitions in it") {
		t.Errorf("empty --schema-dir: exit %d, %q", code, stderr)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "Broken.json"), []byte(`{"apiKey": 29, "type": "request", // no name
	}`), 0o644)
	_, stderr, code = runCLI(t, "", "--schema-dir", bad, capture)
	if code != 1 || !strings.HasPrefix(stderr, "kdissect: --schema-dir: Broken.json: ") {
		t.Errorf("broken definition: exit %d, %q", code, stderr)
	}
}

// Malformed Kafka data is still printed, problem and all, and the exit
// status says so.
func TestCaptureMalformedExitsTwo(t *testing.T) {
	b := newPcap(t)
	c := openConn(b, 50501, 9092)
	c.Send(true, []byte{0, 0, 0, 0x0e, 0, 30, 0, 3, 0, 0, 0, 7, 0, 0, 0, 0x7f, 0x01, 0x00})
	out, _, code := runCLI(t, "", b.File(t))
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(out, "CreateAcls v3 request corr=7") || !strings.Contains(out, "!! 0x000f: array length 126 exceeds the 2 bytes left") {
		t.Errorf("partial tree with its problem not printed:\n%s", out)
	}
}

// Several files are read in order, each as a capture of its own: packet
// numbers start at 1 in each file, message indexes run on, and every NDJSON
// line names its file as given; "-" reads standard input.
func TestCaptureSeveralFilesAndStdin(t *testing.T) {
	first, second := aclCapture(t), aclCaptureFrom(t, 50600)
	out, _, code := runCLI(t, "", "--json", first, second)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var d struct {
			Index   int    `json:"index"`
			Packets []int  `json:"packets"`
			File    string `json:"file"`
		}
		json.Unmarshal([]byte(l), &d)
		name := map[string]string{first: "first", second: "second"}[d.File]
		lines = append(lines, fmt.Sprintf("%s#%d%v", name, d.Index, d.Packets))
	}
	// Each file: Metadata request and response (#1, #2: not shown), the
	// CreateAcls request in packet 5 and its response in 6, an unmatched
	// response in 7 (an event: no packets).
	if want := "[first#3[5] first#4[6] first#5[] second#8[5] second#9[6] second#10[]]"; fmt.Sprint(lines) != want {
		t.Errorf("got  %v\nwant %s", lines, want)
	}
	raw, _ := os.ReadFile(first)
	out, _, _ = runCLI(t, string(raw), "--json", "-")
	if !strings.HasPrefix(out, `{"index":3,"time":"2026-03-01T12:00:00.005Z","src":"192.0.2.10:50500","dst":"192.0.2.1:9092","stream_offset":21,"packets":[5],"peer":4,"file":"-","principal":"User:ANONYMOUS","auth":{"mechanism":null,"source":"none","authenticated":true,"failed":false},"tls":null,"client_software":null,"forwarded":null,"api_key":30,`) {
		t.Errorf("standard input is file \"-\": %s", out)
	}

	bin := kdissectBinary(t)
	cmd := exec.Command(bin, "--summary", "-")
	cmd.Stdin, _ = os.Open(first)
	got, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := runCLI(t, "", "--summary", first)
	if string(got) != want {
		t.Errorf("from standard input:\n%s\nfrom the file:\n%s", got, want)
	}
	if inProcess, _, _ := runCLI(t, string(raw), "--summary", "-"); inProcess != want {
		t.Errorf("run's stdin:\n%s\nfrom the file:\n%s", inProcess, want)
	}
	_, stderr, code := runCLI(t, "not a capture", "-")
	if code != 1 || stderr != "kdissect: standard input: not a pcap or pcapng file (starts with 6e 6f 74 20)\n" {
		t.Errorf("garbage on stdin: exit %d, %q", code, stderr)
	}
}

func TestCaptureUnknownLinkTypeIsCountedAndSkipped(t *testing.T) {
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	w.WriteFileHeader(65535, layers.LinkType(147)) // LINKTYPE_USER0: nothing kdissect can read
	for i := 0; i < 2; i++ {
		w.WritePacket(gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: 4, Length: 4}, []byte{1, 2, 3, 4})
	}
	p := filepath.Join(t.TempDir(), "user0.pcap")
	os.WriteFile(p, buf.Bytes(), 0o644)
	out, stderr, code := runCLI(t, "", p)
	if code != 0 || out != "" || stderr != "kdissect: skipped 2 packets of a link type kdissect does not decode\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// With --all, the bodies of APIs kdissect cannot dissect (one newer than
// every definition it has) are skipped, not buffered: a large request
// shows its header and one opaque body spanning all its bytes, and that is
// not a truncated frame.
func TestCaptureAllSkipsOpaqueBodies(t *testing.T) {
	b := newPcap(t)
	c := openConn(b, 50502, 9092)
	produce := make([]byte, 20004)
	key := dissect.MaxAPIKey + 1
	copy(produce, []byte{0, 0, 0x4e, 0x20, byte(key >> 8), byte(key), 0, 0, 0, 0, 0, 4, 0, 1, 'p'})
	for off := 0; off < len(produce); off += 1448 {
		c.Send(true, produce[off:min(off+1448, len(produce))])
	}
	c.Send(false, []byte{0, 0, 0, 6, 0, 0, 0, 4, 0, 0})
	// An API key kdissect does not know is a problem of the frame: exit 2.
	out, _, code := runCLI(t, "", "--json", "--all", b.File(t))
	if code != exitMalformed {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var m struct {
		APIName  string `json:"api_name"`
		Problems []struct {
			Offset  int    `json:"offset"`
			Message string `json:"message"`
		} `json:"problems"`
		Packets []int `json:"packets"`
		Tree    struct {
			Size     int `json:"size"`
			Children []struct {
				Name   string `json:"name"`
				Offset int    `json:"offset"`
				Size   int    `json:"size"`
			} `json:"children"`
		} `json:"tree"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &m); err != nil {
		t.Fatal(err)
	}
	last := m.Tree.Children[len(m.Tree.Children)-1]
	if m.APIName != dissect.APIName(key) || len(m.Problems) != 1 || m.Problems[0].Offset != 4 || m.Tree.Size != 20004 || last.Name != "body" || last.Offset != 15 || last.Size != 20004-15 {
		t.Errorf("got %+v", m)
	}
	if len(m.Packets) != 14 || m.Packets[0] != 3 || m.Packets[13] != 16 {
		t.Errorf("packets %v, want 3..16", m.Packets)
	}
	// Only the head was kept: the byte layout says where it stops.
	text, _, _ := runCLI(t, "", "-x", "--all", b.File(t))
	if !strings.Contains(text, "....  19936 more bytes of this frame were not kept") {
		t.Errorf("the body was buffered after all:\n%s", text)
	}
}

// A capture that starts while a connection is open (no SYN) begins inside
// a frame: those bytes are reported but are not malformed data, so the
// exit status stays 0. Damage after the first boundary still makes it 2.
func TestCaptureStartedMidConnection(t *testing.T) {
	request, response := seed(t, "createacls-v3-request"), seed(t, "createacls-v3-response")
	build := func(damage bool) string {
		b := newPcap(t)
		c := midConn(b, 50700, 9092)
		c.Send(true, request[9:]) // the tail of a request sent before the capture began
		c.Send(true, request)
		c.Send(false, response)
		if damage {
			c.Send(true, []byte{0x7f, 0xff, 0xff, 0xff})
		}
		return b.File(t)
	}
	out, _, code := runCLI(t, "", "--summary", build(false))
	if code != 0 {
		t.Errorf("exit %d, want 0:\n%s", code, out)
	}
	for _, want := range []string{
		"192.0.2.10:50700 → 192.0.2.1:9092 @0 unparseable: skipped 16 bytes before the first frame boundary (capture began mid-connection)",
		"CreateAcls v3 request corr=0",
		"CreateAcls v3 response corr=0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	js, _, code := runCLI(t, "", "--json", build(false))
	if code != 0 || !strings.Contains(js, `{"event":"unparseable","time":"2026-03-01T12:00:00.003Z","src":"192.0.2.10:50700","dst":"192.0.2.1:9092","stream_offset":0,"length":16,"leading":true,`) {
		t.Errorf("exit %d; leading unparseable event missing in\n%s", code, js)
	}
	if _, _, code := runCLI(t, "", "--summary", build(true)); code != 2 {
		t.Errorf("damage after the first boundary: exit %d, want 2", code)
	}
}

// A capture taken with a small snap length (tcpdump -s 120) loses the end
// of every longer packet: the run says why its gaps are there.
func TestCaptureCutBySnapLength(t *testing.T) {
	cut := 0
	p := rewritePcap(t, "../../testdata/pcaps/kadm-acls.pcap", func(_ int, data []byte) []byte {
		if len(data) > 120 {
			cut++
			return data[:120]
		}
		return data
	})
	_, stderr, _ := runCLI(t, "", "--summary", p)
	want := fmt.Sprintf("kdissect: %d packets of Kafka connections cut short by the capture's snap length: the bytes cut are gaps (capture with tcpdump -s 0 to keep them)\n", cut)
	if cut == 0 || !strings.Contains(stderr, want) {
		t.Errorf("stderr %q\nwant %q", stderr, want)
	}
	if _, stderr, _ := runCLI(t, "", "--summary", "../../testdata/pcaps/kadm-acls.pcap"); strings.Contains(stderr, "snap length") {
		t.Errorf("a whole capture: %q", stderr)
	}
}
