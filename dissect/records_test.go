package dissect

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// ---- building batches: kmsg encodes, the test compresses and checksums ----

// encodeRecord is a record as a batch holds it, its length computed.
func encodeRecord(r kmsg.Record) []byte {
	r.Length = 0
	body := r.AppendTo(nil)[1:] // the varint 0 of the length is one byte
	return append(kbin.AppendVarint(nil, int32(len(body))), body...)
}

// compress compresses b with a Kafka codec (1-4), as clients do: snappy as
// a raw block unless xerial.
func compress(t testing.TB, codec int, b []byte, xerial bool) []byte {
	t.Helper()
	var out bytes.Buffer
	switch codec {
	case codecNone:
		return b
	case codecGzip:
		w := gzip.NewWriter(&out)
		w.Write(b)
		w.Close()
	case codecSnappy:
		if !xerial {
			return s2.EncodeSnappy(nil, b)
		}
		out.Write(xerialMagic)
		out.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
		// Blocks of 100 bytes, so that a test of a few records has several;
		// of 32 KiB, as snappy-java writes them, for more.
		block := 100
		if len(b) > 4096 {
			block = 32 << 10
		}
		for len(b) > 0 {
			n := min(len(b), block)
			blk := s2.EncodeSnappy(nil, b[:n])
			out.Write(binary.BigEndian.AppendUint32(nil, uint32(len(blk))))
			out.Write(blk)
			b = b[n:]
		}
	case codecLZ4:
		w := lz4.NewWriter(&out)
		w.Write(b)
		w.Close()
	case codecZstd:
		w, _ := zstd.NewWriter(&out)
		w.Write(b)
		w.Close()
	}
	return out.Bytes()
}

type batchSpec struct {
	records  []kmsg.Record
	attrs    int16 // compression is attrs&7
	xerial   bool
	base     int64
	baseTS   int64
	producer int64
	payload  []byte // instead of the records, as they are
	badCRC   bool
}

// batch is a RecordBatch v2 built by kmsg, its length and CRC computed.
func batch(t testing.TB, s batchSpec) []byte {
	t.Helper()
	payload := s.payload
	if payload == nil {
		var raw []byte
		for _, r := range s.records {
			raw = append(raw, encodeRecord(r)...)
		}
		payload = compress(t, int(s.attrs&7), raw, s.xerial)
	}
	last := int32(0)
	if n := len(s.records); n > 0 {
		last = s.records[n-1].OffsetDelta
	}
	b := kmsg.RecordBatch{
		FirstOffset: s.base, PartitionLeaderEpoch: -1, Magic: 2, Attributes: s.attrs,
		LastOffsetDelta: last, FirstTimestamp: s.baseTS, MaxTimestamp: s.baseTS + int64(last),
		ProducerID: s.producer, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(len(s.records)), Records: payload,
	}
	b.Length = int32(batchMinLength + len(payload))
	out := b.AppendTo(nil)
	crc := crc32.Checksum(out[batchCRCFrom:], castagnoli)
	if s.badCRC {
		crc ^= 0xdead
	}
	binary.BigEndian.PutUint32(out[17:], crc)
	return out
}

func rec(delta int32, key, value string, headers ...string) kmsg.Record {
	r := kmsg.Record{TimestampDelta64: int64(delta) * 10, OffsetDelta: delta, Value: []byte(value)}
	if key != "" {
		r.Key = []byte(key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Headers = append(r.Headers, kmsg.Header{Key: headers[i], Value: []byte(headers[i+1])})
	}
	return r
}

// produce is a Produce request of version v carrying records for one
// partition of topic "orders".
func produce(v int16, records []byte) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.Version = v
	req.Acks = -1
	req.TimeoutMillis = 1000
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "orders"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = records
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	return testkit.KmsgRequest(req, 9, testkit.Ptr("kdissect-test"))
}

// fetchResponse is a Fetch response of version v returning records for
// one partition.
func fetchResponse(v int16, records []byte) []byte {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = v
	tp := kmsg.NewFetchResponseTopic()
	tp.Topic = "orders"
	p := kmsg.NewFetchResponseTopicPartition()
	p.HighWatermark = 100
	p.RecordBatches = records
	tp.Partitions = append(tp.Partitions, p)
	resp.Topics = append(resp.Topics, tp)
	return testkit.KmsgResponse(resp, 9)
}

// shareFetchResponse is a ShareFetch response of version v returning
// records for one partition.
func shareFetchResponse(v int16, records []byte) []byte {
	resp := kmsg.NewPtrShareFetchResponse()
	resp.Version = v
	tp := kmsg.NewShareFetchResponseTopic()
	p := kmsg.NewShareFetchResponseTopicPartition()
	p.Records = records
	tp.Partitions = append(tp.Partitions, p)
	resp.Topics = append(resp.Topics, tp)
	return testkit.KmsgResponse(resp, 9)
}

// recordsNode finds the records field of a one-partition message.
func recordsNode(t testing.TB, m *Message) *Node {
	t.Helper()
	var found *Node
	m.Tree.Walk(func(n *Node, _ int) {
		if found == nil && n.Type == "records" {
			found = n
		}
	})
	if found == nil {
		t.Fatalf("no records field in\n%s", AppendText(nil, m.Tree))
	}
	return found
}

// messageV is a MessageSet message of magic 0 or 1 built by kmsg, its
// size and CRC computed.
func messageV(magic int8, offset int64, attrs int8, ts int64, key, value []byte) []byte {
	var out []byte
	if magic == 0 {
		m := kmsg.MessageV0{Offset: offset, Magic: 0, Attributes: attrs, Key: key, Value: value}
		out = m.AppendTo(nil)
	} else {
		m := kmsg.MessageV1{Offset: offset, Magic: 1, Attributes: attrs, Timestamp: ts, Key: key, Value: value}
		out = m.AppendTo(nil)
	}
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[12:], crc32.ChecksumIEEE(out[16:]))
	return out
}

// gotRecord is a record as the tree shows it, its offset and timestamp
// made absolute with its batch's base.
type gotRecord struct {
	offset, ts int64
	key, value string // "<null>" for null
	headers    []string
	src        uint16
}

func nullable(n *Node) string {
	if n == nil {
		return "<missing>"
	}
	if n.Null {
		return "<null>"
	}
	if n.Kind == KindString {
		return n.Str
	}
	return string(n.Bytes)
}

// treeRecords lists the records of every v2 batch under n.
func treeRecords(t testing.TB, n *Node) []gotRecord {
	t.Helper()
	var out []gotRecord
	n.Walk(func(b *Node, _ int) {
		if b.Type != "RecordBatch v2" {
			return
		}
		base, ts := b.Child("base_offset").Int, b.Child("base_timestamp").Int
		for _, r := range b.Child("records").Children {
			if !strings.HasPrefix(r.Name, "Record[") {
				continue
			}
			g := gotRecord{
				offset: base + r.Child("offset_delta").Int, ts: ts + r.Child("timestamp_delta").Int,
				key: nullable(r.Child("key")), value: nullable(r.Child("value")), src: r.Source,
			}
			for _, h := range r.Child("headers").Children[1:] {
				g.headers = append(g.headers, nullable(h.Child("key"))+"="+nullable(h.Child("value")))
			}
			out = append(out, g)
		}
	})
	return out
}

