package dissect

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func consumerSubscription(v int16) *kmsg.ConsumerMemberMetadata {
	md := &kmsg.ConsumerMemberMetadata{Version: v, Topics: []string{"orders", "pay\x1bments"}, UserData: []byte{1, 2, 3}}
	if v >= 1 {
		md.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "orders", Partitions: []int32{0, 7}}}
	}
	if v >= 2 {
		md.Generation = 41
	}
	if v >= 3 {
		rack := "rack-b"
		md.Rack = &rack
	}
	return md
}

func consumerAssignment(v int16) *kmsg.ConsumerMemberAssignment {
	return &kmsg.ConsumerMemberAssignment{Version: v, Topics: []kmsg.ConsumerMemberAssignmentTopic{
		{Topic: "orders", Partitions: []int32{3, 1}}, {Topic: "audit", Partitions: []int32{}},
	}}
}

// checkSubscription compares the nodes under a Metadata node with the
// subscription kmsg encoded, field by field, and that they tile its bytes.
func checkSubscription(t *testing.T, name string, n *Node, md *kmsg.ConsumerMemberMetadata) {
	t.Helper()
	if n == nil {
		t.Fatalf("%s: no Metadata node", name)
	}
	var got []string
	for _, c := range n.Children {
		got = append(got, c.Name)
	}
	want := []string{"Version", "Topics", "UserData", "OwnedPartitions", "GenerationId", "RackId"}[:3+min(int(md.Version), 3)]
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s: children %v, want %v", name, got, want)
	}
	if n.note != fmt.Sprintf("ConsumerProtocolSubscription v%d", md.Version) {
		t.Errorf("%s: note %q", name, n.note)
	}
	if v := n.Child("Version"); v.Int != int64(md.Version) || v.Offset != n.Offset+n.Size-len(n.Bytes) || v.Size != 2 {
		t.Errorf("%s: Version %d at [%d, %d], bytes at %d", name, v.Int, v.Offset, v.Size, n.Offset+n.Size-len(n.Bytes))
	}
	topics := n.Child("Topics")
	if topics.Int != int64(len(md.Topics)) {
		t.Errorf("%s: %d topics", name, topics.Int)
	}
	for i, tp := range md.Topics {
		if c := topics.Child(fmt.Sprintf("Topics[%d]", i)); c == nil || c.Str != tp {
			t.Errorf("%s: Topics[%d] = %v, want %q", name, i, c, tp)
		}
	}
	if ud := n.Child("UserData"); string(ud.Bytes) != string(md.UserData) {
		t.Errorf("%s: UserData %x", name, ud.Bytes)
	}
	if md.Version >= 1 {
		op := n.Find("OwnedPartitions", "TopicPartition[0]")
		if op == nil || op.Child("Topic").Str != md.OwnedPartitions[0].Topic {
			t.Fatalf("%s: OwnedPartitions %v", name, op)
		}
		ps := op.Child("Partitions")
		if ps.Int != 2 || ps.Child("Partitions[0]").Int != 0 || ps.Child("Partitions[1]").Int != 7 {
			t.Errorf("%s: owned partitions %v", name, ps.Children)
		}
	}
	if md.Version >= 2 && n.Child("GenerationId").Int != int64(md.Generation) {
		t.Errorf("%s: GenerationId %d", name, n.Child("GenerationId").Int)
	}
	if md.Version >= 3 && n.Child("RackId").Str != *md.Rack {
		t.Errorf("%s: RackId %q", name, n.Child("RackId").Str)
	}
}

