package filter

import (
	"math/bits"
	"slices"
	"strings"

	"github.com/kdissect/kdissect/dissect"
)

// wiresharkNames are the names Wireshark (and its Kafka dissector) gives
// fields kdissect has under one name of its own, so that a filter written
// for tshark means the same here. Those that stand for fields Kafka names
// differently from API to API are wiresharkBodyNames; the rest of
// Wireshark's (kafka.offset, kafka.partition_count, ...) are an error
// whose hint points to Kafka's names.
var wiresharkNames = map[string]string{
	"kafka.api_key":                 "api_key",
	"kafka.api_version":             "api_version",
	"kafka.correlation_id":          "correlation_id",
	"kafka.client_id":               "client_id",
	"kafka.error_message":           "ErrorMessage",
	"kafka.throttle_time":           "ThrottleTimeMs",
	"kafka.member_id":               "MemberId",
	"kafka.protocol_type":           "ProtocolType",
	"kafka.client_software_name":    "ClientSoftwareName",
	"kafka.client_software_version": "ClientSoftwareVersion",
	"frame.number":                  "packets",
	"frame.time":                    "time",

	"kafka.required_acks":             "Acks",
	"kafka.max_wait_time":             "MaxWaitMs",
	"kafka.min_bytes":                 "MinBytes",
	"kafka.isolation_level":           "IsolationLevel",
	"kafka.session_timeout":           "SessionTimeoutMs",
	"kafka.rebalance_timeout":         "RebalanceTimeoutMs",
	"kafka.group_state":               "GroupState",
	"kafka.consumer_group_instance":   "GroupInstanceId",
	"kafka.replication_factor":        "ReplicationFactor",
	"kafka.num_partitions":            "NumPartitions",
	"kafka.allow_auto_topic_creation": "AllowAutoTopicCreation",
	"kafka.log_start_offset":          "LogStartOffset",
	"kafka.last_stable_offset":        "LastStableOffset",
	"kafka.port":                      "Port",
	"kafka.rack":                      "Rack",
	"kafka.cluster_id":                "ClusterId",
	"kafka.leader_id":                 "LeaderId",
	"kafka.isr_id":                    "IsrNodes",
	"kafka.offline_id":                "OfflineReplicas",
	"kafka.transaction_timeout":       "TransactionTimeoutMs",
	"kafka.is_internal":               "IsInternal",
	"kafka.delete_partitions":         "DeletePartitions",
	"kafka.retention_time":            "RetentionTimeMs",
	"kafka.config_operation":          "ConfigOperation",
	"kafka.config_source":             "ConfigSource",
	"kafka.config_readonly":           "ReadOnly",
	"kafka.config_sensitive":          "IsSensitive",
	"kafka.config_default":            "IsDefault",
	"kafka.config_include_synonyms":   "IncludeSynonyms",
	"kafka.token_id":                  "TokenId",
	"kafka.token_hmac":                "Hmac",
	"kafka.token_max_life_time":       "MaxLifetimeMs",
	"kafka.renew_time":                "RenewPeriodMs",
	"kafka.principal_type":            "PrincipalType",
	"kafka.principal_name":            "PrincipalName",
	"kafka.log_dir":                   "LogDir",
	"kafka.offset_lag":                "OffsetLag",
	"kafka.future":                    "IsFutureKey",
	"kafka.election_type":             "ElectionType",
	"kafka.session_lifetime_ms":       "SessionLifetimeMs",
	"kafka.sasl_authentication":       "AuthBytes",
	"kafka.require_stable_offset":     "RequireStable",

	"kafka.broker_epoch":           "BrokerEpoch",
	"kafka.controller_epoch":       "ControllerEpoch",
	"kafka.is_new_replica":         "IsNew",
	"kafka.zk_version":             "ZkVersion",
	"kafka.partition_count":        "Count",
	"kafka.segment_size":           "PartitionSize",
	"kafka.expiry_time":            "ExpiryTimePeriodMs",
	"kafka.commit_timestamp":       "CommitTimestamp",
	"kafka.token_issue_timestamp":  "IssueTimestampMs",
	"kafka.token_expiry_timestamp": "ExpiryTimestampMs",
	"kafka.token_max_timestamp":    "MaxTimestampMs",
	// a record batch's and a MessageSet message's, times as numbers (ms
	// since the epoch) where Wireshark has times
	"kafka.batch_last_offset_delta": "last_offset_delta",
	"kafka.batch_base_sequence":     "base_sequence",
	"kafka.batch_first_timestamp":   "base_timestamp",
	"kafka.batch_last_timestamp":    "max_timestamp",
	"kafka.message_magic":           "magic",
	"kafka.message_timestamp":       "timestamp",

	"kafka.cluster_authorized_ops":         "ClusterAuthorizedOperations",
	"kafka.topic_authorized_ops":           "TopicAuthorizedOperations",
	"kafka.group_authorized_ops":           "AuthorizedOperations",
	"kafka.include_cluster_authorized_ops": "IncludeClusterAuthorizedOperations",
	"kafka.include_topic_authorized_ops":   "IncludeTopicAuthorizedOperations",
	"kafka.include_group_authorized_ops":   "IncludeAuthorizedOperations",

	"kafka.batch_index":                   "BatchIndex",
	"kafka.batch_index_error_message":     "BatchIndexErrorMessage",
	"kafka.first_offset":                  "FirstOffset",
	"kafka.client_host":                   "ClientHost",
	"kafka.listener_name":                 "Listener",
	"kafka.broker_security_protocol_type": "SecurityProtocol",
	// Wireshark's expert flag of a packet it could not dissect: here a
	// message with a problem (or an event of lost or skipped bytes).
	"_ws.malformed": "malformed",
}