func wantRecords(base, baseTS int64, rs []kmsg.Record) []gotRecord {
	var out []gotRecord
	for _, r := range rs {
		g := gotRecord{offset: base + int64(r.OffsetDelta), ts: baseTS + r.TimestampDelta64, key: "<null>", value: "<null>"}
		if r.Key != nil {
			g.key = string(r.Key)
		}
		if r.Value != nil {
			g.value = string(r.Value)
		}
		for _, h := range r.Headers {
			v := "<null>"
			if h.Value != nil {
				v = string(h.Value)
			}
			g.headers = append(g.headers, h.Key+"="+v)
		}
		out = append(out, g)
	}
	return out
}

func sameRecords(t testing.TB, got, want []gotRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records decoded, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.offset != w.offset || g.ts != w.ts || g.key != w.key || g.value != w.value || fmt.Sprint(g.headers) != fmt.Sprint(w.headers) {
			t.Errorf("record %d\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// sampleRecords has what records carry: keys, null keys, empty and
// binary values, a tombstone, headers with null values, a large value.
func sampleRecords() []kmsg.Record {
	rs := []kmsg.Record{
		rec(0, "k1", "hello", "h1", "v1", "trace", "abc"),
		rec(1, "", "\x00\x01binary\xff"),
		rec(2, "k3", ""),
		rec(5, "k4", strings.Repeat("large value ", 500)),
	}
	tomb := rec(6, "gone", "")
	tomb.Value = nil
	tomb.Headers = []kmsg.Header{{Key: "nullhdr"}}
	return append(rs, tomb)
}

var codecCases = []struct {
	name   string
	codec  int16
	xerial bool
}{
	{"none", codecNone, false},
	{"gzip", codecGzip, false},
	{"snappy", codecSnappy, false},
	{"snappy-xerial", codecSnappy, true},
	{"lz4", codecLZ4, false},
	{"zstd", codecZstd, false},
}

// TestRecordsEveryCodec decodes a batch of every codec in a Produce
// request (non-flexible and flexible) and in Fetch responses, and checks
// every record against what was put in.
func TestRecordsEveryCodec(t *testing.T) {
	rs := sampleRecords()
	for _, c := range codecCases {
		t.Run(c.name, func(t *testing.T) {
			b := batch(t, batchSpec{attrs: c.codec | 0x10, xerial: c.xerial, base: 1000, baseTS: 1700000000000, producer: 42, records: rs})
			frames := []struct {
				name  string
				frame []byte
				o     Options
			}{
				{"produce v3", produce(3, b), Options{}},
				{"produce v9", produce(9, b), Options{}},
				{"fetch v4", fetchResponse(4, b), Options{Direction: Response, APIKey: 1, APIVersion: 4}},
				{"fetch v12", fetchResponse(12, b), Options{Direction: Response, APIKey: 1, APIVersion: 12}},
				{"share fetch v1", shareFetchResponse(1, b), Options{Direction: Response, APIKey: 78, APIVersion: 1}},
			}
			for _, f := range frames {
				m := Builtin().Decode(f.frame, f.o)
				if err := checkShape(m, f.frame, false); err != nil || len(m.Problems) > 0 {
					t.Fatalf("%s: %v %v\n%s", f.name, err, m.Problems, AppendText(nil, m.Tree))
				}
				got := treeRecords(t, m.Tree)
				sameRecords(t, got, wantRecords(1000, 1700000000000, rs))
				wantSources := 1
				if c.codec == codecNone {
					wantSources = 0
				}
				if len(m.Sources) != wantSources {
					t.Fatalf("%s: %d sources, want %d", f.name, len(m.Sources), wantSources)
				}
				if wantSources == 1 {
					s := m.Sources[0]
					if s.Codec != codecName(int(c.codec)) || got[0].src != 1 || s.Parent != 0 {
						t.Errorf("%s: source %+v, records in source %d", f.name, s, got[0].src)
					}
					// The compressed bytes are where the source says.
					rn := recordsNode(t, m).Children[0].Child("records")
					if rn.Offset != s.Offset || rn.Size != s.Size || rn.Source != 0 {
						t.Errorf("%s: records node [%d, %d] source %d, source from [%d, %d]", f.name, rn.Offset, rn.Size, rn.Source, s.Offset, s.Size)
					}
				}
				bn := recordsNode(t, m).Children[0]
				if bn.Category != CatRecordBatch || bn.Child("crc").note != crcNote(binary.BigEndian.Uint32(b[17:]), "valid") {
					t.Errorf("%s: batch category %v, crc note %q", f.name, bn.Category, bn.Child("crc").note)
				}
				if want := codecName(int(c.codec)) + ", CreateTime, transactional"; bn.Child("attributes").note != want {
					t.Errorf("%s: attributes %q, want %q", f.name, bn.Child("attributes").Display(), want)
				}
			}
		})
	}
}

// TestRecordsSeveralBatches puts batches of every codec one after another
// in one records field: each decodes in its own source.
func TestRecordsSeveralBatches(t *testing.T) {
	var all []byte
	var want []gotRecord
	for i, c := range codecCases {
		rs := []kmsg.Record{rec(0, fmt.Sprintf("k%d", i), c.name), rec(1, "", c.name+"-2", "i", fmt.Sprint(i))}
		all = append(all, batch(t, batchSpec{attrs: c.codec, xerial: c.xerial, base: int64(10 * i), baseTS: 5000, records: rs})...)
		want = append(want, wantRecords(int64(10*i), 5000, rs)...)
	}
	m := Builtin().Decode(fetchResponse(11, all), Options{Direction: Response, APIKey: 1, APIVersion: 11})
	if len(m.Problems) > 0 {
		t.Fatalf("problems %v", m.Problems)
	}
	sameRecords(t, treeRecords(t, m.Tree), want)
	if len(m.Sources) != len(codecCases)-1 {
		t.Fatalf("%d sources", len(m.Sources))
	}
	if note := recordsNode(t, m).note; note != "6 record batches" {
		t.Errorf("records note %q", note)
	}
}

// TestRecordsHandBuilt checks a batch written byte by byte, not by kmsg:
// every header field lands at its offset with its value.
func TestRecordsHandBuilt(t *testing.T) {
	r := []byte{
		0x1c,      // length 14
		0,         // attributes
		0x04,      // timestamp delta 2
		0x02,      // offset delta 1
		0x02, 'k', // key "k"
		0x06, 'a', 'b', 'c', // value "abc"
		0x02, // one header
		0x02, 'h', 0x02, 'v',
	}
	var b []byte
	b = binary.BigEndian.AppendUint64(b, 7)                 // base offset
	b = binary.BigEndian.AppendUint32(b, uint32(49+len(r))) // batch length
	b = binary.BigEndian.AppendUint32(b, 3)                 // leader epoch
	b = append(b, 2)                                        // magic
	b = append(b, 0, 0, 0, 0)                               // crc, below
	b = binary.BigEndian.AppendUint16(b, 0x0008)            // LogAppendTime
	b = binary.BigEndian.AppendUint32(b, 1)                 // last offset delta
	b = binary.BigEndian.AppendUint64(b, 1000)              // base timestamp
	b = binary.BigEndian.AppendUint64(b, 1002)              // max timestamp
	b = binary.BigEndian.AppendUint64(b, 99)                // producer id
	b = binary.BigEndian.AppendUint16(b, 4)                 // producer epoch
	b = binary.BigEndian.AppendUint32(b, 12)                // base sequence
	b = binary.BigEndian.AppendUint32(b, 1)                 // record count
	b = append(b, r...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	frame := produce(7, b)
	m := Builtin().Decode(frame, Options{})
	if err := checkShape(m, frame, false); err != nil || len(m.Problems) > 0 {
		t.Fatalf("%v %v\n%s", err, m.Problems, AppendText(nil, m.Tree))
	}
	at := recordsNode(t, m).Offset + 4 // after the int32 length
	bn := recordsNode(t, m).Children[0]
	for _, f := range []struct {
		name      string
		off, size int
		val       int64
	}{
		{"base_offset", 0, 8, 7}, {"batch_length", 8, 4, int64(49 + len(r))}, {"partition_leader_epoch", 12, 4, 3},
		{"magic", 16, 1, 2}, {"attributes", 21, 2, 8}, {"last_offset_delta", 23, 4, 1},
		{"base_timestamp", 27, 8, 1000}, {"max_timestamp", 35, 8, 1002}, {"producer_id", 43, 8, 99},
		{"producer_epoch", 51, 2, 4}, {"base_sequence", 53, 4, 12}, {"record_count", 57, 4, 1},
	} {
		n := bn.Child(f.name)
		if n == nil || n.Offset != at+f.off || n.Size != f.size || n.Int != f.val {
			t.Errorf("%s: %+v, want at %d size %d value %d", f.name, n, at+f.off, f.size, f.val)
		}
	}
	rn := bn.Find("records", "Record[0]")
	if rn == nil || rn.Offset != at+61 || rn.Size != 15 || rn.Category != CatRecord {
		t.Fatalf("Record[0] %+v", rn)
	}
	for _, f := range []struct {
		name, display string
		off, size     int
	}{
		{"length", "14", 0, 1}, {"attributes", "0", 1, 1}, {"timestamp_delta", "2", 2, 1}, {"offset_delta", "1", 3, 1},
		{"key", `"k" (varint len=1)`, 4, 2}, {"value", `"abc" (varint len=3)`, 6, 4}, {"headers", "1 element", 10, 5},
	} {
		n := rn.Child(f.name)
		if n == nil || n.Offset != rn.Offset+f.off || n.Size != f.size || n.Display() != f.display {
			t.Errorf("%s: %q [%d, %d], want %q [%d, %d]", f.name, n.Display(), n.Offset, n.Size, f.display, rn.Offset+f.off, f.size)
		}
	}
	if got := bn.Child("attributes").Display(); got != "8 (none, LogAppendTime)" {
		t.Errorf("attributes %q", got)
	}
	if got := bn.Child("base_timestamp").Display(); got != "1000 (1970-01-01T00:00:01.000Z)" {
		t.Errorf("base_timestamp %q", got)
	}
}

// TestRecordsCRCMismatch: a wrong CRC is a problem at the crc field,
// and the batch is still decoded.
func TestRecordsCRCMismatch(t *testing.T) {
	for _, c := range codecCases {
		b := batch(t, batchSpec{attrs: c.codec, xerial: c.xerial, records: sampleRecords(), badCRC: true})
		m := Builtin().Decode(produce(9, b), Options{})
		crc := recordsNode(t, m).Children[0].Child("crc")
		if len(m.Problems) != 1 || m.Problems[0].Offset != crc.Offset || !strings.Contains(m.Problems[0].Message, "CRC-32C mismatch") {
			t.Fatalf("%s: problems %v, crc at %d", c.name, m.Problems, crc.Offset)
		}
		if !strings.HasSuffix(crc.Display(), ", mismatch)") {
			t.Errorf("%s: crc %q", c.name, crc.Display())
		}
		sameRecords(t, treeRecords(t, m.Tree), wantRecords(0, 0, sampleRecords()))
	}
	// A flipped byte in the records, CRC unchanged.
	b := batch(t, batchSpec{records: sampleRecords()})
	b[len(b)-1] ^= 1
	if m := Builtin().Decode(produce(9, b), Options{}); len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "CRC-32C mismatch") {
		t.Errorf("flipped byte: %v", m.Problems)
	}
}

// TestRecordsMessageSet decodes MessageSet v0 and v1, plain and inside
// compressed wrappers of every codec they allow, in Produce v0-2 and
// Fetch v0-3.
func TestRecordsMessageSet(t *testing.T) {
	for _, magic := range []int8{0, 1} {
		var set []byte
		set = append(set, messageV(magic, 0, 0, 1600000000000, []byte("a"), []byte("first"))...)
		set = append(set, messageV(magic, 1, 0, 1600000000001, nil, []byte("\x01\x02"))...)
		for _, codec := range []int{codecGzip, codecSnappy, codecLZ4} {
			var inner []byte
			for i := range 3 {
				inner = append(inner, messageV(magic, int64(i), 0, 1600000000100, []byte(fmt.Sprintf("in%d", i)), []byte(fmt.Sprintf("%s-%d", codecName(codec), i)))...)
			}
			set = append(set, messageV(magic, 4, int8(codec), 1600000000200, nil, compress(t, codec, inner, codec == codecSnappy && magic == 1))...)
		}
		pv, fv := int16(magic*2), int16(magic*2)
		for _, f := range []struct {
			frame []byte
			o     Options
		}{
			{produce(pv, set), Options{}},
			{fetchResponse(fv, set), Options{Direction: Response, APIKey: 1, APIVersion: fv}},
		} {
			m := Builtin().Decode(f.frame, f.o)
			if err := checkShape(m, f.frame, false); err != nil || len(m.Problems) > 0 {
				t.Fatalf("magic %d: %v %v\n%s", magic, err, m.Problems, AppendText(nil, m.Tree))
			}
			rn := recordsNode(t, m)
			want := 5 // two plain messages, three wrappers
			if len(rn.Children) != want || rn.note != fmt.Sprintf("MessageSet of %d messages", want) {
				t.Fatalf("magic %d: %d entries, note %q", magic, len(rn.Children), rn.note)
			}
			m0 := rn.Children[0]
			if m0.Type != fmt.Sprintf("Message v%d", magic) || nullable(m0.Child("key")) != "a" || nullable(m0.Child("value")) != "first" ||
				!strings.HasSuffix(m0.Child("crc").Display(), ", valid)") || m0.Category != CatRecord {
				t.Errorf("magic %d: first message %s", magic, AppendText(nil, m0))
			}
			if (m0.Child("timestamp") != nil) != (magic == 1) {
				t.Errorf("magic %d: timestamp field %v", magic, m0.Child("timestamp"))
			}
			if nullable(rn.Children[1].Child("key")) != "<null>" || rn.Children[1].Child("value").Display() != "0x0102 (int32 len=2)" {
				t.Errorf("magic %d: second message %s", magic, AppendText(nil, rn.Children[1]))
			}
			for i, w := range rn.Children[2:] {
				codec := []int{codecGzip, codecSnappy, codecLZ4}[i]
				v := w.Child("value")
				if w.Category != CatRecordBatch || len(v.Children) != 3 {
					t.Fatalf("magic %d %s: wrapper %s", magic, codecName(codec), AppendText(nil, w))
				}
				for j, in := range v.Children {
					if in.Source != uint16(i+1) || nullable(in.Child("value")) != fmt.Sprintf("%s-%d", codecName(codec), j) || in.Child("offset").Int != int64(j) {
						t.Errorf("magic %d %s: inner %d %s", magic, codecName(codec), j, AppendText(nil, in))
					}
				}
			}
		}
	}
}

// TestRecordsNestedWrappers: a compressed wrapper inside a compressed
// wrapper decodes in a source inside a source.
func TestRecordsNestedWrappers(t *testing.T) {
	inner := messageV(1, 0, 0, 1, []byte("deep"), []byte("value"))
	mid := messageV(1, 0, codecSnappy, 1, nil, compress(t, codecSnappy, inner, false))
	outer := messageV(1, 0, codecGzip, 1, nil, compress(t, codecGzip, mid, false))
	m := Builtin().Decode(produce(2, outer), Options{})
	if len(m.Problems) > 0 || len(m.Sources) != 2 {
		t.Fatalf("problems %v, %d sources\n%s", m.Problems, len(m.Sources), AppendText(nil, m.Tree))
	}
	deep := recordsNode(t, m).Find("Message[0]", "value", "Message[0]", "value", "Message[0]")
	if deep == nil || deep.Source != 2 || nullable(deep.Child("key")) != "deep" || m.Sources[1].Parent != 1 {
		t.Fatalf("deep message %v, sources %+v", deep, m.Sources)
	}
	if err := checkShape(m, m.Raw, false); err != nil {
		t.Fatal(err)
	}
	// A wrapper nested deeper than any writer goes stops with a problem.
	b := inner
	for range maxWrapperDepth + 2 {
		b = messageV(1, 0, codecGzip, 1, nil, compress(t, codecGzip, b, false))
	}
	m = Builtin().Decode(produce(2, b), Options{})
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "nested 9 deep") || len(m.Sources) != maxWrapperDepth {
		t.Errorf("deep nesting: %v, %d sources", m.Problems, len(m.Sources))
	}
}

// TestRecordsControlBatch decodes a transaction's commit and abort
// markers.
func TestRecordsControlBatch(t *testing.T) {
	marker := func(typ int16, epoch int32) kmsg.Record {
		key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(typ))
		value := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), uint32(epoch))
		return kmsg.Record{Key: key, Value: value}
	}
	for _, c := range []struct {
		typ  int16
		name string
	}{{1, "COMMIT"}, {0, "ABORT"}} {
		b := batch(t, batchSpec{attrs: 0x30, producer: 7, records: []kmsg.Record{marker(c.typ, 5)}})
		m := Builtin().Decode(fetchResponse(12, b), Options{Direction: Response, APIKey: 1, APIVersion: 12})
		if len(m.Problems) > 0 {
			t.Fatalf("%s: %v", c.name, m.Problems)
		}
		r := recordsNode(t, m).Find("RecordBatch[0]", "records", "Record[0]")
		if r.Type != "ControlRecord" {
			t.Fatalf("%s: %s", c.name, AppendText(nil, r))
		}
		if got := r.Find("key", "type").Display(); got != fmt.Sprintf("%d (%s)", c.typ, c.name) {
			t.Errorf("%s: type %q", c.name, got)
		}
		if ce := r.Find("value", "coordinator_epoch"); ce == nil || ce.Int != 5 || ce.Offset != r.Child("value").Offset+1+2 {
			t.Errorf("%s: coordinator_epoch %+v", c.name, ce)
		}
		if an := recordsNode(t, m).Find("RecordBatch[0]", "attributes"); an.note != "none, CreateTime, transactional, control" {
			t.Errorf("attributes %q", an.note)
		}
	}
	// The summary counts the markers apart: a consumer hands its
	// application the data records only.
	data := batch(t, batchSpec{attrs: 0x10, producer: 7, records: sampleRecords()[:3]})
	commit := batch(t, batchSpec{attrs: 0x30, producer: 7, base: 3, records: []kmsg.Record{marker(1, 5)}})
	m := Builtin().Decode(fetchResponse(12, append(data, commit...)), Options{Direction: Response, APIKey: 1, APIVersion: 12})
	if !strings.Contains(m.Summary, ": 1 partition, 3 records, 1 control record, uncompressed, ") {
		t.Errorf("summary %q", m.Summary)
	}
	// A control record whose key is too short says so.
	b := batch(t, batchSpec{attrs: 0x20, records: []kmsg.Record{{Key: []byte{0}, Value: []byte{}}}})
	if m := Builtin().Decode(produce(9, b), Options{}); len(m.Problems) == 0 {
		t.Errorf("a one-byte control key is no problem")
	}
}

