package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

// TestEverydayTrafficDecodesClean captures franz-go and sarama (at Kafka
// 0.11, 2.1 and 3.6) producing, consuming in groups and administering a
// kfake broker over some forty APIs, and reads the capture with --all:
// every frame the clients and the broker wrote is one message, decoded to
// its last byte without a problem, every response found its request, and
// the summaries say what the topic calls did.
func TestEverydayTrafficDecodesClean(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), traffic.DefaultTimeout)
	defer cancel()
	wire, err := traffic.RunEveryday(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wire.Renumber(traffic.SynthBrokerPort, func(i int) int { return traffic.SynthClientPort + i })
	pcap := filepath.Join(t.TempDir(), "everyday.pcap")
	f, err := os.Create(pcap)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := traffic.WritePcap(f, wire); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	// The frames on the wire, counted by their size prefixes.
	frames := 0
	toServer, toClient := wire.Streams()
	for _, s := range append(toServer, toClient...) {
		for len(s) >= 4 {
			n := int(binary.BigEndian.Uint32(s))
			if n > len(s)-4 {
				t.Fatalf("a recorded stream ends inside a frame of %d bytes", n)
			}
			s = s[4+n:]
			frames++
		}
	}

	out, stderr, code := runCLI(t, "", "--all", "--json", pcap)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	seen := map[int16]bool{}
	var summaries []string
	messages := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			APIKey    int16     `json:"api_key"`
			Direction string    `json:"direction"`
			Summary   string    `json:"summary"`
			Problems  []any     `json:"problems"`
			Peer      *int      `json:"peer"`
			Tree      *jsonNode `json:"tree"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad NDJSON line %q: %v", l, err)
		}
		if m.Tree == nil {
			t.Errorf("an event in clean traffic: %s", l)
			continue
		}
		messages++
		seen[m.APIKey] = true
		summaries = append(summaries, m.Summary)
		if len(m.Problems) > 0 {
			t.Errorf("%s: %v", m.Summary, m.Problems)
		}
		if m.Direction == "response" && m.Peer == nil {
			t.Errorf("a response without its request: %s", m.Summary)
		}
	}
	if messages != frames {
		t.Errorf("%d messages decoded of the %d frames on the wire", messages, frames)
	}
	for _, k := range traffic.EverydayAPIs {
		if !seen[k] {
			t.Errorf("no message of API key %d", k)
		}
	}
	// Summaries, by the start and the end of their line.
	for _, want := range [][2]string{
		{"CreateTopics v7 request corr=", ": c: 3 partitions, replication 1, 1 config"},
		{"CreatePartitions v3 request corr=", ": c to 5 partitions"},
		{"DeleteTopics v6 request corr=", ": 1 topic: c"},
		{"ElectLeaders v2 request corr=", ": election PREFERRED, all partitions"},
		{"CreateTopics v2 request corr=", ": s0-c: 2 partitions, replication 1, 1 config"}, // sarama at 0.11
		{"CreatePartitions v1 request corr=", ": s1-c to 4 partitions"},                    // at 2.1
		{"Produce v9 request corr=", "s2: 1 partition, 1 record, lz4, 88 bytes, acks=1"},   // at 3.6
	} {
		found := false
		for _, s := range summaries {
			found = found || strings.HasPrefix(s, want[0]) && strings.HasSuffix(s, want[1])
		}
		if !found {
			t.Errorf("no summary %q…%q", want[0], want[1])
		}
	}
	// kgo batches the 20 records as its timing allows, in one request or
	// several; together they hold all 20.
	records := 0
	for _, s := range summaries {
		if !strings.HasPrefix(s, "Produce v13 request corr=") {
			continue
		}
		m := produceRecords.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("a Produce summary without its record count: %s", s)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		records += n
	}
	if records != 20 {
		t.Errorf("the Produce v13 requests hold %d records, want 20", records)
	}
	if t.Failed() {
		t.Logf("the summaries:\n%s", strings.Join(summaries, "\n"))
	}
}

// produceRecords reads the record count and the acks of a Produce summary
// of partitions of one topic, as kgo's requests are.
var produceRecords = regexp.MustCompile(`: \d+ partitions?, (\d+) records?, snappy, \d+ bytes, acks=all$`)
