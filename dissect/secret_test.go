package dissect

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// capFrame is one Kafka frame of a test capture, in capture order.
type capFrame struct {
	port    int // the client's port: the connection
	request bool
	data    []byte
}

// captureFrames cuts the Kafka frames out of a capture of loopback
// traffic, which arrives in order: a test helper, not a reassembler (that
// is reassembly's job, and this package must not depend on it). Bytes out
// of order fail the test rather than being guessed at.
func captureFrames(t *testing.T, name string, brokerPort int) []capFrame {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "pcaps", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	type dirState struct {
		next    uint32
		started bool
		buf     []byte
	}
	dirs := map[[2]int]*dirState{} // client port, 1 for client to broker
	var out []capFrame
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.NoCopy)
		tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if tcp == nil {
			continue
		}
		req := int(tcp.DstPort) == brokerPort
		port := int(tcp.DstPort) // the client's
		if req {
			port = int(tcp.SrcPort)
		}
		key := [2]int{port, 0}
		if req {
			key[1] = 1
		}
		d := dirs[key]
		if d == nil {
			d = &dirState{}
			dirs[key] = d
		}
		if tcp.SYN {
			d.next, d.started = tcp.Seq+1, true
			continue
		}
		if len(tcp.Payload) == 0 {
			continue
		}
		switch {
		case !d.started:
			t.Fatalf("%s: data before the SYN on port %d", name, port)
		case tcp.Seq-d.next >= 1<<31: // a retransmission of bytes already taken
			continue
		case tcp.Seq != d.next:
			t.Fatalf("%s: bytes out of order on port %d", name, port)
		}
		d.buf = append(d.buf, tcp.Payload...)
		d.next += uint32(len(tcp.Payload))
		for len(d.buf) >= 4 {
			n := 4 + int(binary.BigEndian.Uint32(d.buf))
			if len(d.buf) < n {
				break
			}
			out = append(out, capFrame{port, req, bytes.Clone(d.buf[:n])})
			d.buf = d.buf[n:]
		}
	}
	return out
}

// decodedMsg is one frame decodeCapture decoded, with its connection's port.
type decodedMsg struct {
	port  int
	m     *Message
	frame []byte
}

// decodeCapture decodes a capture's frames connection by connection as a
// capture would: responses with their request's API and version, SASL
// with the mechanism the identity tracker learnt from the handshake.
// closed says the connections ended with a FIN or RST.
func decodeCapture(t *testing.T, frames []capFrame, o Options, trackMech, closed bool) (msgs []decodedMsg, ids map[int]Identity) {
	type pend struct{ key, ver int16 }
	pending := map[int]map[int32]pend{}
	trackers := map[int]*identityTracker{}
	for _, f := range frames {
		tr := trackers[f.port]
		if tr == nil {
			tr = newIdentityTracker(true)
			trackers[f.port], pending[f.port] = tr, map[int32]pend{}
		}
		if trackMech {
			o.Mechanism = tr.Mechanism()
		}
		var m *Message
		if f.request {
			m = saslReg.Decode(f.data, o)
			pending[f.port][m.CorrelationID] = pend{m.APIKey, m.APIVersion}
		} else {
			corr, _ := peekCorrelationID(f.data)
			p, ok := pending[f.port][corr]
			if !ok {
				t.Fatalf("port %d: response %d without request", f.port, corr)
			}
			m = saslReg.Decode(f.data, withOpts(o, Options{Direction: Response, APIKey: p.key, APIVersion: p.ver}))
		}
		tr.Observe(m)
		msgs = append(msgs, decodedMsg{f.port, m, f.data})
	}
	ids = map[int]Identity{}
	for port, tr := range trackers {
		if closed {
			tr.Close()
		}
		ids[port] = tr.Identity()
	}
	return msgs, ids
}

