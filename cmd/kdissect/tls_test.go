package main

import (
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/testtools/traffic"
	"github.com/kdissect/kdissect/tui"
)

// The TLS captures are made in the tests: each scenario of
// traffic.SecureNames runs real clients (franz-go, sarama) over crypto/tls
// against kfake and is synthesized into a pcap with its key log.

type tlsCapture struct {
	pcap, keylog string
	sc           *traffic.ExpectFile
	raw          sidecar // the same sidecar as compareWithClients reads it
}

var (
	tlsCapMu  sync.Mutex
	tlsCaps   = map[string]*tlsCapture{}
	tlsCapDir string
)

// buildTLSCapture builds a scenario's capture once per test binary: several
// tests read the same one.
func buildTLSCapture(t *testing.T, name string) *tlsCapture {
	t.Helper()
	tlsCapMu.Lock()
	defer tlsCapMu.Unlock()
	if c := tlsCaps[name]; c != nil {
		return c
	}
	if tlsCapDir == "" {
		d, err := os.MkdirTemp("", "kdissect-tls-")
		if err != nil {
			t.Fatal(err)
		}
		tlsCapDir = d
	}
	pcap, keylog, sc, err := traffic.BuildTLSCapture(filepath.Join(tlsCapDir, name), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := &tlsCapture{pcap: pcap, keylog: keylog, sc: sc}
	raw, err := os.ReadFile(strings.TrimSuffix(pcap, ".pcap") + ".expect.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &c.raw); err != nil {
		t.Fatal(err)
	}
	tlsCaps[name] = c
	return c
}

// tlsLine is what these tests read of an NDJSON line beyond decodedLine.
type tlsLine struct {
	Event        string `json:"event"`
	Src          string `json:"src"`
	Version      string `json:"version"`
	Cipher       string `json:"cipher"`
	SNI          string `json:"sni"`
	ClientRandom string `json:"client_random"`
	Decrypted    *bool  `json:"decrypted"`
	Reason       any    `json:"reason"`
	Problem      string `json:"problem"`
	Message      string `json:"message"`
	Offset       int64  `json:"stream_offset"`
	TLS          *struct {
		Version, Cipher, SNI string
	} `json:"tls"`
	Auth *struct {
		Source string `json:"source"`
	} `json:"auth"`
}

func tlsNDJSON(t *testing.T, out string) ([]decodedLine, []tlsLine) {
	t.Helper()
	var ds []decodedLine
	var ts []tlsLine
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var d decodedLine
		var x tlsLine
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("bad NDJSON line %q: %v", l, err)
		}
		json.Unmarshal([]byte(l), &x)
		ds, ts = append(ds, d), append(ts, x)
	}
	return ds, ts
}

// plaintextScenario names the SASL scenarios without TLS, which the SASL
// tests cover (TestRealCapturesMatchWhatClientsSent reads the shipped one).
func plaintextScenario(name string) bool {
	return name == traffic.ScenarioSASLPlaintext || name == traffic.ScenarioSASLv0
}

func port(addr string) int {
	n, _ := strconv.Atoi(addr[strings.LastIndexByte(addr, ':')+1:])
	return n
}

func TestTLSCapturesMatchWhatClientsSent(t *testing.T) {
	for _, name := range traffic.SecureNames() {
		if plaintextScenario(name) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			c := buildTLSCapture(t, name)
			if c.keylog == "" {
				t.Fatalf("%s wrote no key log", name)
			}
			out, stderr, code := runCLI(t, "", "--json", "--tls-keylog", c.keylog, c.pcap)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines, xs := tlsNDJSON(t, out)
			conns := map[int]traffic.ConnectionJSON{}
			for _, cn := range c.sc.Connections {
				conns[cn.ClientPort] = cn
			}
			var msgs []decodedLine
			sessions := map[int]bool{}
			for i, d := range lines {
				x := xs[i]
				switch d.Event {
				case "tls_session":
					cn := conns[port(x.Src)]
					if cn.TLS == nil || x.Decrypted == nil || !*x.Decrypted || x.Reason != nil ||
						x.Version != cn.TLS.Version || x.Cipher != cn.TLS.Cipher || x.SNI != cn.TLS.SNI || x.ClientRandom != cn.TLS.ClientRandom {
						t.Errorf("tls_session %+v; the client had %+v", x, cn.TLS)
					}
					sessions[port(x.Src)] = true
					continue
				case "":
				default:
					t.Errorf("unexpected event %s", out)
					continue
				}
				msgs = append(msgs, d)
				p := port(d.Src)
				if d.Direction == "response" {
					p = port(d.Dst)
				}
				cn := conns[p]
				if cn.TLS == nil || x.TLS == nil || x.TLS.Version != cn.TLS.Version || x.TLS.Cipher != cn.TLS.Cipher || x.TLS.SNI != cn.TLS.SNI {
					t.Errorf("#%d: tls %+v; the client had %+v", d.Index, x.TLS, cn.TLS)
				}
				if x.Auth == nil || x.Auth.Source != cn.AuthSource {
					t.Errorf("#%d: auth %+v, want source %q", d.Index, x.Auth, cn.AuthSource)
				}
			}
			for _, cn := range c.sc.Connections {
				if cn.TLS != nil && !sessions[cn.ClientPort] {
					t.Errorf("no tls_session for the connection from port %d", cn.ClientPort)
				}
			}
			versions := compareWithClients(t, c.raw, msgs)
			t.Logf("%d exchanges checked: %v", len(c.raw.Exchanges), versions)
		})
	}
}

