package traffic

import (
	"context"
	"net"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EverydayAPIs are the API keys RunEveryday's clients always send (those
// whose sending hangs on no timing): produce and fetch, a consumer group
// and its offsets, and the admin calls on topics, configs, quotas, SCRAM
// users, producers and transactions.
var EverydayAPIs = []int16{0, 1, 2, 3, 8, 9, 10, 11, 13, 14, 15, 16, 18, 19, 20, 21, 22, 23, 32, 33, 35, 37, 43, 44, 46, 47, 48, 49, 50, 51, 60, 61, 65, 66, 71, 75}

// RunEveryday runs the traffic of a cluster's working day against one
// kfake broker: franz-go producing, consuming in a group and calling its
// admin client across some forty APIs, then IBM sarama doing the same at
// Kafka 0.11, 2.1 and 3.6, so that the versions of three eras are sent.
// Errors of single calls are not failures: kfake answers some with error
// codes, and the wire is what is wanted.
func RunEveryday(ctx context.Context) (*Wire, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(2, "a", "b", "s0", "s1", "s2"))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	wire := NewWire()
	dial := func(ctx context.Context, network, host string) (net.Conn, error) {
		raw, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
		if err != nil {
			return nil, err
		}
		return wire.Wrap(raw), nil
	}
	if err := everydayKgo(ctx, addr, dial); err != nil {
		return nil, err
	}
	for i, v := range []sarama.KafkaVersion{sarama.V0_11_0_0, sarama.V2_1_0_0, sarama.V3_6_0_0} {
		if err := everydaySarama(ctx, addr, dial, v, "s"+string(rune('0'+i))); err != nil {
			return nil, err
		}
	}
	return wire, wire.Err()
}

func everydayKgo(ctx context.Context, addr string, dial func(context.Context, string, string) (net.Conn, error)) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.Dialer(dial), kgo.ClientID("everyday"),
		kgo.ConsumerGroup("g-kgo"), kgo.ConsumeTopics("a", "b"), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	if err != nil {
		return err
	}
	for range 20 {
		cl.Produce(ctx, &kgo.Record{Topic: "a", Key: []byte("k"), Value: []byte("hello"),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		cl.Close()
		return err
	}
	pctx, done := context.WithTimeout(ctx, 5*time.Second)
	for n := 0; n < 20 && pctx.Err() == nil; {
		n += cl.PollFetches(pctx).NumRecords()
	}
	done()
	cl.CommitUncommittedOffsets(ctx)

	adm := kadm.NewClient(cl)
	v := kadm.StringPtr
	adm.CreateTopics(ctx, 3, 1, map[string]*string{"retention.ms": v("1000")}, "c")
	adm.CreatePartitions(ctx, 2, "c")
	adm.DescribeTopicConfigs(ctx, "a", "c")
	adm.DescribeBrokerConfigs(ctx)
	adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: v("2000")}}, "c")
	adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: v("3000")}}, "c")
	adm.ListStartOffsets(ctx, "a")
	var epochs kadm.OffsetForLeaderEpochRequest
	epochs.Add("a", 0, 0)
	adm.OffsetForLeaderEpoch(ctx, epochs)
	adm.DescribeGroups(ctx, "g-kgo")
	adm.ListGroups(ctx)
	adm.FetchOffsets(ctx, "g-kgo")
	var below kadm.Offsets
	below.AddOffset("a", 0, 1, -1)
	adm.DeleteRecords(ctx, below)
	adm.DescribeAllLogDirs(ctx, nil)
	adm.DescribeClientQuotas(ctx, false, nil)
	adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "user", Name: v("alice")}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1024}},
	}})
	adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "everyday-pw"}})
	adm.DescribeUserSCRAMs(ctx)
	adm.DescribeProducers(ctx, nil)
	adm.ListTransactions(ctx, nil, nil)
	adm.DescribeTransactions(ctx, "t1")
	adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
	adm.DeleteOffsets(ctx, "g-kgo", kadm.TopicsSet{"a": {0: {}}})
	adm.DeleteTopics(ctx, "c")
	for _, r := range []kmsg.Request{kmsg.NewPtrListPartitionReassignmentsRequest(), kmsg.NewPtrGetTelemetrySubscriptionsRequest(),
		kmsg.NewPtrDescribeTopicPartitionsRequest()} {
		cl.Request(ctx, r)
	}
	cl.Close()
	return nil
}

// everydaySarama produces to topic, calls the cluster admin, and runs a
// consumer group on topic until it has read a message, as a client of
// Kafka version v.
func everydaySarama(ctx context.Context, addr string, dial func(context.Context, string, string) (net.Conn, error), v sarama.KafkaVersion, topic string) error {
	cfg := sarama.NewConfig()
	cfg.Version = v
	cfg.ClientID = "everyday-sarama"
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = ctxDialer{ctx: ctx, dial: dial}
	cfg.Producer.Return.Successes = true
	cfg.Producer.Compression = sarama.CompressionLZ4
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Metadata.Retry.Max = 1
	cl, err := sarama.NewClient([]string{addr}, cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	p, err := sarama.NewSyncProducerFromClient(cl)
	if err != nil {
		return err
	}
	for range 3 {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("v")}); err != nil {
			return err
		}
	}
	if adm, err := sarama.NewClusterAdminFromClient(cl); err == nil {
		adm.CreateTopic(topic+"-c", &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1, ConfigEntries: map[string]*string{"retention.ms": nil}}, false)
		adm.ListTopics()
		adm.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic + "-c"})
		five := "5"
		adm.AlterConfig(sarama.TopicResource, topic+"-c", map[string]*string{"retention.ms": &five}, false)
		adm.CreatePartitions(topic+"-c", 4, nil, false)
		adm.ListConsumerGroups()
		adm.DescribeCluster()
		adm.DeleteRecords(topic, map[int32]int64{0: 1})
		adm.DescribeLogDirs([]int32{0})
		adm.DeleteTopic(topic + "-c")
	}
	g, err := sarama.NewConsumerGroupFromClient("g-"+topic, cl)
	if err != nil {
		return err
	}
	gctx, done := context.WithTimeout(ctx, 5*time.Second)
	defer done()
	h := &readN{done: done}
	h.left.Store(1) // DeleteRecords took one or more of the three
	g.Consume(gctx, []string{topic}, h)
	return g.Close()
}

// readN is a consumer group handler that marks messages read until left
// is 0, and then ends the session. Its claims run at once, one a partition.
type readN struct {
	left atomic.Int32
	done context.CancelFunc
}

func (h *readN) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *readN) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *readN) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		s.MarkMessage(m, "")
		if h.left.Add(-1) <= 0 {
			s.Commit()
			h.done()
			return nil
		}
	}
	return nil
}
