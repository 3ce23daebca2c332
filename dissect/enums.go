package dissect

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Enum names the values of an enum-like integer field. Values outside the
// table print as "unknown <Name>" so that a bogus 42 is never mistaken for
// a legitimate UNKNOWN (0).
type Enum struct {
	title string   // the enum's own name: ResourceType, ErrorCode, ...
	first int64    // value of names[0]
	names []string // "" marks a hole
	// strs makes the table one of strings: the values a string field is
	// known to take (group states, transaction states, quota entity
	// types), which travel as their own names. A value outside it is
	// noted as unknown; Kafka compares them without regard to case.
	strs []string
}

// KnownString says whether s is one of a string table's values.
func (e *Enum) KnownString(s string) bool {
	for _, v := range e.strs {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// Lookup returns the symbol for v and whether the table knows it.
func (e *Enum) Lookup(v int64) (string, bool) {
	i := v - e.first
	if i < 0 || i >= int64(len(e.names)) || e.names[i] == "" {
		return "", false
	}
	return e.names[i], true
}

// Name returns the symbol for v, or "unknown <Enum>" when v is not in the table.
func (e *Enum) Name(v int64) string {
	if s, ok := e.Lookup(v); ok {
		return s
	}
	return "unknown " + e.title
}

// Values from org.apache.kafka.common.resource.resourceType and friends;
// USER (7) arrived with CreateAcls/DeleteAcls v3.
var (
	resourceType = &Enum{title: "ResourceType", names: []string{
		"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}}
	patternType = &Enum{title: "PatternType", names: []string{
		"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}}
	aclOperation = &Enum{title: "AclOperation", names: []string{
		"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
		"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE",
		"CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}}
	aclPermissionType = &Enum{title: "AclPermissionType", names: []string{
		"UNKNOWN", "ANY", "DENY", "ALLOW"}}
)

// errorCode is Kafka's table of error codes, -1 through the newest.
var errorCode = &Enum{title: "ErrorCode", first: -1, names: []string{
	"UNKNOWN_SERVER_ERROR",
	"NONE",
	"OFFSET_OUT_OF_RANGE",
	"CORRUPT_MESSAGE",
	"UNKNOWN_TOPIC_OR_PARTITION",
	"INVALID_FETCH_SIZE",
	"LEADER_NOT_AVAILABLE",
	"NOT_LEADER_OR_FOLLOWER",
	"REQUEST_TIMED_OUT",
	"BROKER_NOT_AVAILABLE",
	"REPLICA_NOT_AVAILABLE",
	"MESSAGE_TOO_LARGE",
	"STALE_CONTROLLER_EPOCH",
	"OFFSET_METADATA_TOO_LARGE",
	"NETWORK_EXCEPTION",
	"COORDINATOR_LOAD_IN_PROGRESS",
	"COORDINATOR_NOT_AVAILABLE",
	"NOT_COORDINATOR",
	"INVALID_TOPIC_EXCEPTION",
	"RECORD_LIST_TOO_LARGE",
	"NOT_ENOUGH_REPLICAS",
	"NOT_ENOUGH_REPLICAS_AFTER_APPEND",
	"INVALID_REQUIRED_ACKS",
	"ILLEGAL_GENERATION",
	"INCONSISTENT_GROUP_PROTOCOL",
	"INVALID_GROUP_ID",
	"UNKNOWN_MEMBER_ID",
	"INVALID_SESSION_TIMEOUT",
	"REBALANCE_IN_PROGRESS",
	"INVALID_COMMIT_OFFSET_SIZE",
	"TOPIC_AUTHORIZATION_FAILED",
	"GROUP_AUTHORIZATION_FAILED",
	"CLUSTER_AUTHORIZATION_FAILED",
	"INVALID_TIMESTAMP",
	"UNSUPPORTED_SASL_MECHANISM",
	"ILLEGAL_SASL_STATE",
	"UNSUPPORTED_VERSION",
	"TOPIC_ALREADY_EXISTS",
	"INVALID_PARTITIONS",
	"INVALID_REPLICATION_FACTOR",
	"INVALID_REPLICA_ASSIGNMENT",
	"INVALID_CONFIG",
	"NOT_CONTROLLER",
	"INVALID_REQUEST",
	"UNSUPPORTED_FOR_MESSAGE_FORMAT",
	"POLICY_VIOLATION",
	"OUT_OF_ORDER_SEQUENCE_NUMBER",
	"DUPLICATE_SEQUENCE_NUMBER",
	"INVALID_PRODUCER_EPOCH",
	"INVALID_TXN_STATE",
	"INVALID_PRODUCER_ID_MAPPING",
	"INVALID_TRANSACTION_TIMEOUT",
	"CONCURRENT_TRANSACTIONS",
	"TRANSACTION_COORDINATOR_FENCED",
	"TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
	"SECURITY_DISABLED",
	"OPERATION_NOT_ATTEMPTED",
	"KAFKA_STORAGE_ERROR",
	"LOG_DIR_NOT_FOUND",
	"SASL_AUTHENTICATION_FAILED",
	"UNKNOWN_PRODUCER_ID",
	"REASSIGNMENT_IN_PROGRESS",
	"DELEGATION_TOKEN_AUTH_DISABLED",
	"DELEGATION_TOKEN_NOT_FOUND",
	"DELEGATION_TOKEN_OWNER_MISMATCH",
	"DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
	"DELEGATION_TOKEN_AUTHORIZATION_FAILED",
	"DELEGATION_TOKEN_EXPIRED",
	"INVALID_PRINCIPAL_TYPE",
	"NON_EMPTY_GROUP",
	"GROUP_ID_NOT_FOUND",
	"FETCH_SESSION_ID_NOT_FOUND",
	"INVALID_FETCH_SESSION_EPOCH",
	"LISTENER_NOT_FOUND",
	"TOPIC_DELETION_DISABLED",
	"FENCED_LEADER_EPOCH",
	"UNKNOWN_LEADER_EPOCH",
	"UNSUPPORTED_COMPRESSION_TYPE",
	"STALE_BROKER_EPOCH",
	"OFFSET_NOT_AVAILABLE",
	"MEMBER_ID_REQUIRED",
	"PREFERRED_LEADER_NOT_AVAILABLE",
	"GROUP_MAX_SIZE_REACHED",
	"FENCED_INSTANCE_ID",
	"ELIGIBLE_LEADERS_NOT_AVAILABLE",
	"ELECTION_NOT_NEEDED",
	"NO_REASSIGNMENT_IN_PROGRESS",
	"GROUP_SUBSCRIBED_TO_TOPIC",
	"INVALID_RECORD",
	"UNSTABLE_OFFSET_COMMIT",
	"THROTTLING_QUOTA_EXCEEDED",
	"PRODUCER_FENCED",
	"RESOURCE_NOT_FOUND",
	"DUPLICATE_RESOURCE",
	"UNACCEPTABLE_CREDENTIAL",
	"INCONSISTENT_VOTER_SET",
	"INVALID_UPDATE_VERSION",
	"FEATURE_UPDATE_FAILED",
	"PRINCIPAL_DESERIALIZATION_FAILURE",
	"SNAPSHOT_NOT_FOUND",
	"POSITION_OUT_OF_RANGE",
	"UNKNOWN_TOPIC_ID",
	"DUPLICATE_BROKER_REGISTRATION",
	"BROKER_ID_NOT_REGISTERED",
	"INCONSISTENT_TOPIC_ID",
	"INCONSISTENT_CLUSTER_ID",
	"TRANSACTIONAL_ID_NOT_FOUND",
	"FETCH_SESSION_TOPIC_ID_ERROR",
	"INELIGIBLE_REPLICA",
	"NEW_LEADER_ELECTED",
	"OFFSET_MOVED_TO_TIERED_STORAGE",
	"FENCED_MEMBER_EPOCH",
	"UNRELEASED_INSTANCE_ID",
	"UNSUPPORTED_ASSIGNOR",
	"STALE_MEMBER_EPOCH",
	"MISMATCHED_ENDPOINT_TYPE",
	"UNSUPPORTED_ENDPOINT_TYPE",
	"UNKNOWN_CONTROLLER_ID",
	"UNKNOWN_SUBSCRIPTION_ID",
	"TELEMETRY_TOO_LARGE",
	"INVALID_REGISTRATION",
	"TRANSACTION_ABORTABLE",
	"INVALID_RECORD_STATE",
	"SHARE_SESSION_NOT_FOUND",
	"INVALID_SHARE_SESSION_EPOCH",
	"FENCED_STATE_EPOCH",
	"INVALID_VOTER_KEY",
	"DUPLICATE_VOTER",
	"VOTER_NOT_FOUND",
	"INVALID_REGULAR_EXPRESSION",
	"REBOOTSTRAP_REQUIRED",
	"STREAMS_INVALID_TOPOLOGY",
	"STREAMS_INVALID_TOPOLOGY_EPOCH",
	"STREAMS_TOPOLOGY_FENCED",
	"SHARE_SESSION_LIMIT_REACHED",
	"GROUP_DELETION_FAILED",
	"STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED",
	"CONTROLLER_ID_NOT_REGISTERED",
}}

// sparse builds a table whose values are not consecutive; the values it
// leaves out are unknown.
func sparse(title string, first int64, byValue map[int64]string) *Enum {
	last := first
	for v := range byValue {
		last = max(last, v)
	}
	e := &Enum{title: title, first: first, names: make([]string, last-first+1)}
	for v, name := range byValue {
		e.names[v-first] = name
	}
	return e
}

// The tables of the other APIs' enum-like fields. Kafka keeps them in Java
// (ConfigResource.Type, AlterConfigOp.OpType, ...) or in the description
// of the field; the names are Kafka's.
var (
	configResourceType = sparse("ConfigResourceType", 0, map[int64]string{
		0: "UNKNOWN", 2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"})
	configSource = &Enum{title: "ConfigSource", names: []string{
		"UNKNOWN", "DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG",
		"STATIC_BROKER_CONFIG", "DEFAULT_CONFIG", "DYNAMIC_BROKER_LOGGER_CONFIG", "CLIENT_METRICS_CONFIG",
		"GROUP_CONFIG"}}
	configType = &Enum{title: "ConfigType", names: []string{
		"UNKNOWN", "BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"}}
	configOperation = &Enum{title: "ConfigOperation", names: []string{"SET", "DELETE", "APPEND", "SUBTRACT"}}
	coordinatorType = &Enum{title: "CoordinatorType", names: []string{"GROUP", "TRANSACTION", "SHARE"}}
	isolationLevel  = &Enum{title: "IsolationLevel", names: []string{"READ_UNCOMMITTED", "READ_COMMITTED"}}
	electionType    = &Enum{title: "ElectionType", names: []string{"PREFERRED", "UNCLEAN"}}
	endpointType    = &Enum{title: "EndpointType", names: []string{"UNKNOWN", "BROKER", "CONTROLLER"}}
	// featureUpgradeType is UpdateFeatures' UpgradeType (v1+).
	featureUpgradeType = &Enum{title: "FeatureUpgradeType", names: []string{
		"UNKNOWN", "UPGRADE", "SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"}}
	quotaMatchType = &Enum{title: "QuotaMatchType", names: []string{"EXACT", "DEFAULT", "ANY"}}
	// scramMechanism names the mechanisms as SASL does, not as Java's enum.
	scramMechanism     = &Enum{title: "ScramMechanism", names: []string{"UNKNOWN", "SCRAM-SHA-256", "SCRAM-SHA-512"}}
	groupMemberType    = &Enum{title: "GroupMemberType", first: -1, names: []string{"UNKNOWN", "CLASSIC", "CONSUMER"}}
	streamsGroupStatus = &Enum{title: "StreamsGroupStatus", names: []string{
		"STALE_TOPOLOGY", "MISSING_SOURCE_TOPICS", "INCORRECTLY_PARTITIONED_TOPICS", "MISSING_INTERNAL_TOPICS",
		"SHUTDOWN_APPLICATION"}}
	acknowledgeType = &Enum{title: "AcknowledgeType", names: []string{"GAP", "ACCEPT", "RELEASE", "REJECT", "RENEW"}}
	// deliveryState holds only the states a share-group state batch stores.
	deliveryState       = sparse("DeliveryState", 0, map[int64]string{0: "AVAILABLE", 2: "ACKNOWLEDGED", 4: "ARCHIVED"})
	compressionType     = &Enum{title: "CompressionType", names: []string{"NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD"}}
	leaderRecoveryState = &Enum{title: "LeaderRecoveryState", names: []string{"RECOVERED", "RECOVERING"}}
	// controlRequestType is the Type of the ZooKeeper-era controller
	// requests (LeaderAndIsr, UpdateMetadata) during a KRaft migration.
	controlRequestType = &Enum{title: "ControlRequestType", names: []string{"UNKNOWN", "INCREMENTAL", "FULL"}}
	acks               = &Enum{title: "Acks", first: -1, names: []string{"ALL", "NONE", "LEADER"}}

	// String tables, from Kafka's groupState, GroupType, TransactionState
	// and ClientQuotaEntity.
	groupState = &Enum{title: "GroupState", strs: []string{"Unknown", "PreparingRebalance",
		"CompletingRebalance", "Stable", "Dead", "Empty", "Assigning", "Reconciling", "NotReady"}}
	groupType        = &Enum{title: "GroupType", strs: []string{"Classic", "Consumer", "Share", "Streams"}}
	transactionState = &Enum{title: "TransactionState", strs: []string{"Empty", "Ongoing", "PrepareCommit",
		"PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}}
	quotaEntityType = &Enum{title: "QuotaEntityType", strs: []string{"user", "client-id", "ip"}}
)

// enums are the tables a definition can name in a field's "enum"
// attribute. A table belongs to the field that names it, not to a field
// name: DescribeConfigs' ResourceType is not the ACL ResourceType.
var enums = map[string]*Enum{
	"ResourceType":        resourceType,
	"PatternType":         patternType,
	"AclOperation":        aclOperation,
	"AclPermissionType":   aclPermissionType,
	"ErrorCode":           errorCode,
	"ApiKey":              apiEnum,
	"ConfigResourceType":  configResourceType,
	"ConfigSource":        configSource,
	"ConfigType":          configType,
	"ConfigOperation":     configOperation,
	"CoordinatorType":     coordinatorType,
	"IsolationLevel":      isolationLevel,
	"ElectionType":        electionType,
	"EndpointType":        endpointType,
	"FeatureUpgradeType":  featureUpgradeType,
	"QuotaMatchType":      quotaMatchType,
	"ScramMechanism":      scramMechanism,
	"GroupMemberType":     groupMemberType,
	"StreamsGroupStatus":  streamsGroupStatus,
	"AcknowledgeType":     acknowledgeType,
	"DeliveryState":       deliveryState,
	"CompressionType":     compressionType,
	"LeaderRecoveryState": leaderRecoveryState,
	"ControlRequestType":  controlRequestType,
	"Acks":                acks,
	"GroupState":          groupState,
	"GroupType":           groupType,
	"TransactionState":    transactionState,
	"QuotaEntityType":     quotaEntityType,
}

// enumFor returns the table a field names. Error codes are the one table
// Kafka shares across every API, so an int16 ErrorCode or TopLevelErrorCode
// gets it without the attribute.
func enumFor(jf jsonField, k kind) (*Enum, error) {
	integer := k == kInt8 || k == kInt16 || k == kInt32
	if jf.Enum == "" {
		if k == kInt16 && (jf.Name == "ErrorCode" || jf.Name == "TopLevelErrorCode") {
			return errorCode, nil
		}
		return nil, nil
	}
	e, ok := enums[jf.Enum]
	switch {
	case !ok:
		names := make([]string, 0, len(enums))
		for n := range enums {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("unknown enum %q (known: %s)", jf.Enum, strings.Join(names, ", "))
	case e.strs != nil && k != kString:
		return nil, fmt.Errorf("enum %q on a field of type %s: it names string values", jf.Enum, jf.Type)
	case e.strs == nil && !integer:
		return nil, fmt.Errorf("enum %q on a field of type %s: enums name int8, int16 or int32 values", jf.Enum, jf.Type)
	}
	return e, nil
}

// apiEnum names request_api_key values.
var apiEnum = func() *Enum {
	e := &Enum{title: "ApiKey", names: make([]string, len(apis))}
	for i, a := range apis {
		e.names[i] = a.name
	}
	return e
}()

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// EnumNamed is the table a definition names in a field's "enum"
// attribute ("ResourceType", "ErrorCode", ...); nil when there is none.
// The tables are read-only: an Enum exports no field.
func EnumNamed(name string) *Enum { return enums[name] }

// EnumTables lists every table, in name order.
func EnumTables() []*Enum {
	names := make([]string, 0, len(enums))
	for n := range enums {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*Enum, len(names))
	for i, n := range names {
		out[i] = enums[n]
	}
	return out
}

// Title is the table's own name: ResourceType, ErrorCode, ...
func (e *Enum) Title() string { return e.title }

// First is the value of the table's first name.
func (e *Enum) First() int64 { return e.first }
