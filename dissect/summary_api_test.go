package dissect

import (
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// summaryCase is one kmsg-built message and the summary it must get.
type summaryCase struct {
	name string
	req  kmsg.Request  // a request, or
	resp kmsg.Response // a response (with its version set)
	cut  int           // bytes cut off the end of the frame
	want string
}

func (c summaryCase) decode() *Message { return c.decodeWith(Options{}) }

func (c summaryCase) decodeWith(o Options) *Message {
	if c.req != nil {
		f := testkit.KmsgRequest(c.req, 7, nil)
		return Builtin().Decode(f[:len(f)-c.cut], o)
	}
	f := testkit.KmsgResponse(c.resp, 7)
	o.Direction, o.APIKey, o.APIVersion = Response, c.resp.Key(), c.resp.GetVersion()
	return Builtin().Decode(f[:len(f)-c.cut], o)
}

func ptr[T any](v T) *T { return &v }

// records is a RecordBatch v2 of n records compressed with codec.
func records(t testing.TB, n int, codec int16) []byte {
	var rs []kmsg.Record
	for i := range n {
		rs = append(rs, rec(int32(i), "k", "value"))
	}
	return batch(t, batchSpec{records: rs, attrs: codec, base: 100})
}

func summaryCases(t testing.TB) []summaryCase {
	var cases []summaryCase
	add := func(name string, req kmsg.Request, resp kmsg.Response, want string) {
		cases = append(cases, summaryCase{name: name, req: req, resp: resp, want: want})
	}
	part := func(i int32, n int, codec int16) kmsg.ProduceRequestTopicPartition {
		return kmsg.ProduceRequestTopicPartition{Partition: i, Records: records(t, n, codec)}
	}

	produce := kmsg.NewPtrProduceRequest()
	produce.Version, produce.Acks, produce.TransactionID = 9, -1, ptr("tx-1")
	produce.Topics = []kmsg.ProduceRequestTopic{
		{Topic: "orders", Partitions: []kmsg.ProduceRequestTopicPartition{part(0, 3, codecZstd), part(1, 2, codecZstd)}},
		{Topic: "payments", Partitions: []kmsg.ProduceRequestTopicPartition{part(0, 1, codecNone)}},
		{Topic: "audit", Partitions: []kmsg.ProduceRequestTopicPartition{part(2, 4, codecGzip)}},
		{Topic: "logs"},
	}
	add("produce", produce, nil, "Produce v9 request corr=7: orders, payments, audit +1 more: 4 partitions, 10 records, uncompressed+gzip+zstd, 425 bytes, acks=all, txn tx-1")
	cases = append(cases, summaryCase{name: "produce cut", req: produce, cut: 120, want: "Produce v9 request corr=7: orders, payments, audit +1 more: 4 partitions, 6 records, uncompressed+zstd, 287 bytes, acks=all, txn tx-1 [malformed: frame is truncated: size says 509 bytes follow, 389 present, +1 more]"})

	// An old client's MessageSet: a compressed wrapper is one message, as
	// its header says no more.
	old := kmsg.NewPtrProduceRequest()
	old.Version, old.Acks = 2, 1
	inner := append(messageV(1, 0, 0, 1, nil, []byte("a")), messageV(1, 1, 0, 1, nil, []byte("b"))...)
	set := append(messageV(1, 0, 0, 1, nil, []byte("plain")), messageV(1, 1, codecGzip, 1, nil, compress(t, codecGzip, inner, false))...)
	old.Topics = []kmsg.ProduceRequestTopic{{Topic: "orders", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: set}}}}
	add("produce v2", old, nil, "Produce v2 request corr=7: orders: 1 partition, 2 MessageSet messages, uncompressed+gzip, 168 bytes, acks=1")

	produced := produce.ResponseKind().(*kmsg.ProduceResponse)
	produced.Topics = []kmsg.ProduceResponseTopic{
		{Topic: "orders", Partitions: []kmsg.ProduceResponseTopicPartition{{Partition: 0, BaseOffset: 1042}, {Partition: 1, BaseOffset: 77}}},
		{Topic: "payments", Partitions: []kmsg.ProduceResponseTopicPartition{{Partition: 0, ErrorCode: 6, BaseOffset: -1}, {Partition: 1, BaseOffset: 5}}},
		{Topic: "audit", Partitions: []kmsg.ProduceResponseTopicPartition{{Partition: 2, ErrorCode: 29, BaseOffset: -1}, {Partition: 3, ErrorCode: 29, BaseOffset: -1}}},
	}
	add("produce response", nil, produced, "Produce v9 response corr=7: orders, payments, audit: 6 partitions, base offsets orders[0]@1042, orders[1]@77 +1 more; errors: NOT_LEADER_OR_FOLLOWER ×1, TOPIC_AUTHORIZATION_FAILED ×2")

	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.MaxWaitMillis, fetch.IsolationLevel = 11, 500, 1
	fetch.Topics = []kmsg.FetchRequestTopic{{Topic: "orders", Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0}, {Partition: 1}}}, {Topic: "payments", Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0}}}}
	add("fetch", fetch, nil, "Fetch v11 request corr=7: orders, payments: 3 partitions, max wait 500ms, read_committed")
	fetched := fetch.ResponseKind().(*kmsg.FetchResponse)
	fetched.Topics = []kmsg.FetchResponseTopic{{Topic: "orders", Partitions: []kmsg.FetchResponseTopicPartition{
		{Partition: 0, RecordBatches: append(records(t, 5, codecLZ4), records(t, 2, codecLZ4)...)},
		{Partition: 1, ErrorCode: 1},
	}}}
	add("fetch response", nil, fetched, "Fetch v11 response corr=7: orders: 2 partitions, 7 records, lz4, 235 bytes; errors: OFFSET_OUT_OF_RANGE ×1")
	cases = append(cases, summaryCase{name: "fetch response cut in a batch header", resp: fetched, cut: 80, want: "Fetch v11 response corr=7: orders: 2 partitions, records cut [malformed: frame is truncated: size says 349 bytes follow, 269 present, +1 more]"})

	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	add("metadata all", meta, nil, "Metadata v12 request corr=7: all topics")
	meta2 := kmsg.NewPtrMetadataRequest()
	meta2.Version = 12
	meta2.Topics = []kmsg.MetadataRequestTopic{{Topic: ptr("orders")}, {Topic: ptr("payments")}}
	add("metadata topics", meta2, nil, "Metadata v12 request corr=7: topics orders, payments")
	metaResp := meta2.ResponseKind().(*kmsg.MetadataResponse)
	metaResp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 1, Host: "b1"}, {NodeID: 2, Host: "b2"}}
	metaResp.Topics = []kmsg.MetadataResponseTopic{{Topic: ptr("orders")}, {Topic: ptr("payments"), ErrorCode: 29}}
	add("metadata response", nil, metaResp, "Metadata v12 response corr=7: 2 brokers, 2 topics: orders, payments; errors: TOPIC_AUTHORIZATION_FAILED ×1")

	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.ProtocolType = 9, "g1", "consumer"
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "cooperative-sticky", Metadata: consumerSubscription(3).AppendTo(nil)}, {Name: "range"}}
	add("join group", join, nil, `JoinGroup v9 request corr=7: group g1, new member, consumer: cooperative-sticky, range, topics orders, pay\x1bments`)
	joined := join.ResponseKind().(*kmsg.JoinGroupResponse)
	joined.Generation, joined.LeaderID, joined.MemberID, joined.Protocol = 5, "m-1", "m-2", ptr("range")
	joined.Members = []kmsg.JoinGroupResponseMember{{MemberID: "m-1"}, {MemberID: "m-2"}}
	refused := join.ResponseKind().(*kmsg.JoinGroupResponse)
	refused.ErrorCode, refused.Generation, refused.MemberID = 79, -1, "m-3"
	add("join group response, member id required", nil, refused, "JoinGroup v9 response corr=7: member m-3; errors: MEMBER_ID_REQUIRED ×1")
	add("join group response", nil, joined, "JoinGroup v9 response corr=7: generation 5, leader m-1, member m-2, protocol range, 2 members")

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.Generation, sync.MemberID, sync.ProtocolType = 5, "g1", 5, "m-1", ptr("consumer")
	a := consumerAssignment(0).AppendTo(nil)
	sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: "m-1", MemberAssignment: a}, {MemberID: "m-2", MemberAssignment: a}}
	add("sync group", sync, nil, "SyncGroup v5 request corr=7: group g1, member m-1, generation 5, 2 assignments")
	synced := sync.ResponseKind().(*kmsg.SyncGroupResponse)
	synced.ProtocolType, synced.MemberAssignment = ptr("consumer"), a
	add("sync group response", nil, synced, "SyncGroup v5 response corr=7: assigned 2 partitions of orders, audit")

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.Generation, hb.MemberID, hb.InstanceID = 4, "g1", 5, "m-1", ptr("static-1")
	add("heartbeat", hb, nil, "Heartbeat v4 request corr=7: group g1, member m-1, instance static-1, generation 5")
	hbResp := hb.ResponseKind().(*kmsg.HeartbeatResponse)
	hbResp.ErrorCode = 27
	add("heartbeat response", nil, hbResp, "Heartbeat v4 response corr=7: errors: REBALANCE_IN_PROGRESS ×1")

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group = 5, "g1"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "m-1"}, {MemberID: "m-2"}}
	add("leave group", leave, nil, "LeaveGroup v5 request corr=7: group g1, members m-1, m-2")

	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.Generation, commit.MemberID = 8, "g1", 5, "m-1"
	commit.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "orders", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 10}, {Partition: 1, Offset: 11}}}}
	add("offset commit", commit, nil, "OffsetCommit v8 request corr=7: group g1, member m-1, generation 5, orders: 2 partitions, offsets orders[0]@10, orders[1]@11")
	committed := commit.ResponseKind().(*kmsg.OffsetCommitResponse)
	committed.Topics = []kmsg.OffsetCommitResponseTopic{{Topic: "orders", Partitions: []kmsg.OffsetCommitResponseTopicPartition{{Partition: 0}, {Partition: 1, ErrorCode: 25}}}}
	add("offset commit response", nil, committed, "OffsetCommit v8 response corr=7: orders: 2 partitions; errors: UNKNOWN_MEMBER_ID ×1")

	ofetch := kmsg.NewPtrOffsetFetchRequest()
	ofetch.Version, ofetch.Group = 7, "g1"
	add("offset fetch all", ofetch, nil, "OffsetFetch v7 request corr=7: group g1, all topics")
	ofResp := ofetch.ResponseKind().(*kmsg.OffsetFetchResponse)
	ofResp.Topics = []kmsg.OffsetFetchResponseTopic{{Topic: "orders", Partitions: []kmsg.OffsetFetchResponseTopicPartition{
		{Partition: 0, Offset: 10}, {Partition: 1, Offset: -1}}}}
	add("offset fetch response", nil, ofResp, "OffsetFetch v7 response corr=7: orders: 2 partitions, committed orders[0]@10")
	ofNone := ofetch.ResponseKind().(*kmsg.OffsetFetchResponse)
	ofNone.Topics = []kmsg.OffsetFetchResponseTopic{{Topic: "orders", Partitions: []kmsg.OffsetFetchResponseTopicPartition{{Partition: 0, Offset: -1}}}}
	add("offset fetch response, none committed", nil, ofNone, "OffsetFetch v7 response corr=7: orders: 1 partition, none committed")
	ofetch8 := kmsg.NewPtrOffsetFetchRequest()
	ofetch8.Version = 8
	ofetch8.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g1", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "orders", Partitions: []int32{0, 1, 2}}}}}
	add("offset fetch v8", ofetch8, nil, "OffsetFetch v8 request corr=7: group g1, orders: 3 partitions")

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKey, fc.CoordinatorType = 3, "tx-1", 1
	add("find coordinator", fc, nil, "FindCoordinator v3 request corr=7: transaction tx-1")
	fcResp := fc.ResponseKind().(*kmsg.FindCoordinatorResponse)
	fcResp.NodeID, fcResp.Host, fcResp.Port = 2, "broker-2", 9092
	add("find coordinator response", nil, fcResp, "FindCoordinator v3 response corr=7: coordinator 2 at broker-2:9092")
	fc4 := kmsg.NewPtrFindCoordinatorRequest()
	fc4.Version, fc4.CoordinatorKeys = 4, []string{"g1", "g2"}
	add("find coordinator v4", fc4, nil, "FindCoordinator v4 request corr=7: group g1, g2")
	fc4Resp := fc4.ResponseKind().(*kmsg.FindCoordinatorResponse)
	fc4Resp.Coordinators = []kmsg.FindCoordinatorResponseCoordinator{{Key: "g1", NodeID: 1, Host: "b1", Port: 9092}, {Key: "g2", ErrorCode: 15, NodeID: -1}}
	add("find coordinator v4 response", nil, fc4Resp, "FindCoordinator v4 response corr=7: for g1, coordinator 1 at b1:9092 +1 more; errors: COORDINATOR_NOT_AVAILABLE ×1")

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups = 5, []string{"g1", "g2"}
	add("describe groups", dg, nil, "DescribeGroups v5 request corr=7: 2 groups: g1, g2")
	dgResp := dg.ResponseKind().(*kmsg.DescribeGroupsResponse)
	dgResp.Groups = []kmsg.DescribeGroupsResponseGroup{{Group: "g1", State: "Stable", ProtocolType: "consumer", Members: []kmsg.DescribeGroupsResponseGroupMember{{MemberID: "m-1"}}}, {Group: "g2", ErrorCode: 69}}
	add("describe groups response", nil, dgResp, "DescribeGroups v5 response corr=7: group g1 Stable, 1 member, +1 more groups; errors: GROUP_ID_NOT_FOUND ×1")

	cgh := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cgh.Version, cgh.Group, cgh.MemberID, cgh.MemberEpoch = 1, "g1", "m-1", 0
	add("consumer group heartbeat", cgh, nil, "ConsumerGroupHeartbeat v1 request corr=7: group g1, member m-1, epoch 0")
	sgh := kmsg.NewPtrShareGroupHeartbeatRequest()
	sgh.Version, sgh.GroupID, sgh.MemberID, sgh.MemberEpoch = 1, "sg", "m-9", -1
	add("share group heartbeat", sgh, nil, "ShareGroupHeartbeat v1 request corr=7: group sg, member m-9, epoch -1")

	ipid := kmsg.NewPtrInitProducerIDRequest()
	ipid.Version, ipid.TransactionalID, ipid.TransactionTimeoutMillis = 4, ptr("tx-1"), 60000
	add("init producer id", ipid, nil, "InitProducerId v4 request corr=7: txn tx-1")
	ipidResp := ipid.ResponseKind().(*kmsg.InitProducerIDResponse)
	ipidResp.ProducerID, ipidResp.ProducerEpoch = 4000, 3
	add("init producer id response", nil, ipidResp, "InitProducerId v4 response corr=7: producer 4000 epoch 3")
	idem := kmsg.NewPtrInitProducerIDRequest()
	idem.Version = 4
	add("init producer id, idempotent", idem, nil, "InitProducerId v4 request corr=7: idempotent")

	apt := kmsg.NewPtrAddPartitionsToTxnRequest()
	apt.Version, apt.TransactionalID, apt.ProducerID, apt.ProducerEpoch = 3, "tx-1", 4000, 3
	apt.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "orders", Partitions: []int32{0, 1}}}
	add("add partitions to txn", apt, nil, "AddPartitionsToTxn v3 request corr=7: txn tx-1, producer 4000 epoch 3, orders: 2 partitions")
	apt4 := kmsg.NewPtrAddPartitionsToTxnRequest()
	apt4.Version = 4
	apt4.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{{TransactionalID: "tx-1", ProducerID: 4000, ProducerEpoch: 3, Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "orders", Partitions: []int32{0}}}}, {TransactionalID: "tx-2", ProducerID: 4001}}
	add("add partitions to txn v4", apt4, nil, "AddPartitionsToTxn v4 request corr=7: txn tx-1, producer 4000 epoch 3, orders: 1 partition, +1 more transactions")

	end := kmsg.NewPtrEndTxnRequest()
	end.Version, end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = 4, "tx-1", 4000, 3, true
	add("end txn commit", end, nil, "EndTxn v4 request corr=7: commit, txn tx-1, producer 4000 epoch 3")
	abort := kmsg.NewPtrEndTxnRequest()
	abort.Version, abort.TransactionalID, abort.ProducerID, abort.ProducerEpoch = 4, "tx-1", 4000, 3
	add("end txn abort", abort, nil, "EndTxn v4 request corr=7: abort, txn tx-1, producer 4000 epoch 3")
	endResp := end.ResponseKind().(*kmsg.EndTxnResponse)
	endResp.ErrorCode = 48
	add("end txn response", nil, endResp, "EndTxn v4 response corr=7: errors: INVALID_TXN_STATE ×1")

	toc := kmsg.NewPtrTxnOffsetCommitRequest()
	toc.Version, toc.TransactionalID, toc.Group, toc.ProducerID, toc.ProducerEpoch = 3, "tx-1", "g1", 4000, 3
	toc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "orders", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 9}}}}
	add("txn offset commit", toc, nil, "TxnOffsetCommit v3 request corr=7: txn tx-1, producer 4000 epoch 3, group g1, orders: 1 partition")

	emptyFetch := kmsg.NewPtrFetchRequest()
	emptyFetch.Version, emptyFetch.MaxWaitMillis, emptyFetch.SessionID, emptyFetch.SessionEpoch = 13, 500, 9, 4
	add("fetch, incremental with nothing new", emptyFetch, nil, "Fetch v13 request corr=7: no topics, max wait 500ms")

	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 8
	lo.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "orders", Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: -1}, {Partition: 1, Timestamp: -1}}}}
	add("list offsets", lo, nil, "ListOffsets v8 request corr=7: orders: 2 partitions, latest")
	lo2 := kmsg.NewPtrListOffsetsRequest()
	lo2.Version, lo2.IsolationLevel = 8, 1
	lo2.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "orders", Partitions: []kmsg.ListOffsetsRequestTopicPartition{
		{Partition: 0, Timestamp: -2}, {Partition: 1, Timestamp: 1767225600000}, {Partition: 2, Timestamp: -3}, {Partition: 3, Timestamp: -2}}}}
	add("list offsets, several asked", lo2, nil,
		"ListOffsets v8 request corr=7: orders: 4 partitions, earliest, at 2026-01-01T00:00:00.000Z +1 more, read_committed")
	loResp := lo.ResponseKind().(*kmsg.ListOffsetsResponse)
	loResp.Topics = []kmsg.ListOffsetsResponseTopic{{Topic: "orders", Partitions: []kmsg.ListOffsetsResponseTopicPartition{
		{Partition: 0, Offset: 1042}, {Partition: 1, ErrorCode: 6, Offset: -1}, {Partition: 2, Offset: 7}, {Partition: 3, Offset: 9}}}}
	add("list offsets response", nil, loResp,
		"ListOffsets v8 response corr=7: orders: 4 partitions, offsets orders[0]@1042, orders[2]@7 +1 more; errors: NOT_LEADER_OR_FOLLOWER ×1")

	da := kmsg.NewPtrDescribeACLsRequest()
	da.Version, da.ResourceType, da.ResourcePatternType, da.Operation, da.PermissionType = 3, 2, 3, 4, 3
	da.ResourceName, da.Principal = ptr("orders"), ptr("User:alice")
	add("describe acls", da, nil, "DescribeAcls v3 request corr=7: ALLOW User:alice WRITE on TOPIC orders (LITERAL) from (any)")
	daResp := da.ResponseKind().(*kmsg.DescribeACLsResponse)
	daResp.Resources = []kmsg.DescribeACLsResponseResource{
		{ResourceType: 2, ResourceName: "orders", ACLs: []kmsg.DescribeACLsResponseResourceACL{{Principal: "User:alice"}, {Principal: "User:bob"}}},
		{ResourceType: 3, ResourceName: "consumers", ACLs: []kmsg.DescribeACLsResponseResourceACL{{Principal: "User:alice"}}},
	}
	add("describe acls response", nil, daResp, "DescribeAcls v3 response corr=7: 3 ACLs on 2 resources: orders, consumers")

	// The fallback.
	dp := kmsg.NewPtrDescribeProducersRequest()
	dp.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "orders"}, {Topic: "pay\x1bments"}}
	add("describe producers", dp, nil, `DescribeProducers v0 request corr=7: 2 topics: orders, pay\x1bments`)
	dpResp := dp.ResponseKind().(*kmsg.DescribeProducersResponse)
	dpResp.Topics = []kmsg.DescribeProducersResponseTopic{
		{Topic: "orders", Partitions: []kmsg.DescribeProducersResponseTopicPartition{{ErrorCode: 29}}},
		{Topic: "payments", Partitions: []kmsg.DescribeProducersResponseTopicPartition{{ErrorCode: 29}, {ErrorCode: 3}}},
	}
	add("describe producers response", nil, dpResp, "DescribeProducers v0 response corr=7: 2 topics: orders, payments; errors: TOPIC_AUTHORIZATION_FAILED ×2, UNKNOWN_TOPIC_OR_PARTITION ×1")

	// Topics created, deleted and reshaped.
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version, ct.ValidateOnly = 7, true
	ct.Topics = []kmsg.CreateTopicsRequestTopic{
		{Topic: "orders", NumPartitions: 3, ReplicationFactor: 2, Configs: []kmsg.CreateTopicsRequestTopicConfig{{Name: "retention.ms", Value: ptr("-1")}, {Name: "cleanup.policy", Value: ptr("compact")}}},
		{Topic: "pay\x1bments", NumPartitions: -1, ReplicationFactor: -1},
		{Topic: "placed", NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignment: []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Replicas: []int32{1, 2}}, {Partition: 1, Replicas: []int32{2, 3}}}},
		{Topic: "more", NumPartitions: 1, ReplicationFactor: 1},
	}
	add("create topics", ct, nil, `CreateTopics v7 request corr=7: orders: 3 partitions, replication 2, 2 configs; pay\x1bments: default partitions, default replication; placed: 2 partitions (assigned), default replication +1 more, validate only`)
	ctResp := ct.ResponseKind().(*kmsg.CreateTopicsResponse)
	ctResp.Topics = []kmsg.CreateTopicsResponseTopic{{Topic: "orders", ErrorCode: 29}, {Topic: "payments", ErrorCode: 29}, {Topic: "x", ErrorCode: 36}}
	add("create topics response", nil, ctResp, "CreateTopics v7 response corr=7: 3 topics: orders, payments, x; errors: TOPIC_AUTHORIZATION_FAILED ×2, TOPIC_ALREADY_EXISTS ×1")
	dt0 := kmsg.NewPtrDeleteTopicsRequest()
	dt0.Version, dt0.TopicNames = 5, []string{"orders", "payments"}
	add("delete topics by name", dt0, nil, "DeleteTopics v5 request corr=7: 2 topics: orders, payments")
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.Version = 6
	dt.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: ptr("orders")}, {TopicID: [16]byte{0x1f, 0x0c, 0x2a, 0x9e, 5}}}
	add("delete topics by id", dt, nil, "DeleteTopics v6 request corr=7: 2 topics: orders, id:1f0c2a9e")
	dtResp := dt.ResponseKind().(*kmsg.DeleteTopicsResponse)
	dtResp.Topics = []kmsg.DeleteTopicsResponseTopic{{Topic: ptr("orders")}, {TopicID: [16]byte{0x1f, 0x0c, 0x2a, 0x9e, 5}, ErrorCode: 100}}
	add("delete topics response", nil, dtResp, "DeleteTopics v6 response corr=7: 2 topics: orders, id:1f0c2a9e; errors: UNKNOWN_TOPIC_ID ×1")
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Version = 3
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "orders", Count: 6}, {Topic: "payments", Count: 2, Assignment: []kmsg.CreatePartitionsRequestTopicAssignment{{Replicas: []int32{1}}}}}
	add("create partitions", cp, nil, "CreatePartitions v3 request corr=7: orders to 6 partitions; payments to 2 partitions (assigned)")
	cpResp := cp.ResponseKind().(*kmsg.CreatePartitionsResponse)
	cpResp.Topics = []kmsg.CreatePartitionsResponseTopic{{Topic: "orders"}, {Topic: "payments", ErrorCode: 37}}
	add("create partitions response", nil, cpResp, "CreatePartitions v3 response corr=7: 2 topics: orders, payments; errors: INVALID_PARTITIONS ×1")
	el0 := kmsg.NewPtrElectLeadersRequest()
	el0.Version = 0
	el0.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "orders", Partitions: []int32{0, 1}}, {Topic: "payments", Partitions: []int32{4}}}
	add("elect preferred leaders", el0, nil, "ElectLeaders v0 request corr=7: election PREFERRED, orders, payments: 3 partitions")
	el := kmsg.NewPtrElectLeadersRequest()
	el.Version, el.ElectionType = 2, 1
	add("elect unclean leaders of all", el, nil, "ElectLeaders v2 request corr=7: election UNCLEAN, all partitions")
	elResp := el.ResponseKind().(*kmsg.ElectLeadersResponse)
	elResp.Topics = []kmsg.ElectLeadersResponseTopic{{Topic: "orders", Partitions: []kmsg.ElectLeadersResponseTopicPartition{{}, {Partition: 1, ErrorCode: 84}}}}
	add("elect leaders response", nil, elResp, "ElectLeaders v2 response corr=7: orders: 2 partitions; errors: ELECTION_NOT_NEEDED ×1")
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.Version = 1
	add("describe cluster", dc, nil, "DescribeCluster v1 request corr=7")
	dcResp := dc.ResponseKind().(*kmsg.DescribeClusterResponse)
	dcResp.ClusterID, dcResp.ThrottleMillis = "c-1", 20
	dcResp.Brokers = []kmsg.DescribeClusterResponseBroker{{NodeID: 1, Host: "b1"}}
	add("describe cluster response", nil, dcResp, "DescribeCluster v1 response corr=7: cluster c-1, 1 broker, throttled 20ms")
	dcResp2 := dc.ResponseKind().(*kmsg.DescribeClusterResponse)
	dcResp2.ClusterID, dcResp2.ControllerID = "c-2", 3
	dcResp2.Brokers = []kmsg.DescribeClusterResponseBroker{{NodeID: 1}, {NodeID: 2}, {NodeID: 3}}
	add("describe cluster with controller", nil, dcResp2, "DescribeCluster v1 response corr=7: cluster c-2, controller 3, 3 brokers")

	// The fallback names its fields in words, and counts an array in the
	// singular when it holds one.
	ltx := kmsg.NewPtrListTransactionsRequest()
	ltx.Version, ltx.StateFilters, ltx.ProducerIDFilters = 1, []string{"Ongoing"}, []int64{7, 8}
	add("list transactions", ltx, nil, "ListTransactions v1 request corr=7: 1 state filter: Ongoing, 2 producer id filters")
	dtx := kmsg.NewPtrDescribeTransactionsRequest()
	dtx.TransactionalIDs = []string{"tx-a", "tx-b"}
	add("describe transactions", dtx, nil, "DescribeTransactions v0 request corr=7: 2 txns: tx-a, tx-b")

	dld := kmsg.NewPtrDescribeLogDirsRequest()
	dldResp := dld.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	dldResp.Version = 4
	dldResp.Dirs = []kmsg.DescribeLogDirsResponseDir{{Dir: "/var/kafka/a"}, {Dir: "/var/kafka/b", ErrorCode: 57}}
	add("describe log dirs response", nil, dldResp, "DescribeLogDirs v4 response corr=7: 2 results: /var/kafka/a, /var/kafka/b; errors: LOG_DIR_NOT_FOUND ×1")

	delg := kmsg.NewPtrDeleteGroupsRequest()
	delg.Version, delg.Groups = 2, []string{"billing", "pay\x1bments"}
	add("delete groups", delg, nil, `DeleteGroups v2 request corr=7: 2 groups: billing, pay\x1bments`)
	delgResp := delg.ResponseKind().(*kmsg.DeleteGroupsResponse)
	delgResp.Groups = []kmsg.DeleteGroupsResponseGroup{{Group: "billing"}, {Group: "payments", ErrorCode: 69}}
	add("delete groups response", nil, delgResp, "DeleteGroups v2 response corr=7: 2 groups: billing, payments; errors: GROUP_ID_NOT_FOUND ×1")
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "billing"
	od.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "orders", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}, {Partition: 1}}}}
	add("offset delete", od, nil, "OffsetDelete v0 request corr=7: group billing, orders: 2 partitions")
	dtp := kmsg.NewPtrDescribeTopicPartitionsRequest()
	dtp.Topics = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: "orders"}}
	add("describe topic partitions", dtp, nil, "DescribeTopicPartitions v0 request corr=7: 1 topic: orders")

	// Client telemetry (KIP-714): a new client asks for its instance id;
	// an empty list of metrics is none, a list holding "" all of them.
	gts := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	add("telemetry subscriptions, new client", gts, nil, "GetTelemetrySubscriptions v0 request corr=7: new client instance")
	gts2 := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	gts2.ClientInstanceID = [16]byte{0xde, 0xad, 15: 1}
	add("telemetry subscriptions", gts2, nil, "GetTelemetrySubscriptions v0 request corr=7: client instance dead0000-0000-0000-0000-000000000001")
	for _, c := range []struct {
		metrics []string
		want    string
	}{
		{nil, "no metrics"},
		{[]string{""}, "all metrics"},
		{[]string{"org.apache.kafka.producer.", "org.apache.kafka.consumer."}, "2 metric prefixes: org.apache.kafka.producer., org.apache.kafka.consumer."},
	} {
		r := gts.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
		r.SubscriptionID, r.PushIntervalMillis, r.RequestedMetrics = 12, 30000, c.metrics
		add("telemetry subscriptions response, "+c.want, nil, r, "GetTelemetrySubscriptions v0 response corr=7: subscription 12, push every 30000ms, "+c.want)
	}
	push := kmsg.NewPtrPushTelemetryRequest()
	push.SubscriptionID, push.CompressionType, push.Metrics, push.Terminating = 12, 4, make([]byte, 321), true
	add("push telemetry", push, nil, "PushTelemetry v0 request corr=7: subscription 12, 321 bytes of metrics, ZSTD, terminating")
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version, av.ClientSoftwareName, av.ClientSoftwareVersion = 3, "kgo", "v1.22.3"
	add("api versions", av, nil, "ApiVersions v3 request corr=7: client kgo v1.22.3")
	avResp := av.ResponseKind().(*kmsg.ApiVersionsResponse)
	avResp.Version = 2 // testkit would give a flexible one the v1 header ApiVersions never has
	avResp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 0, MaxVersion: 13}, {ApiKey: 1, MaxVersion: 18}}
	add("api versions response", nil, avResp, "ApiVersions v2 response corr=7: 2 APIs")
	return append(cases, adminSummaryCases()...)
}

