package dissect

import (
	"embed"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// The consumer protocol: the bytes a group of protocol type "consumer"
// exchanges through JoinGroup (each member's subscription) and SyncGroup
// (each member's assignment), and which DescribeGroups shows again. Kafka defines them as data structures of its
// message format, each preceded by an int16 version and never flexible;
// they are definitions here too, walked by the same interpreter, their
// nodes nested under the bytes node that carries them.

//go:embed datadefs/*.json
var dataDefs embed.FS

// embedded says which structure a bytes field of a message carries.
type embedded uint8

const (
	embedNone embedded = iota
	embedSubscription
	embedAssignment
)

var consumerDefs = sync.OnceValue(func() [3]*Def {
	var out [3]*Def
	for k, name := range map[embedded]string{
		embedSubscription: "ConsumerProtocolSubscription",
		embedAssignment:   "ConsumerProtocolAssignment",
	} {
		src, err := dataDefs.ReadFile("datadefs/" + name + ".json")
		if err == nil {
			out[k], err = parseData(src)
		}
		if err != nil {
			panic(fmt.Sprintf("built-in definition %s: %v", name, err)) // a build defect, caught by every test
		}
	}
	return out
})

// parseData reads a definition of Kafka's "data" type: a structure that
// travels inside a message's bytes, with versions of its own.
func parseData(src []byte) (*Def, error) {
	jd, ok := scanDef(src)
	if !ok || jd.Type != "data" || jd.Name == "" {
		return nil, errors.New("not a data definition")
	}
	d := &Def{APIKey: -1, Name: jd.Name}
	var err error
	if d.Valid, err = parseVersions(jd.ValidVersions); err != nil {
		return nil, err
	}
	if d.Flexible, err = parseVersions(jd.FlexibleVersions); err != nil {
		return nil, err
	}
	common := map[string][]jsonField{}
	for _, cs := range jd.CommonStructs {
		common[cs.Name] = cs.Fields
	}
	b := builder{common: common, seen: map[string]bool{}}
	d.Fields, err = b.fields(jd.Name, jd.Fields)
	return d, err
}

// markEmbedded marks the bytes fields of JoinGroup, SyncGroup and
// DescribeGroups that may carry the consumer protocol; by name, so that a
// definition loaded with --schema-dir is read the same.
func markEmbedded(d *Def) {
	var sub, assign string
	switch d.APIKey {
	case joinGroupKey:
		sub = "Metadata"
	case syncGroupKey:
		assign = "Assignment"
	case describeGroupsKey:
		sub, assign = "MemberMetadata", "MemberAssignment"
	default:
		return
	}
	var walk func(fs []*Field)
	walk = func(fs []*Field) {
		for _, f := range fs {
			switch {
			case f.kind != kBytes:
			case f.Name == sub:
				f.embedded = embedSubscription
			case f.Name == assign:
				f.embedded = embedAssignment
			}
			walk(f.Fields)
		}
	}
	walk(d.Fields)
}

const (
	joinGroupKey      = 11
	syncGroupKey      = 14
	describeGroupsKey = 15
)

// protocolType is the ProtocolType of the message being decoded, read
// from its body's fields decoded so far (they precede the metadata and
// assignments); known is false when this version does not carry it or it
// is null.
func (d *decoder) protocolType() (typ string, known bool) {
	for i := len(d.stack) - 1; i >= 0; i-- {
		if n := d.stack[i]; n.Name == "ProtocolType" && n.Kind == KindString {
			return n.Str, n.HasValue() && !n.Null
		}
	}
	return "", false
}

// embedded decodes the consumer protocol structure bytes node n carries,
// its children nested under it. With the protocol type "consumer" the
// bytes are read as such whatever they hold, problems included; with
// another, they stay bytes; without one (older versions), they are read
// as the consumer protocol only when that reads every byte without a
// problem, as Wireshark's guess does.
func (d *decoder) embedded(n *Node, what embedded) {
	if n.noval || n.Null || len(n.Bytes) == 0 || n.redact != 0 || d.failed {
		return
	}
	typ, known := d.protocolType()
	if known && typ != "consumer" {
		return
	}
	def := consumerDefs()[what]
	end := d.off
	v, regionEnd, flex, notKept, cut := d.v, d.end, d.flex, d.notKept, d.cut
	mark, nprobs := len(d.stack), len(d.probs)
	d.off, d.end, d.notKept, d.flex = end-len(n.Bytes), end, 0, false
	vn := d.fixed(kInt16, "Version", "int16")
	vn.Doc = "version of the " + def.Name + " that follows"
	ver := vn.Int
	switch {
	case !vn.HasValue():
	case ver < 0:
		d.fail(vn, vn.Offset, fmt.Sprintf("%s version %d is negative", def.Name, ver))
	default:
		// Kafka reads a newer version as the newest it knows, which only
		// ever adds fields at the end: so does kdissect.
		d.v = int16(min(ver, int64(def.Valid.Hi)))
		d.fields(def.Fields, "")
		if d.failed && len(d.probs) == nprobs+1 && d.probs[nprobs].Offset == end {
			d.endsEarly(def, mark, end)
		}
	}
	exact := !d.failed && d.off == end && len(d.probs) == nprobs
	if !known && (!exact || ver > int64(def.Valid.Hi)) {
		// Not the consumer protocol after all: the bytes stay bytes.
		d.stack, d.probs = d.stack[:mark], d.probs[:nprobs]
		d.off, d.end, d.v, d.flex, d.failed, d.cut, d.notKept = end, regionEnd, v, flex, false, cut, notKept
		return
	}
	if !d.failed && d.off < end {
		name := "trailing"
		if ver > int64(def.Valid.Hi) {
			name = "newer_fields"
		}
		rest := d.node(name, "bytes", KindBytes)
		rest.Bytes = d.b[d.off:end:end]
		rest.Size = len(rest.Bytes)
		if ver > int64(def.Valid.Hi) {
			rest.Doc = "fields of version " + strconv.FormatInt(ver, 10) + ", newer than kdissect knows"
		} else {
			rest.Doc = "bytes after the end of the " + def.Name
			d.problem(rest, d.off, fmt.Sprintf("%d bytes after the end of the %s", rest.Size, def.Name))
		}
		d.off = end
	}
	d.adopt(n, mark)
	// The bytes themselves were read whole: a problem inside them does not
	// stop the walk of the message.
	d.off, d.end, d.v, d.flex, d.failed, d.cut, d.notKept = end, regionEnd, v, flex, false, cut, notKept
	if !vn.HasValue() {
		n.note = def.Name // cut before its version
		return
	}
	n.note = def.Name + " v" + strconv.FormatInt(ver, 10)
	if ver > int64(def.Valid.Hi) {
		n.note += ", read as v" + strconv.Itoa(int(def.Valid.Hi))
	}
}

// endsEarly words the problem of a structure whose bytes ran out exactly
// where a field of its version starts: the writer sent the fields of an
// older version under a newer version number (some clients write a v0
// subscription as v1), which Kafka's consumer rejects. The problem stays,
// said so, on the node that recorded it.
func (d *decoder) endsEarly(def *Def, mark, end int) {
	for _, top := range d.stack[mark:] {
		if top.Offset != end {
			continue
		}
		var f *Field
		for _, df := range def.Fields {
			if df.Name == top.Name {
				f = df
			}
		}
		if f == nil || f.Versions.Lo == 0 {
			return
		}
		msg := fmt.Sprintf("%s v%d ends before %s (since v%d): an older version's fields under a newer number, which Kafka's consumer rejects",
			def.Name, d.v, f.Name, f.Versions.Lo)
		d.probs[len(d.probs)-1].Message = msg
		var walk func(n *Node) bool
		walk = func(n *Node) bool {
			if k := len(n.Problems); k > 0 && n.Problems[k-1].Offset == end {
				n.Problems[k-1].Message = msg
				return true
			}
			for _, c := range n.Children {
				if walk(c) {
					return true
				}
			}
			return false
		}
		walk(top)
		return
	}
}
