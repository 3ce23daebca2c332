package dissect

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// The oracle: franz-go's kmsg, an encoder written from its own reading of
// Kafka's definitions, encodes every request and response of every API at
// every version it knows, each field filled with a value that is not its
// default (so that tagged fields travel too). kdissect must read every
// byte back without a problem, and every field it shows must hold the
// value kmsg encoded.

// kmsgNames lists kmsg's names for Kafka's field names where kmsg took
// another; the first of them the kmsg struct has is the one. The key is
// the message name and the field name (tried before Kafka's name itself),
// or "*" and the field name for every message (tried after it).
var kmsgNames = map[[2]string][]string{
	{"*", "ThrottleTimeMs"}:              {"ThrottleMillis"},
	{"*", "Name"}:                        {"Topic", "ListenerName"},
	{"*", "TopicName"}:                   {"Topic"},
	{"*", "TopicId"}:                     {"TopidID"}, // AlterPartitionResponse, as kmsg spells it
	{"*", "PartitionIndex"}:              {"Partition"},
	{"*", "PartitionIndexes"}:            {"Partitions"},
	{"*", "Index"}:                       {"Partition"},
	{"*", "GroupInstanceId"}:             {"InstanceID"},
	{"*", "GroupIds"}:                    {"Groups"},
	{"*", "GroupsNames"}:                 {"Groups"},
	{"*", "GroupState"}:                  {"State"},
	{"*", "GroupEpoch"}:                  {"Epoch"},
	{"*", "Responses"}:                   {"Topics", "Resources"},
	{"*", "Results"}:                     {"Topics", "Groups", "Resources", "Dirs"},
	{"*", "FilterResults"}:               {"Results"},
	{"*", "Metadata"}:                    {"ProtocolMetadata"},
	{"*", "MemberMetadata"}:              {"ProtocolMetadata"},
	{"*", "ProtocolData"}:                {"Protocol"},
	{"*", "ProtocolName"}:                {"Protocol"},
	{"*", "Leader"}:                      {"LeaderID"},
	{"*", "IsrNodes"}:                    {"ISR"},
	{"*", "ReplicaNodes"}:                {"Replicas"},
	{"*", "TopicAuthorizedOperations"}:   {"AuthorizedOperations"},
	{"*", "ClusterAuthorizedOperations"}: {"AuthorizedOperations"},
	{"*", "CommittedOffset"}:             {"Offset"},
	{"*", "CommittedLeaderEpoch"}:        {"LeaderEpoch"},
	{"*", "CommittedMetadata"}:           {"Metadata"},
	{"*", "CommitTimestamp"}:             {"Timestamp"},
	{"*", "GenerationIdOrMemberEpoch"}:   {"Generation"},
	{"*", "TopicData"}:                   {"Topics"},
	{"*", "PartitionData"}:               {"Partitions"},
	{"*", "PartitionResponses"}:          {"Partitions"},
	{"*", "NodeEndpoints"}:               {"Brokers"},
	{"*", "TransactionalId"}:             {"TransactionID"},
	{"*", "EntityName"}:                  {"Name"},
	{"*", "EntityType"}:                  {"Type"},
	{"*", "ResourceName"}:                {"Name"},
	{"*", "ResourceType"}:                {"Type"},
	{"*", "ConfigSource"}:                {"Source"},
	{"*", "TopicConfigErrorCode"}:        {"ConfigErrorCode"},
	{"*", "Assignments"}:                 {"ReplicaAssignment", "Assignment", "GroupAssignment"},
	{"*", "Assignment"}:                  {"MemberAssignment"},
	{"*", "ResourceTypeFilter"}:          {"ResourceType"},
	{"*", "ResourceNameFilter"}:          {"ResourceName"},
	{"*", "PatternTypeFilter"}:           {"ResourcePatternType"},
	{"*", "PatternType"}:                 {"ResourcePatternType"},
	{"*", "PrincipalFilter"}:             {"Principal"},
	{"*", "HostFilter"}:                  {"Host"},
	{"*", "RemainingPartitions"}:         {"PartitionsRemaining"},
	{"*", "ConfigurationKeys"}:           {"ConfigNames"},
	{"*", "Tokens"}:                      {"TokenDetails"},
	{"*", "TransactionState"}:            {"State"},
	{"*", "TransactionTimeoutMs"}:        {"TimeoutMillis"},
	{"*", "TransactionStartTimeMs"}:      {"StartTimestamp"},
	{"*", "TopicPartitions"}:             {"Topics"},
	{"*", "ReplicaElectionResults"}:      {"Topics"},
	{"*", "PartitionResult"}:             {"Partitions"},
	{"*", "Committed"}:                   {"Commit"},
	{"*", "TransactionResult"}:           {"Committed"},
	{"*", "ExpiryTimePeriodMs"}:          {"ExpiryPeriodMillis"},
	{"*", "RenewPeriodMs"}:               {"RenewTimeMillis"},
	{"*", "ForgottenTopicsData"}:         {"ForgottenTopics"},
	{"*", "ReplicaEpoch"}:                {"Epoch", "CandidateEpoch"},
	{"*", "ReplicaId"}:                   {"ID", "CandidateID"},
	{"*", "ReplicaDirectoryId"}:          {"CandidateDirectoryID"},
	{"*", "UnalignedRecords"}:            {"Bytes"},
	{"*", "Key"}:                         {"CoordinatorKey"},
	{"*", "KeyType"}:                     {"CoordinatorType"},
	{"*", "ConfigOperation"}:             {"Op"},
	{"*", "PartitionErrors"}:             {"Partitions"},
	{"*", "UngroupedPartitionStates"}:    {"PartitionStates"},
	{"*", "UngroupedPartitions"}:         {"Topics"},
	{"*", "TopicStates"}:                 {"Topics"},
	{"*", "DurationFilter"}:              {"DurationFilterMillis"},
	{"*", "AuthBytes"}:                   {"SASLAuthBytes"},
	{"*", "Mechanisms"}:                  {"SupportedMechanisms"},
	{"*", "Listener"}:                    {"ListenerName"},
	{"*", "V0Host"}:                      {"Host"},
	{"*", "V0Port"}:                      {"Port"},
	{"*", "NewIsrWithEpochs"}:            {"NewEpochISR"},
	{"*", "Path"}:                        {"Dir"},
	{"*", "Partitions"}:                  {"NumPartitions"},
	{"*", "TopicConfigs"}:                {"Configs"},
	{"*", "SubscribedTopicNames"}:        {"SubscribedTopics"},
	{"*", "PartitionEpoch"}:              {"ZKVersion"},
	{"*", "V3AndBelowTransactionalId"}:   {"TransactionalID"},
	{"*", "V3AndBelowProducerId"}:        {"ProducerID"},
	{"*", "V3AndBelowProducerEpoch"}:     {"ProducerEpoch"},
	{"*", "V3AndBelowTopics"}:            {"Topics"},
	{"*", "ResultsByTransaction"}:        {"Transactions"},
	{"*", "ResultsByTopicV3AndBelow"}:    {"Topics"},
	{"*", "ResultsByPartition"}:          {"Partitions"},
	{"*", "PartitionErrorCode"}:          {"ErrorCode"},
	{"*", "TopicResults"}:                {"Topics"},
	{"*", "BrokerIds"}:                   {"Replicas"},
	{"*", "BrokerId"}:                    {"NodeID"},
	{"*", "Synonyms"}:                    {"ConfigSynonyms"},
	{"*", "LogDir"}:                      {"Dir"},
	{"*", "IsFutureKey"}:                 {"IsFuture"},
	{"*", "PartitionSize"}:               {"Size"},
	{"*", "Records"}:                     {"RecordBatches"},
	{"*", "RecordErrors"}:                {"ErrorRecords"},
	{"*", "BatchIndex"}:                  {"RelativeOffset"},
	{"*", "BatchIndexErrorMessage"}:      {"ErrorMessage"},
	{"*", "DeletePartition"}:             {"Delete"},
	// kmsg's v1 AcceptableRecoveryLag is an int64 of its own; v0's is this.
	{"StreamsGroupHeartbeatResponse", "AcceptableRecoveryLag"}: {"AcceptableRecoveryLagLegacy"},
}

