package filter

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// Wireshark names whose fields are not spelt as their name suggests
// match what tshark matches. Each want is what `tshark -r FILE -d
// tcp.port==29092,kafka -Y EXPR` (4.0.17) matched on the shipped capture,
// as API key/direction and count. The one difference is noted: kdissect
// decodes a consumer's assignment, which tshark leaves as bytes.
func TestWiresharkNamesAsTshark(t *testing.T) {
	o := capture.DefaultOptions()
	o.All = true
	for _, c := range []struct {
		file, expr string
		want       map[string]int
	}{
		// CreateTopics spells them timeoutMs and validateOnly.
		{"kafka-python.pcap", `kafka.timeout == 30000`, map[string]int{"0/request": 5, "19/request": 1, "20/request": 1}},
		{"kafka-python.pcap", `kafka.validate_only == 0`, map[string]int{"19/request": 1}},
		// OffsetFetch's PartitionIndexes, and (kdissect only) SyncGroup's
		// assignment.
		{"kafka-python.pcap", `kafka.partition_id == 2`, map[string]int{"0/request": 1, "0/response": 1, "1/request": 1,
			"1/response": 1, "2/request": 1, "2/response": 1, "3/response": 17, "8/request": 1, "8/response": 1,
			"9/request": 1, "9/response": 1, "14/request": 1, "14/response": 1}},
		// A batch's record count and its length.
		{"kafka-python.pcap", `kafka.batch_size == 5`, map[string]int{"0/request": 5, "1/response": 1}},
		{"kafka-python.pcap", `kafka.message_size == 1299`, map[string]int{"0/request": 1, "1/response": 1}},
		// The bits of a batch's attributes, and of a MessageSet message's.
		{"kafka-python.pcap", `kafka.batch_codec == 1`, map[string]int{"0/request": 1, "1/response": 1}},
		{"kafka-python.pcap", `kafka.batch_codec == 4`, map[string]int{"0/request": 1, "1/response": 1}},
		{"kafkajs.pcap", `kafka.batch_control_batch == 1`, map[string]int{"1/response": 1}},
		{"kafkajs.pcap", `kafka.batch_transactional == 1`, map[string]int{"0/request": 1, "1/response": 1}},
		{"librdkafka.pcap", `kafka.batch_timestamp_type == 0`, map[string]int{"0/request": 4, "1/response": 1}},
		{"kafka-python.pcap", `kafka.message_codec == 1`, map[string]int{"0/request": 2}},
		// A Metadata response's replicas and its controller.
		{"kafka-node.pcap", `kafka.replica_id == 0`, map[string]int{"3/response": 1}},
		{"kafka-node.pcap", `kafka.node_id == 0`, map[string]int{"3/response": 1}},
		// A Fetch request's CurrentLeaderEpoch.
		{"librdkafka.pcap", `kafka.leader_epoch == -1`, map[string]int{"1/request": 3}},
		{"librdkafka.pcap", `kafka.current_leader_epoch == -1`, map[string]int{}},
		// The tag of every tagged field, known or not: ApiVersions'
		// FinalizedFeatures is tag 2.
		{"librdkafka.pcap", `kafka.tagged_field_tag == 2`, map[string]int{"18/response": 3}},
	} {
		f, err := Compile(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		records(t, c.file, o, func(r *capture.Record) {
			if r.Message != nil && f.Record(r) {
				got[fmt.Sprintf("%d/%s", r.Message.APIKey, r.Message.Direction)]++
			}
		})
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %s matched %v, tshark %v", c.file, c.expr, got, c.want)
		}
	}
}

// Wireshark names of fields no shipped capture carries, on a capture
// made with kmsg: each want is what tshark 4.0.17 matched on it (-d
// tcp.port==9092,kafka), as API key/direction and count, but for one:
// tshark also calls the DescribeGroups v1 response malformed
// (_ws.malformed), as it shows the member's empty MemberMetadata and
// MemberAssignment as missing; they are 4 bytes each, length 0.
func TestWiresharkNamesAsTsharkMade(t *testing.T) {
	file := tsharkProbe(t)
	for expr, want := range map[string]map[string]int{
		`kafka.batch_index == 3`:                          {"0/response": 1},
		`kafka.batch_index_error_message == "bad record"`: {"0/response": 1},
		`kafka.first_offset == 42`:                        {"1/response": 1},
		`kafka.client_host == "/10.0.0.1"`:                {"15/response": 1},
		`kafka.listener_name == "PLAINTEXT"`:              {"6/request": 1},
		`kafka.broker_security_protocol_type == 1`:        {"6/request": 1},
		`kafka.tagged_field_tag == 99`:                    {"18/request": 1},
		`kafka.tagged_field_tag == 0`:                     {"18/response": 1},
		`_ws.malformed`:                                   {},
	} {
		f, err := Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		r, err := capture.Open(func() capture.Options { o := capture.DefaultOptions(); o.All = true; return o }(), []string{file}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		_, err = r.Read(context.Background(), capture.ListenerFunc(func(r *capture.Record) {
			if r.Message != nil && f.Record(r) {
				got[fmt.Sprintf("%d/%s", r.Message.APIKey, r.Message.Direction)]++
			}
		}))
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s matched %v, tshark %v", expr, got, want)
		}
	}
}