func TestTLSMTLSPrincipalIsTheCertificateDN(t *testing.T) {
	c := buildTLSCapture(t, traffic.ScenarioMTLS)
	out, stderr, code := runCLI(t, "", "--summary", "--tls-keylog", c.keylog, c.pcap)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := ""
	for _, cn := range c.sc.Connections {
		if cn.AuthSource == "tls" {
			want = cn.Principal
		}
	}
	if !strings.HasPrefix(want, "User:CN=") {
		t.Fatalf("the sidecar names no certificate principal: %+v", c.sc.Connections)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "#") {
			n++
			if !strings.HasSuffix(l, " by "+want) {
				t.Errorf("%q does not end with by %s", l, want)
			}
		}
	}
	if n != 2*len(c.sc.Exchanges) {
		t.Errorf("%d messages, want %d", n, 2*len(c.sc.Exchanges))
	}
}

func TestTLSMissingKeyIsNotMalformed(t *testing.T) {
	c := buildTLSCapture(t, traffic.ScenarioMissingKey)
	partial := filepath.Join(filepath.Dir(c.pcap), c.sc.PartialKeylog)
	out, stderr, code := runCLI(t, "", "--json", "--tls-keylog", partial, c.pcap)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (missing keys are not malformed data): %s", code, stderr)
	}
	lines, xs := tlsNDJSON(t, out)
	omitted := map[int]string{}
	for _, cn := range c.sc.Connections {
		if cn.TLS != nil && cn.TLS.InPartialKeylog != nil && !*cn.TLS.InPartialKeylog {
			omitted[cn.ClientPort] = cn.TLS.ClientRandom
		}
	}
	if len(omitted) != 1 {
		t.Fatalf("the sidecar omits %d connections from the partial key log, want 1", len(omitted))
	}
	var msgs []decodedLine
	undecrypted := 0
	for i, d := range lines {
		x := xs[i]
		switch d.Event {
		case "tls_session":
			cr, gone := omitted[port(x.Src)]
			if x.Decrypted == nil || *x.Decrypted == gone {
				t.Errorf("tls_session %+v: decrypted should be %v", x, !gone)
			}
			if gone {
				undecrypted++
				if want := "no key for client random " + cr[:16] + "…"; x.Reason != want || x.ClientRandom != cr || x.Version != "1.3" || x.Cipher == "" {
					t.Errorf("tls_session %+v, want reason %q", x, want)
				}
			}
		case "":
			p := port(d.Src)
			if d.Direction == "response" {
				p = port(d.Dst)
			}
			if _, gone := omitted[p]; gone {
				t.Errorf("message #%d of the connection without keys", d.Index)
			}
			msgs = append(msgs, d)
		default:
			t.Errorf("unexpected event %+v", x)
		}
	}
	if undecrypted != 1 {
		t.Errorf("%d undecrypted tls_session events, want 1", undecrypted)
	}
	want := c.raw
	want.Exchanges = nil
	for _, ex := range c.raw.Exchanges {
		if _, gone := omitted[ex.ClientPort]; !gone {
			want.Exchanges = append(want.Exchanges, ex)
		}
	}
	if len(want.Exchanges) == 0 || len(want.Exchanges) == len(c.raw.Exchanges) {
		t.Fatalf("%d of %d exchanges on connections with keys", len(want.Exchanges), len(c.raw.Exchanges))
	}
	compareWithClients(t, want, msgs)
}

// wrongKeys returns a key log whose every secret has one bit flipped.
func wrongKeys(t *testing.T, keylog string) string {
	raw, err := os.ReadFile(keylog)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(l)
		s := []byte(f[2])
		if s[0] == '0' {
			s[0] = '1'
		} else {
			s[0] = '0'
		}
		b.WriteString(f[0] + " " + f[1] + " " + string(s) + "\n")
	}
	p := filepath.Join(t.TempDir(), "wrong.keylog")
	os.WriteFile(p, []byte(b.String()), 0o644)
	return p
}