// TestRecordsPartialBatch: a Fetch response may end in a batch cut short
// (a broker reads the log up to a byte limit). It is a partial node that
// says so, with no problem: that is the protocol, not damage; the batches
// before it and the fields after the records decode as usual, and the
// summary counts only the records delivered whole. The same bytes in a
// Produce request are a problem at the batch.
func TestRecordsPartialBatch(t *testing.T) {
	whole := batch(t, batchSpec{records: sampleRecords()[:2]})
	for _, codec := range []int16{codecNone, codecZstd} {
		last := batch(t, batchSpec{attrs: codec, records: sampleRecords()})
		for _, cut := range []int{1, 11, 12, 17, 30, 61, 70, len(last) - 1} {
			recs := append(append([]byte(nil), whole...), last[:cut]...)
			resp := kmsg.NewPtrFetchResponse()
			resp.Version = 12
			tp := kmsg.NewFetchResponseTopic()
			tp.Topic = "orders"
			for i, r := range [][]byte{recs, whole} {
				p := kmsg.NewFetchResponseTopicPartition()
				p.Partition = int32(i)
				p.RecordBatches = r
				tp.Partitions = append(tp.Partitions, p)
			}
			resp.Topics = append(resp.Topics, tp)
			frame := testkit.KmsgResponse(resp, 3)
			m := Builtin().Decode(frame, Options{Direction: Response, APIKey: 1, APIVersion: 12})
			if err := checkShape(m, frame, false); err != nil {
				t.Fatal(err)
			}
			rn := recordsNode(t, m)
			at := rn.Children[0].Offset + len(whole)
			if len(m.Problems) != 0 {
				t.Fatalf("codec %d cut %d: problems %v\n%s", codec, cut, m.Problems, AppendText(nil, rn))
			}
			p := rn.Children[1]
			if p.Offset != at || p.Offset+p.Size != rn.Offset+rn.Size || len(p.Problems) != 0 || !p.partialEntry() {
				t.Errorf("cut %d: partial batch [%d, %d] in records [%d, %d], %q", cut, p.Offset, p.Size, rn.Offset, rn.Size, p.Doc)
			}
			if got := len(treeRecords(t, rn.Children[0])); got != 2 {
				t.Errorf("cut %d: %d records in the whole batch", cut, got)
			}
			// The second partition, after the cut one, is decoded.
			second := m.Tree.Find("FetchResponse", "Responses", "FetchableTopicResponse[0]", "Partitions", "PartitionData[1]")
			if second == nil || len(treeRecords(t, second)) != 2 {
				t.Fatalf("cut %d: second partition %v", cut, second)
			}
			if !strings.Contains(m.Summary, ", 4 records,") {
				t.Errorf("cut %d: summary %q, want the 4 records of the whole batches", cut, m.Summary)
			}
			// --summary reads batch headers only, and counts the same.
			hm := Builtin().Decode(frame, Options{Direction: Response, APIKey: 1, APIVersion: 12, BatchHeaders: true})
			if len(hm.Problems) != 0 || !strings.Contains(hm.Summary, ", 4 records,") {
				t.Errorf("cut %d, batch headers: summary %q, problems %v", cut, hm.Summary, hm.Problems)
			}

			req := produce(9, recs)
			m = Builtin().Decode(req, Options{})
			if len(m.Problems) != 1 || m.Problems[0].Offset != recordsNode(t, m).Children[0].Offset+len(whole) || !strings.Contains(m.Problems[0].Message, "partial record batch") {
				t.Errorf("codec %d cut %d: a Produce request's partial batch: problems %v", codec, cut, m.Problems)
			}
		}
	}
}

