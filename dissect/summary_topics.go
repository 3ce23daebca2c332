package dissect

import "strconv"

// The summaries of the APIs that create, delete and reshape topics. Each
// request says what it asks for per topic (how many partitions, how
// replicated), since a reader scanning a cluster's changes looks for those;
// each response names its topics, and its errors are counted as any
// response's are.

// appendTopicAdmin writes the details of one of those messages; false when
// key is none of them.
func appendTopicAdmin(b []byte, key int16, body *Node, head int, req bool) ([]byte, bool) {
	switch {
	case key == 19 && req: // CreateTopics
		b = appendEachOf(b, head, body.Child("Topics"), "; ", appendCreatableTopic)
		b = appendFlag(b, head, body, "validateOnly", "validate only")
	case key == 19:
		b = appendTopicCount(b, head, body.Child("Topics"))
	case key == 20 && req: // DeleteTopics: names up to v5, names or ids after
		topics := body.Child("Topics")
		if topics == nil || !topics.HasValue() {
			topics = body.Child("TopicNames")
		}
		b = appendTopicCount(b, head, topics)
	case key == 20:
		b = appendTopicCount(b, head, body.Child("Responses"))
	case key == 37 && req: // CreatePartitions
		b = appendEachOf(b, head, body.Child("Topics"), "; ", func(b []byte, t *Node) []byte {
			b = appendTopicName(b, t)
			b = append(b, " to "...)
			c, ok := num(t, "Count")
			if !ok {
				return append(b, '?')
			}
			b = appendPlural(b, c, "partition")
			return appendAssigned(b, t)
		})
		b = appendFlag(b, head, body, "ValidateOnly", "validate only")
	case key == 37:
		b = appendTopicCount(b, head, body.Child("Results"))
	case key == 43 && req: // ElectLeaders: v0 has no type, and elects the preferred leaders
		b = sep(b, head)
		b = append(b, "election "...)
		if t := body.Child("ElectionType"); t != nil {
			b = appendSym(b, t)
		} else {
			b = append(b, "PREFERRED"...)
		}
		if tp := body.Child("TopicPartitions"); tp != nil && tp.HasValue() && tp.Null {
			b = append(sep(b, head), "all partitions"...)
		} else {
			b = appendTopicsOf(b, head, tp, "Partitions")
		}
	case key == 43:
		b = appendTopicsOf(b, head, body.Child("ReplicaElectionResults"), "PartitionResult")
	default:
		return b, false
	}
	return b, true
}

// appendCreatableTopic writes "orders: 3 partitions, replication 2, 1
// config"; Kafka's -1 is the broker's default.
func appendCreatableTopic(b []byte, t *Node) []byte {
	b = appendTopicName(b, t)
	b = append(b, ": "...)
	switch n, ok := num(t, "NumPartitions"); {
	case !ok:
		b = append(b, '?')
	case n == -1 && arrayLen(t.Child("Assignments")) > 0:
		b = appendPlural(b, arrayLen(t.Child("Assignments")), "partition")
	case n == -1:
		b = append(b, "default partitions"...)
	default:
		b = appendPlural(b, n, "partition")
	}
	b = appendAssigned(b, t)
	switch r, ok := num(t, "ReplicationFactor"); {
	case !ok:
	case r == -1:
		b = append(b, ", default replication"...)
	default:
		b = append(b, ", replication "...)
		b = strconv.AppendInt(b, r, 10)
	}
	if c := arrayLen(t.Child("Configs")); c > 0 {
		b = append(b, ", "...)
		b = appendPlural(b, c, "config")
	}
	return b
}

// appendTopicName names the topic of element t, `""` for an empty name.
func appendTopicName(b []byte, t *Node) []byte {
	if s := topicOf(t); s != "" {
		return appendClipped(b, s)
	}
	return append(b, `""`...)
}

// appendAssigned marks a topic whose replicas the request places itself.
func appendAssigned(b []byte, t *Node) []byte {
	if arrayLen(t.Child("Assignments")) > 0 {
		b = append(b, " (assigned)"...)
	}
	return b
}

// appendTopicCount writes "2 topics: orders, id:1f0c2a9e" for an array of
// topic names, or of elements naming their topic by name or by id.
func appendTopicCount(b []byte, head int, arr *Node) []byte {
	if arr == nil || !arr.HasValue() || arr.Null {
		return b
	}
	b = sep(b, head)
	b = appendPlural(b, arr.Int, "topic")
	if arr.Int > 0 {
		mark := len(b)
		b = append(b, ": "...)
		if b = appendNames(b, arr, topicOf); len(b) == mark+2 {
			b = b[:mark]
		}
	}
	return b
}

// arrayLen is the element count of a decoded, non-null array; else 0.
func arrayLen(arr *Node) int64 {
	if arr == nil || arr.Kind != KindArray || !arr.HasValue() || arr.Null {
		return 0
	}
	return max(arr.Int, 0)
}
