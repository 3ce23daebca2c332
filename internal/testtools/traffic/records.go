package traffic

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ScenarioRecords is ordinary client traffic: producers in every codec, a
// transactional producer, sarama's producers and a consumer reading it
// all back. Its capture is synthesized from the recorded bytes, as the
// TLS ones are.
const ScenarioRecords = "records-codecs"

// RecordsExpectFormat names the records sidecar's format.
const RecordsExpectFormat = "kdissect-records-expect/1"

// RecordsExpect is the sidecar of a records capture: what the clients
// produced and what the consumer got, read off the clients' own APIs
// (kgo.Record, sarama.ProducerMessage), not off the wire.
type RecordsExpect struct {
	Format     string        `json:"format"`
	Scenario   string        `json:"scenario"`
	BrokerPort int           `json:"brokerPort"`
	Produced   []RecordJSON  `json:"produced"`
	Consumed   []RecordJSON  `json:"consumed"`
	Legacy     []LegacyJSON  `json:"legacy"`
	Producers  []ProducerRef `json:"producers"`
}

// RecordJSON is one record. Keys and values are hex (some are binary);
// null for a null key or value. Offset is -1 for a produced record (the
// broker assigns it). Codec is the batch's compression.
type RecordJSON struct {
	Topic     string       `json:"topic"`
	Partition int32        `json:"partition"`
	Offset    int64        `json:"offset"`
	Timestamp int64        `json:"timestamp"`
	Key       *string      `json:"key"`
	Value     *string      `json:"value"`
	Headers   []HeaderJSON `json:"headers"`
	Codec     string       `json:"codec"`
	// Transactional: produced inside a transaction that was committed.
	Transactional bool `json:"transactional,omitempty"`
}

// HeaderJSON is a record header; Value is hex, null for a null value.
type HeaderJSON struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

// LegacyJSON is a message sent in the MessageSet format (magic 0 or 1).
// kfake does not take Produce v2 (it closes the connection unanswered):
// the message is in the request only.
type LegacyJSON struct {
	Topic     string  `json:"topic"`
	Magic     int     `json:"magic"`
	Codec     string  `json:"codec"`
	Timestamp int64   `json:"timestamp"` // -1 in magic 0
	Key       *string `json:"key"`
	Value     *string `json:"value"`
}

// ProducerRef says which client produced a topic's records.
type ProducerRef struct {
	Topic  string `json:"topic"`
	Client string `json:"client"`
	Codec  string `json:"codec"`
}

func hexp(b []byte) *string {
	if b == nil {
		return nil
	}
	s := hex.EncodeToString(b)
	return &s
}

// recordsBase is the first produced record's timestamp: fixed, so the
// sidecar does not depend on the clock.
var recordsBase = time.UnixMilli(1767225600000) // 2026-01-01T00:00:00Z

// recordsOf makes n records for topic: keys (every third null), values
// (text, and binary every fourth), headers on some (one with a null
// value), distinct timestamps.
func recordsOf(topic string, n, from int) []*kgo.Record {
	var out []*kgo.Record
	for i := range n {
		j := from + i
		r := &kgo.Record{Topic: topic, Timestamp: recordsBase.Add(time.Duration(j) * time.Millisecond)}
		if i%3 != 0 {
			r.Key = fmt.Appendf(nil, "user-%d", j%5)
		}
		if i%4 == 3 {
			r.Value = []byte{0x00, 0xff, 0x10, byte(j), 0x80, 0x7f, 0x1b}
		} else {
			r.Value = fmt.Appendf(nil, `{"order":%d,"topic":%q,"note":"héllo"}`, j, topic)
		}
		if i%2 == 0 {
			r.Headers = []kgo.RecordHeader{{Key: "trace-id", Value: fmt.Appendf(nil, "t-%04d", j)}, {Key: "bin", Value: []byte{0xde, 0xad, byte(j)}}}
		}
		if i == 1 {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: "null-value"})
		}
		out = append(out, r)
	}
	return out
}

func recordJSON(r *kgo.Record, codec string, offset int64) RecordJSON {
	out := RecordJSON{Topic: r.Topic, Partition: r.Partition, Offset: offset, Timestamp: r.Timestamp.UnixMilli(),
		Key: hexp(r.Key), Value: hexp(r.Value), Codec: codec, Headers: []HeaderJSON{}}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, HeaderJSON{Key: h.Key, Value: hexp(h.Value)})
	}
	return out
}