// TestRecordsPartialMessage: a legacy MessageSet and a ShareFetch
// response's records may end in an entry cut short too; in a Produce
// request it is a problem.
func TestRecordsPartialMessage(t *testing.T) {
	for _, magic := range []int8{0, 1} {
		first := messageV(magic, 0, 0, 1600000000000, []byte("a"), []byte("first"))
		set := append(append([]byte(nil), first...), messageV(magic, 1, 0, 1600000000001, nil, []byte("second"))...)
		set = set[:len(set)-3]
		v := int16(magic * 2)
		m := Builtin().Decode(fetchResponse(v, set), Options{Direction: Response, APIKey: 1, APIVersion: v})
		rn := recordsNode(t, m)
		if len(m.Problems) != 0 || len(rn.Children) != 2 || !rn.Children[1].partialEntry() || rn.Children[0].partialEntry() {
			t.Errorf("magic %d, Fetch: problems %v\n%s", magic, m.Problems, AppendText(nil, rn))
		}
		if !strings.Contains(m.Summary, "1 MessageSet message,") {
			t.Errorf("magic %d: summary %q counts the cut message", magic, m.Summary)
		}
		m = Builtin().Decode(produce(v, set), Options{})
		if len(m.Problems) != 1 || m.Problems[0].Offset != recordsNode(t, m).Children[0].Offset+len(first) || !strings.Contains(m.Problems[0].Message, "partial message") {
			t.Errorf("magic %d, Produce: problems %v", magic, m.Problems)
		}
	}
	b := batch(t, batchSpec{records: sampleRecords()})
	m := Builtin().Decode(shareFetchResponse(1, b[:len(b)-5]), Options{Direction: Response, APIKey: 78, APIVersion: 1})
	if rn := recordsNode(t, m); len(m.Problems) != 0 || !rn.Children[0].partialEntry() {
		t.Errorf("ShareFetch: problems %v\n%s", m.Problems, AppendText(nil, rn))
	}
}