// bodyAlias is a Wireshark name that stands for body fields of several
// Kafka names, or of one name that means it in some APIs only (Metadata's
// broker Host is no kafka.acl_host, an ACL's Host no kafka.host).
type bodyAlias struct {
	fields []bodyMatch
	apis   []int16 // nil: every API's
	except []int16 // APIs whose fields of these names are something else
	// extra appends the occurrences a field's name alone cannot find
	// (FindCoordinator's Key, a group's or a transaction's by its KeyType).
	extra func(m *dissect.Message, body *dissect.Node, dst []Value) []Value
}

// bodyMatch is a field by its name, and where names say less than Kafka's
// entityType, by its struct's type or its own (a topic's Name, not a
// config's).
type bodyMatch struct {
	name    string
	parents map[string]bool // the types of the structs it is one in; nil: any
	typ     string          // its node's type; "": any
	// mask, when set, makes the value the bits of the field's it covers,
	// shifted down, as a Wireshark field with a bitmask has them.
	mask int64
}

func names(ns ...string) []bodyMatch {
	out := make([]bodyMatch, len(ns))
	for i, n := range ns {
		out[i] = bodyMatch{name: n}
	}
	return out
}

func set(ss string) map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Fields(ss) {
		m[s] = true
	}
	return m
}

// recordTypes are the tree types of a record and of a MessageSet
// message; legacyTypes the latter's, batchTypes a record batch's.
var (
	recordTypes = map[string]bool{"Record": true, "Message v0": true, "Message v1": true}
	legacyTypes = map[string]bool{"Message v0": true, "Message v1": true}
	batchTypes  = map[string]bool{"RecordBatch v2": true}
)

// aclAPIs are DescribeAcls, CreateAcls and DeleteAcls, and an Envelope,
// which may forward them.
var aclAPIs = []int16{29, 30, 31, 58}

// configAPIs are DescribeConfigs, AlterConfigs and IncrementalAlterConfigs.
var configAPIs = []int16{32, 33, 44}

// topicStructs are the structs whose Name is a topic's: those of Kafka's
// definitions that give their Name the entityType topicName (in a
// message's fields or its commonStructs), no other struct with a Name
// (CreatableTopicConfig's is a config's).
var topicStructs = set(`AddPartitionsToTxnTopic AddPartitionsToTxnTopicResult AlterReplicaLogDirTopic
	CreatableTopic CreatableTopicResult CreatePartitionsTopic CreatePartitionsTopicResult DeletableTopicResult
	DeleteRecordsTopic DeleteRecordsTopicResult DeleteTopicState DescribeLogDirsTopic DescribeTopicPartitionsResponseTopic
	ListOffsetsTopic ListOffsetsTopicResponse ListPartitionReassignmentsTopics MetadataRequestTopic
	MetadataResponseTopic OffsetCommitRequestTopic OffsetCommitResponseTopic OffsetDeleteRequestTopic
	OffsetDeleteResponseTopic OffsetFetchRequestTopic OffsetFetchRequestTopics OffsetFetchResponseTopic
	OffsetFetchResponseTopics OngoingTopicReassignment ReassignableTopic ReassignableTopicResponse
	StopReplicaTopicV1 TopicInfo TopicProduceData TopicProduceResponse TopicRequest TopicResponse TopicSnapshot
	TxnOffsetCommitRequestTopic TxnOffsetCommitResponseTopic WritableTxnMarkerTopic WritableTxnMarkerTopicResult`)

