package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// recordBodies is the -records workload: Produce v9 request bodies and
// Fetch v11 response bodies whose records are real RecordBatch v2 of
// 1-16 KiB (keys, JSON values of 60-400 bytes, a header on some records),
// made once and reused, so that the capture is mostly records. codecs
// says which compressions the batches use: "none", or "mixed" (half
// none, the rest gzip, snappy, lz4 and zstd in equal parts).
type recordBodies struct {
	produce, fetch [][]byte
}

func newRecordBodies(rng *rand.Rand, codecs string) (*recordBodies, error) {
	var pick []int16
	switch codecs {
	case "none":
		pick = []int16{0}
	case "mixed":
		pick = []int16{0, 0, 0, 0, 1, 2, 3, 4}
	default:
		return nil, fmt.Errorf("-records %q: none or mixed", codecs)
	}
	rb := &recordBodies{}
	for i := range 64 {
		codec := pick[i%len(pick)]
		size := 1024 + rng.IntN(15<<10)
		var batches [][]byte
		for _, n := range []int{size, size / 2} { // two partitions' batches
			b, err := recordBatch(rng, codec, n, int64(i*1000))
			if err != nil {
				return nil, err
			}
			batches = append(batches, b)
		}
		p := kmsg.NewPtrProduceRequest()
		p.Version = 9
		p.Acks = -1
		p.TimeoutMillis = 30000
		f := kmsg.NewPtrFetchResponse()
		f.Version = 11
		topic := topics[i%len(topics)]
		pt, ft := kmsg.NewProduceRequestTopic(), kmsg.NewFetchResponseTopic()
		pt.Topic, ft.Topic = topic, topic
		for j, b := range batches {
			pp := kmsg.NewProduceRequestTopicPartition()
			pp.Partition, pp.Records = int32(j), b
			pt.Partitions = append(pt.Partitions, pp)
			fp := kmsg.NewFetchResponseTopicPartition()
			fp.Partition, fp.HighWatermark, fp.LastStableOffset, fp.LogStartOffset = int32(j), int64(i*1000+500), int64(i*1000+500), 0
			fp.RecordBatches = b
			ft.Partitions = append(ft.Partitions, fp)
		}
		p.Topics = append(p.Topics, pt)
		f.Topics = append(f.Topics, ft)
		rb.produce = append(rb.produce, p.AppendTo(nil))
		rb.fetch = append(rb.fetch, f.AppendTo(nil))
	}
	return rb, nil
}

// recordBatch is a batch of records adding up to about size bytes
// before compression, base offset base.
func recordBatch(rng *rand.Rand, codec int16, size int, base int64) ([]byte, error) {
	var raw []byte
	n := int32(0)
	for len(raw) < size {
		r := kmsg.Record{TimestampDelta64: int64(n), OffsetDelta: n, Key: fmt.Appendf(nil, "user-%d", rng.IntN(100000))}
		pad := 20 + rng.IntN(320)
		r.Value = fmt.Appendf(nil, `{"id":%d,"event":"click","page":"/products/%d","ts":%d,"pad":"%s"}`, rng.IntN(1<<30), rng.IntN(1000), 1767225600000+int64(n), bytes.Repeat([]byte{'a' + byte(rng.IntN(26))}, pad))
		if n%10 == 0 {
			r.Headers = []kmsg.Header{{Key: "trace-id", Value: fmt.Appendf(nil, "%016x", rng.Uint64())}}
		}
		body := r.AppendTo(nil)[1:] // the varint 0 of Length is one byte
		raw = append(append(raw, kbin.AppendVarint(nil, int32(len(body)))...), body...)
		n++
	}
	payload, err := compressWith(codec, raw)
	if err != nil {
		return nil, err
	}
	b := kmsg.RecordBatch{FirstOffset: base, PartitionLeaderEpoch: 5, Magic: 2, Attributes: codec,
		LastOffsetDelta: n - 1, FirstTimestamp: 1767225600000, MaxTimestamp: 1767225600000 + int64(n-1),
		ProducerID: 4000, ProducerEpoch: 0, FirstSequence: 0, NumRecords: n, Records: payload}
	b.Length = int32(49 + len(payload))
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out, nil
}

func compressWith(codec int16, b []byte) ([]byte, error) {
	var out bytes.Buffer
	switch codec {
	case 0:
		return b, nil
	case 1:
		w := gzip.NewWriter(&out)
		w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
	case 2:
		return s2.EncodeSnappy(nil, b), nil
	case 3:
		w := lz4.NewWriter(&out)
		w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
	case 4:
		w, err := zstd.NewWriter(&out)
		if err != nil {
			return nil, err
		}
		w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

var consumerID = "bench-consumer"

// exchange is one records exchange: a Produce request (v9) with its
// small response, or a small Fetch request (v11) with its records.
func (rb *recordBodies) exchange(rng *rand.Rand, corr int32) (req, resp []byte) {
	i := rng.IntN(len(rb.produce))
	if rng.IntN(2) == 0 {
		pr := kmsg.NewPtrProduceResponse()
		pr.Version = 9
		t := kmsg.NewProduceResponseTopic()
		t.Topic = topics[i%len(topics)]
		t.Partitions = append(t.Partitions, kmsg.NewProduceResponseTopicPartition())
		pr.Topics = append(pr.Topics, t)
		return testkit.Request(0, 9, corr, &producerID, true, rb.produce[i]), testkit.KmsgResponse(pr, corr)
	}
	fr := kmsg.NewPtrFetchRequest()
	fr.Version = 11
	fr.ReplicaID = -1
	fr.MaxWaitMillis = 500
	fr.MinBytes = 1
	fr.MaxBytes = 52428800
	t := kmsg.NewFetchRequestTopic()
	t.Topic = topics[i%len(topics)]
	for j := range 2 {
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition, p.FetchOffset, p.PartitionMaxBytes = int32(j), int64(i*1000), 1048576
		t.Partitions = append(t.Partitions, p)
	}
	fr.Topics = append(fr.Topics, t)
	return testkit.KmsgRequest(fr, corr, &consumerID), testkit.Response(corr, false, rb.fetch[i])
}
