package main

import "strings"

// enumRules name the table (dissect.EnumNamed) of an integer or string field, by the API
// (its name without Request/Response; "" for every API) and the field's
// name. Kafka keeps these tables in Java, or in the prose of a field's
// description; they belong to the field, not to its name alone:
// DescribeConfigs' ResourceType is not the ACL ResourceType.
var enumRules = map[[2]string]string{
	{"DescribeAcls", "ResourceTypeFilter"}: "ResourceType",
	{"DescribeAcls", "ResourceType"}:       "ResourceType",
	{"DescribeAcls", "PatternTypeFilter"}:  "PatternType",
	{"DescribeAcls", "PatternType"}:        "PatternType",
	{"DescribeAcls", "Operation"}:          "AclOperation",
	{"DescribeAcls", "PermissionType"}:     "AclPermissionType",

	{"DescribeConfigs", "ResourceType"}:            "ConfigResourceType",
	{"AlterConfigs", "ResourceType"}:               "ConfigResourceType",
	{"IncrementalAlterConfigs", "ResourceType"}:    "ConfigResourceType",
	{"ListConfigResources", "ResourceType"}:        "ConfigResourceType",
	{"ListConfigResources", "ResourceTypes"}:       "ConfigResourceType",
	{"DescribeConfigs", "ConfigSource"}:            "ConfigSource",
	{"DescribeConfigs", "Source"}:                  "ConfigSource",
	{"CreateTopics", "ConfigSource"}:               "ConfigSource",
	{"DescribeConfigs", "ConfigType"}:              "ConfigType",
	{"IncrementalAlterConfigs", "ConfigOperation"}: "ConfigOperation",

	{"FindCoordinator", "KeyType"}:                            "CoordinatorType",
	{"", "IsolationLevel"}:                                    "IsolationLevel",
	{"ElectLeaders", "ElectionType"}:                          "ElectionType",
	{"DescribeCluster", "EndpointType"}:                       "EndpointType",
	{"UpdateFeatures", "UpgradeType"}:                         "FeatureUpgradeType",
	{"DescribeClientQuotas", "MatchType"}:                     "QuotaMatchType",
	{"AlterUserScramCredentials", "Mechanism"}:                "ScramMechanism",
	{"DescribeUserScramCredentials", "Mechanism"}:             "ScramMechanism",
	{"ConsumerGroupDescribe", "MemberType"}:                   "GroupMemberType",
	{"StreamsGroupHeartbeat", "StatusCode"}:                   "StreamsGroupStatus",
	{"ShareFetch", "AcknowledgeTypes"}:                        "AcknowledgeType",
	{"ShareAcknowledge", "AcknowledgeTypes"}:                  "AcknowledgeType",
	{"ReadShareGroupState", "DeliveryState"}:                  "DeliveryState",
	{"WriteShareGroupState", "DeliveryState"}:                 "DeliveryState",
	{"PushTelemetry", "CompressionType"}:                      "CompressionType",
	{"GetTelemetrySubscriptions", "AcceptedCompressionTypes"}: "CompressionType",
	{"", "LeaderRecoveryState"}:                               "LeaderRecoveryState",
	{"LeaderAndIsr", "Type"}:                                  "ControlRequestType",
	{"UpdateMetadata", "Type"}:                                "ControlRequestType",
	{"Produce", "Acks"}:                                       "Acks",
	{"ApiVersions", "ApiKey"}:                                 "ApiKey",

	// Strings that are names from a known set.
	{"ListGroups", "StatesFilter"}:               "GroupState",
	{"ListGroups", "GroupState"}:                 "GroupState",
	{"ListGroups", "TypesFilter"}:                "GroupType",
	{"ListGroups", "GroupType"}:                  "GroupType",
	{"DescribeGroups", "GroupState"}:             "GroupState",
	{"ConsumerGroupDescribe", "GroupState"}:      "GroupState",
	{"ShareGroupDescribe", "GroupState"}:         "GroupState",
	{"StreamsGroupDescribe", "GroupState"}:       "GroupState",
	{"ListTransactions", "StateFilters"}:         "TransactionState",
	{"ListTransactions", "TransactionState"}:     "TransactionState",
	{"DescribeTransactions", "TransactionState"}: "TransactionState",
	{"DescribeClientQuotas", "EntityType"}:       "QuotaEntityType",
	{"AlterClientQuotas", "EntityType"}:          "QuotaEntityType",
}

// setEnums sets the enum attribute of d's integer fields. Error codes are
// shared by every API: an int16 named ...ErrorCode gets the table, which
// the interpreter gives ErrorCode and TopLevelErrorCode by itself.
func setEnums(d *def) {
	api := strings.TrimSuffix(strings.TrimSuffix(d.Name, "Request"), "Response")
	var walk func(fs []*field)
	walk = func(fs []*field) {
		for _, f := range fs {
			if e, ok := enumRules[[2]string{api, f.Name}]; ok {
				f.Enum = e
			} else if e, ok := enumRules[[2]string{"", f.Name}]; ok {
				f.Enum = e
			} else if f.Type == "int16" && strings.HasSuffix(f.Name, "ErrorCode") && f.Name != "ErrorCode" && f.Name != "TopLevelErrorCode" {
				f.Enum = "ErrorCode"
			}
			walk(f.Fields)
		}
	}
	walk(d.Fields)
	for _, c := range d.Common {
		walk(c.Fields)
	}
}