// tsharkProbe is a capture of five exchanges whose fields the shipped
// captures lack: a Produce v8 answer with a record error, a Fetch v4 one
// with an aborted transaction, a DescribeGroups v1 member's host, an
// UpdateMetadata v5 endpoint, and ApiVersions v3 with a tag it does not
// know (99) and one it does (0, SupportedFeatures).
func tsharkProbe(t *testing.T) string {
	c := testkit.NewCapture(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
	v := c.NewConn(netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:9092"), 1000, 5000)
	v.Handshake()
	corr := int32(1)
	pair := func(req kmsg.Request, resp kmsg.Response) {
		v.Send(true, testkit.KmsgRequest(req, corr, testkit.Ptr("probe")))
		v.Send(false, testkit.KmsgResponse(resp, corr))
		corr++
	}

	rec := kmsg.Record{Key: []byte("k"), Value: []byte("v")}
	body := rec.AppendTo(nil)[1:] // its Length, 0, is one byte
	b := kmsg.RecordBatch{Magic: 2, NumRecords: 1, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		Records: append(binary.AppendVarint(nil, int64(len(body))), body...)}
	batch := b.AppendTo(nil)
	binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-12))
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
	produce := &kmsg.ProduceRequest{Version: 8, Acks: -1, TimeoutMillis: 1000, Topics: []kmsg.ProduceRequestTopic{
		{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: batch}}}}}
	produced := &kmsg.ProduceResponse{Version: 8, Topics: []kmsg.ProduceResponseTopic{{Topic: "t",
		Partitions: []kmsg.ProduceResponseTopicPartition{{ErrorCode: 87, ErrorMessage: testkit.Ptr("batch bad"), LogStartOffset: -1,
			ErrorRecords: []kmsg.ProduceResponseTopicPartitionErrorRecord{{RelativeOffset: 3, ErrorMessage: testkit.Ptr("bad record")}}}}}}}
	pair(produce, produced)

	fetched := &kmsg.FetchResponse{Version: 4, Topics: []kmsg.FetchResponseTopic{{Topic: "t",
		Partitions: []kmsg.FetchResponseTopicPartition{{RecordBatches: []byte{},
			AbortedTransactions: []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7, FirstOffset: 42}}}}}}}
	pair(&kmsg.FetchRequest{Version: 4}, fetched)

	described := &kmsg.DescribeGroupsResponse{Version: 1, Groups: []kmsg.DescribeGroupsResponseGroup{{Group: "g",
		Members: []kmsg.DescribeGroupsResponseGroupMember{{MemberID: "m1", ClientID: "cl", ClientHost: "/10.0.0.1"}}}}}
	pair(&kmsg.DescribeGroupsRequest{Version: 1, Groups: []string{"g"}}, described)

	update := &kmsg.UpdateMetadataRequest{Version: 5, LiveBrokers: []kmsg.UpdateMetadataRequestLiveBroker{{ID: 1,
		Endpoints: []kmsg.UpdateMetadataRequestLiveBrokerEndpoint{{Port: 9092, Host: "b1", ListenerName: "PLAINTEXT", SecurityProtocol: 1}}}}}
	pair(update, &kmsg.UpdateMetadataResponse{Version: 5})

	versions := &kmsg.ApiVersionsRequest{Version: 3, ClientSoftwareName: "probe", ClientSoftwareVersion: "1"}
	versions.UnknownTags.Set(99, []byte{1, 2, 3})
	pair(versions, &kmsg.ApiVersionsResponse{Version: 3, ApiKeys: []kmsg.ApiVersionsResponseApiKey{},
		SupportedFeatures: []kmsg.ApiVersionsResponseSupportedFeature{{Name: "f", MaxVersion: 1}}})
	return c.File(t)
}
