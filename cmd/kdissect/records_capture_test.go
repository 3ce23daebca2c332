package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"sort"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

// TestRecordsCaptureMatchesWhatClientsSent reads the shipped capture of
// ordinary client traffic (kgo producers in every codec, a transactional
// producer, sarama's xerial snappy and its MessageSet v1, a consumer) and
// checks every record kdissect decodes, in Produce requests and Fetch
// responses, against the sidecar the clients' side wrote: keys, values,
// headers, timestamps, offsets (fetched) and the batch's codec.
func TestRecordsCaptureMatchesWhatClientsSent(t *testing.T) {
	const pcap = "../../testdata/pcaps/records-codecs.pcap"
	exp, err := traffic.LoadRecordsExpect("../../testdata/pcaps/records-codecs.expect.json")
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "", "--json", "--api", "produce,fetch,metadata", pcap)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var produced, fetched, legacy []string
	var commits int
	ids := map[string]string{} // topic id to name, from the Metadata responses
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			APIName   string    `json:"api_name"`
			Direction string    `json:"direction"`
			Summary   string    `json:"summary"`
			Problems  []any     `json:"problems"`
			Tree      *jsonNode `json:"tree"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad NDJSON line %q: %v", l, err)
		}
		if m.Tree == nil {
			continue // an event
		}
		if len(m.Problems) > 0 {
			t.Errorf("%s: %v", m.Summary, m.Problems)
		}
		if m.APIName == "Metadata" && m.Direction == "response" {
			for _, tp := range m.Tree.find("MetadataResponse", "Topics").Children {
				if id, ok := tp.find("TopicId").Value.(string); ok {
					ids[id], _ = tp.find("Name").Value.(string)
				}
			}
			continue
		}
		produce := m.APIName == "Produce" && m.Direction == "request"
		if !produce && !(m.APIName == "Fetch" && m.Direction == "response") {
			continue
		}
		walkRecords(m.Tree, "", ids, func(topic string, batch, r *jsonNode) {
			switch {
			case batch.Type == "Message v1":
				legacy = append(legacy, legacyText(topic, batch, r))
			case r.Type == "ControlRecord":
				if k := r.find("key", "type"); k.Value == float64(1) {
					commits++
				}
			case produce:
				produced = append(produced, recordText(topic, batch, r, false))
			default:
				fetched = append(fetched, recordText(topic, batch, r, true))
			}
		})
	}
	var wantProduced, wantFetched, wantLegacy []string
	for _, r := range exp.Produced {
		wantProduced = append(wantProduced, expectText(r, r.Topic, false))
	}
	for _, r := range exp.Consumed {
		wantFetched = append(wantFetched, expectText(r, r.Topic, true))
	}
	for _, m := range exp.Legacy {
		wantLegacy = append(wantLegacy, fmt.Sprintf("%s ts=%d key=%s value=%s codec=%s", m.Topic, m.Timestamp, hexOrNull(m.Key), hexOrNull(m.Value), m.Codec))
	}
	// The consumer's fetches answer topics in the broker's order, and the
	// records carry distinct timestamps: sorted, the lists compare.
	for _, c := range []struct {
		what      string
		got, want []string
	}{{"produced", produced, wantProduced}, {"fetched", fetched, wantFetched}, {"legacy", legacy, wantLegacy}} {
		if len(c.want) == 0 {
			t.Errorf("the sidecar lists no %s records", c.what)
		}
		sort.Strings(c.got)
		sort.Strings(c.want)
		if strings.Join(c.got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s records:\n got %d:\n%s\nwant %d:\n%s", c.what, len(c.got), strings.Join(c.got, "\n"), len(c.want), strings.Join(c.want, "\n"))
		}
	}
	if commits == 0 {
		t.Error("no commit marker fetched: the transactional producer's control batch is missing")
	}
	codecs := map[string]bool{}
	for _, r := range exp.Produced {
		codecs[r.Codec] = true
	}
	for _, c := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		if !codecs[c] {
			t.Errorf("the sidecar has no %s records", c)
		}
	}
}

// walkRecords calls fn for every record (and MessageSet message that holds
// a record, not compressed messages) under n, with the topic of the
// nearest topic entry: its name, or the name ids gives its id (Produce
// v13 and Fetch v13+ name topics by id).
func walkRecords(n *jsonNode, topic string, ids map[string]string, fn func(topic string, batch, r *jsonNode)) {
	for _, c := range n.Children {
		switch {
		case (c.Name == "Name" || c.Name == "Topic") && c.Type == "string":
			topic, _ = c.Value.(string)
		case c.Name == "TopicId":
			id, _ := c.Value.(string)
			topic = ids[id]
		}
	}
	for _, c := range n.Children {
		switch c.Type {
		case "RecordBatch v2":
			for _, r := range c.find("records").Children {
				if r.Type == "Record" || r.Type == "ControlRecord" {
					fn(topic, c, r)
				}
			}
			continue
		case "Message v1":
			if codec := int(c.find("attributes").Value.(float64)) & 7; codec != 0 {
				for _, inner := range c.find("value").Children {
					if inner.Type == "Message v1" {
						inner.Name = codecNames[codec] // the wrapper's codec
						fn(topic, inner, inner)
					}
				}
				continue
			}
		}
		walkRecords(c, topic, ids, fn)
	}
}

var codecNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

func num(n *jsonNode) int64 {
	f, _ := n.Value.(float64)
	return int64(f)
}

func hexOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

func nodeHex(n *jsonNode) string {
	if s, ok := n.Value.(string); ok {
		return s
	}
	return "null"
}

func recordText(topic string, batch, r *jsonNode, offsets bool) string {
	codec := codecNames[num(batch.find("attributes"))&7]
	ts := num(batch.find("base_timestamp")) + num(r.find("timestamp_delta"))
	off := int64(-1)
	if offsets {
		off = num(batch.find("base_offset")) + num(r.find("offset_delta"))
	}
	var hs []string
	for _, h := range r.find("headers").Children {
		if h.Type == "Header" {
			hs = append(hs, fmt.Sprintf("%v=%s", h.find("key").Value, nodeHex(h.find("value"))))
		}
	}
	return fmt.Sprintf("%s ts=%d off=%d key=%s value=%s headers=[%s] codec=%s", topic, ts, off,
		nodeHex(r.find("key")), nodeHex(r.find("value")), strings.Join(hs, " "), codec)
}

func expectText(r traffic.RecordJSON, topic string, offsets bool) string {
	off := int64(-1)
	if offsets {
		off = r.Offset
	}
	var hs []string
	for _, h := range r.Headers {
		hs = append(hs, h.Key+"="+hexOrNull(h.Value))
	}
	return fmt.Sprintf("%s ts=%d off=%d key=%s value=%s headers=[%s] codec=%s", topic, r.Timestamp, off,
		hexOrNull(r.Key), hexOrNull(r.Value), strings.Join(hs, " "), r.Codec)
}

func legacyText(topic string, m, _ *jsonNode) string {
	return fmt.Sprintf("%s ts=%d key=%s value=%s codec=%s", topic, num(m.find("timestamp")), nodeHex(m.find("key")), nodeHex(m.find("value")), m.Name)
}

// TestSummaryDecompressesNothing: --summary shows no record, so it
// decompresses no batch. A zstd batch that decompresses past
// --max-decompressed is malformed data for --json (exit 2) and not for
// --summary, which never inflates it; a -Y on a record field decodes the
// records again, bomb included.
func TestSummaryDecompressesNothing(t *testing.T) {
	var raw []byte
	for i := range 2 {
		r := kmsg.Record{OffsetDelta: int32(i), Value: make([]byte, 4<<20)}
		body := r.AppendTo(nil)[1:]
		raw = append(append(raw, kbin.AppendVarint(nil, int32(len(body)))...), body...)
	}
	var z bytes.Buffer
	w, _ := zstd.NewWriter(&z)
	w.Write(raw)
	w.Close()
	b := kmsg.RecordBatch{Magic: 2, Attributes: 4, PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: 2, LastOffsetDelta: 1, Records: z.Bytes()}
	b.Length = int32(49 + z.Len())
	batch := b.AppendTo(nil)
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
	file := produceCapture(t, 9, 1, batch)

	const limit = "--max-decompressed=1048576"
	if _, stderr, code := runCLI(t, "", "--json", "--all", limit, file); code != exitMalformed {
		t.Errorf("--json: exit %d, want %d (the bomb): %s", code, exitMalformed, stderr)
	}
	out, stderr, code := runCLI(t, "", "--summary", "--all", limit, file)
	if code != exitOK || strings.Contains(out, "malformed") || !strings.Contains(out, "Produce v9 request") {
		t.Errorf("--summary: exit %d: %s%s", code, out, stderr)
	}
	if _, _, code := runCLI(t, "", "-q", "-z", "apis", "--all", limit, file); code != exitOK {
		t.Errorf("-q -z apis: exit %d, want 0", code)
	}
	if _, _, code := runCLI(t, "", "--summary", "--all", "-Y", "record_count == 2", limit, file); code != exitMalformed {
		t.Errorf("--summary -Y on a record field: exit %d, want %d", code, exitMalformed)
	}
}
