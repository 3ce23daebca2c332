package dissect

import (
	"strconv"
	"strings"
)

// The summaries of the cluster and client APIs that real clients send
// beside produce, fetch and groups: group deletion, offset deletion, the
// cluster's description, topic partition descriptions and client
// telemetry (KIP-714, which every Java client since 3.7 pushes).

// appendClientAPI writes the details of one of those messages; false when
// key is none of them.
func appendClientAPI(b []byte, key int16, body *Node, head int, req bool) ([]byte, bool) {
	switch {
	case key == 42 && req: // DeleteGroups
		b = appendCount(b, head, body.Child("GroupsNames"), "group", "")
	case key == 42:
		b = appendCount(b, head, body.Child("Results"), "group", "GroupId")
	case key == 47: // OffsetDelete
		b = appendLabeled(b, head, body, "GroupId", "group")
		b = appendTopics(b, body, head)
	case key == 60 && !req: // DescribeCluster
		b = appendLabeled(b, head, body, "ClusterId", "cluster")
		b = appendNum(b, head, body, "ControllerId", "controller", -1)
		b = appendCount(b, head, body.Child("Brokers"), "broker", "")
	case key == 71 && req: // GetTelemetrySubscriptions
		b = appendInstance(b, head, body)
	case key == 71:
		b = appendNum(b, head, body, "SubscriptionId", "subscription", 0)
		if ms, ok := num(body, "PushIntervalMs"); ok && ms > 0 {
			b = sep(b, head)
			b = append(b, "push every "...)
			b = strconv.AppendInt(b, ms, 10)
			b = append(b, "ms"...)
		}
		b = appendMetricsAsked(b, head, body.Child("RequestedMetrics"))
	case key == 72 && req: // PushTelemetry
		b = appendNum(b, head, body, "SubscriptionId", "subscription", 0)
		if m := body.Child("Metrics"); m != nil && m.HasValue() && !m.Null {
			b = sep(b, head)
			b = strconv.AppendInt(b, int64(len(m.Bytes)), 10)
			b = append(b, " bytes of metrics"...)
			if c := body.Child("CompressionType"); c != nil && c.HasValue() && c.Int != 0 {
				b = append(b, ", "...)
				b = appendSym(b, c)
			}
		}
		if t, ok := num(body, "Terminating"); ok && t != 0 {
			b = append(sep(b, head), "terminating"...)
		}
	case key == 75: // DescribeTopicPartitions
		b = appendCount(b, head, body.Child("Topics"), "topic", "Name")
	default:
		return b, false
	}
	return b, true
}

// appendInstance names the client instance a telemetry request is for;
// the zero id is a client asking to be given one.
func appendInstance(b []byte, head int, body *Node) []byte {
	id := body.Child("ClientInstanceId")
	if id == nil || id.Kind != KindUUID || !id.HasValue() {
		return b
	}
	b = sep(b, head)
	if strings.Trim(id.Str, "0-") == "" {
		return append(b, "new client instance"...)
	}
	b = append(b, "client instance "...)
	return appendClipped(b, id.Str)
}

// appendMetricsAsked says which metrics a subscription asks for: KIP-714
// makes an empty list none, and a list holding "" every metric.
func appendMetricsAsked(b []byte, head int, arr *Node) []byte {
	if arr == nil || !arr.HasValue() || arr.Null {
		return b
	}
	b = sep(b, head)
	all := false
	elems(arr, func(e *Node) { all = all || e.Kind == KindString && e.HasValue() && e.Str == "" })
	switch {
	case arr.Int == 0:
		return append(b, "no metrics"...)
	case all:
		return append(b, "all metrics"...)
	}
	b = appendCounted(b, arr.Int, "metric prefixes")
	b = append(b, ": "...)
	return appendNames(b, arr, nil)
}

// fieldWords turns a field's name into the words a summary uses:
// "TransactionStates" reads "transaction states", "ClusterId" "cluster".
func fieldWords(name string) string {
	switch name {
	case "GroupsNames":
		return "groups"
	case "TransactionalId":
		return "txn"
	case "TransactionalIds":
		return "txns"
	}
	var w []byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			// A new word starts at a capital after a lower-case letter, or
			// at the last of a run of capitals that a lower-case word
			// follows ("IPAddress"), but for a plural's s ("ACLs").
			if i > 0 && (isLower(name[i-1]) || isUpper(name[i-1]) && i+1 < len(name) && isLower(name[i+1]) && !pluralS(name, i+1)) {
				w = append(w, ' ')
			}
			c += 'a' - 'A'
		}
		w = append(w, c)
	}
	s := string(w)
	if t, ok := strings.CutSuffix(s, " id"); ok {
		return t // "group", "member", "cluster": ids are what a summary shows
	}
	return s
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// pluralS is whether name[i] is a lone s that ends a word.
func pluralS(name string, i int) bool {
	return name[i] == 's' && (i+1 == len(name) || isUpper(name[i+1]))
}
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// appendCounted writes "1 topic" or "3 topics" for an array named by
// words, which are plural as Kafka names its arrays.
func appendCounted(b []byte, n int64, words string) []byte {
	b = strconv.AppendInt(b, n, 10)
	b = append(b, ' ')
	if n != 1 {
		return append(b, words...)
	}
	switch {
	case strings.HasSuffix(words, "ies"):
		return append(append(b, words[:len(words)-3]...), 'y')
	case strings.HasSuffix(words, "sses") || strings.HasSuffix(words, "xes") || strings.HasSuffix(words, "uses"):
		return append(b, words[:len(words)-2]...)
	case strings.HasSuffix(words, "s") && !strings.HasSuffix(words, "ss"):
		return append(b, words[:len(words)-1]...)
	}
	return append(b, words...)
}