// TestRecordsMalformed: broken batches are problems at their offsets
// and partial trees; nothing outside the records field is harmed.
func TestRecordsMalformed(t *testing.T) {
	good := batch(t, batchSpec{records: sampleRecords()[:2]})
	for _, c := range []struct {
		name string
		mut  func([]byte) []byte
		want string
	}{
		{"short batch length", func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 10); return b }, "below the 49 bytes"},
		{"unknown magic", func(b []byte) []byte { b[16] = 7; return b }, "magic 7"},
		{"record count too high", func(b []byte) []byte { binary.BigEndian.PutUint32(b[57:], 1<<30); return fixCRC(b) }, "record_count says 1073741824 records, the batch holds 2"},
		{"negative record count", func(b []byte) []byte { binary.BigEndian.PutUint32(b[57:], 0xffffffff); return fixCRC(b) }, "negative"},
		{"record count too low", func(b []byte) []byte { binary.BigEndian.PutUint32(b[57:], 1); return fixCRC(b) }, "bytes after the last record"},
		{"record length too big", func(b []byte) []byte { b[61] = 0x7e; return fixCRC(b) }, "record length 63 exceeds"},
		{"record length zero", func(b []byte) []byte { b[61] = 0; return fixCRC(b) }, "record length 0 is below"},
		{"varint too long", func(b []byte) []byte { copy(b[61:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01}); return fixCRC(b) }, "varint longer than 5 bytes"},
		{"unknown codec", func(b []byte) []byte { b[22] |= 6; return fixCRC(b) }, "unknown compression codec 6"},
		{"gzip garbage", func(b []byte) []byte { b[22] |= codecGzip; return fixCRC(b) }, "gzip: "},
		{"zstd garbage", func(b []byte) []byte { b[22] |= codecZstd; return fixCRC(b) }, "zstd: "},
		{"lz4 garbage", func(b []byte) []byte { b[22] |= codecLZ4; return fixCRC(b) }, "lz4: "},
		{"snappy garbage", func(b []byte) []byte { b[22] |= codecSnappy; return fixCRC(b) }, "snappy"},
		{"trailing bytes", func(b []byte) []byte { return append(b, 1, 2, 3) }, "partial record batch"},
	} {
		b := c.mut(append([]byte(nil), good...))
		frame := produce(9, b)
		m := Builtin().Decode(frame, Options{})
		if err := checkShape(m, frame, false); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var msgs []string
		for _, p := range m.Problems {
			msgs = append(msgs, p.Message)
		}
		if !strings.Contains(strings.Join(msgs, "|"), c.want) {
			t.Errorf("%s: problems %q, want %q", c.name, msgs, c.want)
		}
		if len(msgs) != 1 && c.name != "negative record count" { // which leaves the records unread as well
			t.Errorf("%s: %d problems for one fault: %q", c.name, len(msgs), msgs)
		}
		// The fields after the records field are read all the same.
		if tf := m.Tree.Find("ProduceRequest", "TopicData", "TopicProduceData[0]", "PartitionData", "PartitionProduceData[0]", "tagged_fields"); tf == nil || !tf.HasValue() {
			t.Errorf("%s: the partition's tagged fields were not read\n%s", c.name, AppendText(nil, m.Tree))
		}
		if err := checkRendered(m); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func fixCRC(b []byte) []byte {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	return b
}

// TestRecordsBomb: a batch that decompresses past the cap is a problem at
// its offset, allocates about the cap and no more, and the batches after
// it are decoded. A snappy block lying about its size is refused before
// anything is allocated.
func TestRecordsBomb(t *testing.T) {
	const limit = 1 << 20
	zeros := make([]byte, 64<<20)
	small := batch(t, batchSpec{records: sampleRecords()[:1]})
	for _, c := range codecCases[1:] {
		t.Run(c.name, func(t *testing.T) {
			bomb := batch(t, batchSpec{attrs: c.codec, xerial: c.xerial, payload: compress(t, int(c.codec), zeros, c.xerial)})
			frame := produce(9, append(append(append([]byte(nil), small...), bomb...), small...))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			m := Builtin().Decode(frame, Options{MaxDecompressed: limit})
			runtime.ReadMemStats(&after)
			allow := uint64(3*limit + len(frame) + 4<<20)
			switch c.codec {
			case codecZstd:
				allow += zstdWindowFloor // the window a streaming writer asks for, allowed under a smaller cap
			case codecLZ4:
				// The lz4 reader's block buffers: at most 4 MiB each, as the
				// frame format bounds them, and pooled; the race detector's
				// sync.Pool drops some, so they may be allocated again.
				allow += 2 * 4 << 20
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > allow {
				t.Errorf("decoding allocated %d bytes for a cap of %d", alloc, limit)
			}
			rn := recordsNode(t, m)
			if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "more than 1048576 bytes") {
				t.Fatalf("problems %v", m.Problems)
			}
			if payload := rn.Children[1].Child("records"); m.Problems[0].Offset != payload.Offset || payload.HasValue() {
				t.Errorf("problem at %d, compressed records at %d", m.Problems[0].Offset, payload.Offset)
			}
			if len(rn.Children) != 3 || len(treeRecords(t, rn.Children[2])) != 1 || len(m.Sources) != 0 {
				t.Errorf("%d batches, %d sources after the bomb", len(rn.Children), len(m.Sources))
			}
		})
	}
	// The message's batches together get MaxDecompressedFactor times the cap.
	var many []byte
	part := batch(t, batchSpec{attrs: codecZstd, payload: compress(t, codecZstd, zeros[:limit-10], false)})
	for range maxDecompressedFactor + 2 {
		many = append(many, part...)
	}
	m := Builtin().Decode(produce(9, many), Options{MaxDecompressed: limit})
	if len(m.Sources) != maxDecompressedFactor || len(m.Problems) < 2 || !strings.Contains(m.Problems[len(m.Problems)-1].Message, "times --max-decompressed") {
		t.Errorf("%d sources, problems %v", len(m.Sources), m.Problems)
	}
	// Lying sizes.
	for _, c := range []struct {
		name    string
		payload []byte
	}{
		{"snappy claims 2 GB", append(binary.AppendUvarint(nil, 2<<30), 0)},
		{"snappy claims more than it can expand", append(binary.AppendUvarint(nil, 10000), 0, 0, 0)},
		{"xerial block claims 2 GB", append(append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1), append([]byte{0, 0, 0, 6}, binary.AppendUvarint(nil, 2<<30)...)...)},
		{"xerial block longer than the payload", append(append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1), 0x7f, 0, 0, 0, 1)},
	} {
		b := batch(t, batchSpec{attrs: codecSnappy, payload: c.payload})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m := Builtin().Decode(produce(9, b), Options{})
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%s: allocated %d bytes", c.name, alloc)
		}
		if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "snappy") {
			t.Errorf("%s: problems %v", c.name, m.Problems)
		}
	}
}