func checkAssignment(t *testing.T, name string, n *Node, a *kmsg.ConsumerMemberAssignment) {
	t.Helper()
	if n == nil || len(n.Children) != 3 {
		t.Fatalf("%s: assignment not dissected: %v", name, n)
	}
	if n.Child("Version").Int != int64(a.Version) || n.note != fmt.Sprintf("ConsumerProtocolAssignment v%d", a.Version) {
		t.Errorf("%s: version %d, note %q", name, n.Child("Version").Int, n.note)
	}
	ap := n.Child("AssignedPartitions")
	if ap.Int != int64(len(a.Topics)) {
		t.Fatalf("%s: %d topics", name, ap.Int)
	}
	for i, tp := range a.Topics {
		e := ap.Child(fmt.Sprintf("TopicPartition[%d]", i))
		if e.Child("Topic").Str != tp.Topic || e.Child("Partitions").Int != int64(len(tp.Partitions)) {
			t.Errorf("%s: %s", name, AppendText(nil, e))
		}
		for j, p := range tp.Partitions {
			if c := e.Find("Partitions", fmt.Sprintf("Partitions[%d]", j)); c == nil || c.Int != int64(p) {
				t.Errorf("%s: %s partition %d = %v", name, tp.Topic, j, c)
			}
		}
	}
	if ud := n.Child("UserData"); !ud.Null {
		t.Errorf("%s: UserData %x, want null", name, ud.Bytes)
	}
}

func decodeKmsg(t *testing.T, req kmsg.Request, resp kmsg.Response) *Message {
	t.Helper()
	var m *Message
	var frame []byte
	if resp == nil {
		frame = testkit.KmsgRequest(req, 5, nil)
		m = Builtin().Decode(frame, Options{})
	} else {
		frame = testkit.KmsgResponse(resp, 5)
		m = Builtin().Decode(frame, Options{Direction: Response, APIKey: resp.Key(), APIVersion: resp.GetVersion()})
	}
	if err := checkShape(m, frame, true); err != nil {
		t.Fatalf("%s v%d: %v\n%s", m.APIName, m.APIVersion, err, AppendText(nil, m.Tree))
	}
	if err := checkRendered(m); err != nil {
		t.Fatalf("%s v%d: %v", m.APIName, m.APIVersion, err)
	}
	return m
}

// Every subscription version, in every JoinGroup version: by the protocol
// type where the message carries one, by the exact reading where it does not.
func TestConsumerSubscription(t *testing.T) {
	for sv := int16(0); sv <= 3; sv++ {
		md := consumerSubscription(sv)
		for v := int16(0); v <= 9; v++ {
			req := kmsg.NewPtrJoinGroupRequest()
			req.Version, req.Group, req.ProtocolType = v, "g", "consumer"
			req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: md.AppendTo(nil)}}
			m := decodeKmsg(t, req, nil)
			checkSubscription(t, fmt.Sprintf("JoinGroup v%d request, subscription v%d", v, sv), m.Tree.Find("JoinGroupRequest", "Protocols", "JoinGroupRequestProtocol[0]", "Metadata"), md)

			resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
			if v >= 7 {
				p := "consumer"
				resp.ProtocolType = &p
			}
			resp.Members = []kmsg.JoinGroupResponseMember{{MemberID: "m-1", ProtocolMetadata: md.AppendTo(nil)}}
			m = decodeKmsg(t, nil, resp)
			checkSubscription(t, fmt.Sprintf("JoinGroup v%d response, subscription v%d", v, sv), m.Tree.Find("JoinGroupResponse", "Members", "JoinGroupResponseMember[0]", "Metadata"), md)
		}
	}
}

func TestConsumerAssignment(t *testing.T) {
	for av := int16(0); av <= 3; av++ {
		a := consumerAssignment(av)
		for v := int16(0); v <= 5; v++ {
			req := kmsg.NewPtrSyncGroupRequest()
			req.Version, req.Group = v, "g"
			if v >= 5 {
				p := "consumer"
				req.ProtocolType = &p
			}
			req.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: "m-1", MemberAssignment: a.AppendTo(nil)}}
			m := decodeKmsg(t, req, nil)
			checkAssignment(t, fmt.Sprintf("SyncGroup v%d request, assignment v%d", v, av), m.Tree.Find("SyncGroupRequest", "Assignments", "SyncGroupRequestAssignment[0]", "Assignment"), a)

			resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
			resp.ProtocolType = req.ProtocolType
			resp.MemberAssignment = a.AppendTo(nil)
			m = decodeKmsg(t, nil, resp)
			checkAssignment(t, fmt.Sprintf("SyncGroup v%d response, assignment v%d", v, av), m.Tree.Find("SyncGroupResponse", "Assignment"), a)
		}
	}
}

