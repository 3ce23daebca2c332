package capture

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func conn(c *testkit.Capture, cport uint16) *testkit.Conn {
	v := c.NewConn(netip.AddrPortFrom(netip.MustParseAddr("192.0.2.10"), cport), netip.MustParseAddrPort("192.0.2.1:9092"), 1000, 5000)
	v.Acking, v.Push = true, true
	v.Syn()
	v.SynAck()
	return v
}

func createACLs(corr int32) []byte {
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.ResourceType, cr.ResourceName = kmsg.ACLResourceTypeTopic, "orders"
	cr.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
	cr.Principal, cr.Host = "User:alice", "*"
	cr.Operation, cr.PermissionType = kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
	r := kmsg.NewCreateACLsRequest()
	r.Version = 3
	r.Creations = append(r.Creations, cr)
	return testkit.KmsgRequest(&r, corr, testkit.Ptr("test"))
}

func createACLsResponse(corr int32) []byte {
	r := kmsg.NewCreateACLsResponse()
	r.Version = 3
	r.Results = append(r.Results, kmsg.NewCreateACLsResponseResult())
	return testkit.KmsgResponse(&r, corr)
}

// records reads files with o and returns a copy of what each record says.
func records(t *testing.T, o Options, files ...string) ([]Record, Result) {
	t.Helper()
	r, err := Open(o, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []Record
	res, err := r.Read(context.Background(), ListenerFunc(func(rec *Record) {
		c := *rec
		c.Packets = append([]int(nil), rec.Packets...)
		if rec.Message != nil {
			c.Message = &dissect.Message{Summary: rec.Message.Summary, Direction: rec.Message.Direction, Problems: rec.Message.Problems}
		}
		got = append(got, c)
	}))
	if err != nil {
		t.Fatal(err)
	}
	return got, res
}

// Two files are two captures: records say which file they are from, in
// file order, and message indexes run on; -c stops after N messages.
func TestReadFilesInOrderWithTheirNames(t *testing.T) {
	var files []string
	for i := range 2 {
		c := testkit.NewCapture(t0.Add(time.Duration(i) * time.Hour))
		v := conn(c, 50500)
		v.Send(true, createACLs(7))
		v.Send(false, createACLsResponse(7))
		files = append(files, c.File(t))
	}
	got, res := records(t, DefaultOptions(), files...)
	if len(got) != 4 || res.Malformed || res.Stats.Frames != 4 {
		t.Fatalf("%d records, %+v", len(got), res)
	}
	for i, r := range got {
		if r.Kind != KindMessage || r.Exchange.Index != i+1 || r.File != files[i/2] {
			t.Errorf("record %d: kind %d index %d file %q", i, r.Kind, r.Exchange.Index, r.File)
		}
		if want := t0.Add(time.Duration(i/2) * time.Hour); r.Time.Before(want) || r.Time.After(want.Add(time.Second)) {
			t.Errorf("record %d at %v, want just after %v", i, r.Time, want)
		}
		if r.Flow.Dst.Port() != 9092 && r.Message.Direction == dissect.Request {
			t.Errorf("record %d: request to %v", i, r.Flow.Dst)
		}
	}
	if got[0].Exchange.Peer != 2 || got[1].Exchange.Peer != 1 || !got[1].Exchange.HasLatency {
		t.Errorf("exchange not matched: %+v / %+v", got[0].Exchange, got[1].Exchange)
	}
	o := DefaultOptions()
	o.Count = 3
	if got, _ := records(t, o, files...); len(got) != 3 {
		t.Errorf("-c 3: %d records", len(got))
	}
}

// Malformed is one answer for every view.
func TestMalformedPolicy(t *testing.T) {
	bad := &dissect.Message{Problems: []dissect.Problem{{Message: "cut"}}}
	for _, c := range []struct {
		name string
		r    Record
		want bool
	}{
		{"clean message", Record{Kind: KindMessage, Message: &dissect.Message{}}, false},
		{"message with a problem", Record{Kind: KindMessage, Message: bad}, true},
		{"inferred guess", Record{Kind: KindMessage, Message: bad, Exchange: dissect.Exchange{Inferred: true}}, false},
		{"skipped bytes", Record{Kind: KindEvent, Event: &reassembly.Unparseable{Length: 3}}, true},
		{"tail before the first boundary", Record{Kind: KindEvent, Event: &reassembly.Unparseable{Length: 3, Leading: true}}, false},
		{"TLS record not decoded", Record{Kind: KindEvent, Event: &reassembly.LayerEvent{Value: &tlslayer.Problem{Kind: "auth"}}}, true},
		{"TLS session", Record{Kind: KindEvent, Event: &reassembly.LayerEvent{Value: &tlslayer.Session{}}}, false},
		{"gap", Record{Kind: KindEvent, Event: &reassembly.Gap{Length: 10}}, false},
		{"unmatched response", Record{Kind: KindUnmatched}, false},
	} {
		if got := Malformed(&c.r); got != c.want {
			t.Errorf("%s: malformed %v, want %v", c.name, got, c.want)
		}
	}
}

// A run over damaged bytes says so in Result and on the record.
func TestReadReportsMalformed(t *testing.T) {
	c := testkit.NewCapture(t0)
	v := conn(c, 50501)
	req := createACLs(9)
	// The frame's size prefix is honest, but it ends inside its creation.
	v.Send(true, testkit.SetSize(req[:len(req)-3]))
	got, res := records(t, DefaultOptions(), c.File(t))
	if !res.Malformed {
		t.Fatalf("not malformed: %+v", got)
	}
	var marked bool
	for _, r := range got {
		marked = marked || r.Malformed
	}
	if !marked {
		t.Errorf("no record marked malformed: %+v", got)
	}
}

// An empty run explains itself: which ports it saw instead.
func TestNoKafkaSaysWhichPortsToTry(t *testing.T) {
	c := testkit.NewCapture(t0)
	v := c.NewConn(netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:19092"), 1, 2)
	v.Syn()
	v.SynAck()
	v.Send(true, []byte("hello"))
	o := DefaultOptions()
	o.Detect = false
	_, res := records(t, o, c.File(t))
	want := "no Kafka traffic found on port 9092; saw 1 TCP connection on port 19092 (1): if Kafka is there, try --port 19092"
	if got := res.NoKafka("9092"); got != want {
		t.Errorf("NoKafka:\n%s\nwant\n%s", got, want)
	}
}

// Connections --detect followed count among those the hint names: their
// servers are named too, in order, the first three and how many more.
func TestNoKafkaNamesDetectedServers(t *testing.T) {
	c := testkit.NewCapture(t0)
	// A ClientHello's first 11 bytes: record and handshake headers, version.
	hello := []byte{0x16, 3, 1, 0, 60, 1, 0, 0, 56, 3, 3}
	hello = append(hello, make([]byte, 65-len(hello))...)
	for i, srv := range []string{"192.0.2.4:7000", "192.0.2.1:7003", "192.0.2.1:7001", "192.0.2.2:7000"} {
		v := c.NewConn(netip.AddrPortFrom(netip.MustParseAddr("192.0.2.10"), uint16(40000+i)), netip.MustParseAddrPort(srv), 1, 2)
		v.Syn()
		v.SynAck()
		v.Send(true, hello)
	}
	_, res := records(t, DefaultOptions(), c.File(t))
	want := "no Kafka frames in the 4 TCP connections on port 9092 or at 192.0.2.1:7001, 192.0.2.1:7003, 192.0.2.2:7000, 1 more (found by --detect): their TLS was not decrypted (the first: the ServerHello was not captured)"
	if got := res.NoKafka("9092"); got != want {
		t.Errorf("NoKafka:\n%s\nwant\n%s", got, want)
	}
}

// Connections whose TLS handshake the server refused carried no Kafka
// bytes: the hint says so rather than guess at encryption.
func TestNoKafkaCountsRefusedHandshakes(t *testing.T) {
	for _, c := range []struct {
		conns, refused int64
		want           string
	}{
		{1, 1, "no Kafka frames in the 1 TCP connection on port 9093: its TLS handshake was refused"},
		{3, 3, "no Kafka frames in the 3 TCP connections on port 9093: their TLS handshakes were refused"},
		{3, 2, "no Kafka frames in the 3 TCP connections on port 9093: 2 of them had their TLS handshake refused; the others encrypted (TLS), or not Kafka?"},
		{3, 0, "no Kafka frames in the 3 TCP connections on port 9093: encrypted (TLS), or not Kafka?"},
	} {
		res := Result{Stats: reassembly.Stats{Connections: c.conns}, refused: c.refused}
		if got := res.NoKafka("9093"); got != c.want {
			t.Errorf("%d of %d refused:\n%s\nwant\n%s", c.refused, c.conns, got, c.want)
		}
	}
}

// TLS connections that were not decrypted: the hint gives the first one's
// reason, and for a missing key without --tls-keylog, the flag.
func TestNoKafkaSaysWhyTLSWasNotRead(t *testing.T) {
	noKey := "no key for client random 1a2b3c4d5e6f7a8b…"
	for _, c := range []struct {
		conns, undecrypted int64
		reason             string
		keyLogs            bool
		want               string
	}{
		{1, 1, noKey, false, "its TLS was not decrypted: " + noKey + "; give the clients' key log with --tls-keylog"},
		{1, 1, noKey, true, "its TLS was not decrypted: " + noKey},
		{2, 2, "cipher suite TLS_AES_128_CCM_SHA256 is not one kdissect decrypts in TLS 1.3", true,
			"their TLS was not decrypted (the first: cipher suite TLS_AES_128_CCM_SHA256 is not one kdissect decrypts in TLS 1.3)"},
		{3, 1, noKey, true, "1 of them TLS not decrypted (the first: " + noKey + "); the others not Kafka?"},
	} {
		res := Result{Stats: reassembly.Stats{Connections: c.conns}, undecrypted: c.undecrypted, tlsReason: c.reason, keyLogs: c.keyLogs}
		want := fmt.Sprintf("no Kafka frames in the %s on port 9093: %s", plural(c.conns, "TCP connection"), c.want)
		if got := res.NoKafka("9093"); got != want {
			t.Errorf("%d of %d not decrypted:\n%s\nwant\n%s", c.undecrypted, c.conns, got, want)
		}
	}
}

func TestOptionsAndAPIs(t *testing.T) {
	o := DefaultOptions()
	for _, c := range []struct {
		files []string
		edit  func(*Options)
		want  string
	}{
		{nil, func(*Options) {}, "no capture"},
		{[]string{"a"}, func(o *Options) { o.Write = "x.pcap" }, "-w writes the packets of a live capture"},
		{[]string{"a"}, func(o *Options) { o.Duration = time.Second }, "--duration stops a live capture"},
		{[]string{"a"}, func(o *Options) { o.MaxConns = 0 }, "--max-conns must be at least 1"},
		{[]string{"a"}, func(o *Options) { o.Iface = "lo" }, "give either FILEs or --iface"},
	} {
		oo := o
		c.edit(&oo)
		err := oo.Check(c.files)
		if _, usage := err.(UsageError); !usage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a UsageError with %q", c.files, err, c.want)
		}
	}
	m, err := ParseAPIs("CreateAcls, 31,metadata")
	if err != nil || len(m) != 3 || !m[30] || !m[31] || !m[3] {
		t.Errorf("ParseAPIs: %v %v", m, err)
	}
	for _, bad := range []string{"999", "-1", "Nope"} {
		if _, err := ParseAPI(bad); err == nil {
			t.Errorf("ParseAPI(%q) accepted", bad)
		}
	}
}
