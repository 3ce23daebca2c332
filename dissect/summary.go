package dissect

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// summarize writes the one-line summary a person scans, e.g.
// "CreateAcls v3 request corr=7: ALLOW User:alice WRITE on TOPIC orders (LITERAL) from *, +1 more".
// It reads the tree, so a partial decode still summarises what it holds.
// It appends to one buffer: it runs for every frame decoded.
func summarize(m *Message) string {
	b := make([]byte, 0, 128)
	body := m.Tree.Child(bodyName(m))
	if rawToken := m.APIKey == saslTokenKey && body != nil && body.Name == "token"; rawToken {
		// A raw token has no version or correlation id to show.
		b = append(b, "SASL token "...)
		b = append(b, m.Direction.String()...)
		b = append(b, ": "...)
		b = appendToken(b, body)
		return string(appendMalformed(b, m))
	}
	b = append(b, m.APIName...)
	b = append(b, " v"...)
	b = strconv.AppendInt(b, int64(m.APIVersion), 10)
	b = append(b, ' ')
	b = append(b, m.Direction.String()...)
	b = append(b, " corr="...)
	b = strconv.AppendInt(b, int64(m.CorrelationID), 10)
	b = append(b, ": "...)
	head := len(b)
	switch {
	case body == nil:
	case m.APIKey == 30 && m.Direction == Request:
		b = appendList(b, body.Child("Creations"), aclText)
	case m.APIKey == 31 && m.Direction == Request:
		b = appendList(b, body.Child("Filters"), filterText)
	case m.APIKey == 30:
		b = appendResults(b, body, "Results", "result", nil)
	case m.APIKey == 31:
		b = appendResults(b, body, "FilterResults", "filter", deletedCount)
	case m.APIKey == saslHandshakeKey || m.APIKey == saslAuthenticateKey:
		b = appendSASL(b, m, body)
	case m.APIKey == 58:
		b = appendEnvelope(b, m, body)
	default:
		b = appendAPI(b, m, body, head)
	}
	if len(b) == head && m.Direction == Request {
		if c := m.Tree.Find("RequestHeader", "client_id"); c != nil && !c.Null && c.Str != "" {
			b = append(b, "client "...)
			b = appendClipped(b, c.Str)
		}
	}
	if len(b) == head {
		b = b[:head-2] // no detail: drop the ": "
	}
	return string(appendMalformed(b, m))
}

// appendMalformed names the first problem of a malformed message.
func appendMalformed(b []byte, m *Message) []byte {
	if len(m.Problems) > 0 {
		b = append(b, " [malformed: "...)
		b = append(b, Escape(m.Problems[0].Message)...)
		if len(m.Problems) > 1 {
			b = append(b, ", +"...)
			b = strconv.AppendInt(b, int64(len(m.Problems)-1), 10)
			b = append(b, " more"...)
		}
		b = append(b, ']')
	}
	return b
}

func bodyName(m *Message) string {
	if m.Tree == nil {
		return ""
	}
	for _, c := range m.Tree.Children {
		if c.Category == CatRequestBody || c.Category == CatResponseBody {
			return c.Name
		}
	}
	return ""
}

// appendList shows the first element of an array and how many follow.
func appendList(b []byte, arr *Node, text func([]byte, *Node) []byte) []byte {
	switch {
	case arr == nil || !arr.HasValue():
		return b
	case arr.Null:
		return append(b, "null list"...)
	case arr.Int == 0:
		return append(b, "nothing (0 entries)"...)
	}
	var first *Node
	for _, c := range arr.Children {
		if c.Kind == KindStruct {
			first = c
			break
		}
	}
	if first == nil {
		return appendPlural(b, arr.Int, "entry") // the walk stopped before the first element
	}
	b = text(b, first)
	if arr.Int > 1 {
		b = append(b, ", +"...)
		b = strconv.AppendInt(b, arr.Int-1, 10)
		b = append(b, " more"...)
	}
	return b
}

// aclText renders an ACL binding as "ALLOW User:alice WRITE on TOPIC orders (LITERAL) from *".
func aclText(b []byte, e *Node) []byte {
	return appendBinding(b, e, "ResourceType", "ResourceName", "ResourcePatternType", "Principal", "Host")
}

func filterText(b []byte, e *Node) []byte {
	return appendBinding(b, e, "ResourceTypeFilter", "ResourceNameFilter", "PatternTypeFilter", "PrincipalFilter", "HostFilter")
}

func appendBinding(b []byte, e *Node, rtype, rname, ptype, principal, host string) []byte {
	b = appendSym(b, e.Child("PermissionType"))
	b = append(b, ' ')
	b = appendText(b, e.Child(principal))
	b = append(b, ' ')
	b = appendSym(b, e.Child("Operation"))
	b = append(b, " on "...)
	b = appendSym(b, e.Child(rtype))
	b = append(b, ' ')
	b = appendText(b, e.Child(rname))
	b = append(b, " ("...)
	if p := e.Child(ptype); p != nil {
		b = appendSym(b, p)
	} else {
		b = append(b, "LITERAL"...) // versions before 1 have no pattern type: literal names only
	}
	b = append(b, ") from "...)
	return appendText(b, e.Child(host))
}

