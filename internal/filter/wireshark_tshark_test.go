package filter

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/kdissect/kdissect/internal/capture"
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
