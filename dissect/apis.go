package dissect

import "strings"

// api is what kdissect knows about one API key without a full definition:
// its name, the newest version known, and the first flexible version
// (-1: never flexible). That is enough to decode the header of any frame.
type api struct {
	name     string
	maxVer   int16
	flexFrom int16
}

// apis is indexed by API key: Kafka's names for keys 0 through the newest.
var apis = [...]api{
	0:  {"Produce", 13, 9},
	1:  {"Fetch", 18, 12},
	2:  {"ListOffsets", 11, 6},
	3:  {"Metadata", 13, 9},
	4:  {"LeaderAndIsr", 7, 4},
	5:  {"StopReplica", 4, 2},
	6:  {"UpdateMetadata", 8, 6},
	7:  {"ControlledShutdown", 3, 3},
	8:  {"OffsetCommit", 10, 8},
	9:  {"OffsetFetch", 10, 6},
	10: {"FindCoordinator", 6, 3},
	11: {"JoinGroup", 9, 6},
	12: {"Heartbeat", 4, 4},
	13: {"LeaveGroup", 5, 4},
	14: {"SyncGroup", 5, 4},
	15: {"DescribeGroups", 6, 5},
	16: {"ListGroups", 5, 3},
	17: {"SaslHandshake", 1, -1},
	18: {"ApiVersions", 5, 3},
	19: {"CreateTopics", 7, 5},
	20: {"DeleteTopics", 6, 4},
	21: {"DeleteRecords", 2, 2},
	22: {"InitProducerId", 5, 2},
	23: {"OffsetForLeaderEpoch", 4, 4},
	24: {"AddPartitionsToTxn", 5, 3},
	25: {"AddOffsetsToTxn", 4, 3},
	26: {"EndTxn", 5, 3},
	27: {"WriteTxnMarkers", 2, 1},
	28: {"TxnOffsetCommit", 6, 3},
	29: {"DescribeAcls", 3, 2},
	30: {"CreateAcls", 3, 2},
	31: {"DeleteAcls", 3, 2},
	32: {"DescribeConfigs", 4, 4},
	33: {"AlterConfigs", 2, 2},
	34: {"AlterReplicaLogDirs", 2, 2},
	35: {"DescribeLogDirs", 5, 2},
	36: {"SaslAuthenticate", 2, 2},
	37: {"CreatePartitions", 3, 2},
	38: {"CreateDelegationToken", 3, 2},
	39: {"RenewDelegationToken", 2, 2},
	40: {"ExpireDelegationToken", 2, 2},
	41: {"DescribeDelegationToken", 3, 2},
	42: {"DeleteGroups", 3, 2},
	43: {"ElectLeaders", 2, 2},
	44: {"IncrementalAlterConfigs", 1, 1},
	45: {"AlterPartitionReassignments", 1, 0},
	46: {"ListPartitionReassignments", 0, 0},
	47: {"OffsetDelete", 0, -1},
	48: {"DescribeClientQuotas", 1, 1},
	49: {"AlterClientQuotas", 1, 1},
	50: {"DescribeUserScramCredentials", 0, 0},
	51: {"AlterUserScramCredentials", 0, 0},
	52: {"Vote", 2, 0},
	53: {"BeginQuorumEpoch", 1, 1},
	54: {"EndQuorumEpoch", 1, 1},
	55: {"DescribeQuorum", 2, 0},
	56: {"AlterPartition", 3, 0},
	57: {"UpdateFeatures", 2, 0},
	58: {"Envelope", 0, 0},
	59: {"FetchSnapshot", 1, 0},
	60: {"DescribeCluster", 2, 0},
	61: {"DescribeProducers", 0, 0},
	62: {"BrokerRegistration", 4, 0},
	63: {"BrokerHeartbeat", 2, 0},
	64: {"UnregisterBroker", 0, 0},
	65: {"DescribeTransactions", 0, 0},
	66: {"ListTransactions", 2, 0},
	67: {"AllocateProducerIds", 0, 0},
	68: {"ConsumerGroupHeartbeat", 1, 0},
	69: {"ConsumerGroupDescribe", 1, 0},
	70: {"ControllerRegistration", 0, 0},
	71: {"GetTelemetrySubscriptions", 0, 0},
	72: {"PushTelemetry", 0, 0},
	73: {"AssignReplicasToDirs", 0, 0},
	74: {"ListConfigResources", 1, 0},
	75: {"DescribeTopicPartitions", 0, 0},
	76: {"ShareGroupHeartbeat", 1, 0},
	77: {"ShareGroupDescribe", 1, 0},
	78: {"ShareFetch", 2, 0},
	79: {"ShareAcknowledge", 2, 0},
	80: {"AddRaftVoter", 1, 0},
	81: {"RemoveRaftVoter", 0, 0},
	82: {"UpdateRaftVoter", 0, 0},
	83: {"InitializeShareGroupState", 0, 0},
	84: {"ReadShareGroupState", 0, 0},
	85: {"WriteShareGroupState", 1, 0},
	86: {"DeleteShareGroupState", 0, 0},
	87: {"ReadShareGroupStateSummary", 1, 0},
	88: {"StreamsGroupHeartbeat", 1, 0},
	89: {"StreamsGroupDescribe", 1, 0},
	90: {"DescribeShareGroupOffsets", 1, 0},
	91: {"AlterShareGroupOffsets", 0, 0},
	92: {"DeleteShareGroupOffsets", 0, 0},
	93: {"StreamsGroupTopologyDescriptionUpdate", 0, 0},
	94: {"UnregisterController", 0, 0},
}

// MaxAPIKey is the highest API key kdissect can name.
const MaxAPIKey = int16(len(apis) - 1)

// APIName is Kafka's name for an API key, or "Unknown(N)".
func APIName(key int16) string {
	if key >= 0 && int(key) < len(apis) {
		return apis[key].name
	}
	return "Unknown(" + itoa(int64(key)) + ")"
}

// APIKeyByName finds an API key by its name, ignoring case.
func APIKeyByName(name string) (int16, bool) {
	for k, a := range apis {
		if strings.EqualFold(a.name, name) {
			return int16(k), true
		}
	}
	return 0, false
}

// MaxVersion is the newest version of key that kdissect knows, or -1.
func MaxVersion(key int16) int16 {
	if key >= 0 && int(key) < len(apis) {
		return apis[key].maxVer
	}
	return -1
}

// isFlexibleBuiltin reports whether version v of key uses Kafka's flexible
// encoding (compact lengths, tagged fields) by the built-in table alone;
// Registry.isFlexible lets definitions loaded at run time take precedence.
func isFlexibleBuiltin(key, v int16) bool {
	if key < 0 || int(key) >= len(apis) {
		return false
	}
	f := apis[key].flexFrom
	return f >= 0 && v >= f
}

// requestHeaderVersion is the request header version a request of key at
// version v carries: 2 when flexible, 1 otherwise; ControlledShutdown v0 is
// the one API that used header v0 (no client id).
func requestHeaderVersion(key, v int16, flexible bool) int16 {
	switch {
	case flexible:
		return 2
	case key == 7 && v == 0:
		return 0
	}
	return 1
}

// responseHeaderVersion is 1 for flexible versions and 0 otherwise, except
// that ApiVersions responses always use header v0: a client must be able
// to read them before it knows which versions the broker speaks.
func responseHeaderVersion(key int16, flexible bool) int16 {
	if flexible && key != 18 {
		return 1
	}
	return 0
}