// appendSym shows an enum value by name; "?" when the frame does not hold it.
func appendSym(b []byte, n *Node) []byte {
	if n == nil || !n.HasValue() {
		return append(b, '?')
	}
	if s := n.EnumName(); s != "" {
		return append(b, s...)
	}
	return strconv.AppendInt(b, n.Int, 10)
}

// appendError names e's ErrorCode and quotes its ErrorMessage, unless the
// message only repeats the code's name (kfake's do).
func appendError(b []byte, e *Node) []byte {
	ec := e.Child("ErrorCode")
	b = appendSym(b, ec)
	if msg := e.Child("ErrorMessage"); msg != nil && !msg.Null && msg.Str != "" && (ec == nil || msg.Str != ec.EnumName()) {
		b = append(b, ' ')
		b = append(b, quote(msg.Str)...)
	}
	return b
}

// appendText shows a wire string escaped; null filters match anything.
func appendText(b []byte, n *Node) []byte {
	switch {
	case n == nil || !n.HasValue():
		return append(b, '?')
	case n.Null:
		return append(b, "(any)"...)
	case n.Str == "":
		return append(b, `""`...)
	}
	return append(b, Escape(n.Str)...)
}

// appendResults counts successes and failures in a result array and
// names the first failure.
func appendResults(b []byte, body *Node, field, noun string, extra func(*Node) int64) []byte {
	arr := body.Child(field)
	if arr == nil {
		return b
	}
	var n, failed, more int64
	var firstErr *Node
	for _, e := range arr.Children {
		if e.Kind != KindStruct {
			continue
		}
		n++
		if extra != nil {
			more += extra(e)
		}
		if ec := e.Child("ErrorCode"); ec != nil && ec.HasValue() && ec.Int != 0 {
			failed++
			if firstErr == nil {
				firstErr = e
			}
		}
	}
	b = appendPlural(b, n, noun)
	if extra != nil {
		b = append(b, ", "...)
		b = appendPlural(b, more, "ACL")
		b = append(b, " deleted"...)
	}
	switch {
	case failed > 0:
		b = append(b, ", "...)
		b = strconv.AppendInt(b, failed, 10)
		b = append(b, " failed: "...)
		b = appendError(b, firstErr)
	case n > 0:
		b = append(b, ", all ok"...)
	}
	if t := body.Child("ThrottleTimeMs"); t != nil && t.HasValue() && t.Int != 0 {
		b = append(b, ", throttled "...)
		b = strconv.AppendInt(b, t.Int, 10)
		b = append(b, "ms"...)
	}
	return b
}

// deletedCount counts the ACLs a DeleteAcls filter result deleted.
func deletedCount(e *Node) int64 {
	var k int64
	if arr := e.Child("MatchingAcls"); arr != nil {
		for _, a := range arr.Children {
			if a.Kind == KindStruct {
				if ec := a.Child("ErrorCode"); ec != nil && ec.HasValue() && ec.Int == 0 {
					k++
				}
			}
		}
	}
	return k
}

func appendPlural(b []byte, n int64, noun string) []byte {
	b = strconv.AppendInt(b, n, 10)
	b = append(b, ' ')
	switch {
	case n == 1:
		return append(b, noun...)
	case strings.HasSuffix(noun, "y"):
		b = append(b, noun[:len(noun)-1]...)
		return append(b, "ies"...)
	}
	b = append(b, noun...)
	return append(b, 's')
}

func plural(n int64, noun string) string { return string(appendPlural(nil, n, noun)) }

// ---- every other API ----