// kmsgDiffers lists the messages kmsg encodes otherwise than Kafka's
// definitions say, which the oracle cannot vouch for: kmsg puts StopReplica
// v4's isKRaftController after ControllerEpoch, Kafka before it, and kmsg
// has no UpdateMetadata v8 Type.
var kmsgDiffers = map[string]bool{
	"StopReplicaRequest v4":    true,
	"UpdateMetadataRequest v8": true,
}

// fieldMap pairs the fields of one of our structs with the fields of the
// kmsg struct that encodes it: by name (case aside, Millis for Ms, kmsg's
// habit of dropping Id, Name and Index: Group for GroupId) or kmsgNames.
// A wrong pair cannot hide: the value filled in one kmsg field would come
// back in another field of ours.
func fieldMap(t reflect.Type, msg string, fs []*Field) map[string]int {
	key := fieldMapKey{t: t, msg: msg, n: len(fs)}
	if len(fs) > 0 {
		key.first = fs[0]
	}
	if m, ok := fieldMaps[key]; ok {
		return m
	}
	var ks []int // kmsg's fields, as ours are: without Version and UnknownTags
	for i := range t.NumField() {
		if f := t.Field(i); f.Name != "Version" && f.Type != reflect.TypeFor[kmsg.Tags]() {
			ks = append(ks, i)
		}
	}
	norm := func(s string) string {
		s = strings.ToLower(s)
		return strings.ReplaceAll(s, "millis", "ms")
	}
	byName := map[string]int{}
	for _, i := range ks {
		byName[norm(t.Field(i).Name)] = i
	}
	m := map[string]int{}
	taken := map[int]*Field{} // by the field of ours; fields of disjoint versions may share one
	free := func(i int, f *Field) bool {
		g := taken[i]
		return g == nil || g.Versions.Hi < f.Versions.Lo || f.Versions.Hi < g.Versions.Lo
	}
	for _, f := range fs {
		n := f.Name
		cands := append(append(slices.Clone(kmsgNames[[2]string{msg, n}]), n), kmsgNames[[2]string{"*", n}]...)
		for _, suffix := range []string{"Id", "Name", "Index", "Ms", "TimestampMs"} {
			if strings.HasSuffix(n, suffix) && len(n) > len(suffix) {
				cands = append(cands, strings.TrimSuffix(n, suffix))
			}
		}
		for _, c := range cands {
			if i, ok := byName[norm(c)]; ok && free(i, f) {
				m[f.Name], taken[i] = i, f
				break
			}
		}
	}
	fieldMaps[key] = m
	return m
}