// wiresharkBodyNames are Wireshark's names of fields Kafka names by what
// they are in each message: the topic, group and transaction names and the
// producer id (the fields Kafka's definitions give the entityType
// topicName, groupId, transactionalId or producerId), the error codes, an
// ACL binding's own fields and its filter's (ResourceNameFilter), a
// config's, and SaslHandshake's mechanisms.
var wiresharkBodyNames = map[string]*bodyAlias{
	"kafka.topic_name": {fields: append(names("Topic", "TopicName", "TopicNames", "RepartitionSinkTopics", "SubscribedTopicNames"),
		// a streams group's; its other SourceTopics are structs
		bodyMatch{name: "SourceTopics", typ: "[]string"},
		bodyMatch{name: "Name", parents: topicStructs},
		// a consumer's subscription (JoinGroup's protocol metadata)
		bodyMatch{name: "Topics", typ: "[]string"})},
	// DescribeGroups asks for Groups, a []string; other Groups are
	// arrays of structs.
	"kafka.consumer_group": {fields: append(names("GroupId", "GroupIds", "GroupsNames"), bodyMatch{name: "Groups", typ: "[]string"}),
		extra: coordinatorKeys(0)},
	"kafka.producer_id": {fields: names("ProducerId", "V3AndBelowProducerId", "ProducerIdStart", "OngoingTxnProducerId",
		"ProducerIdFilters", "producer_id")},
	"kafka.producer_epoch": {fields: names("ProducerEpoch", "V3AndBelowProducerEpoch", "OngoingTxnProducerEpoch", "producer_epoch")},
	"kafka.transactional_id": {fields: names("TransactionalId", "TransactionalIds", "V3AndBelowTransactionalId"),
		extra: coordinatorKeys(1)},
	// Every error code, a partition's in AddPartitionsToTxn v0-3 and a
	// topic config's in CreateTopics included.
	"kafka.error": {fields: names("ErrorCode", "PartitionErrorCode", "TopicConfigErrorCode", "AcknowledgeErrorCode")},
	// A partition's number: PartitionIndex in most APIs, Partition in
	// Fetch v0-11 and the share APIs, Index in Produce, and the elements
	// of a []int32 Partitions (a consumer's assignment, ElectLeaders) or
	// PartitionIndexes (OffsetFetch).
	"kafka.partition_id": {fields: append(names("PartitionIndex", "Partition", "Index"), bodyMatch{name: "Partitions", typ: "[]int32"},
		bodyMatch{name: "PartitionIndexes", typ: "[]int32"})},
	// A record's key and value, not its headers' (kafka.header_key).
	"kafka.message_key":       {fields: []bodyMatch{{name: "key", parents: recordTypes}}},
	"kafka.message_value":     {fields: []bodyMatch{{name: "value", parents: recordTypes}}},
	"kafka.header_key":        {fields: []bodyMatch{{name: "key", parents: set("Header")}}},
	"kafka.header_value":      {fields: []bodyMatch{{name: "value", parents: set("Header")}}},
	"kafka.record_attributes": {fields: []bodyMatch{{name: "attributes", parents: set("Record")}}},
	"kafka.batch_crc":         {fields: []bodyMatch{{name: "crc", parents: batchTypes}}},
	// The bits of a batch's and a MessageSet message's attributes.
	"kafka.batch_codec":               {fields: []bodyMatch{{name: "attributes", parents: batchTypes, mask: 0x07}}},
	"kafka.batch_timestamp_type":      {fields: []bodyMatch{{name: "attributes", parents: batchTypes, mask: 0x08}}},
	"kafka.batch_transactional":       {fields: []bodyMatch{{name: "attributes", parents: batchTypes, mask: 0x10}}},
	"kafka.batch_control_batch":       {fields: []bodyMatch{{name: "attributes", parents: batchTypes, mask: 0x20}}},
	"kafka.message_codec":             {fields: []bodyMatch{{name: "attributes", parents: legacyTypes, mask: 0x07}}},
	"kafka.message_timestamp_type":    {fields: []bodyMatch{{name: "attributes", parents: map[string]bool{"Message v1": true}, mask: 0x08}}},
	"kafka.message_crc":               {fields: []bodyMatch{{name: "crc", parents: legacyTypes}}},
	"kafka.forgotten_topic_name":      {fields: []bodyMatch{{name: "Topic", parents: set("ForgottenTopic")}}},
	"kafka.forgotten_topic_partition": {fields: []bodyMatch{{name: "Partitions", parents: set("ForgottenTopic")}}},
	// CreateTopics and UpdateFeatures spell them timeoutMs and
	// validateOnly, as Kafka's definitions do.
	"kafka.timeout":       {fields: names("TimeoutMs", "timeoutMs")},
	"kafka.validate_only": {fields: names("ValidateOnly", "validateOnly")},
	// Wireshark counts a batch's records as its size, and its length (a
	// MessageSet message's too) as the message size.
	"kafka.batch_size": {fields: []bodyMatch{{name: "record_count", parents: batchTypes}}},
	"kafka.message_size": {fields: []bodyMatch{{name: "batch_length", parents: batchTypes},
		{name: "message_size", parents: legacyTypes}}},
	// A Fetch request's current leader epoch is Wireshark's leader epoch;
	// Wireshark's current leader epoch is the other APIs' only.
	"kafka.current_leader_epoch": {fields: names("CurrentLeaderEpoch"), except: []int16{1}},
	// A Metadata response's replicas are replica ids too.
	"kafka.replica_id": {fields: append(names("ReplicaId"), bodyMatch{name: "ReplicaNodes", typ: "[]int32"})},
	// OffsetCommit v9+ calls it GenerationIdOrMemberEpoch.
	"kafka.generation_id": {fields: names("GenerationId", "GenerationIdOrMemberEpoch")},
	"kafka.max_bytes":     {fields: names("MaxBytes", "PartitionMaxBytes")},
	// Wireshark's Metadata response names its ControllerId a node id.
	"kafka.node_id": {fields: names("NodeId", "BrokerId", "ControllerId")},
	"kafka.leader_epoch": {fields: append(names("LeaderEpoch", "partition_leader_epoch"),
		bodyMatch{name: "CurrentLeaderEpoch", parents: set("FetchPartition")})},
	"kafka.host":            {fields: names("Host"), except: aclAPIs},
	"kafka.group_leader_id": {fields: names("Leader"), apis: []int16{11}},
	"kafka.protocol_name": {fields: []bodyMatch{{name: "ProtocolName"},
		{name: "Name", parents: set("JoinGroupRequestProtocol")}}},
	"kafka.protocol_metadata":        {fields: []bodyMatch{{name: "Metadata", parents: set("JoinGroupRequestProtocol")}}},
	"kafka.member_metadata":          {fields: []bodyMatch{{name: "Metadata", parents: set("JoinGroupResponseMember")}}},
	"kafka.member_assignment":        {fields: names("Assignment"), apis: []int16{14}},
	"kafka.metadata":                 {fields: append(names("CommittedMetadata"), bodyMatch{name: "Metadata", typ: "string"})},
	"kafka.coordinator_key":          {fields: names("Key", "CoordinatorKeys"), apis: []int16{10}},
	"kafka.coordinator_type":         {fields: names("KeyType"), apis: []int16{10}},
	"kafka.coordinator_epoch":        {fields: names("CoordinatorEpoch", "coordinator_epoch")},
	"kafka.transaction_result":       {fields: names("Committed"), apis: []int16{26}},
	"kafka.offset_time":              {fields: names("Timestamp"), apis: []int16{2}},
	"kafka.max_offsets":              {fields: names("MaxNumOffsets"), apis: []int16{2}},
	"kafka.fetch_session_id":         {fields: names("SessionId"), apis: []int16{1}},
	"kafka.fetch_session_epoch":      {fields: names("SessionEpoch"), apis: []int16{1}},
	"kafka.api_versions.api_key":     {fields: names("ApiKey"), apis: []int16{18}},
	"kafka.api_versions.min_version": {fields: names("MinVersion"), apis: []int16{18}},
	"kafka.api_versions.max_version": {fields: names("MaxVersion"), apis: []int16{18}},
	"kafka.config_resource_type":     {fields: names("ResourceType"), apis: configAPIs},
	"kafka.config_resource_name":     {fields: names("ResourceName"), apis: configAPIs},
	// A config's name and value: in these APIs every Name and Value is
	// one (DescribeConfigs' synonyms included).
	"kafka.config_key":   {fields: names("ConfigurationKeys", "Name"), apis: configAPIs},
	"kafka.config_value": {fields: names("Value"), apis: configAPIs},

	"kafka.acl_resource_type":         {fields: names("ResourceType", "ResourceTypeFilter"), apis: aclAPIs},
	"kafka.acl_resource_name":         {fields: names("ResourceName", "ResourceNameFilter"), apis: aclAPIs},
	"kafka.acl_resource_pattern_type": {fields: names("ResourcePatternType", "PatternType", "PatternTypeFilter"), apis: aclAPIs},
	"kafka.acl_principal":             {fields: names("Principal", "PrincipalFilter"), apis: aclAPIs},
	"kafka.acl_host":                  {fields: names("Host", "HostFilter"), apis: aclAPIs},
	"kafka.acl_operation":             {fields: names("Operation"), apis: aclAPIs},
	"kafka.acl_permission_type":       {fields: names("PermissionType"), apis: aclAPIs},
	// the mechanism asked for, and those the broker enables
	"kafka.sasl_mechanism": {fields: names("Mechanism", "Mechanisms"), apis: []int16{17}},
	// The tag of every tagged field of the body, known or not.
	"kafka.tagged_field_tag": {fields: []bodyMatch{{name: "tag", parents: set("tagged_field")}}},
}

