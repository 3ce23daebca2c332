package traffic

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// wantConn is what a scenario's connections must report, in dial order.
type wantConn struct {
	principal, mech, source string
	authenticated           bool
	version, cipher         string // "" for plaintext
	resumed, hrr            bool
}

var (
	admin13 = func(cipher string) wantConn {
		return wantConn{"User:admin", MechPlain, "sasl", true, "1.3", cipher, false, false}
	}
	alice13 = func(cipher string) wantConn {
		return wantConn{"User:alice", MechScram256, "sasl", true, "1.3", cipher, false, false}
	}
	mall13 = func(cipher string) wantConn {
		return wantConn{"User:mallory", MechPlain, "sasl", true, "1.3", cipher, false, false}
	}
	aes128   = "TLS_AES_128_GCM_SHA256"
	wantRuns = map[string]struct {
		conns []wantConn // exact list when kgo is not involved; else a subset checked by kind
		kgo   bool       // kgo opens as many connections as it likes: check each is one of conns
	}{
		ScenarioTLS13: {kgo: true, conns: []wantConn{admin13(aes128), alice13(aes128), mall13(aes128)}},
		ScenarioTLS13AES256: {kgo: true, conns: []wantConn{
			{"User:ops,eu=1", MechScram512, "sasl", true, "1.3", "TLS_AES_256_GCM_SHA384", false, true},
			{"User:admin", MechPlain, "sasl", true, "1.3", "TLS_AES_256_GCM_SHA384", false, true},
		}},
		ScenarioTLS13ChaCha: {conns: []wantConn{
			admin13("TLS_CHACHA20_POLY1305_SHA256"),
			{"User:admin", MechPlain, "sasl", true, "1.3", "TLS_CHACHA20_POLY1305_SHA256", true, false},
			mall13("TLS_CHACHA20_POLY1305_SHA256"),
		}},
		ScenarioTLS12GCM: {kgo: true, conns: []wantConn{
			{"User:admin", MechPlain, "sasl", true, "1.2", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", false, false},
			{"User:mallory", MechPlain, "sasl", true, "1.2", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", false, false},
		}},
		ScenarioTLS12ChaCha: {kgo: true, conns: []wantConn{
			{"User:alice", MechScram256, "sasl", true, "1.2", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", false, false},
			{"User:ops,eu=1", MechScram512, "sasl", true, "1.2", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", false, false},
		}},
		ScenarioTLS12CBC: {conns: []wantConn{
			{"User:admin", MechPlain, "sasl", true, "1.2", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", false, false},
			{"User:alice", MechScram256, "sasl", true, "1.2", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", false, false},
			{"User:mallory", MechPlain, "sasl", true, "1.2", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", false, false},
		}},
		ScenarioTLS12RSA: {conns: []wantConn{
			{"User:admin", MechPlain, "sasl", true, "1.2", "TLS_RSA_WITH_AES_128_GCM_SHA256", false, false},
			{"User:admin", MechPlain, "sasl", true, "1.2", "TLS_RSA_WITH_AES_128_GCM_SHA256", true, false},
			{"User:alice", MechScram256, "sasl", true, "1.2", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", false, false},
			{"User:mallory", MechPlain, "sasl", true, "1.2", "TLS_RSA_WITH_AES_128_CBC_SHA256", false, false},
		}},
		ScenarioMTLS: {kgo: true, conns: []wantConn{
			{"User:" + ClientCertDN, "", "tls", true, "1.3", aes128, false, false},
		}},
		ScenarioInterleaved: {conns: []wantConn{alice13(aes128), mall13(aes128)}},
		ScenarioMissingKey:  {conns: []wantConn{admin13(aes128), mall13(aes128), alice13(aes128)}},
		ScenarioOAuth: {kgo: true, conns: []wantConn{
			{"User:svc-oauth", MechOAuth, "sasl", true, "1.3", aes128, false, false},
		}},
		ScenarioSASLv0: {kgo: true, conns: []wantConn{
			{"User:admin", MechPlain, "sasl", true, "", "", false, false},
			{"User:ops,eu=1", MechScram512, "sasl", true, "", "", false, false},
			{"User:alice", MechScram256, "sasl", true, "", "", false, false},
			{"User:mallory", MechPlain, "sasl", true, "", "", false, false},
			{"", MechScram256, "sasl", false, "", "", false, false},
		}},
		ScenarioSASLPlaintext: {kgo: true, conns: []wantConn{
			{"User:alice", MechScram256, "sasl", true, "", "", false, false},
			{"User:ops,eu=1", MechScram512, "sasl", true, "", "", false, false},
			{"User:admin", MechPlain, "sasl", true, "", "", false, false},
			{"User:mallory", MechPlain, "sasl", true, "", "", false, false},
			{"", MechScram256, "sasl", false, "", "", false, false},
		}},
	}
)

func gotConn(c ConnectionJSON) wantConn {
	w := wantConn{principal: c.Principal, mech: c.Mechanism, source: c.AuthSource, authenticated: c.Authenticated}
	if c.TLS != nil {
		w.version, w.cipher, w.resumed, w.hrr = c.TLS.Version, c.TLS.Cipher, c.TLS.Resumed, c.TLS.HelloRetry
	}
	return w
}

func TestSecureScenarios(t *testing.T) {
	if got := SecureNames(); len(got) != len(wantRuns) {
		t.Fatalf("%d scenarios, %d expectations", len(got), len(wantRuns))
	}
	for _, name := range SecureNames() {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, wire, keylog, partial, err := RunSecure(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			checkSecure(t, name, res, keylog, partial)
			var pcap bytes.Buffer
			n, err := WritePcap(&pcap, wire)
			if err != nil {
				t.Fatal(err)
			}
			checkPcap(t, pcap.Bytes(), n, wire)
			checkStreams(t, res, wire)
			// SASL PLAIN passwords are on the wire in the clear exactly
			// when there is no TLS.
			for _, pw := range PlainPasswords() {
				clear := bytes.Contains(pcap.Bytes(), []byte(pw))
				if want := res.Connections[0].TLS == nil && name != ScenarioMTLS; clear != want {
					t.Errorf("password %q in the clear: %v, want %v", pw, clear, want)
				}
			}
		})
	}
}

func checkSecure(t *testing.T, name string, res *Result, keylog, partial []byte) {
	want := wantRuns[name]
	var got []wantConn
	for _, c := range res.Connections {
		got = append(got, gotConn(c))
	}
	if want.kgo {
		// kgo dials a seed connection and a broker connection; every one
		// must be of a kind the scenario makes, and every kind must occur.
		seen := map[wantConn]bool{}
		for i, g := range got {
			ok := false
			for _, w := range want.conns {
				ok = ok || g == w
			}
			if !ok {
				t.Errorf("connection %d: %+v is none of %+v", i, g, want.conns)
			}
			seen[g] = true
		}
		for _, w := range want.conns {
			if !seen[w] {
				t.Errorf("no connection %+v", w)
			}
		}
	} else if !reflect.DeepEqual(got, want.conns) {
		t.Errorf("connections\n%+v\nwant\n%+v", got, want.conns)
	}

	// Every exchange carries its connection's principal and the result the
	// principal deserves.
	data, err := res.ExpectJSON(1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseExpect(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Connections, res.Connections) {
		t.Error("connections do not read back")
	}
	if len(f.Exchanges) < 2 {
		t.Fatalf("%d exchanges", len(f.Exchanges))
	}
	apis := map[int16]bool{}
	for i, x := range f.Exchanges {
		apis[x.API] = true
		want := int16(0)
		if x.Principal == "User:mallory" {
			want = kerr.ClusterAuthorizationFailed.Code
		}
		if x.Principal == "" || x.Principal != "User:"+x.User && !(x.User == "" && x.Principal == "User:"+ClientCertDN) {
			t.Errorf("exchange %d: principal %q, user %q", i, x.Principal, x.User)
		}
		codes := aclCodes(res.Exchanges[i].Response.(kmsg.Response))
		for _, c := range codes {
			if c != want {
				t.Errorf("exchange %d (%s): error code %d, want %d", i, x.Principal, c, want)
			}
		}
	}
	if !apis[APICreateAcls] || !apis[APIDeleteAcls] {
		t.Errorf("APIs %v: want CreateAcls and DeleteAcls", apis)
	}

	// Key logs: one line set per TLS connection, each naming its random.
	if res.Connections[0].TLS == nil {
		if keylog != nil {
			t.Error("key log for a plaintext scenario")
		}
		return
	}
	lines := strings.Split(strings.TrimSpace(string(keylog)), "\n")[1:]
	perRandom := map[string]int{}
	for _, l := range lines {
		fs := strings.Fields(l)
		if len(fs) != 3 {
			t.Fatalf("key log line %q", l)
		}
		perRandom[fs[1]]++
	}
	for _, c := range res.Connections {
		want := 4 // TLS 1.3: two handshake and two application traffic secrets
		if c.TLS.Version == "1.2" {
			want = 1 // CLIENT_RANDOM
			if c.TLS.Resumed {
				want = 0 // Go logs nothing for a resumed TLS 1.2 session
			}
		}
		if c.TLS.KeylogLines != want {
			t.Errorf("connection %d: sidecar says %d key log lines, want %d", c.ClientPort, c.TLS.KeylogLines, want)
		}
		if perRandom[c.TLS.ClientRandom] != want {
			t.Errorf("connection %d: %d key log lines, want %d", c.ClientPort, perRandom[c.TLS.ClientRandom], want)
		}
		inPartial := strings.Contains(string(partial), c.TLS.ClientRandom)
		switch {
		case partial == nil && c.TLS.InPartialKeylog != nil:
			t.Error("inPartialKeylog set without a partial key log")
		case partial != nil && (c.TLS.InPartialKeylog == nil || *c.TLS.InPartialKeylog != inPartial):
			t.Errorf("connection %d: in partial key log %v, sidecar says %v", c.ClientPort, inPartial, c.TLS.InPartialKeylog)
		}
		if c.TLS.SNI != BrokerSNI {
			t.Errorf("SNI %q", c.TLS.SNI)
		}
	}
	if name == ScenarioMissingKey {
		out := 0
		for _, c := range res.Connections {
			if !*c.TLS.InPartialKeylog {
				out++
				if c.Principal != "User:mallory" {
					t.Errorf("partial key log lacks %s, want mallory", c.Principal)
				}
			}
		}
		if out != 1 {
			t.Errorf("%d connections missing from the partial key log, want 1", out)
		}
	}
	for _, c := range res.Connections {
		var dirs []bool
		for _, tk := range c.BareTokens {
			dirs = append(dirs, tk.FromClient)
			if tk.Length == 0 && tk.FromClient {
				t.Errorf("port %d: empty client token", c.ClientPort)
			}
		}
		var want []bool
		if name == ScenarioSASLv0 {
			switch {
			case !c.Authenticated: // bob: the broker hangs up after client-final
				want = []bool{true, false, true}
			case c.Mechanism == MechPlain:
				want = []bool{true, false}
			default:
				want = []bool{true, false, true, false}
			}
		}
		if !reflect.DeepEqual(dirs, want) {
			t.Errorf("port %d (%s): bare tokens from client %v, want %v", c.ClientPort, c.Mechanism, dirs, want)
		}
	}
	if name == ScenarioInterleaved {
		var corrs [][2]any
		for _, x := range f.Exchanges {
			corrs = append(corrs, [2]any{x.Principal, x.CorrelationID})
		}
		want := [][2]any{{"User:alice", int32(100)}, {"User:mallory", int32(100)}, {"User:alice", int32(101)}, {"User:mallory", int32(101)}}
		if !reflect.DeepEqual(corrs, want) {
			t.Errorf("interleaved exchanges %v, want %v", corrs, want)
		}
	}
}

// checkPcap reads the synthesized capture back and checks it is a
// well-formed TCP conversation per recorded connection: handshake first,
// contiguous sequence numbers, acknowledgements of what the other side sent,
// segments of at most SynthMSS bytes, FIN at the end, and each direction's
// payload equal to the bytes the client wrote and read.
func checkPcap(t *testing.T, data []byte, packets int, wire *Wire) {
	t.Helper()
	r, err := pcapgo.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != layers.LinkTypeEthernet {
		t.Fatalf("link type %v", r.LinkType())
	}
	type dirState struct {
		isn, next uint32
		synSeen   bool
		finSeen   bool
		payload   []byte
	}
	type conn struct{ c2s, s2c dirState }
	conns := map[[2]uint16]*conn{}
	var last time.Time
	n := 0
	for {
		pkt, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if ci.Timestamp.Before(last) {
			t.Fatalf("packet %d goes back in time", n)
		}
		last = ci.Timestamp
		p := gopacket.NewPacket(pkt, layers.LinkTypeEthernet, gopacket.Default)
		if el := p.ErrorLayer(); el != nil {
			t.Fatalf("packet %d: %v", n, el.Error())
		}
		ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if ip == nil || tcp == nil {
			t.Fatalf("packet %d is not IPv4/TCP", n)
		}
		if !ip.SrcIP.Equal(ip.DstIP) || ip.SrcIP.String() != "127.0.0.1" {
			t.Fatalf("packet %d: %v -> %v", n, ip.SrcIP, ip.DstIP)
		}
		if int(ip.Length) != len(pkt)-14 {
			t.Fatalf("packet %d: IP length %d, frame %d", n, ip.Length, len(pkt))
		}
		if len(tcp.Payload) > SynthMSS {
			t.Fatalf("packet %d: %d byte segment", n, len(tcp.Payload))
		}
		// The broker port is the one the first SYN went to.
		key := [2]uint16{uint16(tcp.SrcPort), uint16(tcp.DstPort)}
		fromClient := true
		c := conns[key]
		if c == nil {
			if c = conns[[2]uint16{key[1], key[0]}]; c != nil {
				fromClient = false
			}
		}
		if c == nil {
			if !tcp.SYN || tcp.ACK {
				t.Fatalf("packet %d: connection %v does not start with a SYN", n, key)
			}
			c = &conn{}
			conns[key] = c
		}
		d, o := &c.c2s, &c.s2c
		if !fromClient {
			d, o = o, d
		}
		switch {
		case tcp.SYN:
			if d.synSeen || len(tcp.Payload) > 0 || (!fromClient && !tcp.ACK) {
				t.Fatalf("packet %d: bad SYN", n)
			}
			d.synSeen, d.isn, d.next = true, tcp.Seq, tcp.Seq+1
		default:
			if !d.synSeen {
				t.Fatalf("packet %d: data before SYN", n)
			}
			if d.finSeen && (len(tcp.Payload) > 0 || tcp.FIN) {
				t.Fatalf("packet %d: data after FIN", n)
			}
			if tcp.Seq != d.next {
				t.Fatalf("packet %d: seq %d, want %d (contiguous)", n, tcp.Seq, d.next)
			}
			d.payload = append(d.payload, tcp.Payload...)
			d.next += uint32(len(tcp.Payload))
			if tcp.FIN {
				d.finSeen = true
				d.next++
			}
		}
		if tcp.ACK {
			if !o.synSeen || tcp.Ack != o.next {
				t.Fatalf("packet %d: ack %d, want %d", n, tcp.Ack, o.next)
			}
		} else if !tcp.SYN {
			t.Fatalf("packet %d: no ACK flag", n)
		}
		// TCP checksum over the pseudo header.
		if !tcpChecksumOK(ip, pkt[14+int(ip.IHL)*4:]) {
			t.Fatalf("packet %d: bad TCP checksum", n)
		}
	}
	if n != packets {
		t.Errorf("read %d packets, wrote %d", n, packets)
	}
	toServer, toClient := wire.Streams()
	infos := wire.Conns()
	if len(conns) != len(infos) {
		t.Fatalf("%d connections in the pcap, %d recorded", len(conns), len(infos))
	}
	for i, info := range infos {
		c := conns[[2]uint16{uint16(info.Client.Port), uint16(info.Server.Port)}]
		if c == nil {
			t.Fatalf("connection %d (%v) missing", i, info.Client)
		}
		if !c.c2s.finSeen || !c.s2c.finSeen {
			t.Errorf("connection %d not closed both ways", i)
		}
		if !bytes.Equal(c.c2s.payload, toServer[i]) || !bytes.Equal(c.s2c.payload, toClient[i]) {
			t.Errorf("connection %d: payload %d/%d bytes, recorded %d/%d", i,
				len(c.c2s.payload), len(c.s2c.payload), len(toServer[i]), len(toClient[i]))
		}
		if len(toServer[i]) == 0 {
			t.Errorf("connection %d carried nothing", i)
		}
	}
}

func tcpChecksumOK(ip *layers.IPv4, seg []byte) bool {
	var sum uint32
	add := func(b []byte) {
		for len(b) >= 2 {
			sum += uint32(binary.BigEndian.Uint16(b))
			b = b[2:]
		}
		if len(b) == 1 {
			sum += uint32(b[0]) << 8
		}
	}
	add(ip.SrcIP.To4())
	add(ip.DstIP.To4())
	sum += uint32(layers.IPProtocolTCP) + uint32(len(seg))
	add(seg)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}

// TestBuildTLSCapture writes the files of one scenario and reads them back.
func TestBuildTLSCapture(t *testing.T) {
	dir := t.TempDir()
	pcapPath, keylogPath, side, err := BuildTLSCapture(dir, ScenarioMissingKey)
	if err != nil {
		t.Fatal(err)
	}
	if pcapPath != filepath.Join(dir, "tls13-missing-key.pcap") || keylogPath != filepath.Join(dir, "tls13-missing-key.keylog") {
		t.Errorf("paths %s %s", pcapPath, keylogPath)
	}
	if side.Keylog != "tls13-missing-key.keylog" || side.PartialKeylog != "tls13-missing-key.partial.keylog" {
		t.Errorf("sidecar key logs %q %q", side.Keylog, side.PartialKeylog)
	}
	again, err := LoadExpectFile(filepath.Join(dir, "tls13-missing-key.expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Connections, side.Connections) || len(again.Exchanges) != len(side.Exchanges) {
		t.Error("sidecar file differs from the returned one")
	}
	full, _ := os.ReadFile(keylogPath)
	part, _ := os.ReadFile(filepath.Join(dir, side.PartialKeylog))
	if got, want := strings.Count(string(full), "\n")-strings.Count(string(part), "\n"), 4; got != want {
		t.Errorf("partial key log has %d fewer lines, want %d", got, want)
	}
	if fi, err := os.Stat(pcapPath); err != nil || fi.Size() < 1000 {
		t.Errorf("pcap: %v %v", fi, err)
	}
	if _, _, _, err := BuildTLSCapture(dir, "nope"); err == nil {
		t.Error("want an error for an unknown scenario")
	}
}

// TestCommittedSecureCaptures checks the shipped synthesized captures:
// their sidecars name their key logs, and every TLS connection's secrets
// are in the key log.
func TestCommittedSecureCaptures(t *testing.T) {
	for _, name := range ShippedSecureNames() {
		base := filepath.Join("..", "..", "..", "testdata", "pcaps", name)
		f, err := LoadExpectFile(base + ".expect.json")
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Connections) == 0 || len(f.Exchanges) == 0 {
			t.Fatalf("%s: %d connections, %d exchanges", name, len(f.Connections), len(f.Exchanges))
		}
		if _, err := os.Stat(base + ".pcap"); err != nil {
			t.Fatal(err)
		}
		var keylog []byte
		if f.Keylog != "" {
			if keylog, err = os.ReadFile(filepath.Join(filepath.Dir(base), f.Keylog)); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range f.Connections {
			if c.TLS != nil && !bytes.Contains(keylog, []byte(c.TLS.ClientRandom)) {
				t.Errorf("%s: connection %d: client random not in the key log", name, c.ClientPort)
			}
		}
		for i, x := range f.Exchanges {
			if x.Principal == "" {
				t.Errorf("%s: exchange %d has no principal", name, i)
			}
		}
	}
}

// checkStreams checks the recorded streams against the sidecar: the
// ports are the synthesized ones, a TLS connection's bytes are whole TLS
// records both ways (encrypted application data, no Kafka frame in the
// clear) and a plaintext one starts with a Kafka ApiVersions request.
func checkStreams(t *testing.T, res *Result, wire *Wire) {
	t.Helper()
	toServer, toClient := wire.Streams()
	byPort := map[int]int{}
	for i, c := range wire.Conns() {
		if c.Server.Port != SynthBrokerPort || c.Client.Port != SynthClientPort+i {
			t.Errorf("connection %d: ports %d -> %d", i, c.Client.Port, c.Server.Port)
		}
		byPort[c.Client.Port] = i
	}
	for _, x := range res.Exchanges {
		if _, ok := byPort[x.ClientPort]; !ok {
			t.Errorf("exchange on client port %d, which no connection has", x.ClientPort)
		}
	}
	for _, c := range res.Connections {
		i, ok := byPort[c.ClientPort]
		if !ok {
			t.Fatalf("connection on port %d not recorded", c.ClientPort)
		}
		if c.TLS == nil {
			// ApiVersions, or SaslHandshake from a client that predates it.
			if b := toServer[i]; len(b) < 8 || binary.BigEndian.Uint16(b[4:]) != 18 && binary.BigEndian.Uint16(b[4:]) != 17 {
				t.Errorf("port %d: plaintext stream does not start with ApiVersions or SaslHandshake", c.ClientPort)
			}
			continue
		}
		for dir, b := range [][]byte{toServer[i], toClient[i]} {
			counts := map[byte]int{}
			for len(b) > 0 {
				if len(b) < 5 {
					t.Fatalf("port %d dir %d: %d bytes left, not a record header", c.ClientPort, dir, len(b))
				}
				typ, ver, n := b[0], binary.BigEndian.Uint16(b[1:]), int(binary.BigEndian.Uint16(b[3:]))
				if typ < 20 || typ > 23 || ver < 0x0301 || ver > 0x0303 || n > 1<<14+256 || n > len(b)-5 {
					t.Fatalf("port %d dir %d: bad record header % x", c.ClientPort, dir, b[:5])
				}
				counts[typ]++
				b = b[5+n:]
			}
			if counts[23] == 0 || counts[21] > 1 {
				t.Errorf("port %d dir %d: records by type %v", c.ClientPort, dir, counts)
			}
		}
	}
}