type fieldMapKey struct {
	t     reflect.Type
	msg   string
	n     int
	first *Field
}

var fieldMaps = map[fieldMapKey]map[string]int{}

func kmsgField(sv reflect.Value, msg string, fs []*Field, name string) (reflect.Value, bool) {
	i, ok := fieldMap(sv.Type(), msg, fs)[name]
	if !ok {
		return reflect.Value{}, false
	}
	return sv.Field(i), true
}

// filler fills a kmsg message with values that are never a field's
// default: every integer differs from 0 and -1, every bool is true, every
// string, bytes and array is non-empty, every nullable struct is there.
// It fills the fields kdissect's definition has at the version, which
// are the ones Kafka writes there: kmsg writes any tagged field that is
// not at its default, in any flexible version.
type filler struct {
	n    int
	v    int16
	msg  string
	errs []string
}

func (f *filler) next() int {
	f.n++
	return f.n%90 + 2
}

func (f *filler) fields(sv reflect.Value, fs []*Field, path string) {
	for _, d := range fs {
		if !d.Versions.Has(f.v) {
			continue
		}
		fv, ok := kmsgField(sv, f.msg, fs, d.Name)
		if !ok {
			var names []string
			for i := range sv.NumField() {
				names = append(names, sv.Type().Field(i).Name)
			}
			f.errs = append(f.errs, fmt.Sprintf("%s.%s: kmsg's %s has no such field; it has %v", path, d.Name, sv.Type(), names))
			continue
		}
		f.value(fv, d, d.kind, path+"."+d.Name, 0)
	}
}

func (f *filler) value(v reflect.Value, d *Field, k kind, path string, depth int) {
	if v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct {
		p := reflect.New(v.Type().Elem())
		defaults(p)
		f.fields(p.Elem(), d.Fields, path)
		v.Set(p)
		return
	}
	switch k {
	case kStruct:
		f.fields(v, d.Fields, path)
		return
	case kArray:
		n := 2
		if depth > 3 {
			n = 1
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			defaults(s.Index(i).Addr())
			f.value(s.Index(i), d, d.elem, path, depth+1)
		}
		v.Set(s)
		return
	}
	if v.Kind() == reflect.Pointer { // a nullable string
		p := reflect.New(v.Type().Elem())
		f.value(p.Elem(), d, k, path, depth)
		v.Set(p)
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.next()))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.next()))
	case reflect.Float64:
		v.SetFloat(float64(f.next()) + 0.25)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", f.next()))
	case reflect.Array: // a UUID
		for i := range v.Len() {
			v.Index(i).SetUint(uint64(f.next()))
		}
	case reflect.Slice: // bytes
		if k == kRecords {
			v.SetBytes(oracleBatch(byte(f.next())))
			return
		}
		if v.Type().Elem().Kind() != reflect.Uint8 {
			f.errs = append(f.errs, fmt.Sprintf("%s: kmsg's %s is not bytes", path, v.Type()))
			return
		}
		v.SetBytes([]byte{byte(f.next()), byte(f.next()), byte(f.next())})
	default:
		f.errs = append(f.errs, fmt.Sprintf("%s: cannot fill a %s", path, v.Type()))
	}
}