// adminSummaryCases: the changes beyond ACLs say what they change, as the
// audit reads them, and never a secret.
func adminSummaryCases() []summaryCase {
	var cases []summaryCase
	add := func(name string, req kmsg.Request, resp kmsg.Response, want string) {
		cases = append(cases, summaryCase{name: name, req: req, resp: resp, want: want})
	}
	ac := kmsg.NewPtrAlterConfigsRequest()
	ac.Version = 2
	ac.Resources = []kmsg.AlterConfigsRequestResource{
		{ResourceType: 2, ResourceName: "orders", Configs: []kmsg.AlterConfigsRequestResourceConfig{
			{Name: "retention.ms", Value: ptr("3600000")}, {Name: "ssl.keystore.password", Value: ptr("hunter2")}, {Name: "x", Value: nil}, {Name: "y", Value: ptr("")}}},
		{ResourceType: 4, ResourceName: ""},
	}
	add("alter configs", ac, nil, `AlterConfigs v2 request corr=7: TOPIC orders: retention.ms=3600000, ssl.keystore.password=<redacted>, x=null +1 more; BROKER ""`)
	acResp := ac.ResponseKind().(*kmsg.AlterConfigsResponse)
	acResp.Resources = []kmsg.AlterConfigsResponseResource{{ResourceType: 2, ResourceName: "orders", ErrorCode: 44}}
	add("alter configs response", nil, acResp, "AlterConfigs v2 response corr=7: TOPIC orders; errors: POLICY_VIOLATION ×1")

	iac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	iac.Version, iac.ValidateOnly = 1, true
	iac.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: 4, ResourceName: "1", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{
		{Name: "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", Op: 0, Value: ptr("secret jaas")},
		{Name: "log.cleaner.threads", Op: 1}, {Name: "super.users", Op: 2, Value: ptr("User:eve")}, {Name: "z", Op: 9, Value: ptr("v")}}}}
	add("incremental alter configs", iac, nil, "IncrementalAlterConfigs v1 request corr=7: BROKER 1: set listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=<redacted>, delete log.cleaner.threads, append super.users=User:eve +1 more, validate only")

	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.Version = 4
	dc.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: 2, ResourceName: "orders", ConfigNames: []string{"retention.ms", "cleanup.policy"}}, {ResourceType: 4, ResourceName: "0"}}
	add("describe configs", dc, nil, "DescribeConfigs v4 request corr=7: TOPIC orders: retention.ms, cleanup.policy; BROKER 0")
	dcResp := dc.ResponseKind().(*kmsg.DescribeConfigsResponse)
	dcResp.Resources = []kmsg.DescribeConfigsResponseResource{{ResourceType: 2, ResourceName: "orders", Configs: []kmsg.DescribeConfigsResponseResourceConfig{{Name: "a"}, {Name: "b"}}}}
	add("describe configs response", nil, dcResp, "DescribeConfigs v4 response corr=7: TOPIC orders: 2 configs")

	aq := kmsg.NewPtrAlterClientQuotasRequest()
	aq.Version = 1
	aq.Entries = []kmsg.AlterClientQuotasRequestEntry{
		{Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: ptr("alice")}, {Type: "client-id", Name: nil}},
			Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1048576}, {Key: "request_percentage", Value: 12.5}, {Key: "consumer_byte_rate", Remove: true}}},
		{Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "ip", Name: ptr("10.0.0.1")}}, Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "connection_creation_rate", Value: 1e300}}},
	}
	add("alter client quotas", aq, nil, "AlterClientQuotas v1 request corr=7: user alice, client-id default: producer_byte_rate=1048576, request_percentage=12.5, remove consumer_byte_rate; ip 10.0.0.1: connection_creation_rate=1e+300")
	aqResp := aq.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	aqResp.Entries = []kmsg.AlterClientQuotasResponseEntry{{ErrorCode: 31, Entity: []kmsg.AlterClientQuotasResponseEntryEntity{{Type: "user", Name: ptr("alice")}}}}
	add("alter client quotas response", nil, aqResp, "AlterClientQuotas v1 response corr=7: user alice; errors: CLUSTER_AUTHORIZATION_FAILED ×1")
	dq := kmsg.NewPtrDescribeClientQuotasRequest()
	dq.Version, dq.Strict = 1, true
	dq.Components = []kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 0, Match: ptr("alice")}, {EntityType: "client-id", MatchType: 1}, {EntityType: "ip", MatchType: 2}}
	add("describe client quotas", dq, nil, "DescribeClientQuotas v1 request corr=7: user alice, client-id default, ip any, strict")
	dqResp := dq.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	dqResp.Entries = []kmsg.DescribeClientQuotasResponseEntry{{Entity: []kmsg.DescribeClientQuotasResponseEntryEntity{{Type: "user", Name: ptr("alice")}},
		Values: []kmsg.DescribeClientQuotasResponseEntryValue{{Key: "producer_byte_rate", Value: 1048576}}}}
	add("describe client quotas response", nil, dqResp, "DescribeClientQuotas v1 response corr=7: user alice: producer_byte_rate=1048576")

	sc := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	sc.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{{Name: "alice", Mechanism: 1, Iterations: 8192, Salt: []byte("salt-secret"), SaltedPassword: []byte("salted-secret")}}
	sc.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "bob", Mechanism: 2}}
	add("alter scram", sc, nil, "AlterUserScramCredentials v0 request corr=7: upsert alice SCRAM-SHA-256 (8192 iterations), delete bob SCRAM-SHA-512")
	scResp := sc.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	scResp.Results = []kmsg.AlterUserSCRAMCredentialsResponseResult{{User: "alice"}, {User: "bob", ErrorCode: 91}}
	add("alter scram response", nil, scResp, "AlterUserScramCredentials v0 response corr=7: 2 users: alice, bob; errors: RESOURCE_NOT_FOUND ×1")
	ds := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	add("describe scram, all", ds, nil, "DescribeUserScramCredentials v0 request corr=7: all users")
	ds2 := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	ds2.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: "alice"}}
	add("describe scram", ds2, nil, "DescribeUserScramCredentials v0 request corr=7: 1 user: alice")
	dsResp := ds.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	dsResp.Results = []kmsg.DescribeUserSCRAMCredentialsResponseResult{{User: "alice", CredentialInfos: []kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo{{Mechanism: 1, Iterations: 4096}, {Mechanism: 2, Iterations: 1}}}}
	add("describe scram response", nil, dsResp, "DescribeUserScramCredentials v0 response corr=7: alice: SCRAM-SHA-256 (4096 iterations), SCRAM-SHA-512 (1 iteration)")

	ct := kmsg.NewPtrCreateDelegationTokenRequest()
	ct.Version, ct.OwnerPrincipalType, ct.OwnerPrincipalName, ct.MaxLifetimeMillis = 3, ptr("User"), ptr("svc"), 86400000
	ct.Renewers = []kmsg.CreateDelegationTokenRequestRenewer{{PrincipalType: "User", PrincipalName: "ops"}}
	add("create token", ct, nil, "CreateDelegationToken v3 request corr=7: owner User:svc, renewers User:ops, max lifetime 86400000 ms")
	ctResp := ct.ResponseKind().(*kmsg.CreateDelegationTokenResponse)
	ctResp.PrincipalType, ctResp.PrincipalName, ctResp.TokenID, ctResp.HMAC, ctResp.ExpiryTimestamp = "User", "svc", "tok-1", []byte("hmac-secret"), 1767225600000
	add("create token response", nil, ctResp, "CreateDelegationToken v3 response corr=7: token tok-1, owner User:svc, expires 2026-01-01T00:00:00Z")
	rt := kmsg.NewPtrRenewDelegationTokenRequest()
	rt.HMAC, rt.RenewTimeMillis = []byte("hmac-secret"), 3600000
	add("renew token", rt, nil, "RenewDelegationToken v0 request corr=7: renew by 3600000 ms")
	rtResp := rt.ResponseKind().(*kmsg.RenewDelegationTokenResponse)
	rtResp.ErrorCode, rtResp.ExpiryTimestamp = 63, 0
	add("renew token refused", nil, rtResp, "RenewDelegationToken v0 response corr=7: errors: DELEGATION_TOKEN_OWNER_MISMATCH ×1")
	et := kmsg.NewPtrExpireDelegationTokenRequest()
	et.HMAC, et.ExpiryPeriodMillis = []byte("hmac-secret"), -1
	add("expire token", et, nil, "ExpireDelegationToken v0 request corr=7: expire now")
	et2 := kmsg.NewPtrExpireDelegationTokenRequest()
	et2.HMAC, et2.ExpiryPeriodMillis = []byte("hmac-secret"), 60000
	add("expire token later", et2, nil, "ExpireDelegationToken v0 request corr=7: expire in 60000 ms")
	iac2 := kmsg.NewPtrIncrementalAlterConfigsRequest()
	iac2.Version = 1
	iac2.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: 2, ResourceName: "t", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "x", Op: 9, Value: ptr("v")}}}}
	add("incremental alter configs, unknown op", iac2, nil, "IncrementalAlterConfigs v1 request corr=7: TOPIC t: op 9 x=v")
	dt := kmsg.NewPtrDescribeDelegationTokenRequest()
	dt.Owners = []kmsg.DescribeDelegationTokenRequestOwner{{PrincipalType: "User", PrincipalName: "svc"}}
	add("describe tokens", dt, nil, "DescribeDelegationToken v0 request corr=7: owners User:svc")
	dtAll := kmsg.NewPtrDescribeDelegationTokenRequest()
	dtAll.Owners = nil
	add("describe all tokens", dtAll, nil, "DescribeDelegationToken v0 request corr=7: all owners")
	dtResp := dt.ResponseKind().(*kmsg.DescribeDelegationTokenResponse)
	dtResp.TokenDetails = []kmsg.DescribeDelegationTokenResponseTokenDetail{{TokenID: "tok-1", HMAC: []byte("hmac-secret")}}
	add("describe tokens response", nil, dtResp, "DescribeDelegationToken v0 response corr=7: 1 token: tok-1")
	// A message that only repeats the error's name (kfake's) is not
	// written twice; one that says more is quoted.
	ca := kmsg.NewPtrCreateACLsResponse()
	ca.Version = 1
	ca.Results = []kmsg.CreateACLsResponseResult{{ErrorCode: 31, ErrorMessage: ptr("CLUSTER_AUTHORIZATION_FAILED")}}
	add("create acls refused, the name as message", nil, ca, "CreateAcls v1 response corr=7: 1 result, 1 failed: CLUSTER_AUTHORIZATION_FAILED")
	ca2 := kmsg.NewPtrCreateACLsResponse()
	ca2.Version = 1
	ca2.Results = []kmsg.CreateACLsResponseResult{{}, {ErrorCode: 31, ErrorMessage: ptr("Cluster authorization failed.")}}
	add("create acls refused, a message", nil, ca2, `CreateAcls v1 response corr=7: 2 results, 1 failed: CLUSTER_AUTHORIZATION_FAILED "Cluster authorization failed."`)
	sa := kmsg.NewPtrSASLAuthenticateResponse()
	sa.Version = 1
	sa.ErrorCode, sa.ErrorMessage = 58, ptr("SASL_AUTHENTICATION_FAILED")
	add("sasl refused, the name as message", nil, sa, "SaslAuthenticate v1 response corr=7: SASL_AUTHENTICATION_FAILED")
	return cases
}

