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
			port := strconv.Itoa(sc.BrokerPort)
			hdr, recs := splitPcap(t, capture)
			intact := ndjson(t, capture, "--port", port)
			byIndex := map[float64]map[string]any{}
			for _, m := range intact {
				if m["event"] != nil {
					t.Fatalf("intact capture: event %v", m)
				}
				byIndex[m["index"].(float64)] = m
			}
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
				checkDropped(t, d, intact, byIndex, ndjson(t, lossy, "--port", port))
			}
			t.Logf("%d data packets dropped in turn", drops)
		})
	}
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
		if !complete(want) {
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
		for k := range want {
			switch k {
			case "index", "peer", "packets":
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