// layoutBytes reads the hex and ASCII columns of AppendHexDump's rows
// back: the bytes a reader sees, with masked ones as '*'.
func layoutBytes(t *testing.T, layout []byte) (hexCol, asciiCol []byte) {
	for _, line := range lines(layout) {
		if len(line) < 6+16*3+1+1+16 || strings.HasPrefix(line, "....") {
			continue
		}
		cells := strings.Fields(strings.ReplaceAll(line[6:6+16*3+1], "  ", " "))
		for _, c := range cells {
			if c == "**" {
				hexCol = append(hexCol, '*')
				continue
			}
			b, err := hex.DecodeString(c)
			if err != nil {
				t.Fatalf("hex cell %q in %q", c, line)
			}
			hexCol = append(hexCol, b...)
		}
		asciiCol = append(asciiCol, line[6+16*3+2:6+16*3+2+len(cells)]...)
	}
	return hexCol, asciiCol
}

// TestNoPasswordInAnyOutput decodes every frame of the SASL/PLAIN capture
// and looks for the passwords, as text and as hex, in the text tree, the
// JSON, the summary and the byte layout (both of its columns, read back
// across rows); and finds them there with ShowSecrets, so that the search
// is known to work. Each connection's identity is its SASL user.
func TestNoPasswordInAnyOutput(t *testing.T) {
	var expect struct {
		BrokerPort int `json:"brokerPort"`
		Exchanges  []struct {
			ClientPort int    `json:"clientPort"`
			User       string `json:"user"`
		} `json:"exchanges"`
	}
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "pcaps", "kadm-acls.expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &expect); err != nil {
		t.Fatal(err)
	}
	frames := captureFrames(t, "kadm-acls.pcap", expect.BrokerPort)
	passwords := []string{"admin-secret", "mallory-secret"} // internal/testtools/traffic's credentials
	// Without the mechanism (as when the handshake was not captured) the
	// PLAIN tokens are recognised by their shape, and hidden all the same.
	for _, c := range []struct{ show, trackMech bool }{{false, true}, {true, true}, {false, false}, {true, false}} {
		show := c.show
		msgs, ids := decodeCapture(t, frames, Options{ShowSecrets: show}, c.trackMech, true)
		found := map[string]int{}
		var auths, plains int
		for _, d := range msgs {
			m := d.m
			if m.APIKey == saslAuthenticateKey && m.Direction == Request {
				auths++
				if ab := m.Tree.Find("SaslAuthenticateRequest", "AuthBytes"); ab != nil && ab.note == notePlain {
					plains++
				}
			}
			hexCol, asciiCol := layoutBytes(t, AppendHexDump(nil, d.frame, m.Tree))
			outputs := map[string][]byte{
				"text":            AppendText(nil, m.Tree),
				"json":            AppendJSON(nil, m),
				"summary":         []byte(m.Summary),
				"layout hex":      hexCol,
				"layout ascii":    asciiCol,
				"layout verbatim": AppendHexDump(nil, d.frame, m.Tree),
			}
			for _, pw := range passwords {
				forms := [][]byte{[]byte(pw), []byte(hex.EncodeToString([]byte(pw)))}
				for what, out := range outputs {
					for _, form := range forms {
						if bytes.Contains(out, form) {
							found[what]++
							if !show {
								t.Errorf("%s: %s of port %d shows %q", m.Summary, what, d.port, form)
							}
						}
					}
				}
			}
		}
		if auths == 0 || plains != auths {
			t.Fatalf("%d SaslAuthenticate requests, %d read as PLAIN", auths, plains)
		}
		if show {
			// text and JSON show the password and the JSON the AuthBytes hex;
			// the layout shows its bytes in both columns.
			for _, what := range []string{"text", "json", "layout hex", "layout ascii"} {
				if found[what] < auths {
					t.Errorf("ShowSecrets: %s shows a password %d times for %d authentications", what, found[what], auths)
				}
			}
		}
		want := map[int]string{}
		for _, e := range expect.Exchanges {
			want[e.ClientPort] = "User:" + e.User
		}
		var ports []int
		for p := range want {
			ports = append(ports, p)
		}
		sort.Ints(ports)
		for _, p := range ports {
			id := ids[p]
			if id.Principal != want[p] || id.Mechanism != "PLAIN" || id.Source != "sasl" || !id.Authenticated || id.Failed {
				t.Errorf("port %d: identity %+v, want %s over PLAIN", p, id, want[p])
			}
		}
	}
}