func TestTLSWrongKeyIsAProblemEvent(t *testing.T) {
	out, stderr, code := runCLI(t, "", "--json", "--tls-keylog", wrongKeys(t, shippedTLS+".keylog"), shippedTLS+".pcap")
	if code != exitMalformed {
		t.Errorf("exit %d, want %d: %s", code, exitMalformed, stderr)
	}
	lines, xs := tlsNDJSON(t, out)
	problems := map[string]int{}
	for i, d := range lines {
		switch d.Event {
		case "tls_problem":
			problems[xs[i].Problem]++
			if xs[i].Message == "" {
				t.Errorf("tls_problem without a message: %+v", xs[i])
			}
		case "tls_session":
		default:
			t.Errorf("nothing is decoded with the wrong keys: %+v", d)
		}
	}
	// One per direction that had a record to open: the handshake of both
	// directions of each of the 3 connections.
	if problems["authentication_failed"] != 6 || len(problems) != 1 {
		t.Errorf("problems %v, want 6 authentication_failed", problems)
	}
}

const shippedTLS = "../../testdata/pcaps/tls13-acls"

// editPacket copies a capture with packet n (from 1) changed by edit.
func editPacket(t *testing.T, in string, n int, edit func(data []byte) []byte) string {
	t.Helper()
	return rewritePcap(t, in, func(i int, data []byte) []byte {
		if i == n {
			return edit(data)
		}
		return data
	})
}

// tcpPayload is where the TCP payload of an Ethernet/IPv4 packet starts.
func tcpPayload(data []byte) int {
	ip := 14
	tcp := ip + int(data[ip]&0x0f)*4
	return tcp + int(data[tcp+12]>>4)*4
}

// cutPacket copies a capture with the last 20 bytes of packet n (from 1)
// not captured (as a snaplen would): a gap inside the record it carries.
func cutPacket(t *testing.T, in string, n int) string {
	return editPacket(t, in, n, func(data []byte) []byte { return data[:len(data)-20] })
}

// packetOf returns the first packet of message index of the shipped TLS
// capture, and the message.
func packetOf(t *testing.T, index int) (int, decodedLine) {
	t.Helper()
	full, _, _ := runCLI(t, "", "--json", "--tls-keylog", shippedTLS+".keylog", shippedTLS+".pcap")
	for _, l := range strings.Split(strings.TrimSpace(full), "\n") {
		var d struct {
			decodedLine
			Packets []int `json:"packets"`
		}
		json.Unmarshal([]byte(l), &d)
		if d.Index == index {
			return d.Packets[0], d.decodedLine
		}
	}
	t.Fatalf("no message #%d", index)
	return 0, decodedLine{}
}

func TestTLSOversizeRecord(t *testing.T) {
	// The record carrying message #9's request announces 2^14+257 bytes.
	pkt, lost := packetOf(t, 9)
	file := editPacket(t, shippedTLS+".pcap", pkt, func(data []byte) []byte {
		p := tcpPayload(data)
		if data[p] != 23 || data[p+1] != 3 || data[p+2] != 3 {
			t.Fatalf("packet %d does not start with a TLS application data record: % x", pkt, data[p:p+5])
		}
		binary.BigEndian.PutUint16(data[p+3:], 1<<14+257)
		return data
	})
	out, stderr, code := runCLI(t, "", "--json", "--tls-keylog", shippedTLS+".keylog", file)
	if code != exitMalformed {
		t.Errorf("exit %d, want %d: %s", code, exitMalformed, stderr)
	}
	lines, xs := tlsNDJSON(t, out)
	var events []string
	for i, d := range lines {
		switch d.Event {
		case "":
			if d.CorrelationID == lost.CorrelationID && port(d.Src) == port(lost.Src) && d.Direction == "request" {
				t.Errorf("the request of the oversize record was decoded: %+v", d)
			}
		case "tls_session":
		default:
			events = append(events, d.Event+" "+xs[i].Problem)
		}
	}
	// The record, and the response to the request it carried; the
	// direction decodes again from the next record that decrypts.
	if got := strings.Join(events, ","); got != "tls_problem oversize_record,unmatched_response " {
		t.Errorf("events %q, want an oversize_record and the unmatched response", events)
	}
}