// TestRecordsNodeBudget: a kilobyte of zstd that decompresses to a
// million minimal records is dissected until the node budget, not into a
// tree of gigabytes.
func TestRecordsNodeBudget(t *testing.T) {
	one := encodeRecord(kmsg.Record{})
	raw := bytes.Repeat(one, (8<<20)/len(one))
	b := batch(t, batchSpec{attrs: codecZstd, payload: compress(t, codecZstd, raw, false)})
	binary.BigEndian.PutUint32(b[57:], uint32(len(raw)/len(one)))
	fixCRC(b)
	m := Builtin().Decode(produce(9, b), Options{})
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "not dissected") {
		t.Fatalf("problems %v", m.Problems)
	}
	var nodes int
	m.Tree.Walk(func(*Node, int) { nodes++ })
	if nodes > 1<<21+64 {
		t.Errorf("%d nodes", nodes)
	}
}

// TestRecordsNodeBudgetPlain: the budget holds for a plain batch too. 4 MB
// of minimal records would be some five million nodes; the tree stops at
// the budget, and the bytes past it are one node, to the batch's end, with
// the problem. A batch of a hundred thousand records is under the budget.
func TestRecordsNodeBudgetPlain(t *testing.T) {
	one := encodeRecord(kmsg.Record{})
	for _, c := range []struct {
		records int
		cut     bool
	}{{(4 << 20) / len(one), true}, {100_000, false}} {
		b := batch(t, batchSpec{payload: bytes.Repeat(one, c.records)})
		binary.BigEndian.PutUint32(b[57:], uint32(c.records))
		fixCRC(b)
		msg := produce(9, b)
		m := Builtin().Decode(msg, Options{})
		var nodes int
		m.Tree.Walk(func(*Node, int) { nodes++ })
		if nodes > 1<<21+64 {
			t.Errorf("%d records: %d nodes", c.records, nodes)
		}
		if !c.cut {
			if len(m.Problems) > 0 || nodes < 5*c.records {
				t.Errorf("%d records: %d nodes, problems %v", c.records, nodes, m.Problems)
			}
			continue
		}
		if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "not dissected") ||
			!strings.Contains(m.Problems[0].Message, "--max-nodes") {
			t.Fatalf("problems %v", m.Problems)
		}
		var rest *Node
		m.Tree.Walk(func(n *Node, _ int) {
			if n.Name == "unknown" {
				rest = n
			}
		})
		end := bytes.Index(msg, b) + len(b)
		if rest == nil || rest.Offset != m.Problems[0].Offset || rest.Offset+rest.Size != end {
			t.Fatalf("rest %+v, problem at %d, batch ends at %d", rest, m.Problems[0].Offset, end)
		}
	}
}

