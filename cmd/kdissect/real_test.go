package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The captures in testdata/pcaps are real client traffic (franz-go kadm,
// raw kmsg frames at every version, sarama) against kfake, captured by
// kdissect itself; their sidecars say what the clients sent and received,
// recorded on the client side. Every ACL message kdissect decodes must
// agree with them, field for field.

type sidecar struct {
	BrokerPort int `json:"brokerPort"`
	Exchanges  []struct {
		API           int16          `json:"api"`
		Version       int16          `json:"version"`
		CorrelationID int32          `json:"correlationId"`
		ClientPort    int            `json:"clientPort"`
		Principal     string         `json:"principal"` // SASL captures: who the client logged in as
		Request       map[string]any `json:"request"`
		Response      map[string]any `json:"response"`
	} `json:"exchanges"`
}

// decodedLine is the part of an NDJSON line these tests read.
type decodedLine struct {
	Event         string          `json:"event"`
	Index         int             `json:"index"`
	Src           string          `json:"src"`
	Dst           string          `json:"dst"`
	Direction     string          `json:"direction"`
	APIKey        int16           `json:"api_key"`
	APIVersion    int16           `json:"api_version"`
	CorrelationID int32           `json:"correlation_id"`
	Peer          *int            `json:"peer"`
	Principal     *string         `json:"principal"`
	Problems      []any           `json:"problems"`
	Tree          json.RawMessage `json:"tree"`
}

type jsonNode struct {
	Name     string      `json:"name"`
	Type     string      `json:"type"`
	Value    any         `json:"value"`
	Category string      `json:"category"`
	Children []*jsonNode `json:"children"`
}

// bodyValues turns a decoded body into the sidecar's shape: structs become
// objects of their fields, arrays lists, leaves their raw values; the
// wire-only nodes (lengths, tagged-field counts) are left out.
func bodyValues(n *jsonNode) any {
	switch {
	case strings.HasPrefix(n.Type, "[]"):
		if n.Value == nil {
			return nil
		}
		list := []any{}
		for _, c := range n.Children {
			if c.Name != "length" {
				list = append(list, bodyValues(c))
			}
		}
		return list
	case len(n.Children) > 0 || n.Type == "struct" || !strings.Contains("int8 int16 int32 int64 string uvarint bool", n.Type):
		obj := map[string]any{}
		for _, c := range n.Children {
			if c.Name != "tagged_fields" {
				obj[c.Name] = bodyValues(c)
			}
		}
		return obj
	}
	return n.Value
}

func decodeCapture(t *testing.T, args ...string) []decodedLine {
	t.Helper()
	out, stderr, code := runCLI(t, "", append([]string{"--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var lines []decodedLine
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var d decodedLine
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("bad NDJSON line %q: %v", l, err)
		}
		lines = append(lines, d)
	}
	return lines
}

func TestRealCapturesMatchWhatClientsSent(t *testing.T) {
	// sasl-v0-acls is not here: the empty token a broker answers a PLAIN
	// token with after SaslHandshake v0 is a 4-byte size of 0, which the
	// framer skips as unparseable (see issue 9 notes).
	for _, name := range []string{"kadm-acls", "raw-versions", "sarama-acls", "sasl-scram-acls", "tls13-acls"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile("../../testdata/pcaps/" + name + ".expect.json")
			if err != nil {
				t.Fatal(err)
			}
			var sc sidecar
			if err := json.Unmarshal(raw, &sc); err != nil {
				t.Fatal(err)
			}
			args := []string{"--port", strconv.Itoa(sc.BrokerPort), "../../testdata/pcaps/" + name + ".pcap"}
			if kl := "../../testdata/pcaps/" + name + ".keylog"; fileExists(kl) {
				args = append(args, "--tls-keylog", kl)
			}
			lines := decodeCapture(t, args...)
			versions := compareWithClients(t, sc, lines)
			t.Logf("%d exchanges checked: %v", len(sc.Exchanges), versions)
		})
	}
}

// compareWithClients checks that lines hold each exchange of sc exactly
// once, request and response, with every body field as the client saw it.
// It returns the API versions it checked.
func compareWithClients(t *testing.T, sc sidecar, lines []decodedLine) map[string]bool {
	t.Helper()
	byKey := map[string]decodedLine{}
	for _, d := range lines {
		if d.Event != "" {
			if d.Event != "port_detected" && d.Event != "tls_session" {
				t.Errorf("unexpected event %+v", d)
			}
			continue
		}
		port := d.Src
		if d.Direction == "response" {
			port = d.Dst
		}
		port = port[strings.LastIndexByte(port, ':')+1:]
		k := fmt.Sprintf("%s/%d/%s", port, d.CorrelationID, d.Direction)
		if _, dup := byKey[k]; dup {
			t.Errorf("message %s decoded twice", k)
		}
		byKey[k] = d
	}
	if want := 2 * len(sc.Exchanges); len(byKey) != want {
		t.Errorf("%d ACL messages decoded, the clients exchanged %d", len(byKey), want)
	}
	versions := map[string]bool{}
	for _, ex := range sc.Exchanges {
		for _, dir := range []string{"request", "response"} {
			k := fmt.Sprintf("%d/%d/%s", ex.ClientPort, ex.CorrelationID, dir)
			d, ok := byKey[k]
			if !ok {
				t.Errorf("%s: not decoded", k)
				continue
			}
			if d.APIKey != ex.API || d.APIVersion != ex.Version || len(d.Problems) != 0 {
				t.Errorf("%s: api %d v%d problems %v; want api %d v%d, no problems", k, d.APIKey, d.APIVersion, d.Problems, ex.API, ex.Version)
			}
			if dir == "response" && d.Peer == nil {
				t.Errorf("%s: response without its request's index", k)
			}
			if ex.Principal != "" && (d.Principal == nil || *d.Principal != ex.Principal) {
				t.Errorf("%s: principal %v, the client logged in as %s", k, d.Principal, ex.Principal)
			}
			var root jsonNode
			if err := json.Unmarshal(d.Tree, &root); err != nil {
				t.Fatal(err)
			}
			var body *jsonNode
			for _, c := range root.Children {
				if strings.HasSuffix(c.Category, "body") {
					body = c
				}
			}
			want := ex.Request
			if dir == "response" {
				want = ex.Response
			}
			if body == nil {
				t.Errorf("%s: no body in the tree", k)
				continue
			}
			if got := bodyValues(body); !reflect.DeepEqual(got, any(want)) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				t.Errorf("%s v%d: decoded\n%s\nclient side\n%s", k, ex.Version, gj, wj)
			}
			versions[fmt.Sprintf("%d v%d", ex.API, ex.Version)] = true
		}
	}
	return versions
}

func TestRealCapturesCoverEveryVersion(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/pcaps/raw-versions.expect.json")
	if err != nil {
		t.Fatal(err)
	}
	var sc sidecar
	json.Unmarshal(raw, &sc)
	have := map[[2]int16]bool{}
	for _, ex := range sc.Exchanges {
		have[[2]int16{ex.API, ex.Version}] = true
	}
	for _, api := range []int16{30, 31} {
		for v := int16(0); v <= 3; v++ {
			if !have[[2]int16{api, v}] {
				t.Errorf("raw-versions.pcap lacks API %d v%d", api, v)
			}
		}
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