// appendAPI writes the details of a message of any API but the ACL and
// SASL ones: the few that identify it (topics, group, member, transaction)
// and, for a response, every error it holds, named and counted. Each reads
// only the nodes it needs; records are counted from their batch headers,
// which a decode always has, compressed or not.
func appendAPI(b []byte, m *Message, body *Node, head int) []byte {
	req := m.Direction == Request
	switch m.APIKey {
	case 0:
		if req {
			b = appendProduce(b, body, head)
		} else {
			b = appendProduced(b, body, head)
		}
	case 1, 78: // Fetch, ShareFetch
		if req {
			b = appendFetch(b, body, head)
		} else {
			b = appendFetched(b, body, head)
		}
	case 3:
		b = appendMetadata(b, body, head, req, m.APIVersion)
	case 9:
		b = appendOffsetFetch(b, body, head, req)
	case 10:
		b = appendFindCoordinator(b, body, head, req)
	case 11:
		b = appendJoinGroup(b, body, head, req)
	case 14:
		b = appendSyncGroup(b, body, head, req)
	case 15, 69, 77, 89: // DescribeGroups and the describes of the new group types
		b = appendDescribeGroups(b, body, head, req)
	case 2:
		b = appendListOffsets(b, body, head, req)
	case 21, 23: // DeleteRecords, OffsetForLeaderEpoch
		b = appendTopics(b, body, head)
	case 29:
		if req {
			b = sep(b, head)
			b = filterText(b, body)
		} else if rs := body.Child("Resources"); rs != nil && rs.HasValue() && !rs.Null {
			var acls int64
			elems(rs, func(r *Node) {
				if a := r.Child("Acls"); a != nil && a.HasValue() {
					acls += max(a.Int, 0)
				}
			})
			b = sep(b, head)
			b = appendPlural(b, acls, "ACL")
			b = append(b, " on "...)
			b = appendPlural(b, rs.Int, "resource")
			if rs.Int > 0 {
				b = append(b, ": "...)
				b = appendNames(b, rs, func(e *Node) string { s, _ := str(e, "ResourceName"); return s })
			}
		}
	case 18:
		if req {
			b = appendLabeled(b, head, body, "ClientSoftwareName", "client")
			if v, ok := str(body, "ClientSoftwareVersion"); ok && len(b) > head {
				b = append(b, ' ')
				b = appendClipped(b, v)
			}
		} else if ks := body.Child("ApiKeys"); ks != nil && ks.HasValue() && !ks.Null {
			b = sep(b, head)
			b = appendPlural(b, ks.Int, "API")
		}
	case 16:
		if !req {
			b = appendCount(b, head, body.Child("Groups"), "group", "GroupId")
		}
	case 22, 24, 25, 26, 28:
		b = appendTxn(b, m.APIKey, body, head, req)
	case 27:
		b = appendTxnMarkers(b, body, head, req)
	case 8, 12, 13, 68, 76, 88:
		b = appendGroup(b, body, head)
		b = appendTopics(b, body, head)
		if m.APIKey == 8 && req { // OffsetCommit: what it commits
			b = appendOffsets(b, body.Child("Topics"), "Partitions", "PartitionIndex", "CommittedOffset", ", offsets ")
		}
	default:
		var ok bool
		if b, ok = appendTopicAdmin(b, m.APIKey, body, head, req); ok {
			break
		}
		if b, ok = appendClientAPI(b, m.APIKey, body, head, req); ok {
			break
		}
		if b, ok = appendAdmin(b, m.APIKey, body, head, req); !ok {
			b = appendGeneric(b, body, head)
		}
	}
	if !req {
		b = appendThrottle(b, body, head)
		b = appendErrors(b, body, head)
	}
	return b
}

// sep starts another part of the details.
func sep(b []byte, head int) []byte {
	if len(b) > head {
		return append(b, ", "...)
	}
	return b
}

// str is the value of a string child that holds one, or ok false.
func str(n *Node, name string) (string, bool) {
	c := n.Child(name)
	if c == nil || c.Kind != KindString || !c.HasValue() || c.Null || c.redact != 0 {
		return "", false
	}
	return c.Str, true
}

// num is the value of an integer child, or ok false.
func num(n *Node, name string) (int64, bool) {
	c := n.Child(name)
	if c == nil || (c.Kind != KindInt && c.Kind != KindBool) || !c.HasValue() {
		return 0, false
	}
	return c.Int, true
}

// appendLabeled writes "label value" for a string child that is set.
func appendLabeled(b []byte, head int, n *Node, name, label string) []byte {
	s, ok := str(n, name)
	if !ok {
		return b
	}
	b = sep(b, head)
	b = append(b, label...)
	b = append(b, ' ')
	if s == "" {
		return append(b, `""`...)
	}
	return appendClipped(b, s)
}

// appendNum writes "label N" for an integer child, unless it is skip.
func appendNum(b []byte, head int, n *Node, name, label string, skip int64) []byte {
	v, ok := num(n, name)
	if !ok || v == skip {
		return b
	}
	b = sep(b, head)
	b = append(b, label...)
	b = append(b, ' ')
	return strconv.AppendInt(b, v, 10)
}

// elems calls fn for each decoded element of array arr.
func elems(arr *Node, fn func(e *Node)) {
	if arr == nil {
		return
	}
	for _, c := range arr.Children {
		if c.Name != "length" {
			fn(c)
		}
	}
}

// topicOf names the topic of an element: by name, or by the start of its id.
func topicOf(e *Node) string {
	for _, f := range [...]string{"Name", "Topic", "TopicName"} {
		if s, ok := str(e, f); ok && s != "" {
			return s
		}
	}
	if id := e.Child("TopicId"); id != nil && id.Kind == KindUUID && id.HasValue() && len(id.Str) >= 8 {
		return "id:" + id.Str[:8]
	}
	return ""
}

const namesShown = 3

// appendNames writes the first names of array arr's elements (strings, or
// the field of a struct that names it), and how many more it holds.
func appendNames(b []byte, arr *Node, name func(*Node) string) []byte {
	shown := 0
	elems(arr, func(e *Node) {
		if shown == namesShown {
			return
		}
		s := ""
		switch {
		case e.Kind == KindString:
			if e.HasValue() && !e.Null && e.redact == 0 {
				s = e.Str
			}
		case name != nil:
			s = name(e)
		}
		if s == "" {
			return
		}
		if shown > 0 {
			b = append(b, ", "...)
		}
		b = appendClipped(b, s)
		shown++
	})
	return appendMore(b, arr, shown)
}

// appendMore writes how many elements of arr were not shown: " +2 more".
func appendMore(b []byte, arr *Node, shown int) []byte {
	if arr != nil && arr.HasValue() && arr.Int > int64(shown) && shown > 0 {
		b = append(b, " +"...)
		b = strconv.AppendInt(b, arr.Int-int64(shown), 10)
		b = append(b, " more"...)
	}
	return b
}