func TestSummaryEveryAPI(t *testing.T) {
	for _, c := range summaryCases(t) {
		m := c.decode()
		if m.Summary != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, m.Summary, c.want)
		}
		// --summary decodes records only as far as their batch headers:
		// the line is the same.
		if h := c.decodeWith(Options{BatchHeaders: true}); h.Summary != m.Summary {
			t.Errorf("%s with batch headers only:\n got %s\nwant %s", c.name, h.Summary, m.Summary)
		}
	}
}

// Every summary holds for a frame cut at any length: a line that names the
// frame malformed and holds no raw control byte, never a panic.
func TestSummaryCutAtEveryLength(t *testing.T) {
	for _, c := range summaryCases(t) {
		full := len(c.decode().Raw)
		for cut := 1; cut < full; cut++ {
			c.cut = cut
			m := c.decode()
			if !strings.Contains(m.Summary, "[malformed: ") {
				t.Fatalf("%s cut by %d: not called malformed: %s", c.name, cut, m.Summary)
			}
			if i := strings.IndexFunc(m.Summary, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
				t.Fatalf("%s cut by %d: a control byte at %d: %q", c.name, cut, i, m.Summary)
			}
		}
	}
}

// Errors beyond the kinds a summary names are counted, not dropped.
func TestSummaryErrorsBeyondTheKindsNamed(t *testing.T) {
	resp := kmsg.NewPtrCreateTopicsResponse()
	resp.Version = 7
	for i, code := range []int16{3, 7, 29, 36, 37, 38, 39, 40, 3} {
		resp.Topics = append(resp.Topics, kmsg.CreateTopicsResponseTopic{Topic: string(rune('a' + i)), ErrorCode: code})
	}
	m := summaryCase{resp: resp}.decode()
	want := "CreateTopics v7 response corr=7: 9 topics: a, b, c +6 more; errors: UNKNOWN_TOPIC_OR_PARTITION ×2, REQUEST_TIMED_OUT ×1, " +
		"TOPIC_AUTHORIZATION_FAILED ×1, TOPIC_ALREADY_EXISTS ×1, INVALID_PARTITIONS ×1, INVALID_REPLICATION_FACTOR ×1, +2 more"
	if m.Summary != want {
		t.Errorf("got  %s\nwant %s", m.Summary, want)
	}
}

