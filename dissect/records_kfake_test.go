package dissect

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestRecordsAgainstKfake produces with franz-go's client in every codec
// it writes to kfake's broker (neither of them ours), consumes the
// records back, records both connections, and checks that every Produce
// request and Fetch response decodes without a problem, with the keys,
// values, headers, timestamps and (fetched) offsets the client produced
// and consumed.
func TestRecordsAgainstKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker")
	}
	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
		want  string
	}{
		{"none", kgo.NoCompression(), "none"},
		{"gzip", kgo.GzipCompression(), "gzip"},
		{"snappy", kgo.SnappyCompression(), "snappy"},
		{"lz4", kgo.Lz4Compression(), "lz4"},
		{"zstd", kgo.ZstdCompression(), "zstd"},
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(1, "t-none", "t-gzip", "t-snappy", "t-lz4", "t-zstd"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, cc := range codecs {
		t.Run(cc.name, func(t *testing.T) {
			topic := "t-" + cc.name
			rec := &recorder{}
			cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.Dialer(rec.dial),
				kgo.ProducerBatchCompression(cc.codec), kgo.ProducerLinger(50*time.Millisecond),
				kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			base := time.UnixMilli(1700000000000)
			var produced []*kgo.Record
			for i := range 50 {
				r := &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "value %d %s", i, cc.name), Timestamp: base.Add(time.Duration(i) * time.Millisecond)}
				if i%3 != 0 {
					r.Key = fmt.Appendf(nil, "key-%d", i%7)
				}
				if i%5 == 0 {
					r.Headers = []kgo.RecordHeader{{Key: "trace", Value: fmt.Appendf(nil, "t%d", i)}, {Key: "empty"}}
				}
				produced = append(produced, r)
			}
			if err := cl.ProduceSync(ctx, produced...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			var consumed []*kgo.Record
			for len(consumed) < len(produced) {
				fs := cl.PollFetches(ctx)
				if err := fs.Err(); err != nil {
					t.Fatal(err)
				}
				consumed = append(consumed, fs.Records()...)
			}
			cl.Close()

			var gotProduced, gotFetched []gotRecord
			var batches int
			for i := range rec.conns {
				msgs, _ := decodeCapture(t, rec.frames(i), Options{}, false, false)
				for _, d := range msgs {
					if len(d.m.Problems) > 0 {
						t.Errorf("%s: %v", d.m.Summary, d.m.Problems)
					}
					if err := checkShape(d.m, d.frame, false); err != nil {
						t.Errorf("%s: %v", d.m.Summary, err)
					}
					switch {
					case d.m.APIKey == 0 && d.m.Direction == Request:
						gotProduced = append(gotProduced, treeRecords(t, d.m.Tree)...)
					case d.m.APIKey == 1 && d.m.Direction == Response:
						gotFetched = append(gotFetched, treeRecords(t, d.m.Tree)...)
					default:
						continue
					}
					d.m.Tree.Walk(func(n *Node, _ int) {
						if n.Type == "RecordBatch v2" {
							batches++
							if a := n.Child("attributes"); codecName(int(a.Int&7)) != cc.want {
								t.Errorf("batch %s: attributes %s", n.Name, a.Display())
							}
						}
					})
					if cc.want != "none" && len(d.m.Sources) == 0 && len(treeRecordsOf(d.m)) > 0 {
						t.Errorf("%s: compressed records in no source", d.m.Summary)
					}
				}
			}
			if batches < 2 {
				t.Fatalf("%d batches seen", batches)
			}
			want := func(rs []*kgo.Record, offsets bool) []gotRecord {
				var out []gotRecord
				for _, r := range rs {
					g := gotRecord{ts: r.Timestamp.UnixMilli(), key: "<null>", value: string(r.Value)}
					if r.Key != nil {
						g.key = string(r.Key)
					}
					if offsets {
						g.offset = r.Offset
					}
					for _, h := range r.Headers {
						v := "<null>" // franz-go writes a nil header value as null
						if h.Value != nil {
							v = string(h.Value)
						}
						g.headers = append(g.headers, h.Key+"="+v)
					}
					out = append(out, g)
				}
				return out
			}
			// A producer writes offsets from 0 in each batch: only their
			// order is the client's.
			for i := range gotProduced {
				gotProduced[i].offset = 0
			}
			sameRecords(t, gotProduced, want(produced, false))
			sameRecords(t, gotFetched, want(consumed, true))
		})
	}
}

func treeRecordsOf(m *Message) []*Node {
	var out []*Node
	m.Tree.Walk(func(n *Node, _ int) {
		if n.Type == "Record" {
			out = append(out, n)
		}
	})
	return out
}