// appendCount writes "N nouns: a, b +N more" for array arr.
func appendCount(b []byte, head int, arr *Node, noun, field string) []byte {
	if arr == nil || !arr.HasValue() || arr.Null {
		return b
	}
	b = sep(b, head)
	b = appendPlural(b, arr.Int, noun)
	if arr.Int > 0 {
		mark := len(b)
		b = append(b, ": "...)
		if b = appendNames(b, arr, func(e *Node) string { s, _ := str(e, field); return s }); len(b) == mark+2 {
			b = b[:mark]
		}
	}
	return b
}

// partitions counts the partitions of a topic array: the elements of each
// topic's partition array.
func partitions(topics *Node, field string) int64 {
	var n int64
	elems(topics, func(t *Node) {
		if p := t.Child(field); p != nil && p.HasValue() {
			n += max(p.Int, 0)
		}
	})
	return n
}

// appendTopicsOf writes "orders, payments +1 more: 3 partitions".
func appendTopicsOf(b []byte, head int, topics *Node, parts string) []byte {
	if topics == nil || !topics.HasValue() || topics.Null {
		return b
	}
	b = sep(b, head)
	if topics.Int == 0 {
		return append(b, "no topics"...) // an incremental fetch with nothing new, say
	}
	mark := len(b)
	b = appendNames(b, topics, topicOf)
	if len(b) == mark {
		b = appendPlural(b, topics.Int, "topic")
	}
	if parts != "" {
		b = append(b, ": "...)
		b = appendPlural(b, partitions(topics, parts), "partition")
	}
	return b
}

// appendTopics writes the topics of the body's topic array, if any.
func appendTopics(b []byte, body *Node, head int) []byte {
	for _, c := range body.Children {
		if c.Kind == KindArray && (c.Name == "Topics" || c.Name == "Responses") {
			return appendTopicsOf(b, head, c, "Partitions")
		}
	}
	return b
}

// recordStats sums what the record batches of records nodes say: records
// (a v2 batch's record_count), the control records of control batches
// (transaction markers, which no consumer hands to its application) apart,
// legacy MessageSet messages, bytes and codecs. A compressed MessageSet
// wrapper counts as one message: how many it holds only its decompressed
// bytes say, which a summary never needs.
type recordStats struct {
	records, control, messages, bytes int64
	batches                           int
	codecs                            uint8 // bit i: codec i seen
	cut                               bool  // a records field the frame ends in
}

func (s *recordStats) add(rn *Node) {
	if rn != nil && !rn.HasValue() {
		s.cut = true
	}
	if rn == nil || rn.Kind != KindBytes || !rn.HasValue() || rn.Null {
		return
	}
	s.bytes += int64(len(rn.Bytes))
	for _, e := range rn.Children {
		a := e.Child("attributes")
		switch {
		case a == nil || !a.HasValue() || e.partialEntry():
			continue
		case e.Type == "RecordBatch v2":
			c, ok := num(e, "record_count")
			switch {
			case !ok || c <= 0:
			case a.Int&attrControl != 0:
				s.control += c
			default:
				s.records += c
			}
		default:
			s.messages++
		}
		s.batches++
		s.codecs |= 1 << (a.Int & 7)
	}
}

func (s *recordStats) append(b []byte) []byte {
	if s.cut && s.batches == 0 {
		return append(b, ", records cut"...) // not "0 records": they were there
	}
	if s.records > 0 || s.messages == 0 {
		b = append(b, ", "...)
		b = appendPlural(b, s.records, "record")
	}
	if s.control > 0 {
		b = append(b, ", "...)
		b = appendPlural(b, s.control, "control record")
	}
	if s.messages > 0 {
		b = append(b, ", "...)
		b = appendPlural(b, s.messages, "MessageSet message")
	}
	if s.codecs != 0 {
		b = append(b, ", "...)
		first := true
		for c := 0; c < 8; c++ {
			if s.codecs&(1<<c) == 0 {
				continue
			}
			if !first {
				b = append(b, '+')
			}
			first = false
			if c == codecNone {
				b = append(b, "uncompressed"...)
			} else {
				b = append(b, codecName(c)...)
			}
		}
	}
	b = append(b, ", "...)
	return appendPlural(b, s.bytes, "byte")
}

// Produce request: "orders, payments +1 more: 3 partitions, 150 records,
// zstd, 4096 bytes, acks=all, txn t1".
func appendProduce(b []byte, body *Node, head int) []byte {
	topics := body.Child("TopicData")
	b = appendTopicsOf(b, head, topics, "PartitionData")
	var s recordStats
	elems(topics, func(t *Node) { elems(t.Child("PartitionData"), func(p *Node) { s.add(p.Child("Records")) }) })
	if topics != nil && topics.Int > 0 {
		b = s.append(b)
	}
	if a, ok := num(body, "Acks"); ok {
		b = sep(b, head)
		b = append(b, "acks="...)
		if a == -1 {
			b = append(b, "all"...)
		} else {
			b = strconv.AppendInt(b, a, 10)
		}
	}
	return appendLabeled(b, head, body, "TransactionalId", "txn")
}