func TestTLSTruncatedRecordAtAGap(t *testing.T) {
	// The end of the packet carrying the request of message #9 (CreateAcls
	// v3 corr=4) is lost: its record is cut by the gap, and the connection
	// decodes again from the next record on.
	lostPkt, lost := packetOf(t, 9)
	full, _, _ := runCLI(t, "", "--json", "--tls-keylog", shippedTLS+".keylog", shippedTLS+".pcap")
	if lost.APIKey != 30 || lost.Direction != "request" {
		t.Fatalf("message #9 is %+v, want a CreateAcls request", lost)
	}
	out, stderr, code := runCLI(t, "", "--json", "--tls-keylog", shippedTLS+".keylog", cutPacket(t, shippedTLS+".pcap", lostPkt))
	if code != exitMalformed {
		t.Errorf("exit %d, want %d: %s", code, exitMalformed, stderr)
	}
	lines, xs := tlsNDJSON(t, out)
	var events []string
	decoded := 0
	for i, d := range lines {
		switch d.Event {
		case "":
			decoded++
			if d.CorrelationID == lost.CorrelationID && port(d.Src) == port(lost.Src) && d.Direction == "request" {
				t.Errorf("the lost request was decoded: %+v", d)
			}
		case "tls_session":
		default:
			events = append(events, d.Event+" "+xs[i].Problem)
		}
	}
	// The gap of the TCP stream, the record it cut, and the response to
	// the request that was lost with it.
	if got := strings.Join(events, ","); got != "gap ,tls_problem truncated_record,unmatched_response " {
		t.Errorf("events %q, want a gap, a truncated_record and the unmatched response", events)
	}
	full1, _ := tlsNDJSON(t, full)
	if want := len(full1) - 4; decoded < want-2 {
		t.Errorf("%d messages decoded after losing one packet, want about %d", decoded, want)
	}
}

func TestTLSHexDumpShowsPlaintext(t *testing.T) {
	out, stderr, code := runCLI(t, "", "-x", "--tls-keylog", shippedTLS+".keylog", shippedTLS+".pcap")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The first ACL request's frame, offsets counted in the decrypted frame:
	// its size prefix is at 0x0000 and the topic name is in clear.
	first := out[:strings.Index(out, "\n#8 ")]
	if !strings.HasPrefix(first, "#7 ") || !strings.Contains(first, "\n0000  00 00 00 ") || !strings.Contains(first, "orders-tls13") {
		t.Errorf("message #7 with -x:\n%s", first)
	}
}

func TestTLSSecretsNeverShown(t *testing.T) {
	for _, name := range traffic.SecureNames() {
		if plaintextScenario(name) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			c := buildTLSCapture(t, name)
			if c.keylog == "" {
				t.Fatalf("%s wrote no key log", name)
			}
			for _, mode := range [][]string{{"--json"}, {"--summary"}, {"-x"}, {"--all", "-x"}, {"--all", "--json"}} {
				out, _, _ := runCLI(t, "", append(mode, "--tls-keylog", c.keylog, c.pcap)...)
				for _, pw := range traffic.PlainPasswords() {
					if strings.Contains(out, pw) {
						t.Errorf("%v: the output holds the password %q", mode, pw)
					}
				}
			}
		})
	}
}

func TestTLSExplorerSaysDecrypted(t *testing.T) {
	path := shippedTLS + ".pcap"
	o := capture.DefaultOptions()
	o.KeyLogs = []string{shippedTLS + ".keylog"}
	load, ech, pch, result := startReader(t, o, path)
	go func() {
		for range pch {
		}
	}()
	var entries []tui.Entry
	for e := range ech {
		entries = append(entries, e)
		if e.TLS != "TLS 1.3 TLS_AES_128_GCM_SHA256" {
			t.Errorf("#%d: TLS %q", e.Index, e.TLS)
		}
	}
	if _, err := result(true); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 28 {
		t.Errorf("%d entries, want the 28 ACL messages", len(entries))
	}
	x := &tuiDriver{t: t, m: tui.New(load, tui.Options{Title: "tls13-acls.pcap"}), w: modelW, h: modelH}
	x.send(tea.WindowSizeMsg{Width: modelW, Height: modelH})
	x.send(tui.EntriesMsg(entries))
	x.send(tui.ProgressMsg{Finished: true})
	rows := strings.Join(x.screen(), "\n")
	if !strings.Contains(rows, "[TLS] ") {
		t.Errorf("the list does not mark decrypted messages:\n%s", rows)
	}
	x.press("enter")
	if sc := strings.Join(x.screen(), "\n"); !strings.Contains(sc, "\n [TLS 1.3 decrypted] CreateAcls v3 request corr=3: ") {
		t.Errorf("the status line does not say the bytes were decrypted:\n%s", sc)
	}
}

func TestTLSKeyLogFlag(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.keylog")
	os.WriteFile(bad, []byte("# a comment\ngarbage line\nCLIENT_RANDOM zz 00\n"), 0o644)
	out, stderr, code := runCLI(t, "", "--summary", "--tls-keylog", bad, "--tls-keylog", shippedTLS+".keylog", shippedTLS+".pcap")
	if code != 0 || strings.Count(out, "\n#") != 27 {
		t.Errorf("exit %d, %d messages: %s", code, strings.Count(out, "\n#")+1, stderr)
	}
	if want := "kdissect: --tls-keylog: skipped 2 lines kdissect does not understand\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	_, stderr, code = runCLI(t, "", "--tls-keylog", "/nonexistent/k.log", shippedTLS+".pcap")
	if want := "kdissect: --tls-keylog /nonexistent/k.log: no such file or directory\n"; code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 1, %q", code, stderr, want)
	}
	// audit shares the flag.
	out, stderr, code = runCLI(t, "", "audit", "--format", "csv", "--tls-keylog", shippedTLS+".keylog", shippedTLS+".pcap")
	if code != 0 || !strings.Contains(out, ",User:admin,kdissect-tls13-kadm,create,3,3,TOPIC,orders-tls13,LITERAL,User:alice,*,WRITE,ALLOW,ok,") {
		t.Errorf("audit: exit %d: %s\n%s", code, stderr, out)
	}
}