// types are what a's fields hold: a field matched by its node's type
// holds that type's elements, not what other fields of its name hold.
func (a *bodyAlias) types(s *schema) types {
	var t types
	for _, m := range a.fields {
		if pt, ok := primitiveTypes[strings.TrimPrefix(m.typ, "[]")]; ok {
			t |= pt
		} else {
			t |= s.body[m.name]
		}
	}
	return t
}

// coordinatorKeys finds the keys a FindCoordinator request asks for when
// they are of keyType (0 a group's, 1 a transaction's; v0 asks for groups
// alone, and has no KeyType).
func coordinatorKeys(keyType int64) func(m *dissect.Message, body *dissect.Node, dst []Value) []Value {
	return func(m *dissect.Message, body *dissect.Node, dst []Value) []Value {
		if m.APIKey != 10 || m.Direction != dissect.Request {
			return dst
		}
		kt := int64(0)
		if n := body.Child("KeyType"); n != nil && n.HasValue() {
			kt = n.Int
		}
		if kt != keyType {
			return dst
		}
		dst = named(body, "Key", dst)
		return named(body, "CoordinatorKeys", dst)
	}
}

// aliasValues appends the occurrences of a's fields in m's body, in tree
// order.
func aliasValues(m *dissect.Message, a *bodyAlias, dst []Value) []Value {
	body := bodyOf(m)
	if body == nil || a.apis != nil && !slices.Contains(a.apis, m.APIKey) || slices.Contains(a.except, m.APIKey) {
		return dst
	}
	dst = a.walk(body, "", dst)
	if a.extra != nil {
		dst = a.extra(m, body, dst)
	}
	return dst
}

func (a *bodyAlias) walk(n *dissect.Node, parent string, dst []Value) []Value {
	for _, f := range a.fields {
		if n.Name == f.name && (f.parents == nil || f.parents[parent]) && (f.typ == "" || n.Type == f.typ) {
			if f.mask != 0 && n.Kind == dissect.KindInt && n.HasValue() && !n.Redacted() {
				dst = append(dst, Int(n.Int&f.mask>>bits.TrailingZeros64(uint64(f.mask)), ""))
			} else {
				dst = nodeValues(n, dst)
			}
			break
		}
	}
	for _, c := range n.Children {
		dst = a.walk(c, n.Type, dst)
	}
	return dst
}