// Produce response: "orders: 3 partitions, base offsets orders[0]@1042,
// orders[1]@77 +1 more".
func appendProduced(b []byte, body *Node, head int) []byte {
	topics := body.Child("Responses")
	b = appendTopicsOf(b, head, topics, "PartitionResponses")
	return appendOffsets(b, topics, "PartitionResponses", "Index", "BaseOffset", ", base offsets ")
}

// appendOffsets writes the offsets (off) of the first two partitions of
// topics that answered one with no error, as topic[partition]@offset, and
// how many more did.
func appendOffsets(b []byte, topics *Node, parts, index, off, label string) []byte {
	shown, ok := 0, int64(0)
	elems(topics, func(t *Node) {
		elems(t.Child(parts), func(p *Node) {
			ec, _ := num(p, "ErrorCode")
			o, has := num(p, off)
			if ec != 0 || !has || o < 0 { // -1: none (no committed offset, no answer)
				return
			}
			ok++
			if shown == 2 {
				return
			}
			if shown == 0 {
				b = append(b, label...)
			} else {
				b = append(b, ", "...)
			}
			shown++
			b = appendClipped(b, topicOf(t))
			b = append(b, '[')
			i, _ := num(p, index)
			b = strconv.AppendInt(b, i, 10)
			b = append(b, "]@"...)
			b = strconv.AppendInt(b, o, 10)
		})
	})
	if ok > int64(shown) {
		b = append(b, " +"...)
		b = strconv.AppendInt(b, ok-int64(shown), 10)
		b = append(b, " more"...)
	}
	return b
}

// ListOffsets request: "orders: 2 partitions, latest, read_committed"
// (what each partition asks for: Kafka's special timestamps by name, else
// the time); response: "orders: 2 partitions, offsets orders[0]@1042,
// orders[1]@77".
func appendListOffsets(b []byte, body *Node, head int, req bool) []byte {
	topics := body.Child("Topics")
	b = appendTopicsOf(b, head, topics, "Partitions")
	if !req {
		return appendOffsets(b, topics, "Partitions", "PartitionIndex", "Offset", ", offsets ")
	}
	var asked []int64
	more := 0
	elems(topics, func(t *Node) {
		elems(t.Child("Partitions"), func(p *Node) {
			ts, ok := num(p, "Timestamp")
			switch {
			case !ok || slices.Contains(asked, ts):
			case len(asked) == 2:
				more++
			default:
				asked = append(asked, ts)
			}
		})
	})
	for _, ts := range asked {
		b = sep(b, head)
		switch ts {
		case -1:
			b = append(b, "latest"...)
		case -2:
			b = append(b, "earliest"...)
		case -3:
			b = append(b, "max timestamp"...)
		case -4:
			b = append(b, "earliest local"...)
		case -5:
			b = append(b, "latest tiered"...)
		default:
			b = append(b, "at "...)
			if ts >= 0 {
				b = time.UnixMilli(ts).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
			} else {
				b = strconv.AppendInt(b, ts, 10)
			}
		}
	}
	if more > 0 {
		b = append(b, " +"...)
		b = strconv.AppendInt(b, int64(more), 10)
		b = append(b, " more"...)
	}
	if l, ok := num(body, "IsolationLevel"); ok && l == 1 {
		b = sep(b, head)
		b = append(b, "read_committed"...)
	}
	return b
}

// Fetch request: "orders: 4 partitions, max wait 500ms, read_committed".
func appendFetch(b []byte, body *Node, head int) []byte {
	b = appendGroup(b, body, head) // ShareFetch names its group and member
	b = appendTopicsOf(b, head, body.Child("Topics"), "Partitions")
	if w, ok := num(body, "MaxWaitMs"); ok {
		b = sep(b, head)
		b = append(b, "max wait "...)
		b = strconv.AppendInt(b, w, 10)
		b = append(b, "ms"...)
	}
	if l, ok := num(body, "IsolationLevel"); ok && l == 1 {
		b = sep(b, head)
		b = append(b, "read_committed"...)
	}
	return b
}

// Fetch response: "orders: 2 partitions, 150 records, gzip, 4096 bytes".
func appendFetched(b []byte, body *Node, head int) []byte {
	topics := body.Child("Responses")
	b = appendTopicsOf(b, head, topics, "Partitions")
	if topics == nil || topics.Int <= 0 {
		return b
	}
	var s recordStats
	elems(topics, func(t *Node) { elems(t.Child("Partitions"), func(p *Node) { s.add(p.Child("Records")) }) })
	return s.append(b)
}

// Metadata: the topics asked for (or all of them), or the brokers and
// topics returned.
func appendMetadata(b []byte, body *Node, head int, req bool, v int16) []byte {
	topics := body.Child("Topics")
	if req {
		switch {
		case topics == nil || !topics.HasValue():
		case topics.Null || topics.Int == 0 && v == 0: // v0 asks for all with an empty list
			b = sep(b, head)
			b = append(b, "all topics"...)
		case topics.Int == 0:
			b = sep(b, head)
			b = append(b, "no topics"...)
		default:
			b = sep(b, head)
			b = append(b, "topics "...)
			b = appendNames(b, topics, topicOf)
		}
		return b
	}
	if br := body.Child("Brokers"); br != nil && br.HasValue() {
		b = sep(b, head)
		b = appendPlural(b, br.Int, "broker")
	}
	if topics != nil && topics.HasValue() && !topics.Null {
		b = sep(b, head)
		b = appendPlural(b, topics.Int, "topic")
		if topics.Int > 0 {
			b = append(b, ": "...)
			b = appendNames(b, topics, topicOf)
		}
	}
	return b
}