func TestTLSPacketsAndOffsets(t *testing.T) {
	out, stderr, code := runCLI(t, "", "--json", "--tls-keylog", shippedTLS+".keylog", shippedTLS+".pcap")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			Index   int   `json:"index"`
			Packets []int `json:"packets"`
			Offset  int64 `json:"stream_offset"`
		}
		json.Unmarshal([]byte(l), &m)
		if m.Index > 0 && len(got) < 8 {
			got = append(got, fmt.Sprintf("#%d %v @%d", m.Index, m.Packets, m.Offset))
		}
	}
	// The packets are the frames tshark shows the same messages in
	// (tshark -o tls.keylog_file:… -d tcp.port==9092,tls -d
	// tls.port==9092,kafka -Y 'kafka.api_key == 30 || kafka.api_key == 31');
	// the offsets count decrypted bytes: ApiVersions and the SASL exchange
	// came before.
	want := []string{"#7 [27] @147", "#8 [29] @830", "#9 [31] @245", "#10 [33] @853",
		"#13 [39] @364", "#14 [41] @982", "#15 [43] @431", "#16 [45] @1036"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// A server that shares no cipher suite with the client answers its
// ClientHello with a fatal alert and closes. That is the server's answer,
// not a ServerHello the capture lost, and no Kafka byte went unread: the
// audit has no blind spot in it.
func TestTLSRefusedHandshake(t *testing.T) {
	rec, err := traffic.RecordRefusedTLS12()
	if err != nil {
		t.Fatal(err)
	}
	pcap := filepath.Join(t.TempDir(), "refused.pcap")
	if err := os.WriteFile(pcap, rec.Pcap(50610, 9093), 0o600); err != nil {
		t.Fatal(err)
	}
	reason := "the server refused the handshake: fatal alert handshake_failure (40)"
	out, stderr, code := runCLI(t, "", "--all", pcap)
	for _, want := range []string{
		" TLS detected at 192.0.2.1:9093 (not a --port; its clients start a TLS handshake, which may carry Kafka)\n",
		" 192.0.2.10:50610 → 192.0.2.1:9093 TLS sni=" + traffic.BrokerSNI + ": not decrypted, " + reason + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text:\n%s\nwant %q in it", out, want)
		}
	}
	// The connection counted is at the port --detect found, not at the --port.
	hint := "kdissect: no Kafka frames in the 1 TCP connection on port 9092 or at 192.0.2.1:9093 (found by --detect): its TLS handshake was refused\n"
	if code != exitOK || stderr != hint {
		t.Errorf("exit %d, stderr %q; want 0, %q", code, stderr, hint)
	}
	lines, alerts := 0, 0
	for _, l := range jsonLines(t, exitOK, "--all", pcap) {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e["event"] == "tls_alert" {
			// It refused no certificate: none was asked for.
			alerts++
			if e["sender"] != "server" || e["alert"] != "handshake_failure" || e["refused_certificate"] != false || e["certificate"] != nil {
				t.Errorf("tls_alert %v", e)
			}
		}
		if e["event"] != "tls_session" {
			continue
		}
		lines++
		if e["decrypted"] != false || e["refused"] != true || e["reason"] != reason || e["version"] != "" {
			t.Errorf("tls_session %v", e)
		}
	}
	if lines != 1 || alerts != 1 {
		t.Errorf("%d tls_session and %d tls_alert events, want 1 each", lines, alerts)
	}
	if out, _, _ := runCLI(t, "", "--summary", "-Y", "refused", pcap); !strings.Contains(out, reason) {
		t.Errorf("-Y refused: %q", out)
	}
	out, stderr, code = runCLI(t, "", "audit", "--format", "json", pcap)
	if _, blind := splitAudit(t, out); code != exitOK || stderr != "" || len(blind) != 0 {
		t.Errorf("audit: exit %d, %q, blind spots %v", code, stderr, blind)
	}
	sameBlind(t, nil, expectedBlind(t, pcap, "--port", "9093"))
}

