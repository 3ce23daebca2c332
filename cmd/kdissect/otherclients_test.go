package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

// Four captures of clients that are not written in Go, taken with
// tcpdump on lo against kfake (testdata/pcaps/README.md says how): kafkajs
// 2.2.4 (admin, ACL, config and group APIs, gzip, a transaction, a
// consumer group), librdkafka 2.0.2 through kcat (uncompressed and zstd
// batches with headers, a consumer) and kafka-node 5.0.0 (a Produce v2 of
// MessageSet v1 messages, three of them in a gzip wrapper) and kafka-python
// 2.0.2 (admin and ACL APIs, every codec, a consumer group, and MessageSet
// v0 and v1 of every codec but zstd, lz4 in v0 with the frame header
// checksum Kafka 0.8 got wrong). Their encoders
// are independent of franz-go's: every frame must decode without a
// problem, each answer be matched to its request, and the records carry
// what the clients were given to send.

// recordValues lists the value of every record under n, in tree order
// (record headers' values left out; nil for a null value).
func recordValues(t *testing.T, n *jsonNode) []any {
	var out []any
	var walk func(n *jsonNode)
	walk = func(n *jsonNode) {
		if n.Name == "headers" {
			return
		}
		if n.Name == "value" && n.Category == "record" {
			s, ok := n.Value.(string)
			if !ok {
				out = append(out, nil) // a null value
			} else if b, err := hex.DecodeString(s); err != nil {
				t.Fatalf("record value %q is not hex: %v", s, err)
			} else {
				out = append(out, string(b))
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(n)
	return out
}

func TestOtherClientsCaptures(t *testing.T) {
	for _, c := range []struct {
		file       string
		keylog     string // the clients' key log, for a TLS capture
		messages   int
		unmatched  []int          // requests the capture holds no answer to
		software   map[string]any // client_software of every message line
		records    map[int][]any  // message index: its record values
		summaries  map[int]string // message index: its summary
		principals map[int]string // message index: its principal
		tls        map[int]string // message index: the TLS version it was decrypted from
	}{
		{
			file: "kafkajs.pcap", messages: 126,
			records: map[int][]any{
				41: {"\x00\x01\x02\xff", nil, "hello from kafkajs 0"},
				43: {nil, "hello from kafkajs 1", "\x00\x01\x02\xff"}, // gzip
				61: {"in a transaction"},
				// The two batches of each partition, the transaction's
				// record and its commit marker (version 0, epoch 0).
				86: {"hello from kafkajs 0", "hello from kafkajs 1", "\x00\x01\x02\xff", "\x00\x01\x02\xff", nil, nil,
					"in a transaction", "\x00\x00\x00\x00\x00\x00"},
			},
			summaries: map[int]string{
				23:  "CreateAcls v1 request corr=11: ALLOW User:bob READ on TOPIC js-topic (LITERAL) from *",
				32:  "DeleteAcls v1 response corr=15: 1 filter, 1 ACL deleted, all ok",
				43:  "Produce v7 request corr=3: js-topic: 2 partitions, 3 records, gzip, 217 bytes, acks=all",
				73:  "JoinGroup v5 request corr=3: group js-group, new member, consumer: RoundRobinAssigner, topics js-topic",
				86:  "Fetch v11 response corr=0: js-topic: 3 partitions, 7 records, 1 control record, uncompressed+gzip, 558 bytes",
				111: "DeleteGroups v1 request corr=27: 1 group: js-group",
			},
		},
		{
			file: "librdkafka.pcap", messages: 29, unmatched: []int{29},
			software: map[string]any{"name": "librdkafka", "version": "2.0.2"},
			records: map[int][]any{
				13: {librdRecord("zstd", 0), librdRecord("zstd", 1), librdRecord("zstd", 2), librdRecord("zstd", 3)},
				26: {librdRecord("none", 0), librdRecord("none", 1), librdRecord("none", 2), librdRecord("none", 3), librdRecord("none", 4),
					librdRecord("zstd", 0), librdRecord("zstd", 1), librdRecord("zstd", 2), librdRecord("zstd", 3), librdRecord("zstd", 4)},
			},
			summaries: map[int]string{
				1:  "ApiVersions v3 request corr=1: client librdkafka 2.0.2",
				13: "Produce v7 request corr=3: t1: 1 partition, 4 records, zstd, 175 bytes, acks=all",
			},
		},
		{
			// kafkajs over TLS 1.3 (Node's OpenSSL) with a client
			// certificate, against kfakeport -tls, its key log from node
			// --tls-keylog: the certificate, sent encrypted, names the
			// principal.
			file: "kafkajs-tls.pcap", keylog: "kafkajs-tls.keylog", messages: 22,
			records: map[int][]any{15: {"over TLS from kafkajs"}, 21: {"over TLS 1.2 from kafkajs"}},
			tls:     map[int]string{1: "1.3", 16: "1.3", 17: "1.2", 22: "1.2"},
			summaries: map[int]string{
				5:  "CreateAcls v1 request corr=2: ALLOW User:CN=svc-payments,OU=payments,O=Example Corp,L=Zurich,C=CH WRITE on TOPIC payments (PREFIXED) from *",
				10: "DeleteAcls v1 response corr=4: 1 filter, 1 ACL deleted, all ok",
			},
			principals: map[int]string{1: mtlsPrincipal, 5: mtlsPrincipal, 10: mtlsPrincipal, 11: mtlsPrincipal, 16: mtlsPrincipal,
				17: mtlsPrincipal, 22: mtlsPrincipal},
		},
		{
			// kafkajs's SASL PLAIN and SCRAM-SHA-256 inside TLS 1.3, against
			// kfakeport -sasl -tls; the refused login goes unanswered.
			file: "kafkajs-sasl-tls.pcap", keylog: "kafkajs-sasl-tls.keylog", messages: 27, unmatched: []int{27},
			records: map[int][]any{21: {"written by alice over TLS"}},
			tls:     map[int]string{3: "1.3", 27: "1.3"},
			summaries: map[int]string{
				5:  "SaslAuthenticate v1 request corr=2: PLAIN user admin",
				9:  "CreateAcls v1 request corr=4: ALLOW User:alice WRITE on TOPIC t1 (LITERAL) from *",
				15: "SaslAuthenticate v1 request corr=2: SCRAM client-first user alice",
			},
			principals: map[int]string{9: "User:admin", 10: "User:admin", 21: "User:alice", 27: "User:admin"},
		},
		{
			// kafkajs logging in by SASL PLAIN, SCRAM-SHA-256 and
			// SCRAM-SHA-512 against kfakeport -sasl, ACLs checked; kfake
			// closes the two logins with a wrong password unanswered.
			file: "kafkajs-sasl.pcap", messages: 56, unmatched: []int{47, 52},
			records: map[int][]any{27: {"written by alice"}},
			summaries: map[int]string{
				4:  "SaslHandshake v1 response corr=1: NONE, enabled: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512",
				5:  "SaslAuthenticate v1 request corr=2: PLAIN user admin",
				21: "SaslAuthenticate v1 request corr=2: SCRAM client-first user alice",
				33: "SaslAuthenticate v1 request corr=2: SCRAM client-first user bob",
				39: "CreateAcls v1 request corr=5: ALLOW User:bob ALL on CLUSTER kafka-cluster (LITERAL) from *",
				40: "CreateAcls v1 response corr=5: 1 result, 1 failed: CLUSTER_AUTHORIZATION_FAILED",
				55: "DeleteAcls v1 request corr=9: ANY User:alice ANY on TOPIC sec-t (LITERAL) from *",
			},
			principals: map[int]string{15: "User:admin", 27: "User:alice", 40: "User:bob", 47: "User:alice", 52: "User:admin", 56: "User:admin"},
		},
		{
			// kfake closes the connections of the producers pinned to
			// Kafka 0.9 and 0.10 instead of answering their Produce v1 and v2.
			file: "kafka-python.pcap", messages: 122, unmatched: []int{101, 104, 107, 110, 113, 116, 119, 122},
			records: map[int][]any{
				31: pyRecords("None"),
				63: pyRecords("zstd"),
				// Partition 0 holds the uncompressed and lz4 batches, 1 the
				// gzip and zstd ones, 2 the snappy one (xerial framing).
				88:  concat(pyRecords("None"), pyRecords("lz4"), pyRecords("gzip"), pyRecords("zstd"), pyRecords("snappy")),
				101: pyLegacy("(0, 9)", "None"),
				110: pyLegacy("(0, 9)", "lz4"),
				119: pyLegacy("(0, 10, 1)", "snappy"),
				122: pyLegacy("(0, 10, 1)", "lz4"),
			},
			summaries: map[int]string{
				19:  "CreateAcls v1 request corr=4: ALLOW User:alice READ on TOPIC py-t (LITERAL) from *, +1 more",
				73:  "JoinGroup v2 request corr=1: group py-group, new member, consumer: range, roundrobin, topics py-t",
				78:  "SyncGroup v1 response corr=2: assigned 3 partitions of py-t",
				88:  "Fetch v4 response corr=5: py-t: 3 partitions, 25 records, uncompressed+gzip+snappy+lz4+zstd, 2226 bytes",
				93:  "DeleteAcls v1 request corr=7: ANY User:bob ANY on ANY (any) (ANY) from 10.0.0.7",
				94:  "DeleteAcls v1 response corr=7: 1 filter, 1 ACL deleted, all ok",
				110: "Produce v1 request corr=1: t1: 1 partition, 1 MessageSet message, lz4, 165 bytes, acks=1",
			},
		},
		{
			// kfake closes the connection on a Produce v2 instead of
			// answering it.
			file: "kafka-node.pcap", messages: 5, unmatched: []int{5},
			records: map[int][]any{5: {"plain one", "keyed two", "gzipped a", "gzipped b", "gzipped c"}},
			summaries: map[int]string{
				5: "Produce v2 request corr=2: t1: 2 partitions, 3 MessageSet messages, uncompressed+gzip, 200 bytes, acks=1",
			},
		},
	} {
		t.Run(c.file, func(t *testing.T) {
			args := []string{"--all", "--json", "../../testdata/pcaps/" + c.file}
			if c.keylog != "" {
				args = append(args, "--tls-keylog", "../../testdata/pcaps/"+c.keylog)
			}
			out, errOut, code := runCLI(t, "", args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			var unmatched []int
			messages := 0
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var m struct {
					decodedLine
					Summary        string         `json:"summary"`
					ClientSoftware map[string]any `json:"client_software"`
				}
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				if m.Event != "" {
					if m.Event != "port_detected" && !(c.keylog != "" && m.Event == "tls_session" && strings.Contains(line, `"decrypted":true`)) {
						t.Errorf("event %s", line)
					}
					continue
				}
				messages++
				if len(m.Problems) != 0 {
					t.Errorf("#%d %s: problems %v", m.Index, m.Summary, m.Problems)
				}
				if m.Direction == "request" && m.Peer == nil {
					unmatched = append(unmatched, m.Index)
				}
				if !reflect.DeepEqual(m.ClientSoftware, c.software) {
					t.Errorf("#%d: client_software %v, want %v", m.Index, m.ClientSoftware, c.software)
				}
				if want, ok := c.summaries[m.Index]; ok && !strings.HasPrefix(m.Summary, want) {
					t.Errorf("#%d: summary\n got %s\nwant %s…", m.Index, m.Summary, want)
				}
				if c.keylog != "" && !strings.Contains(line, `"tls":{"version":"1.`) {
					t.Errorf("#%d: not said to be decrypted", m.Index)
				}
				if want, ok := c.tls[m.Index]; ok && !strings.Contains(line, `"tls":{"version":"`+want+`"`) {
					t.Errorf("#%d: not decrypted from TLS %s", m.Index, want)
				}
				if want, ok := c.principals[m.Index]; ok && (m.Principal == nil || *m.Principal != want) {
					t.Errorf("#%d: principal %v, want %s", m.Index, m.Principal, want)
				}
				if want, ok := c.records[m.Index]; ok {
					var tree jsonNode
					if err := json.Unmarshal(m.Tree, &tree); err != nil {
						t.Fatal(err)
					}
					if got := recordValues(t, &tree); !reflect.DeepEqual(got, want) {
						t.Errorf("#%d: record values\n got %q\nwant %q", m.Index, got, want)
					}
				}
			}
			if messages != c.messages || !reflect.DeepEqual(unmatched, c.unmatched) {
				t.Errorf("%d messages, unmatched requests %v; want %d, %v", messages, unmatched, c.messages, c.unmatched)
			}
		})
	}
}

// librdRecord is the value kcat was given for record i of the batch
// written with codec.
func librdRecord(codec string, i int) string {
	return strings.Repeat("librdkafka "+codec+" record "+string(rune('0'+i))+" ", 20)
}

// mtlsPrincipal is the principal of internal/testtools/traffic's client
// certificate, which kfakeport -tls hands out.
const mtlsPrincipal = "User:" + traffic.ClientCertDN

// pyRecords are the values kafka-python's producer for codec was given.
func pyRecords(codec string) []any {
	var out []any
	for i := range 5 {
		out = append(out, strings.Repeat(fmt.Sprintf("kafka-python %s record %d ", codec, i), 8))
	}
	return out
}

// pyLegacy are the values of the producer pinned to Kafka version ver.
func pyLegacy(ver, codec string) []any {
	var out []any
	for i := range 3 {
		out = append(out, strings.Repeat(fmt.Sprintf("legacy %s %s record %d ", ver, codec, i), 6))
	}
	return out
}

func concat(lists ...[]any) []any {
	var out []any
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// -z io,stat over a whole capture counts what --all shows, and what -Y
// lets through.
func TestIOStatOfACapture(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, `{"stat":"io,stat","start":0.000,"end":0.233,"messages":126,"requests":63,"responses":63,"bytes":13083}` + "\n"},
		{[]string{"-Y", `api == "Metadata"`}, `{"stat":"io,stat","start":0.000,"end":0.228,"messages":42,"requests":21,"responses":21,"bytes":5507}` + "\n"},
	} {
		args := append([]string{"-q", "--all", "--json", "-z", "io,stat,0"}, c.args...)
		out, errOut, code := runCLI(t, "", append(args, "../../testdata/pcaps/kafkajs.pcap")...)
		if code != 0 || errOut != "" || out != c.want {
			t.Errorf("%v: exit %d, stderr %q, stdout\n%s\nwant\n%s", c.args, code, errOut, out, c.want)
		}
	}
}

// -z expert over a TLS capture read without its key log names what could
// not be read: its three connections, not decrypted.
func TestExpertOfACapture(t *testing.T) {
	out, errOut, code := runCLI(t, "", "-q", "--json", "-z", "expert", "../../testdata/pcaps/kafkajs-tls.pcap")
	want := `{"stat":"expert","severity":"warning","kind":"tls_session","api":null,"count":3,"first":null,"summary":"not decrypted: no key for client random N…"}` + "\n" +
		`{"stat":"expert","severity":"note","kind":"port_detected","api":null,"count":1,"first":null,"summary":"Kafka found on a port not given"}` + "\n"
	if code != 0 || out != want || !strings.Contains(errOut, "not decrypted") {
		t.Errorf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
}