// DescribeGroups shows each member's subscription and assignment again,
// of the consumer protocol when the group's protocol type says so.
func TestConsumerProtocolDescribeGroups(t *testing.T) {
	for v := int16(0); v <= 6; v++ {
		resp := kmsg.NewPtrDescribeGroupsResponse()
		resp.Version = v
		md, a := consumerSubscription(2), consumerAssignment(1)
		resp.Groups = []kmsg.DescribeGroupsResponseGroup{
			{Group: "connect-g", ProtocolType: "connect", Members: []kmsg.DescribeGroupsResponseGroupMember{{MemberID: "w", ProtocolMetadata: md.AppendTo(nil)}}},
			{Group: "g", ProtocolType: "consumer", Members: []kmsg.DescribeGroupsResponseGroupMember{{MemberID: "m", ProtocolMetadata: md.AppendTo(nil), MemberAssignment: a.AppendTo(nil)}}},
		}
		m := decodeKmsg(t, nil, resp)
		name := fmt.Sprintf("DescribeGroups v%d", v)
		if n := m.Tree.Find("DescribeGroupsResponse", "Groups", "DescribedGroup[0]", "Members", "DescribedGroupMember[0]", "MemberMetadata"); n == nil || len(n.Children) != 0 {
			t.Errorf("%s: a connect member's metadata dissected: %v", name, n)
		}
		member := m.Tree.Find("DescribeGroupsResponse", "Groups", "DescribedGroup[1]", "Members", "DescribedGroupMember[0]")
		if member == nil {
			t.Fatalf("%s: no member\n%s", name, AppendText(nil, m.Tree))
		}
		checkSubscription(t, name, member.Child("MemberMetadata"), md)
		checkAssignment(t, name, member.Child("MemberAssignment"), a)
	}
}

// Other protocol types stay bytes, and so do bytes that are not the
// consumer protocol when the message does not say.
func TestConsumerProtocolOthersStayBytes(t *testing.T) {
	md := consumerSubscription(3).AppendTo(nil)
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.ProtocolType = 9, "g", "connect"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "sessioned", Metadata: md}}
	m := decodeKmsg(t, req, nil)
	if n := m.Tree.Find("JoinGroupRequest", "Protocols", "JoinGroupRequestProtocol[0]", "Metadata"); len(n.Children) != 0 || n.note != "" {
		t.Errorf("connect metadata dissected: %s", AppendText(nil, n))
	}
	for _, b := range [][]byte{
		{0, 0, 0, 0, 0, 1, 0, 1, 'x'},                          // v0, one topic "x", no user data: cut
		append(md, 0),                                          // one byte too many
		{0, 9, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff},             // a version beyond v3: not a guess to make
		{0xff, 0xff, 0, 0, 0, 0},                               // negative version
		{0, 0, 0, 0, 0, 1, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff}, // a topic that is not UTF-8
		{7},
	} {
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.Version, resp.MemberAssignment = 4, b
		m := decodeKmsg(t, nil, resp)
		if n := m.Tree.Find("SyncGroupResponse", "Assignment"); len(n.Children) != 0 || n.note != "" || len(m.Problems) != 0 {
			t.Errorf("%x: guessed as the consumer protocol: %s %v", b, AppendText(nil, n), m.Problems)
		}
	}
}