// A broker that requires a client certificate refuses a client without
// one, or with one it does not trust, with a fatal alert after its
// ServerHello: every form says the broker refused whom, and -z principals
// counts it. A TLS 1.3 client sends its first request before the verdict:
// that request carries the refused identity.
func TestTLSRefusedClientCert(t *testing.T) {
	dn := "User:" + traffic.ClientCertDN
	apiVersions := []byte{0, 0, 0, 24, 0, 18, 0, 3, 0, 0, 0, 1, 0, 4, 't', 'e', 's', 't', 0, 4, 'k', 'g', 'o', 4, '1', '.', '0', 0}
	for _, tc := range []struct {
		name     string
		version  uint16
		withCert bool
		alert    string
		code     float64
		who      string // the text's words for whom it refused
		cert     string
	}{
		{"TLS 1.3 without a certificate", tls.VersionTLS13, false, "certificate_required", 116, "a client without a certificate", "none"},
		{"TLS 1.3 untrusted", tls.VersionTLS13, true, "unknown_ca", 48, dn, "sent"},
		{"TLS 1.2 without a certificate", tls.VersionTLS12, false, "handshake_failure", 40, "a client without a certificate", "none"},
		{"TLS 1.2 untrusted", tls.VersionTLS12, true, "unknown_ca", 48, dn, "sent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := traffic.RecordRefusedClientCert(tc.version, tc.withCert, apiVersions)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			pcap, keylog := filepath.Join(dir, "refused.pcap"), filepath.Join(dir, "refused.keylog")
			if err := os.WriteFile(pcap, rec.Pcap(50630, 9093), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(keylog, rec.KeyLog, 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"--port", "9093", "--tls-keylog", keylog}
			tls13 := tc.version == tls.VersionTLS13
			principal := any(nil)
			refused := "the client certificate of " + tc.who
			if tc.withCert {
				principal = dn
			} else {
				refused = tc.who
			}

			out, stderr, code := runCLI(t, "", append(args, "--all", "--summary", pcap)...)
			want := " 192.0.2.1:9093 → 192.0.2.10:50630 @"
			line := ""
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "!! ") && strings.Contains(l, want) {
					line = l
				}
			}
			tail := fmt.Sprintf(" TLS fatal alert %s (%d) from the server: it refused %s", tc.alert, int(tc.code), refused)
			if !strings.HasSuffix(line, tail) {
				t.Errorf("text:\n%s\nwant a line of %q ending %q", out, want, tail)
			}
			hint := "kdissect: no Kafka frames in the 1 TCP connection on port 9093: its TLS handshake was refused\n"
			if tls13 {
				hint = ""
				if by := "ApiVersions v3 request corr=1: client kgo 1.0 by " + tc.who + " (failed)\n"; !strings.Contains(out, by) {
					t.Errorf("text:\n%s\nwant %q", out, by)
				}
			}
			if code != exitOK || stderr != hint {
				t.Errorf("exit %d, stderr %q; want 0, %q", code, stderr, hint)
			}

			var alerts, messages []map[string]any
			for _, l := range jsonLines(t, exitOK, append(args, "--all", pcap)...) {
				var e map[string]any
				if err := json.Unmarshal([]byte(l), &e); err != nil {
					t.Fatal(err)
				}
				switch {
				case e["event"] == "tls_alert":
					alerts = append(alerts, e)
				case e["event"] == nil:
					messages = append(messages, e)
				}
			}
			wantAlert := map[string]any{"event": "tls_alert", "src": "192.0.2.1:9093", "dst": "192.0.2.10:50630",
				"sender": "server", "level": "fatal", "alert": tc.alert, "code": tc.code, "refused_certificate": true,
				"principal": principal, "certificate": tc.cert}
			if len(alerts) != 1 {
				t.Fatalf("tls_alert events %v, want one", alerts)
			}
			for k, v := range wantAlert {
				if alerts[0][k] != v {
					t.Errorf("tls_alert %s = %v, want %v", k, alerts[0][k], v)
				}
			}
			for k := range alerts[0] {
				if _, ok := wantAlert[k]; !ok && k != "time" && k != "stream_offset" && k != "file" {
					t.Errorf("tls_alert has %s", k)
				}
			}
			if n := map[bool]int{true: 1}[tls13]; len(messages) != n {
				t.Fatalf("%d messages, want %d", len(messages), n)
			}
			if tls13 {
				auth := map[string]any{"mechanism": nil, "source": "tls", "authenticated": false, "failed": true}
				if m := messages[0]; m["principal"] != principal || fmt.Sprint(m["auth"]) != fmt.Sprint(auth) {
					t.Errorf("the request before the verdict: principal %v, auth %v", m["principal"], m["auth"])
				}
			}

			// The refusal is counted once, by its handshake, with or
			// without the request sent before it (--all shows ApiVersions).
			p, _ := json.Marshal(principal)
			handshake := `{"stat":"principals","principal":` + string(p) + `,"api":"TLS handshake","requests":0,"responses":0,"failed_authentications":1,"api_key":null}`
			for _, all := range []bool{false, true} {
				want := []string{handshake}
				zargs := append(args, "-q", "--json", "-z", "principals", pcap)
				if all {
					zargs = append([]string{"--all"}, zargs...)
					if tls13 {
						want = append(want, `{"stat":"principals","principal":`+string(p)+`,"api":"ApiVersions","requests":1,"responses":0,"failed_authentications":0,"api_key":18}`)
					}
				}
				got, _, _ := runCLI(t, "", zargs...)
				if got != strings.Join(want, "\n")+"\n" {
					t.Errorf("-z principals (--all %v):\n%s\nwant\n%s", all, got, strings.Join(want, "\n"))
				}
			}

			out, _, _ = runCLI(t, "", append(args, "--all", "--summary", "-Y", `refused_certificate && certificate == "`+tc.cert+`"`, pcap)...)
			if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, tail+"\n") {
				t.Errorf("-Y refused_certificate: %q", out)
			}
			out, stderr, code = runCLI(t, "", append(append([]string{"audit", "--format", "json"}, args...), pcap)...)
			if _, blind := splitAudit(t, out); code != exitOK || stderr != "" || len(blind) != 0 {
				t.Errorf("audit: exit %d, %q, blind spots %v", code, stderr, blind)
			}

			// Without the key log, TLS 1.2 shows the refusal in the clear:
			// the session carried nothing and is no blind spot. TLS 1.3
			// encrypts it: the audit cannot know.
			out, _, code = runCLI(t, "", "audit", "--format", "json", "--port", "9093", pcap)
			_, blind := splitAudit(t, out)
			sameBlind(t, blind, expectedBlind(t, pcap, "--port", "9093"))
			if tls13 != (len(blind) == 1) || code != map[bool]int{true: exitIncomplete, false: exitOK}[tls13] {
				t.Errorf("audit without keys: exit %d, blind spots %v", code, blind)
			}
			if !tls13 {
				reason := "the server refused the client certificate: fatal alert " + tc.alert + fmt.Sprintf(" (%d)", int(tc.code))
				sessions := 0
				for _, l := range jsonLines(t, exitOK, "--port", "9093", pcap) {
					var e map[string]any
					if err := json.Unmarshal([]byte(l), &e); err != nil {
						t.Fatal(err)
					}
					if e["event"] == "tls_session" {
						sessions++
						if e["refused"] != true || e["decrypted"] != false || e["reason"] != reason {
							t.Errorf("without keys: tls_session %v, want refused: %q", e, reason)
						}
					}
				}
				if sessions != 1 {
					t.Errorf("without keys: %d tls_session events", sessions)
				}
			}
		})
	}
}