// RunRecords runs the records scenario against its own kfake broker and
// returns the sidecar (ports not yet renumbered) and the wire.
//
//   - kgo producers, one per codec (none, gzip, snappy, lz4, zstd), each
//     one batch of 6 records to topic orders-CODEC, produce v13 or so;
//   - a transactional kgo producer (txn-1): 3 records to orders-txn,
//     committed, so the log holds a commit marker (a control batch);
//   - IBM sarama (Kafka 2.8) producing 4 records with snappy to
//     orders-sarama: sarama writes snappy in the xerial framing;
//   - sarama claiming Kafka 0.10.0 producing 2 messages with snappy:
//     Produce v2 with a MessageSet v1 wrapper, which kfake leaves
//     unanswered;
//   - a kgo consumer fetching every topic from the start.
func RunRecords(ctx context.Context) (*RecordsExpect, *Wire, error) {
	topics := []string{"orders-none", "orders-gzip", "orders-snappy", "orders-lz4", "orders-zstd", "orders-txn", "orders-sarama", "orders-legacy"}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(1, topics...))
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	wire := NewWire()
	var mu sync.Mutex
	var conns []net.Conn
	dial := func(ctx context.Context, network, host string) (net.Conn, error) {
		raw, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
		if err != nil {
			return nil, err
		}
		wc := wire.Wrap(raw)
		mu.Lock()
		conns = append(conns, wc)
		mu.Unlock()
		return wc, nil
	}
	exp := &RecordsExpect{Format: RecordsExpectFormat, Scenario: ScenarioRecords, Produced: []RecordJSON{}, Consumed: []RecordJSON{}}
	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
	}{
		{"none", kgo.NoCompression()}, {"gzip", kgo.GzipCompression()}, {"snappy", kgo.SnappyCompression()},
		{"lz4", kgo.Lz4Compression()}, {"zstd", kgo.ZstdCompression()},
	}
	codecOf := map[string]string{}
	n := 0
	for _, cc := range codecs {
		topic := "orders-" + cc.name
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.Dialer(dial), kgo.ClientID("kdissect-producer-"+cc.name),
			kgo.ProducerBatchCompression(cc.codec), kgo.ProducerLinger(20*time.Millisecond), kgo.DisableIdempotentWrite())
		if err != nil {
			return nil, nil, err
		}
		recs := recordsOf(topic, 6, n)
		n += len(recs)
		err = cl.ProduceSync(ctx, recs...).FirstErr()
		cl.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("produce %s: %w", topic, err)
		}
		for _, r := range recs {
			exp.Produced = append(exp.Produced, recordJSON(r, cc.name, -1))
		}
		codecOf[topic] = cc.name
		exp.Producers = append(exp.Producers, ProducerRef{Topic: topic, Client: "kgo", Codec: cc.name})
	}

	// Transactional (and so idempotent): the commit writes a control batch.
	txn, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.Dialer(dial), kgo.ClientID("kdissect-txn"),
		kgo.TransactionalID("txn-1"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(20*time.Millisecond))
	if err != nil {
		return nil, nil, err
	}
	if err := txn.BeginTransaction(); err != nil {
		txn.Close()
		return nil, nil, err
	}
	trecs := recordsOf("orders-txn", 3, n)
	n += len(trecs)
	if err := txn.ProduceSync(ctx, trecs...).FirstErr(); err != nil {
		txn.Close()
		return nil, nil, fmt.Errorf("transactional produce: %w", err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		txn.Close()
		return nil, nil, fmt.Errorf("commit: %w", err)
	}
	txn.Close()
	for _, r := range trecs {
		j := recordJSON(r, "none", -1)
		j.Transactional = true
		exp.Produced = append(exp.Produced, j)
	}
	codecOf["orders-txn"] = "none"
	exp.Producers = append(exp.Producers, ProducerRef{Topic: "orders-txn", Client: "kgo transactional", Codec: "none"})

	sent, err := saramaProduce(ctx, dial, addr, sarama.V2_8_0_0, "orders-sarama", 4, n, true)
	if err != nil {
		return nil, nil, fmt.Errorf("sarama: %w", err)
	}
	n += 4
	for _, m := range sent {
		r := &kgo.Record{Topic: m.Topic, Partition: m.Partition, Timestamp: m.Timestamp, Key: m.key, Value: m.value}
		for _, h := range m.Headers {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: string(h.Key), Value: h.Value})
		}
		exp.Produced = append(exp.Produced, recordJSON(r, "snappy", -1))
	}
	codecOf["orders-sarama"] = "snappy"
	exp.Producers = append(exp.Producers, ProducerRef{Topic: "orders-sarama", Client: "sarama (Kafka 2.8)", Codec: "snappy"})

	legacy, err := saramaProduce(ctx, dial, addr, sarama.V0_10_0_0, "orders-legacy", 2, n, false)
	if err != nil {
		return nil, nil, fmt.Errorf("sarama legacy: %w", err)
	}
	for _, m := range legacy {
		exp.Legacy = append(exp.Legacy, LegacyJSON{Topic: m.Topic, Magic: 1, Codec: "snappy", Timestamp: m.Timestamp.UnixMilli(), Key: hexp(m.key), Value: hexp(m.value)})
	}
	exp.Producers = append(exp.Producers, ProducerRef{Topic: "orders-legacy", Client: "sarama (Kafka 0.10.0), refused by kfake", Codec: "snappy"})

	want := len(exp.Produced)
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.Dialer(dial), kgo.ClientID("kdissect-consumer"),
		kgo.ConsumeTopics(topics[:7]...), kgo.FetchMaxWait(100*time.Millisecond), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return nil, nil, err
	}
	var got []*kgo.Record
	for len(got) < want {
		fs := cons.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			cons.Close()
			return nil, nil, fmt.Errorf("consume: %w", err)
		}
		got = append(got, fs.Records()...)
	}
	cons.Close()
	sort.SliceStable(got, func(i, j int) bool {
		if got[i].Topic != got[j].Topic {
			return got[i].Topic < got[j].Topic
		}
		return got[i].Offset < got[j].Offset
	})
	for _, r := range got {
		j := recordJSON(r, codecOf[r.Topic], r.Offset)
		j.Transactional = r.Topic == "orders-txn"
		exp.Consumed = append(exp.Consumed, j)
	}
	mu.Lock()
	for _, c := range conns {
		c.Close() // every connection ends with its FIN in the capture
	}
	mu.Unlock()
	if err := wire.Err(); err != nil {
		return nil, nil, err
	}
	return exp, wire, nil
}