// A malformed structure under the protocol type "consumer" is a problem at
// its offset; the message around it decodes on, and no wire count is
// trusted for an allocation.
func TestConsumerProtocolMalformed(t *testing.T) {
	good := consumerSubscription(1).AppendTo(nil)
	huge := []byte{0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 1, 'x'} // 2^31-1 topics in 7 bytes
	// kafka-go and @platformatic/kafka write a v0 subscription numbered 1.
	v0as1 := consumerSubscription(0).AppendTo(nil)
	v0as1[1] = 1
	for _, c := range []struct {
		name string
		md   []byte
		want string // the problem, at the offset of the bytes plus at
		at   int
	}{
		{"cut", good[:len(good)-1], "truncated", len(good) - 5},
		{"huge count", huge, "array length 2147483647", 2},
		{"trailing", append(append([]byte{}, good...), 9, 9), "2 bytes after the end of the ConsumerProtocolSubscription", len(good)},
		{"negative version", []byte{0x80, 0, 1}, "ConsumerProtocolSubscription version -32768 is negative", 0},
		{"one byte", []byte{0}, "truncated", 0},
		{"v0 numbered v1", v0as1, "ConsumerProtocolSubscription v1 ends before OwnedPartitions (since v1): an older version's fields under a newer number", len(v0as1)},
		{"cut v1 inside OwnedPartitions", good[:len(good)-4], "truncated", len(good) - 8},
		{"cut before UserData, a field since v0", v0as1[:len(v0as1)-7], "truncated", len(v0as1) - 7},
	} {
		resp := kmsg.NewPtrJoinGroupResponse()
		p := "consumer"
		resp.Version, resp.ProtocolType = 9, &p
		resp.Members = []kmsg.JoinGroupResponseMember{{MemberID: "m-1", ProtocolMetadata: c.md}, {MemberID: "m-2", ProtocolMetadata: good}}
		frame := testkit.KmsgResponse(resp, 5)
		m := Builtin().Decode(frame, Options{Direction: Response, APIKey: 11, APIVersion: 9})
		if err := checkShape(m, frame, false); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		n := m.Tree.Find("JoinGroupResponse", "Members", "JoinGroupResponseMember[0]", "Metadata")
		start := n.Offset + n.Size - len(n.Bytes)
		if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, c.want) || m.Problems[0].Offset < start || m.Problems[0].Offset > start+c.at+4 {
			t.Errorf("%s: problems %v, want one %q near %d\n%s", c.name, m.Problems, c.want, start+c.at, AppendText(nil, n))
		}
		if c.name == "one byte" && n.note != "ConsumerProtocolSubscription" {
			t.Errorf("%s: note %q: no version was read", c.name, n.note)
		}
		checkSubscription(t, c.name+", next member", m.Tree.Find("JoinGroupResponse", "Members", "JoinGroupResponseMember[1]", "Metadata"), consumerSubscription(1))
		if id := m.Tree.Find("JoinGroupResponse", "Members", "JoinGroupResponseMember[1]", "MemberId"); id == nil || id.Str != "m-2" {
			t.Errorf("%s: the member after the malformed one: %v", c.name, id)
		}
	}
}

// A version newer than v3 is read as v3, as Kafka reads it; the fields it
// adds are shown as bytes, not as a problem.
func TestConsumerProtocolNewerVersion(t *testing.T) {
	md := consumerSubscription(3)
	b := append(md.AppendTo(nil), 0, 0, 0, 5)
	b[1] = 4
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.ProtocolType = 9, "g", "consumer"
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: b}}
	m := decodeKmsg(t, req, nil)
	n := m.Tree.Find("JoinGroupRequest", "Protocols", "JoinGroupRequestProtocol[0]", "Metadata")
	if n.note != "ConsumerProtocolSubscription v4, read as v3" || n.Child("RackId").Str != "rack-b" {
		t.Fatalf("%s", AppendText(nil, n))
	}
	if r := n.Child("newer_fields"); r == nil || r.Size != 4 {
		t.Errorf("newer fields: %v", r)
	}
}

