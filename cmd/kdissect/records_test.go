package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// gzipBatch is a RecordBatch v2 of records (key, value pairs), gzip
// compressed, built with kmsg.
func gzipBatch(t *testing.T, kv ...string) []byte {
	var raw []byte
	for i := 0; i+1 < len(kv); i += 2 {
		r := kmsg.Record{OffsetDelta: int32(i / 2), Key: []byte(kv[i]), Value: []byte(kv[i+1])}
		body := r.AppendTo(nil)[1:] // Length 0 is one varint byte
		raw = append(append(raw, kbin.AppendVarint(nil, int32(len(body)))...), body...)
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(raw)
	w.Close()
	b := kmsg.RecordBatch{Magic: 2, Attributes: 1, PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(len(kv) / 2), LastOffsetDelta: int32(len(kv)/2 - 1), Records: z.Bytes()}
	b.Length = int32(49 + z.Len())
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

func recordsCapture(t *testing.T) string {
	return produceCapture(t, 9, 1, gzipBatch(t, "k1", "hello", "k2", "\x1b[31mred"))
}

// produceCapture is a capture of one Produce request (corr 7, client
// "producer") of batch to topic orders, partition 0.
func produceCapture(t *testing.T, version, acks int16, batch []byte) string {
	req := kmsg.NewPtrProduceRequest()
	req.Version = version
	req.Acks = acks
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "orders"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = batch
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	b := newPcap(t)
	c := openConn(b, 50600, 9092)
	c.Send(true, testkit.KmsgRequest(req, 7, testkit.Ptr("producer")))
	return b.File(t)
}

// TestRecordsEndToEnd reads a capture of a gzip Produce request with each
// output form: the text tree marks the decompressed source, -x dumps it
// as a block of its own, NDJSON names it, and --max-decompressed below
// the batch's size is a problem (exit 2) that keeps the rest.
func TestRecordsEndToEnd(t *testing.T) {
	file := recordsCapture(t)
	out, stderr, code := runCLI(t, "", "--all", "-x", file)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, out)
	}
	for _, want := range []string{
		`key bytes = "k1" (varint len=2) [#1:0x0004, 3B]`,
		`value bytes = "hello" (varint len=5) [#1:0x0007, 6B]`,
		`value bytes = 0x1b5b33316d726564 (varint len=8)`, // not printable: hex, never the escape itself
		"records []Record = 2 elements (gzip, ",
		"\nsource #1: ",
		" bytes decompressed (gzip) from [0x",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("an escape from the wire reached the terminal")
	}

	out, _, code = runCLI(t, "", "--all", "--json", file)
	if code != 0 {
		t.Fatalf("--json: exit %d", code)
	}
	var line struct {
		Sources []struct {
			Source, Length int
			Codec          string
		}
		Tree json.RawMessage
	}
	if err := json.Unmarshal([]byte(strings.Split(out, "\n")[0]), &line); err != nil {
		t.Fatal(err)
	}
	if len(line.Sources) != 1 || line.Sources[0].Codec != "gzip" || line.Sources[0].Source != 1 {
		t.Errorf("sources %+v", line.Sources)
	}
	if !bytes.Contains(line.Tree, []byte(`"name":"value","type":"bytes","value":"68656c6c6f","display":"\"hello\" (varint len=5)","offset":7,"size":6,"source":1`)) {
		t.Errorf("the record's value in JSON:\n%s", line.Tree)
	}
	if !bytes.Contains(line.Tree, []byte(`"category":"record batch"`)) || !bytes.Contains(line.Tree, []byte(`"category":"record"`)) {
		t.Error("no record batch or record category in JSON")
	}

	out, _, code = runCLI(t, "", "--all", "--max-decompressed", "10", file)
	if code != 2 || !strings.Contains(out, "gzip: decompresses to more than 10 bytes") || !strings.Contains(out, "tagged_fields") {
		t.Errorf("--max-decompressed 10: exit %d\n%s", code, out)
	}
	if _, stderr, code = runCLI(t, "", "--max-decompressed", "-1", file); code != 1 || !strings.Contains(stderr, "--max-decompressed") {
		t.Errorf("--max-decompressed -1: exit %d, stderr %q", code, stderr)
	}
}

// A one-line view decodes batches only as far as their headers, so a
// damaged record is not looked for, unless what it reads may lie there: a
// filter on the problems (malformed, _ws.malformed, problems.message) or
// the expert statistic decodes the records, finds the damage at its
// offset and exits 2, as the text tree does.
func TestRecordsDamageFoundByOneLineViews(t *testing.T) {
	rec := kmsg.Record{Key: []byte("k"), Value: []byte("v")}
	b := kmsg.RecordBatch{Magic: 2, PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: 1, Records: rec.AppendTo(nil)} // its length says 0
	batch := b.AppendTo(nil)
	binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-12))
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
	file := produceCapture(t, 8, -1, batch)

	const problem = "record length 0 is below the 6 bytes of a record's fields"
	out, _, code := runCLI(t, "", "--all", "--summary", file)
	if code != 0 || strings.Contains(out, "malformed") || !strings.Contains(out, "Produce v8 request corr=7") {
		t.Errorf("--summary alone: exit %d, want 0 and the line without the records' damage:\n%s", code, out)
	}
	for _, expr := range []string{"malformed", "_ws.malformed", `problems.message contains "record length"`} {
		out, _, code := runCLI(t, "", "--all", "--summary", "-Y", expr, file)
		if code != 2 || !strings.Contains(out, "Produce v8 request corr=7") || !strings.Contains(out, "[malformed: "+problem+"]") {
			t.Errorf("--summary -Y %s: exit %d, want 2 and the damaged Produce:\n%s", expr, code, out)
		}
	}
	out, _, code = runCLI(t, "", "--all", "-q", "-z", "expert", file)
	if code != 2 || !strings.Contains(out, "malformed  Produce      1      1  record length N is below the N bytes") {
		t.Errorf("-q -z expert: exit %d, want 2 and the record's problem counted:\n%s", code, out)
	}
}