// appendGroup writes the fields that place a message in a group: group,
// member, instance, generation or epoch.
func appendGroup(b []byte, n *Node, head int) []byte {
	b = appendLabeled(b, head, n, "GroupId", "group")
	if s, ok := str(n, "MemberId"); ok {
		b = sep(b, head)
		if s == "" {
			b = append(b, "new member"...)
		} else {
			b = append(b, "member "...)
			b = appendClipped(b, s)
		}
	}
	b = appendLabeled(b, head, n, "GroupInstanceId", "instance")
	b = appendNum(b, head, n, "GenerationId", "generation", -1)
	b = appendNum(b, head, n, "GenerationIdOrMemberEpoch", "generation", -1)
	b = appendNum(b, head, n, "MemberEpoch", "epoch", math.MinInt64) // 0 joins, -1 and -2 leave: all shown
	if arr := n.Child("Members"); arr != nil && arr.Kind == KindArray && arr.HasValue() && !arr.Null {
		// LeaveGroup v3+ names the members that leave.
		b = sep(b, head)
		b = append(b, "members "...)
		b = appendNames(b, arr, func(e *Node) string { s, _ := str(e, "MemberId"); return s })
	}
	return b
}

// JoinGroup request: "group g1, new member, consumer: range,
// cooperative-sticky"; response: "generation 5, leader m-1, member m-2,
// protocol range, 3 members".
func appendJoinGroup(b []byte, body *Node, head int, req bool) []byte {
	if req {
		b = appendGroup(b, body, head)
		if pt, ok := str(body, "ProtocolType"); ok {
			b = sep(b, head)
			b = appendClipped(b, pt)
			if ps := body.Child("Protocols"); ps != nil && ps.HasValue() && ps.Int > 0 {
				b = append(b, ": "...)
				b = appendNames(b, ps, func(e *Node) string { s, _ := str(e, "Name"); return s })
				if len(ps.Children) > 1 {
					// The consumer protocol's subscription names the topics.
					if ts := ps.Children[1].Find("Metadata", "Topics"); ts != nil && ts.HasValue() && ts.Int > 0 {
						b = append(b, ", topics "...)
						b = appendNames(b, ts, nil)
					}
				}
			}
		}
		return b
	}
	b = appendNum(b, head, body, "GenerationId", "generation", -1)
	if l, ok := str(body, "Leader"); ok && l != "" { // empty in a refusal
		b = appendLabeled(b, head, body, "Leader", "leader")
	}
	b = appendLabeled(b, head, body, "MemberId", "member")
	b = appendLabeled(b, head, body, "ProtocolName", "protocol")
	if ms := body.Child("Members"); ms != nil && ms.HasValue() && ms.Int > 0 {
		b = sep(b, head)
		b = appendPlural(b, ms.Int, "member")
	}
	return b
}

// SyncGroup: group, member, generation and the assignments the leader
// sends; the response names what the member was given.
func appendSyncGroup(b []byte, body *Node, head int, req bool) []byte {
	if req {
		b = appendGroup(b, body, head)
		if as := body.Child("Assignments"); as != nil && as.HasValue() && as.Int > 0 {
			b = sep(b, head)
			b = appendPlural(b, as.Int, "assignment")
		}
		return b
	}
	a := body.Child("Assignment")
	if a == nil || !a.HasValue() || a.Null {
		return b
	}
	if ap := a.Child("AssignedPartitions"); ap != nil {
		b = sep(b, head)
		b = append(b, "assigned "...)
		b = appendPlural(b, partitions(ap, "Partitions"), "partition")
		if ap.Int > 0 {
			b = append(b, " of "...)
			b = appendNames(b, ap, topicOf)
		}
		return b
	}
	b = sep(b, head)
	b = append(b, "assignment "...)
	return appendPlural(b, int64(len(a.Bytes)), "byte")
}

// OffsetFetch: the group (or groups, v8+) and the topics asked for.
func appendOffsetFetch(b []byte, body *Node, head int, req bool) []byte {
	n := body
	if gs := body.Child("Groups"); gs != nil && gs.Kind == KindArray {
		if gs.Int != 1 || len(gs.Children) < 2 {
			return appendCount(b, head, gs, "group", "GroupId")
		}
		n = gs.Children[1] // one group: its topics, as in older versions
	}
	b = appendGroup(b, n, head)
	topics := n.Child("Topics")
	if req && topics != nil && topics.HasValue() && topics.Null {
		b = sep(b, head)
		return append(b, "all topics"...)
	}
	if req {
		return appendTopicsOf(b, head, topics, "PartitionIndexes")
	}
	b = appendTopicsOf(b, head, topics, "Partitions")
	// the committed offsets; -1 is none
	mark := len(b)
	b = appendOffsets(b, topics, "Partitions", "PartitionIndex", "CommittedOffset", ", committed ")
	if len(b) == mark && partitions(topics, "Partitions") > 0 {
		b = append(b, ", none committed"...)
	}
	return b
}