// oracleBatch is a well-formed uncompressed RecordBatch v2 of one record:
// records fields are dissected as what they hold.
func oracleBatch(value byte) []byte {
	r := kmsg.Record{Value: []byte{value, value}}
	r.Length = int32(len(r.AppendTo(nil)) - 1) // the length of a short record is one varint byte
	b := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, ProducerID: -1, ProducerEpoch: -1,
		FirstSequence: -1, NumRecords: 1, Records: r.AppendTo(nil)}
	b.Length = int32(len(b.AppendTo(nil)) - 12) // what follows the offset and the length
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

func hasRecords(fs []*Field) bool {
	for _, f := range fs {
		if f.kind == kRecords || hasRecords(f.Fields) {
			return true
		}
	}
	return false
}

// defaults gives a new kmsg struct its defaults, as kmsg's constructors do.
func defaults(p reflect.Value) {
	if m := p.MethodByName("Default"); m.IsValid() {
		m.Call(nil)
	}
}

// oracleFrame frames a kmsg body with the header kdissect expects: the
// request header of its version (v0 without a client id, v2 with a
// tagged-field section), or a response header (v1 when flexible, except
// ApiVersions').
func oracleFrame(key, v int16, request, flexible bool, body []byte) []byte {
	var h []byte
	if request {
		h = binary.BigEndian.AppendUint16(h, uint16(key))
		h = binary.BigEndian.AppendUint16(h, uint16(v))
		h = binary.BigEndian.AppendUint32(h, 77)
		if hv := requestHeaderVersion(key, v, flexible); hv >= 1 {
			h = append(h, 0, 6)
			h = append(h, "oracle"...)
			if hv >= 2 {
				h = append(h, 0)
			}
		}
	} else {
		h = binary.BigEndian.AppendUint32(h, 77)
		if responseHeaderVersion(key, flexible) == 1 {
			h = append(h, 0)
		}
	}
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(h)+len(body)))
	return append(append(frame, h...), body...)
}

func TestKmsgOracle(t *testing.T) {
	reg := Builtin()
	checked := 0
	for key := int16(0); key <= MaxAPIKey; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			t.Errorf("kmsg has no API key %d", key)
			continue
		}
		for v := int16(0); v <= req.MaxVersion(); v++ {
			for _, request := range []bool{true, false} {
				var msg interface {
					SetVersion(int16)
					IsFlexible() bool
					AppendTo([]byte) []byte
				} = kmsg.RequestForKey(key)
				if !request {
					msg = req.ResponseKind()
				}
				msg.SetVersion(v)
				o := Options{}
				def := reg.reqDef(key)
				if !request {
					o = Options{Direction: Response, APIKey: key, APIVersion: v}
					def = reg.respDef(key)
				}
				name := fmt.Sprintf("%s v%d %s", APIName(key), v, o.Direction)
				if def != nil && kmsgDiffers[fmt.Sprintf("%s v%d", def.Name, v)] {
					continue
				}
				if def != nil {
					fl := filler{v: min(v, def.Valid.Hi), msg: def.Name}
					fl.fields(reflect.ValueOf(msg).Elem(), def.Fields, def.Name)
					for _, e := range fl.errs {
						t.Errorf("%s: %s", name, e)
					}
				}
				if env, ok := msg.(*kmsg.EnvelopeRequest); ok {
					// Its bytes are decoded as what they carry: a request,
					// a principal, an address, which filler bytes are not.
					env.RequestData = testkit.KmsgRequest(envCreateAcls(), 1, nil)[4:]
					env.RequestPrincipal = testkit.PrincipalData("User", "s1", true)
					env.ClientHostAddress = []byte{192, 0, 2, 1}
				}
				frame := oracleFrame(key, v, request, msg.IsFlexible(), msg.AppendTo(nil))
				m := reg.Decode(frame, o)
				switch {
				case def == nil:
					// An API key without a definition: the body is opaque.
					if m.Tree.Child("body") == nil {
						t.Errorf("%s: no definition, yet the body is dissected", name)
					}
					continue
				case v > def.Valid.Hi:
					want := fmt.Sprintf("unsupported version v%d of %s, dissected as v%d", v, def.Name, def.Valid.Hi)
					if len(m.Problems) == 0 || m.Problems[0].Message != want {
						t.Errorf("%s: problems %v, want first %q", name, m.Problems, want)
					}
					continue
				}
				// Every byte read and no problem; children tile their parent
				// exactly but under a records field, whose batches follow its
				// length prefix.
				if len(m.Problems) > 0 {
					t.Errorf("%s: problems %v", name, m.Problems)
					continue
				}
				if err := checkShape(m, frame, !hasRecords(def.Fields)); err != nil {
					t.Errorf("%s: %v\n%s", name, err, AppendText(nil, m.Tree))
					continue
				}
				body := m.Tree.Child(def.Name)
				if body == nil {
					t.Errorf("%s: no body", name)
					continue
				}
				var errs []string
				compareKmsg(&errs, def.Name, def.Name, body, def.Fields, reflect.ValueOf(msg).Elem())
				for _, e := range errs {
					t.Errorf("%s: %s", name, e)
				}
				checked++
			}
		}
	}
	t.Logf("%d messages checked against kmsg", checked)
}