// BenchmarkSummaryFetch is the cost of the summary line of a Fetch
// response of 20 partitions, the tree already decoded.
func BenchmarkSummaryFetch(b *testing.B) {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 13
	tp := kmsg.FetchResponseTopic{Topic: "orders"}
	for i := range int32(20) {
		tp.Partitions = append(tp.Partitions, kmsg.FetchResponseTopicPartition{Partition: i, RecordBatches: records(b, 10, codecZstd)})
	}
	resp.Topics = []kmsg.FetchResponseTopic{tp}
	m := summaryCase{resp: resp}.decodeWith(Options{BatchHeaders: true})
	b.ReportAllocs()
	for b.Loop() {
		_ = summarize(m)
	}
}

// A name of kilobytes (a garbled frame, or a hostile one) is cut in the
// summary, so --summary never prints more than a line to scan.
func TestSummaryClipsLongNames(t *testing.T) {
	long := strings.Repeat("é", 63) + strings.Repeat("x", 4000)
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	meta.Topics = []kmsg.MetadataRequestTopic{{Topic: &long}}
	got := summaryCase{req: meta}.decode().Summary
	want := "Metadata v12 request corr=7: topics " + strings.Repeat("é", 63) + "x…"
	if !strings.HasPrefix(got, want) || len(got) > 300 {
		t.Fatalf("summary of a 4 KB topic name:\n got %q\nwant it to start %q and stay short", got, want)
	}
}

// A field's name reads as the words a summary line is written in.
func TestFieldWords(t *testing.T) {
	for name, want := range map[string]string{
		"Topics":                   "topics",
		"TransactionStates":        "transaction states",
		"AcceptedCompressionTypes": "accepted compression types",
		"ProducerIdFilters":        "producer id filters",
		"ClusterId":                "cluster",
		"GroupsNames":              "groups",
		"TransactionalIds":         "txns",
		"IPAddress":                "ip address",
		"ACLs":                     "acls",
		"ACLsByHost":               "acls by host",
	} {
		if got := fieldWords(name); got != want {
			t.Errorf("fieldWords(%q) = %q, want %q", name, got, want)
		}
	}
}