// FindCoordinator: the group or transactional id whose coordinator is
// sought; the response names it.
func appendFindCoordinator(b []byte, body *Node, head int, req bool) []byte {
	kind := "group"
	if t, ok := num(body, "KeyType"); ok {
		switch t {
		case 1:
			kind = "transaction"
		case 2:
			kind = "share group"
		}
	}
	if req {
		b = appendLabeled(b, head, body, "Key", kind)
		if ks := body.Child("CoordinatorKeys"); ks != nil && ks.HasValue() && !ks.Null && ks.Int > 0 {
			b = sep(b, head)
			b = append(b, kind...)
			b = append(b, ' ')
			b = appendNames(b, ks, nil)
		}
		return b
	}
	// A response does not say what kind of key it answers for.
	node := body
	if cs := body.Child("Coordinators"); cs != nil && len(cs.Children) > 1 {
		node = cs.Children[1]
		b = appendLabeled(b, head, node, "Key", "for")
	}
	if id, ok := num(node, "NodeId"); ok && id >= 0 {
		b = sep(b, head)
		b = append(b, "coordinator "...)
		b = strconv.AppendInt(b, id, 10)
		if h, ok := str(node, "Host"); ok {
			b = append(b, " at "...)
			b = appendClipped(b, h)
			if p, ok := num(node, "Port"); ok {
				b = append(b, ':')
				b = strconv.AppendInt(b, p, 10)
			}
		}
	}
	if cs := body.Child("Coordinators"); cs != nil && cs.HasValue() && cs.Int > 1 {
		b = append(b, " +"...)
		b = strconv.AppendInt(b, cs.Int-1, 10)
		b = append(b, " more"...)
	}
	return b
}

// DescribeGroups and the other group describes: the groups asked for; a
// response's first group with its state and members.
func appendDescribeGroups(b []byte, body *Node, head int, req bool) []byte {
	if req {
		for _, f := range [...]string{"Groups", "GroupIds"} {
			if gs := body.Child(f); gs != nil {
				return appendCount(b, head, gs, "group", "")
			}
		}
		return b
	}
	gs := body.Child("Groups")
	if gs == nil || len(gs.Children) < 2 {
		return b
	}
	g := gs.Children[1]
	b = appendLabeled(b, head, g, "GroupId", "group")
	if st, ok := str(g, "GroupState"); ok && st != "" {
		b = append(b, ' ')
		b = appendClipped(b, st)
	}
	if ms := g.Child("Members"); ms != nil && ms.HasValue() && !ms.Null {
		b = sep(b, head)
		b = appendPlural(b, ms.Int, "member")
	}
	if gs.Int > 1 {
		b = append(b, ", +"...)
		b = strconv.AppendInt(b, gs.Int-1, 10)
		b = append(b, " more groups"...)
	}
	return b
}

// appendProducer writes "producer 4000 epoch 0" when the producer id is set.
func appendProducer(b []byte, n *Node, head int, id, epoch string) []byte {
	p, ok := num(n, id)
	if !ok || p < 0 {
		return b
	}
	b = sep(b, head)
	b = append(b, "producer "...)
	b = strconv.AppendInt(b, p, 10)
	if e, ok := num(n, epoch); ok && e >= 0 {
		b = append(b, " epoch "...)
		b = strconv.AppendInt(b, e, 10)
	}
	return b
}

// The transaction APIs: transactional id, producer id and epoch, and what
// is added, committed or aborted.
func appendTxn(b []byte, key int16, body *Node, head int, req bool) []byte {
	n := body
	if key == 24 {
		if ts := body.Child("Transactions"); ts != nil && ts.Kind == KindArray {
			// v4+: a broker's batch of transactions to verify or add.
			if len(ts.Children) < 2 {
				return appendCount(b, head, ts, "transaction", "TransactionalId")
			}
			n = ts.Children[1]
		}
	}
	if key == 26 && req {
		if c, ok := num(n, "Committed"); ok {
			b = sep(b, head)
			if c != 0 {
				b = append(b, "commit"...)
			} else {
				b = append(b, "abort"...)
			}
		}
	}
	b = appendLabeled(b, head, n, "TransactionalId", "txn")
	b = appendLabeled(b, head, n, "V3AndBelowTransactionalId", "txn")
	if key == 22 && req {
		if s, ok := str(n, "TransactionalId"); !ok || s == "" {
			b = sep(b, head)
			b = append(b, "idempotent"...)
		}
	}
	b = appendProducer(b, n, head, "ProducerId", "ProducerEpoch")
	b = appendProducer(b, n, head, "V3AndBelowProducerId", "V3AndBelowProducerEpoch")
	b = appendLabeled(b, head, n, "GroupId", "group")
	if req && key != 26 {
		for _, f := range [...]string{"Topics", "V3AndBelowTopics"} {
			if ts := n.Child(f); ts != nil && ts.HasValue() && ts.Int > 0 {
				b = appendTopicsOf(b, head, ts, "Partitions")
			}
		}
	}
	if key == 24 && n != body {
		if ts := body.Child("Transactions"); ts.Int > 1 {
			b = append(b, ", +"...)
			b = strconv.AppendInt(b, ts.Int-1, 10)
			b = append(b, " more transactions"...)
		}
	}
	return b
}