// compareKmsg checks every field node under n, a struct of fields fs,
// against the kmsg struct sv.
func compareKmsg(errs *[]string, msg, path string, n *Node, fs []*Field, sv reflect.Value) {
	for _, c := range n.Children {
		switch {
		case c.Name == "present": // a nullable struct's marker
			continue
		case c.Name == "tagged_fields":
			for _, tf := range c.Children {
				if tf.note == "unknown tag" {
					*errs = append(*errs, fmt.Sprintf("%s: tag %d unknown", path, tf.Int))
				}
				for _, g := range tf.Children {
					if g.Name != "tag" && g.Name != "size" {
						compareValue(errs, msg, path+"."+g.Name, g, fs, sv)
					}
				}
			}
			continue
		}
		compareValue(errs, msg, path+"."+c.Name, c, fs, sv)
	}
}

func compareValue(errs *[]string, msg, path string, n *Node, fs []*Field, sv reflect.Value) {
	var d *Field
	for _, f := range fs {
		if f.Name == n.Name {
			d = f
		}
	}
	fv, ok := kmsgField(sv, msg, fs, n.Name)
	if !ok || d == nil {
		*errs = append(*errs, fmt.Sprintf("%s: kmsg's %s has no such field", path, sv.Type()))
		return
	}
	bad := func(want any) {
		*errs = append(*errs, fmt.Sprintf("%s = %s, kmsg encoded %v", path, n.Display(), want))
	}
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() != n.Null {
			bad(fv.Interface())
			return
		}
		if fv.IsNil() {
			return
		}
		fv = fv.Elem()
	}
	switch n.Kind {
	case KindStruct:
		compareKmsg(errs, msg, path, n, d.Fields, fv)
	case KindArray:
		if fv.Kind() != reflect.Slice || int64(fv.Len()) != n.Int {
			bad(fv.Len())
			return
		}
		i := 0
		for _, e := range n.Children {
			if e.Name == "length" {
				continue
			}
			ev := fv.Index(i)
			at := path + "[" + itoa(int64(i)) + "]"
			i++
			if e.Kind == KindStruct {
				compareKmsg(errs, msg, at, e, d.Fields, ev)
			} else {
				compareScalar(errs, at, e, ev)
			}
		}
	default:
		compareScalar(errs, path, n, fv)
	}
}

func compareScalar(errs *[]string, path string, n *Node, v reflect.Value) {
	ok := true
	switch v.Kind() {
	case reflect.Bool:
		ok = n.Kind == KindBool && (n.Int != 0) == v.Bool()
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		ok = n.Kind == KindInt && n.Int == v.Int()
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		ok = n.Kind == KindInt && n.Int == int64(v.Uint())
	case reflect.Float64:
		ok = n.Kind == KindFloat && n.Float == v.Float()
	case reflect.String:
		ok = n.Kind == KindString && !n.Null && n.Str == v.String()
	case reflect.Array:
		b := make([]byte, v.Len())
		reflect.Copy(reflect.ValueOf(b), v)
		ok = n.Kind == KindUUID && n.Str == uuidString(b)
	case reflect.Slice:
		ok = n.Kind == KindBytes && !n.Null && slices.Equal(n.Bytes, v.Bytes())
	default:
		ok = false
	}
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s = %s (%v), kmsg encoded %v", path, n.Display(), n.Kind, v.Interface()))
	}
}