// FuzzConsumerProtocol decodes arbitrary bytes as JoinGroup and SyncGroup
// responses, whose members' metadata and assignment are read as the
// consumer protocol by type (v7+, v5+) or by guess (older): the invariants
// of FuzzDecode hold.
func FuzzConsumerProtocol(f *testing.F) {
	for _, v := range []int16{6, 9} {
		resp := kmsg.NewPtrJoinGroupResponse()
		p := "consumer"
		resp.Version, resp.ProtocolType = v, &p
		resp.Members = []kmsg.JoinGroupResponseMember{{MemberID: "m", ProtocolMetadata: consumerSubscription(3).AppendTo(nil)}}
		f.Add(testkit.KmsgResponse(resp, 1), uint8(v))
	}
	for _, v := range []int16{4, 5} {
		resp := kmsg.NewPtrSyncGroupResponse()
		p := "consumer"
		resp.Version, resp.ProtocolType, resp.MemberAssignment = v, &p, consumerAssignment(2).AppendTo(nil)
		f.Add(testkit.KmsgResponse(resp, 1), uint8(0x80|v))
	}
	f.Fuzz(func(t *testing.T, frame []byte, sel uint8) {
		frame = frame[:len(frame):len(frame)]
		key, ver := int16(joinGroupKey), int16(sel&0x7f%10)
		if sel&0x80 != 0 {
			key, ver = syncGroupKey, int16(sel&0x7f%6)
		}
		checkFuzzed(t, Builtin().Decode(frame, Options{Direction: Response, APIKey: key, APIVersion: ver}), frame)
	})
}

// A real consumer group: franz-go's consumer joins and syncs with kfake,
// once with the eager range balancer and once with the cooperative sticky
// one (subscription v3 with owned partitions and its generation); every
// JoinGroup and SyncGroup carries the consumer protocol, read field by
// field as the client wrote it.
func TestConsumerProtocolAgainstKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker")
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(3, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, bal := range []struct {
		name string
		b    kgo.GroupBalancer
	}{{"range", kgo.RangeBalancer()}, {"cooperative-sticky", kgo.CooperativeStickyBalancer()}} {
		t.Run(bal.name, func(t *testing.T) {
			rec := &recorder{}
			cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.Dialer(rec.dial),
				kgo.ConsumerGroup("g-"+bal.name), kgo.ConsumeTopics("orders"), kgo.Balancers(bal.b),
				kgo.FetchMaxWait(100*time.Millisecond), kgo.DisableClientMetrics())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			for n := 0; n == 0; {
				fs := cl.PollFetches(ctx)
				if err := fs.Err(); err != nil {
					t.Fatal(err)
				}
				n = len(fs.Records())
			}
			cl.Close()
			var subs, assigns int
			for i := range rec.conns {
				msgs, _ := decodeCapture(t, rec.frames(i), Options{}, false, false)
				for _, d := range msgs {
					if len(d.m.Problems) > 0 {
						t.Errorf("%s: %v", d.m.Summary, d.m.Problems)
					}
					d.m.Tree.Walk(func(n *Node, _ int) {
						switch {
						case strings.HasPrefix(n.note, "ConsumerProtocolSubscription"):
							subs++
							if tp := n.Find("Topics", "Topics[0]"); tp == nil || tp.Str != "orders" || n.Child("Topics").Int != 1 {
								t.Errorf("%s: subscription %s", d.m.Summary, AppendText(nil, n))
							}
							if bal.name == "cooperative-sticky" && (n.Child("OwnedPartitions") == nil || n.Child("GenerationId") == nil) {
								t.Errorf("%s: cooperative subscription without owned partitions: %s", d.m.Summary, AppendText(nil, n))
							}
						case strings.HasPrefix(n.note, "ConsumerProtocolAssignment"):
							assigns++
							e := n.Find("AssignedPartitions", "TopicPartition[0]")
							if e == nil || e.Child("Topic").Str != "orders" || e.Child("Partitions").Int != 3 {
								t.Errorf("%s: assignment %s", d.m.Summary, AppendText(nil, n))
							}
						}
					})
				}
			}
			// The request's protocols and the leader's members; the leader's
			// assignments and the response's.
			if subs < 2 || assigns < 2 {
				t.Errorf("%d subscriptions and %d assignments dissected", subs, assigns)
			}
		})
	}
}