// A capture begun after a TLS connection's handshake holds only its
// records: no key log can open them, and the audit says so instead of
// reporting the other connections' changes as all there were. (Framed as
// Kafka, the ciphertext was leading junk, which is no blind spot.)
func TestTLSCaptureBegunMidConnection(t *testing.T) {
	// Packets 1-14 are the first connection's SYN and handshake.
	pcap := rewritePcap(t, shippedTLS+".pcap", func(i int, data []byte) []byte {
		if i <= 14 {
			return nil
		}
		return data
	})
	why := "the capture began mid-connection: the handshake was not captured"
	out, _, code := runCLI(t, "", "audit", "--format", "json", "--tls-keylog", shippedTLS+".keylog", pcap)
	rows, blind := splitAudit(t, out)
	if code != exitIncomplete || len(blind) != 1 || blind[0]["reason"] != "tls_no_keys" || blind[0]["why"] != why ||
		blind[0]["client"] != "127.0.0.1:50100" {
		t.Errorf("exit %d, blind spots %v", code, blind)
	}
	whole, _, _ := runCLI(t, "", "audit", "--format", "json", "--tls-keylog", shippedTLS+".keylog", shippedTLS+".pcap")
	if all, _ := splitAudit(t, whole); len(rows) == 0 || len(rows) >= len(all) {
		t.Errorf("%d rows, %d in the whole capture", len(rows), len(all))
	}
	sameBlind(t, blind, expectedBlind(t, pcap, "--port", "9092", "--tls-keylog", shippedTLS+".keylog"))
	text, _, code := runCLI(t, "", "--summary", pcap)
	if code != exitOK || !strings.Contains(text, " 127.0.0.1:50100 → 127.0.0.1:9092 TLS: not decrypted, "+why+"\n") || strings.Contains(text, "unparseable") {
		t.Errorf("exit %d, text:\n%s", code, text)
	}
	// Its sentence does not blame the key log, which had its secrets.
	_, errText, _ := runCLI(t, "", "audit", "--tls-keylog", shippedTLS+".keylog", pcap)
	if !strings.Contains(errText, "kdissect: 1 TLS connection to 127.0.0.1:9092 not decrypted (captured after the handshake): ") {
		t.Errorf("audit said:\n%s", errText)
	}
}