// TestRecordsRendering checks what each output form says of records: the
// source of every node, the decompressed block of the byte layout, the
// text or hex form of keys and values, the categories.
func TestRecordsRendering(t *testing.T) {
	rs := []kmsg.Record{
		rec(0, "plain", "quote\" and \\ back"),
		rec(1, "esc", "\x1b[31mred\x1b[0m"),
		rec(2, "bidi", "abc\u202edef"),
		rec(3, "utf8", "grüße 世界"),
		rec(4, "long", strings.Repeat("x", 300)),
	}
	b := batch(t, batchSpec{attrs: codecLZ4, records: rs})
	m := Builtin().Decode(produce(9, b), Options{})
	if len(m.Problems) > 0 {
		t.Fatal(m.Problems)
	}
	batchNode := recordsNode(t, m).Children[0]
	recs := batchNode.Child("records").Children
	for i, want := range []string{
		`"quote\" and \\ back" (varint len=17)`,
		`0x1b5b33316d7265641b5b306d (varint len=12)`,
		`0x616263e280ae646566 (varint len=9)`,
		`"grüße 世界" (varint len=14)`,
		`"` + strings.Repeat("x", recordTextMax) + `"… (300 bytes) (varint len=300)`,
	} {
		if got := recs[i].Child("value").Display(); got != want {
			t.Errorf("value %d: %s, want %s", i, got, want)
		}
	}
	if err := checkRendered(m); err != nil {
		t.Fatal(err)
	}

	txt := string(AppendText(nil, m.Tree))
	if !strings.Contains(txt, "+-- Record[0] Record [#1:0x0000, ") || !strings.Contains(txt, "lz4, ") {
		t.Errorf("text does not mark the source:\n%s", txt)
	}
	for _, line := range strings.Split(txt, "\n") {
		if strings.Contains(line, "[#1:") != (strings.Contains(line, "Record[") && !strings.Contains(line, "RecordBatch") ||
			strings.Contains(line, "|   |   |   |   |   |   |   |   +-- ") || strings.Contains(line, "                            +-- ")) {
			continue // checked per node below
		}
	}
	m.Tree.Walk(func(n *Node, _ int) {
		var buf []byte
		line := string(AppendHead(buf, n))
		if in := strings.Contains(line, "[#1:"); in != (n.Source == 1) {
			t.Errorf("line %q of a node of source %d", line, n.Source)
		}
	})

	var js struct {
		Tree    json.RawMessage
		Sources []struct {
			Source, Parent, Offset, Size, Length int
			Codec                                string
		}
	}
	raw := AppendJSON(nil, m)
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Sources) != 1 || js.Sources[0].Codec != "lz4" || js.Sources[0].Length != len(m.Sources[0].Data) || js.Sources[0].Offset != m.Sources[0].Offset {
		t.Errorf("sources %+v", js.Sources)
	}
	type jnode struct {
		Name, Display, Category string
		Value                   any
		Offset, Size            int
		Source                  int
		Children                []jnode
	}
	var root jnode
	json.Unmarshal(js.Tree, &root)
	var walk func(n jnode, in bool)
	seen := 0
	walk = func(n jnode, in bool) {
		if strings.HasPrefix(n.Name, "Record[") {
			in = true
			seen++
			if n.Category != "record" {
				t.Errorf("%s category %q", n.Name, n.Category)
			}
		}
		if n.Name == "RecordBatch[0]" && n.Category != "record batch" {
			t.Errorf("batch category %q", n.Category)
		}
		if (n.Source == 1) != in {
			t.Errorf("%s: source %d", n.Name, n.Source)
		}
		if in && n.Name == "value" && seen == 1 {
			if n.Value != hexString([]byte(rs[0].Value)) || n.Display != `"quote\" and \\ back" (varint len=17)` {
				t.Errorf("value %v display %q", n.Value, n.Display)
			}
		}
		for _, c := range n.Children {
			walk(c, in)
		}
	}
	walk(root, false)
	if seen != len(rs) {
		t.Errorf("%d records in JSON", seen)
	}
	if !bytes.Contains(raw, []byte(`"source":1`)) {
		t.Error("no source in JSON")
	}

	layout := string(AppendLayout(nil, m))
	frameDump, srcDump, ok := strings.Cut(layout, "\nsource #1: ")
	if !ok || !strings.HasPrefix(srcDump, fmt.Sprintf("%d bytes decompressed (lz4) from [0x%04x, %dB]\n", len(m.Sources[0].Data), m.Sources[0].Offset, m.Sources[0].Size)) {
		t.Fatalf("layout:\n%s", layout)
	}
	if strings.Contains(frameDump, "timestamp_delta") || !strings.Contains(frameDump, "records") || !strings.Contains(srcDump, "0000  ") ||
		!strings.Contains(srcDump, "timestamp_delta") || strings.Contains(srcDump, "record_count") {
		t.Errorf("layout mixes the sources:\n%s", layout)
	}
	if rows := strings.Count(srcDump, "\n") - 1; rows != (len(m.Sources[0].Data)+15)/16 {
		t.Errorf("%d rows for %d bytes", rows, len(m.Sources[0].Data))
	}
	// The hex dump of the frame alone is what it always was.
	if !strings.HasPrefix(layout, string(AppendHexDump(nil, m.Raw, m.Tree))) {
		t.Error("AppendLayout does not start with the frame's dump")
	}

	// At and AtSource find nodes by the bytes of their own source.
	v := recs[0].Child("value")
	if p := m.Tree.AtSource(1, v.Offset+2); len(p) == 0 || p[len(p)-1] != v {
		t.Errorf("AtSource(1, %d) = %v", v.Offset+2, p)
	}
	if p := m.Tree.At(v.Offset + 2); len(p) > 0 && p[len(p)-1].Source != 0 {
		t.Errorf("At found a node of source %d", p[len(p)-1].Source)
	}
	payload := batchNode.Child("records")
	if p := m.Tree.At(payload.Offset + 1); len(p) == 0 || p[len(p)-1] != payload {
		t.Errorf("At on the compressed bytes: %v", p[len(p)-1].Name)
	}
}

// TestRecordsNotDecodedForHeads: a frame whose body was not kept (an API
// not shown) costs no decompression.
func TestRecordsNotDecodedForHeads(t *testing.T) {
	frame := produce(9, batch(t, batchSpec{attrs: codecGzip, records: sampleRecords()}))
	m := Builtin().Decode(frame[:40], Options{Head: true})
	if len(m.Sources) != 0 || len(m.Problems) != 0 {
		t.Errorf("head: %d sources, problems %v", len(m.Sources), m.Problems)
	}
}