// WriteTxnMarkers: the markers a coordinator writes, the first named.
func appendTxnMarkers(b []byte, body *Node, head int, req bool) []byte {
	ms := body.Child("Markers")
	if ms == nil || !ms.HasValue() || ms.Null {
		return b
	}
	b = sep(b, head)
	b = appendPlural(b, ms.Int, "marker")
	if req && len(ms.Children) > 1 {
		first := ms.Children[1]
		if c, ok := num(first, "TransactionResult"); ok {
			if c != 0 {
				b = append(b, ": commit"...)
			} else {
				b = append(b, ": abort"...)
			}
			b = appendProducer(b, first, head, "ProducerId", "ProducerEpoch")
		}
	}
	return b
}

// appendGeneric names the obvious things of any other message: its
// top-level ids and names, and what its top-level arrays hold.
func appendGeneric(b []byte, body *Node, head int) []byte {
	parts := 0
	for _, c := range body.Children {
		if parts == 4 {
			break
		}
		switch {
		case c.Kind == KindString && c.HasValue() && !c.Null && c.Str != "" && c.redact == 0 && identifying(c.Name):
			b = sep(b, head)
			b = append(b, fieldWords(c.Name)...)
			b = append(b, ' ')
			b = appendClipped(b, c.Str)
			parts++
		case c.Kind == KindArray && c.HasValue() && !c.Null && c.Int > 0:
			b = sep(b, head)
			b = appendCounted(b, c.Int, fieldWords(c.Name))
			mark := len(b)
			b = append(b, ": "...)
			if b = appendNames(b, c, elemName); len(b) == mark+2 {
				b = b[:mark]
			}
			parts++
		}
	}
	return b
}

// identifying says whether a top-level string field names something a
// reader looks for: ids and names, not free text.
func identifying(name string) bool {
	return strings.HasSuffix(name, "Id") || strings.HasSuffix(name, "Name") || name == "Key" ||
		strings.HasSuffix(name, "Principal") || name == "Host"
}

// elemName names one element of a top-level array: a string, or the first
// of the fields that usually name the element.
func elemName(e *Node) string {
	if s := topicOf(e); s != "" {
		return s
	}
	for _, f := range [...]string{"GroupId", "ResourceName", "TransactionalId", "EntityName", "Key", "TokenId", "User", "LogDir"} {
		if s, ok := str(e, f); ok && s != "" {
			return s
		}
	}
	return ""
}

func appendThrottle(b []byte, body *Node, head int) []byte {
	if t, ok := num(body, "ThrottleTimeMs"); ok && t != 0 {
		b = sep(b, head)
		b = append(b, "throttled "...)
		b = strconv.AppendInt(b, t, 10)
		b = append(b, "ms"...)
	}
	return b
}

// errorTally counts the distinct error codes of a response in the order
// they first appear; a few kinds are kept, the rest only counted.
type errorTally struct {
	codes  [6]int64
	counts [6]int64
	kinds  int
	others int64
}

func (t *errorTally) add(code int64) {
	for i := range t.kinds {
		if t.codes[i] == code {
			t.counts[i]++
			return
		}
	}
	if t.kinds < len(t.codes) {
		t.codes[t.kinds], t.counts[t.kinds] = code, 1
		t.kinds++
		return
	}
	t.others++
}

// appendErrors names every non-zero error code of a response and how
// often it occurs: "errors: TOPIC_AUTHORIZATION_FAILED ×2". Records are
// not looked into: they hold no error codes.
func appendErrors(b []byte, body *Node, head int) []byte {
	var t errorTally
	var walk func(n *Node)
	walk = func(n *Node) {
		for _, c := range n.Children {
			switch {
			case c.Category == CatRecordBatch || c.Category == CatRecord:
			case c.Kind == KindInt && strings.HasSuffix(c.Name, "ErrorCode"):
				if c.HasValue() && c.Int != 0 {
					t.add(c.Int)
				}
			case len(c.Children) > 0:
				walk(c)
			}
		}
	}
	walk(body)
	if t.kinds == 0 {
		return b
	}
	if len(b) > head {
		b = append(b, "; "...)
	}
	b = append(b, "errors: "...)
	for i := range t.kinds {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, errorCode.Name(t.codes[i])...)
		b = append(b, " ×"...)
		b = strconv.AppendInt(b, t.counts[i], 10)
	}
	if t.others > 0 {
		b = append(b, ", +"...)
		b = strconv.AppendInt(b, t.others, 10)
		b = append(b, " more"...)
	}
	return b
}

// summaryClip is how many characters of one name a summary shows: a line is
// for scanning, and a garbled or hostile frame can carry names of kilobytes
// (random bytes read as a topic name), which would make --summary print more
// than the capture holds. The tree keeps the whole value.
const summaryClip = 64

// appendClipped appends s escaped, cut to summaryClip characters with "…".
func appendClipped(b []byte, s string) []byte {
	n := 0
	for i := range s {
		if n == summaryClip {
			b = append(b, Escape(s[:i])...)
			return append(b, "…"...)
		}
		n++
	}
	return append(b, Escape(s)...)
}