type saramaMsg struct {
	*sarama.ProducerMessage
	key, value []byte
}

// saramaProduce sends count records with snappy from a sarama producer
// claiming version; accepted says whether the broker is to take them (a
// MessageSet it does not take is on the wire all the same).
func saramaProduce(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), addr string, version sarama.KafkaVersion, topic string, count, from int, accepted bool) ([]saramaMsg, error) {
	cfg := sarama.NewConfig()
	cfg.ClientID = "kdissect-sarama"
	cfg.Version = version
	cfg.Producer.Compression = sarama.CompressionSnappy
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 0
	cfg.Producer.Flush.Messages = count
	cfg.Producer.Flush.Frequency = time.Second
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = ctxDialer{ctx: ctx, dial: dial}
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 1
	p, err := sarama.NewAsyncProducer([]string{addr}, cfg)
	if err != nil {
		return nil, err
	}
	var out []saramaMsg
	for i := range count {
		j := from + i
		m := saramaMsg{key: fmt.Appendf(nil, "sarama-%d", j), value: fmt.Appendf(nil, "sarama value %d", j)}
		if i == count-1 {
			m.value = []byte{0x01, 0x00, 0xfe, byte(j)}
		}
		m.ProducerMessage = &sarama.ProducerMessage{Topic: topic, Key: sarama.ByteEncoder(m.key), Value: sarama.ByteEncoder(m.value),
			Timestamp: recordsBase.Add(time.Duration(j) * time.Millisecond)}
		if accepted && i%2 == 0 {
			m.Headers = []sarama.RecordHeader{{Key: []byte("source"), Value: []byte("sarama")}}
		}
		p.Input() <- m.ProducerMessage
		out = append(out, m)
	}
	var errs []error
	for range count {
		select {
		case <-p.Successes():
		case e := <-p.Errors():
			errs = append(errs, e)
		case <-ctx.Done():
			p.AsyncClose()
			return nil, ctx.Err()
		}
	}
	if err := p.Close(); err != nil && accepted {
		return nil, err
	}
	if accepted && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if !accepted && len(errs) == 0 {
		return nil, fmt.Errorf("the broker accepted %s's MessageSet: the scenario expects it refused", topic)
	}
	for i := range out {
		out[i].Partition = 0
	}
	return out, nil
}

type ctxDialer struct {
	ctx  context.Context
	dial func(context.Context, string, string) (net.Conn, error)
}

func (d ctxDialer) Dial(network, addr string) (net.Conn, error) { return d.dial(d.ctx, network, addr) }
func (d ctxDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.dial(ctx, network, addr)
}

// BuildRecordsCapture runs the records scenario and writes NAME.pcap and
// NAME.expect.json into dir, the broker shown on 9092 and the clients on
// 50100, 50101, ... in connection order.
func BuildRecordsCapture(dir string) (pcapPath string, exp *RecordsExpect, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	exp, wire, err := RunRecords(ctx)
	if err != nil {
		return "", nil, err
	}
	wire.Renumber(SynthBrokerPort, func(i int) int { return SynthClientPort + i })
	exp.BrokerPort = SynthBrokerPort
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	base := filepath.Join(dir, ScenarioRecords)
	f, err := os.Create(base + ".pcap")
	if err != nil {
		return "", nil, err
	}
	if _, err := WritePcap(f, wire); err != nil {
		f.Close()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		return "", nil, err
	}
	js, err := json.MarshalIndent(exp, "", " ")
	if err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(base+".expect.json", append(js, '\n'), 0o644); err != nil {
		return "", nil, err
	}
	return base + ".pcap", exp, nil
}

// LoadRecordsExpect reads a records sidecar.
func LoadRecordsExpect(path string) (*RecordsExpect, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var e RecordsExpect
	if err := unmarshalStrict(b, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if e.Format != RecordsExpectFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", path, e.Format, RecordsExpectFormat)
	}
	return &e, nil
}