// TestRecordsReusedDecoder: a Decoder reused across frames gives the
// same messages as fresh decodes, sources included.
func TestRecordsReusedDecoder(t *testing.T) {
	x := Builtin().NewDecoder()
	for _, c := range codecCases {
		frame := produce(9, batch(t, batchSpec{attrs: c.codec, xerial: c.xerial, records: sampleRecords()}))
		fresh := Builtin().Decode(frame, Options{})
		sameAsReused(t, fresh, x.Decode(frame, Options{}))
		if a, b := AppendLayout(nil, fresh), AppendLayout(nil, x.Decode(frame, Options{})); !bytes.Equal(a, b) {
			t.Errorf("%s: layouts differ", c.name)
		}
	}
}

// FuzzRecords feeds arbitrary bytes to the records path three ways (sel
// picks): as a records field as it is; as the compressed payload of a
// batch of codec sel&7; and compressed by the test with codec sel&7, as
// the records of a batch, so that the fuzzer reaches the decoding of
// decompressed bytes without having to write a valid stream. Whatever
// the bytes, nothing panics, every node lies inside its own source, the
// sources lie inside theirs, the output is valid, and a reused Decoder
// agrees with a fresh one.
func FuzzRecords(f *testing.F) {
	for _, c := range codecCases {
		f.Add(batch(f, batchSpec{attrs: c.codec, xerial: c.xerial, records: sampleRecords()[:3]}), uint8(0))
		f.Add(compress(f, int(c.codec), encodeRecord(rec(0, "k", "v", "h", "x")), c.xerial), uint8(8|c.codec))
	}
	f.Add(append(messageV(1, 0, 0, 5, []byte("k"), []byte("v")), messageV(1, 1, codecGzip, 5, nil, compress(f, codecGzip, messageV(1, 0, 0, 5, nil, []byte("in")), false))...), uint8(0))
	f.Add(messageV(0, 0, codecSnappy, 0, nil, compress(f, codecSnappy, messageV(0, 0, 0, 0, nil, []byte("in")), false)), uint8(0))
	f.Add(batch(f, batchSpec{attrs: 0x30, records: []kmsg.Record{{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 5}}}}), uint8(0))
	f.Add(encodeRecord(rec(0, "", "v")), uint8(16))
	// librdkafka's magic 0 lz4 wrapper, with Kafka 0.8's header checksum:
	// the records of its Produce v0 frame (after the 4-byte records length).
	f.Add(readTestdata(f, "produce-v0-lz4-librdkafka.bin")[0x33:], uint8(0))
	reused := Builtin().NewDecoder()
	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		codec := int16(sel & 7)
		var recs []byte
		switch sel >> 3 & 3 {
		case 0:
			recs = data
		case 1:
			recs = batch(t, batchSpec{attrs: codec, payload: data})
		default:
			if codec > codecZstd {
				codec = codecNone
			}
			recs = batch(t, batchSpec{attrs: codec, payload: compress(t, int(codec), data, sel&0x20 != 0)})
		}
		o := Options{MaxDecompressed: 1 << 20}
		frame := produce(9, recs)
		if sel&0x40 != 0 {
			frame = fetchResponse(12, recs)
			o = Options{Direction: Response, APIKey: 1, APIVersion: 12, MaxDecompressed: 1 << 20}
		}
		frame = frame[:len(frame):len(frame)]
		m := Builtin().Decode(frame, o)
		checkFuzzed(t, m, frame)
		sameAsReused(t, m, reused.Decode(frame, o))
		for i, s := range m.Sources {
			if s.Parent < 0 || s.Parent > i || s.Offset < 0 || s.Size < 0 || s.Offset+s.Size > len(m.SourceData(s.Parent)) {
				t.Fatalf("source %d %+v outside its parent", i+1, s)
			}
		}
		m.Tree.Walk(func(n *Node, _ int) {
			if int(n.Source) > len(m.Sources) {
				t.Fatalf("%s in source %d of %d", n.Name, n.Source, len(m.Sources))
			}
		})
		_ = AppendLayout(nil, m)
		if p := m.Tree.AtSource(uint16(len(m.Sources)), int(sel)); p != nil && p[len(p)-1].Source != uint16(len(m.Sources)) {
			t.Fatalf("AtSource found a node of source %d", p[len(p)-1].Source)
		}
	})
}

// benchBatch is about 1 MiB of records of 100-byte values with keys and,
// on every tenth, a header: what a busy producer sends.
func benchBatch(b *testing.B, c int16, xerial bool) (frame []byte, raw int) {
	var rs []kmsg.Record
	for i := 0; raw < 1<<20; i++ {
		r := rec(int32(i), fmt.Sprintf("user-%d", i%1000), fmt.Sprintf("{\"id\":%d,\"event\":\"click\",\"page\":\"/products/%d\",\"ts\":%d,\"pad\":\"%s\"}", i, i%97, 1700000000000+i, strings.Repeat("x", 20)))
		if i%10 == 0 {
			r.Headers = []kmsg.Header{{Key: "trace-id", Value: []byte(fmt.Sprintf("%016x", i))}}
		}
		raw += len(encodeRecord(r))
		rs = append(rs, r)
	}
	return produce(9, batch(b, batchSpec{attrs: c, xerial: xerial, records: rs})), raw
}

// BenchmarkRecords decodes a Produce request of a 1 MiB batch with each
// codec, as the CLI does (a reused Decoder). The rate counts the
// records' uncompressed bytes, so that the codecs compare on the same work.
func BenchmarkRecords(b *testing.B) {
	for _, c := range codecCases {
		b.Run(c.name, func(b *testing.B) {
			frame, raw := benchBatch(b, c.codec, c.xerial)
			x := Builtin().NewDecoder()
			if m := x.Decode(frame, Options{}); len(m.Problems) > 0 {
				b.Fatal(m.Problems)
			}
			b.SetBytes(int64(raw))
			b.ReportAllocs()
			for b.Loop() {
				x.Decode(frame, Options{})
			}
			b.ReportMetric(float64(len(frame)), "frame-bytes") // after the loop, which resets the metrics
		})
	}
}

// BenchmarkRecordsJSON adds the NDJSON rendering of the decoded message.
func BenchmarkRecordsJSON(b *testing.B) {
	frame, raw := benchBatch(b, codecNone, false)
	x := Builtin().NewDecoder()
	var buf []byte
	b.SetBytes(int64(raw))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendJSON(buf[:0], x.Decode(frame, Options{}))
	}
}

// BenchmarkRecordsAppendJSON is the NDJSON rendering alone of a decoded
// record batch (BenchmarkRecordsJSON less BenchmarkRecords, measured apart).
func BenchmarkRecordsAppendJSON(b *testing.B) {
	frame, raw := benchBatch(b, codecNone, false)
	m := Builtin().Decode(frame, Options{})
	var buf []byte
	b.SetBytes(int64(raw))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendJSON(buf[:0], m)
	}
}