// A port found by the Kafka requests its clients send is Kafka; one found
// by a ClientHello (TestTLSRefusedHandshake) is TLS.
func TestPortDetectedSaysHowItWasFound(t *testing.T) {
	pcap := "../../testdata/pcaps/kadm-acls.pcap"
	found := 0
	for _, l := range jsonLines(t, exitOK, pcap) {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e["event"] == "port_detected" {
			found++
			if e["tls"] != false || e["server"] != "127.0.0.1:33731" {
				t.Errorf("port_detected %v", e)
			}
		}
	}
	out, _, _ := runCLI(t, "", "--summary", pcap)
	if found != 1 || !strings.Contains(out, " Kafka detected at 127.0.0.1:33731 (not a --port; its clients send Kafka request headers)\n") {
		t.Errorf("%d port_detected events; text:\n%s", found, out)
	}
}

// A capture that begins inside a TLS record (the client's first captured
// byte is the fourth of a record) gives neither a ClientHello nor a record
// header to know it by: its bytes never reach a Kafka frame boundary, and
// the audit says it could not read them instead of finding nothing there.
func TestTLSCaptureBegunMidRecord(t *testing.T) {
	// Packets 1-14 are the first connection's SYN and handshake; 15 is the
	// client's first application data record, cut by its first 3 bytes.
	pcap := rewritePcap(t, shippedTLS+".pcap", func(i int, data []byte) []byte {
		switch {
		case i <= 14:
			return nil
		case i == 15:
			return cutTCPPayload(t, data, 3)
		}
		return data
	})
	out, _, code := runCLI(t, "", "audit", "--format", "json", "--tls-keylog", shippedTLS+".keylog", pcap)
	rows, blind := splitAudit(t, out)
	sides := map[any]bool{}
	for _, b := range blind {
		if b["reason"] != "unparseable" || b["client"] != "127.0.0.1:50100" || b["stream_offset"] != 0.0 || b["tls"] != true {
			t.Errorf("blind spot %v", b)
		}
		sides[b["from"]] = true
	}
	if code != exitIncomplete || len(blind) != 2 || !sides["client"] || !sides["broker"] {
		t.Errorf("exit %d, blind spots %v", code, blind)
	}
	whole, _, _ := runCLI(t, "", "audit", "--format", "json", "--tls-keylog", shippedTLS+".keylog", shippedTLS+".pcap")
	if all, _ := splitAudit(t, whole); len(rows) == 0 || len(rows) >= len(all) {
		t.Errorf("%d rows, %d in the whole capture", len(rows), len(all))
	}
	sameBlind(t, blind, expectedBlind(t, pcap, "--port", "9092", "--tls-keylog", shippedTLS+".keylog"))
	text, errText, code := runCLI(t, "", "--summary", "--tls-keylog", shippedTLS+".keylog", pcap)
	if code != exitOK || !strings.Contains(text, " 127.0.0.1:50100 → 127.0.0.1:9092 @0 unparseable: skipped 672 bytes of TLS records (the capture began inside one, after the handshake): encrypted, and no key log can open them\n") {
		t.Errorf("exit %d, text:\n%s%s", code, text, errText)
	}
	// The audit's sentence names them TLS, and -Y finds them.
	_, errText, _ = runCLI(t, "", "audit", "--tls-keylog", shippedTLS+".keylog", pcap)
	if want := "kdissect: 2 stretches of bytes on connections to 127.0.0.1:9092 not read as Kafka frames (1982 bytes skipped: TLS records of connections captured after their handshake): changes in them are not in this log\n"; !strings.Contains(errText, want) {
		t.Errorf("audit stderr %q, want %q", errText, want)
	}
	if out, _, _ := runCLI(t, "", "--json", "-Y", `event == "unparseable" && tls && unframed`, "--tls-keylog", shippedTLS+".keylog", pcap); strings.Count(out, "\n") != 2 {
		t.Errorf("-Y unparseable && tls: %s", out)
	}
	// The connections captured from their start keep their frames.
	if !strings.Contains(text, "CreateAcls v3 request") {
		t.Errorf("no CreateAcls left:\n%s", text)
	}
}

// cutTCPPayload drops the first n payload bytes of an Ethernet/IPv4/TCP
// packet, as if the capture had begun n bytes into the segment.
func cutTCPPayload(t *testing.T, data []byte, n int) []byte {
	t.Helper()
	p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
	eth, _ := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if eth == nil || ip == nil || tcp == nil || len(tcp.Payload) <= n {
		t.Fatalf("not a TCP segment of more than %d bytes", n)
	}
	tcp.Seq += uint32(n)
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, ip, tcp, gopacket.Payload(tcp.Payload[n:])); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
