package capture_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/dissect/audit"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/filter"
	"github.com/kdissect/kdissect/internal/render"
	"github.com/kdissect/kdissect/internal/stats"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// A view is one output of the command line, wired as cmd/kdissect wires
// it: its bytes, what the run returned and what it warned are compared.
type view struct {
	name           string
	form           render.Form
	hex, all       bool
	quiet          bool
	stats          []string
	filter         string
	audit          string // a --format of kdissect audit; "" the main command
	count, maxConn int
}

var views = []view{
	{name: "tree", form: render.Tree},
	{name: "tree -x", form: render.Tree, hex: true},
	{name: "summary", form: render.Summary},
	{name: "json", form: render.JSON},
	{name: "all tree -x", form: render.Tree, hex: true, all: true},
	{name: "all summary", form: render.Summary, all: true},
	{name: "all json", form: render.JSON, all: true},
	{name: "all json -z", form: render.JSON, all: true, stats: []string{"apis", "latency", "errors", "principals", "conns"}},
	{name: "all -q -z", form: render.Summary, all: true, quiet: true, stats: []string{"apis", "latency", "errors", "principals", "conns"}},
	{name: "all summary -Y", form: render.Summary, all: true, filter: `api == "CreateAcls" || direction == "response"`},
	{name: "audit table", audit: "table"},
	{name: "audit csv", audit: "csv"},
	{name: "audit json", audit: "json"},
	{name: "audit ocsf", audit: "ocsf"},
}

type output struct {
	out, warn string
	res       capture.Result
	err       error
}

func runView(t *testing.T, v view, workers int, o capture.Options, files []string) output {
	t.Helper()
	var warn strings.Builder
	o.Workers = workers
	o.All = v.all
	if v.count > 0 {
		o.Count = v.count
	}
	if v.maxConn > 0 {
		o.MaxConns = v.maxConn
	}
	o.Warn = func(msg string) { fmt.Fprintln(&warn, msg) }
	var ao render.AuditOptions
	if v.audit != "" {
		ao.Format = v.audit
		o.APIs, o.Guess = audit.APIs(nil, false), true
	}
	r, err := capture.Open(o, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out bytes.Buffer
	if v.audit != "" {
		ao.Stderr = &warn
		a := render.NewAudit(&out, ao)
		res, err := r.Read(context.Background(), a)
		if cerr := a.Close(); cerr != nil {
			t.Fatal(cerr)
		}
		fmt.Fprintf(&warn, "incomplete %v\n", a.Incomplete())
		return output{out.String(), warn.String(), res, err}
	}
	flt, err := filter.CompileWith(v.filter, r.Registry())
	if err != nil {
		t.Fatal(err)
	}
	var st stats.Set
	for _, s := range v.stats {
		if err := st.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	r.BatchHeadersOnly((v.form == render.Summary || v.quiet) && !flt.NeedsRecords() && !st.NeedsRecords()) // as cmd/kdissect wires it
	p := render.NewPrinter(&out, v.form, v.hex, r.Live())
	res, err := r.Read(context.Background(), filter.Listener(flt, st.Listener(p, v.quiet)))
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := st.Write(&out, v.form == render.JSON); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&warn, "nokafka %q\n", res.NoKafka(o.Ports))
	return output{out.String(), warn.String(), res, err}
}

// workerCounts are compared with one worker; benchScale divides the
// bench generators' sizes (see race_workers_test.go).
var (
	workerCounts = []int{2, 3, 4}
	benchScale   = 1
)

// sameAcrossWorkers runs every view with 1 worker and with workerCounts
// and wants the very same bytes, result and warnings.
func sameAcrossWorkers(t *testing.T, o capture.Options, files []string, vs []view) {
	t.Helper()
	shown := false
	for _, v := range vs {
		want := runView(t, v, 1, o, files)
		shown = shown || want.out != ""
		for _, n := range workerCounts {
			got := runView(t, v, n, o, files)
			if got.out != want.out {
				t.Errorf("%s: %d workers: output differs from one worker's at byte %d:\n%s", v.name, n, firstDiff(got.out, want.out), around(got.out, want.out))
			}
			if got.warn != want.warn || fmt.Sprint(got.err) != fmt.Sprint(want.err) {
				t.Errorf("%s: %d workers: warnings/error %q, %v; one worker: %q, %v", v.name, n, got.warn, got.err, want.warn, want.err)
			}
			if got.res.Malformed != want.res.Malformed || got.res.Stats != want.res.Stats {
				t.Errorf("%s: %d workers: result %+v; one worker: %+v", v.name, n, got.res, want.res)
			}
		}
	}
	if !shown {
		t.Error("no view printed anything with one worker: the comparison proves nothing")
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func around(got, want string) string {
	i := firstDiff(got, want)
	lo := max(0, i-200)
	return fmt.Sprintf("got  ...%s...\nwant ...%s...", got[lo:min(len(got), i+200)], want[lo:min(len(want), i+200)])
}

func TestWorkersShippedCaptures(t *testing.T) {
	pcaps, _ := filepath.Glob("../../testdata/pcaps/*.pcap")
	if len(pcaps) == 0 {
		t.Fatal("no shipped captures")
	}
	for _, f := range pcaps {
		t.Run(filepath.Base(f), func(t *testing.T) {
			o := capture.DefaultOptions()
			if k := strings.TrimSuffix(f, ".pcap") + ".keylog"; fileExists(k) {
				o.KeyLogs = []string{k}
			}
			sameAcrossWorkers(t, o, []string{f}, views)
		})
	}
	// Several files in one run: indexes run on, packets start again.
	sameAcrossWorkers(t, capture.DefaultOptions(), pcaps, views[:4])
	// Compressed, and cut in the middle of a packet: the same records
	// before the same error.
	raw, err := os.ReadFile("../../testdata/pcaps/sasl-scram-acls.pcap")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cut, zipped := filepath.Join(dir, "cut.pcap"), filepath.Join(dir, "z.pcap.gz")
	os.WriteFile(cut, raw[:len(raw)*2/3], 0o644)
	os.WriteFile(zipped, testkit.Gzip(raw), 0o644)
	for _, f := range []string{cut, zipped} {
		sameAcrossWorkers(t, capture.DefaultOptions(), []string{f}, views[:4])
	}
	if out := runView(t, views[3], 2, capture.DefaultOptions(), []string{cut}); out.err == nil {
		t.Error("a cut file read with two workers gave no error")
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// lossy writes a capture of many connections interleaved, with loss,
// reordering, retransmissions, resets, connections that go idle past the
// idle timeout, Kafka on a port found by --detect, and non-Kafka bytes.
func lossy(t *testing.T, seed uint64, conns int) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	c := testkit.NewCapture(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	type live struct {
		v    *testkit.Conn
		corr int32
		left int
	}
	var open []*live
	broker := netip.MustParseAddrPort("192.0.2.1:9092")
	other := netip.MustParseAddrPort("192.0.2.2:19092")
	next := 0
	for len(open) > 0 || next < conns {
		if next < conns && (len(open) < 40 || rng.IntN(4) == 0) {
			srv := broker
			if next%7 == 3 {
				srv = other
			}
			cl := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(next >> 16), byte(next >> 8), byte(next)}), uint16(30000+next%20000))
			v := c.NewConn(cl, srv, rng.Uint32(), rng.Uint32())
			v.Acking, v.Push = true, true
			if next%11 != 5 { // some are picked up mid-stream
				v.Handshake()
			}
			open = append(open, &live{v: v, left: 1 + rng.IntN(8)})
			next++
			continue
		}
		i := rng.IntN(len(open))
		l := open[i]
		l.corr++
		req, resp := aclRequest(l.corr, rng), aclResponse(l.corr, rng)
		switch k := rng.IntN(20); {
		case k == 0: // a request lost in part
			l.v.Send(true, req[:len(req)/2])
			l.v.Drop(true, len(req)-len(req)/2)
			l.v.Send(false, resp)
		case k == 1: // reordered: the second half first
			h := len(req) / 2
			seq := l.v.CSeq
			l.v.Raw(true, seq+uint32(h), "A", req[h:], -1)
			l.v.Raw(true, seq, "A", req[:h], -1)
			l.v.CSeq += uint32(len(req))
			l.v.Send(false, resp)
		case k == 2: // retransmitted
			seq := l.v.CSeq
			l.v.Send(true, req)
			l.v.Raw(true, seq, "A", req, -1)
			l.v.Send(false, resp)
		case k == 3: // a hole never filled, waiting out the reorder wait
			l.v.Drop(true, 10)
			l.v.Send(true, req)
		case k == 4: // junk
			l.v.Send(true, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		case k == 5: // a long silence: idle timeouts of the others
			c.Wait(time.Duration(1+rng.IntN(7)) * time.Minute)
			l.v.Send(true, req)
			l.v.Send(false, resp)
		case k == 6: // a response cut by the end of what was captured
			l.v.Send(true, req)
			l.v.Raw(false, l.v.SSeq, "A", resp, len(resp)/2)
			l.v.SSeq += uint32(len(resp))
		default:
			l.v.Send(true, req)
			l.v.Send(false, resp)
		}
		if l.left--; l.left == 0 {
			switch rng.IntN(3) {
			case 0:
				l.v.Rst(true)
			case 1:
				l.v.Fin(true)
				l.v.Fin(false)
			} // else left open: ended by idle timeout, eviction or the end
			open = append(open[:i], open[i+1:]...)
		}
	}
	// A request the capture ends in the middle of.
	v := c.NewConn(netip.MustParseAddrPort("10.255.0.1:40000"), broker, 1, 2)
	v.Acking = true
	v.Handshake()
	req := aclRequest(1, rng)
	v.Send(true, req[:len(req)/2])
	return c.File(t)
}

func aclRequest(corr int32, rng *rand.Rand) []byte {
	if rng.IntN(3) == 0 {
		r := kmsg.NewDeleteACLsRequest()
		r.Version = 3
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceName = testkit.Ptr(fmt.Sprintf("t%d", rng.IntN(100)))
		r.Filters = append(r.Filters, f)
		return testkit.KmsgRequest(&r, corr, testkit.Ptr("test"))
	}
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.ResourceType, cr.ResourceName = kmsg.ACLResourceTypeTopic, fmt.Sprintf("orders-%d", rng.IntN(1000))
	cr.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
	cr.Principal, cr.Host = "User:alice", "*"
	cr.Operation, cr.PermissionType = kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
	r := kmsg.NewCreateACLsRequest()
	r.Version = 3
	r.Creations = append(r.Creations, cr)
	return testkit.KmsgRequest(&r, corr, testkit.Ptr("test"))
}

// aclResponse answers both kinds as CreateAcls: a DeleteAcls request's
// answer then is malformed, which the views must report the same way.
func aclResponse(corr int32, rng *rand.Rand) []byte {
	r := kmsg.NewCreateACLsResponse()
	r.Version = 3
	res := kmsg.NewCreateACLsResponseResult()
	if rng.IntN(4) == 0 {
		res.ErrorCode = 31
	}
	r.Results = append(r.Results, res)
	return testkit.KmsgResponse(&r, corr)
}

func TestWorkersGeneratedLossyCaptures(t *testing.T) {
	for seed := range uint64(3) {
		f := lossy(t, seed, 300)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			vs := append([]view(nil), views...)
			// --max-conns below the connections open at once: evictions,
			// with the cut frames they leave.
			vs = append(vs, view{name: "json --max-conns", form: render.JSON, all: true, maxConn: 17, stats: []string{"conns"}},
				view{name: "audit json --max-conns", audit: "json", maxConn: 5},
				view{name: "summary -c", form: render.Summary, count: 25})
			sameAcrossWorkers(t, capture.DefaultOptions(), []string{f}, vs)
			// What the capture is for, so that the comparison above
			// covers it.
			o := runView(t, vs[len(vs)-3], 1, capture.DefaultOptions(), []string{f})
			st := o.res.Stats
			if st.Evicted == 0 || st.Gaps == 0 || st.Retransmissions == 0 || st.UnparseableBytes == 0 || !o.res.Malformed {
				t.Errorf("the capture lacks evictions, gaps, retransmissions, junk or malformed data: %+v", st)
			}
			for _, want := range []string{`"reason":"idle timeout"`, `"reason":"evicted"`, `"event":"port_detected"`, `"event":"unmatched_response"`, `"reason":"end of capture"`} {
				if !strings.Contains(o.out, want) {
					t.Errorf("the capture has no %s", want)
				}
			}
		})
	}
}

// The bench generators' captures: gencapture's Produce traffic with
// reordering and retransmissions, and scalegen's connection churn and
// held holes, under --max-conns too.
func TestWorkersBenchCaptures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the generators")
	}
	dir := t.TempDir()
	gen := func(name string, args ...string) string {
		out := filepath.Join(dir, name+".pcap")
		cmd := exec.Command("go", append([]string{"run", "../testtools/bench/" + name, "-o", out}, args...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		return out
	}
	gc := gen("gencapture", "-size", fmt.Sprint(6000000/benchScale), "-conns", "60")
	rc := filepath.Join(dir, "records.pcap")
	if b, err := exec.Command("go", "run", "../testtools/bench/gencapture", "-o", rc, "-size", fmt.Sprint(3000000/benchScale), "-records", "mixed").CombinedOutput(); err != nil {
		t.Fatalf("gencapture -records: %v\n%s", err, b)
	}
	churn := gen("scalegen", "-case", "churn", "-conns", fmt.Sprint(3000/benchScale))
	// 84 KiB held out of order by each of 1000 connections: beyond the
	// 64 MiB the pipeline holds in all, a global cap.
	holes := gen("scalegen", "-case", "holes", "-conns", fmt.Sprint(1000/benchScale))
	vs := []view{
		{name: "summary", form: render.Summary},
		{name: "all json", form: render.JSON, all: true},
		{name: "all summary -z", form: render.Summary, all: true, stats: []string{"apis", "conns", "errors"}},
		{name: "audit json", audit: "json"},
		{name: "all json --max-conns", form: render.JSON, all: true, maxConn: 50},
	}
	for _, f := range []string{gc, rc, churn, holes} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sameAcrossWorkers(t, capture.DefaultOptions(), []string{f}, vs)
		})
	}
	if benchScale == 1 {
		if st := runView(t, vs[0], 1, capture.DefaultOptions(), []string{holes}).res.Stats; st.BufferLimits == 0 {
			t.Errorf("the holes capture reached no buffer cap: %+v", st)
		}
	}
}

// openTwoWorkers opens f for two workers, with every message or (all
// false) the default view, where the packets are read ahead.
func openTwoWorkers(t *testing.T, f string, all bool) *capture.Run {
	t.Helper()
	o := capture.DefaultOptions()
	o.Workers, o.All = 2, all
	r, err := capture.Open(o, []string{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A listener that panics does not leave the reader blocked: Read's caller
// sees the panic it would see with one worker, and the reader goes away.
// Also in the default view, where the packets are read ahead.
func TestWorkersListenerPanicStopsReader(t *testing.T) {
	f := lossy(t, 9, 200)
	for _, all := range []bool{true, false} {
		r := openTwoWorkers(t, f, all)
		func() {
			defer r.Close()
			defer func() {
				if recover() == nil {
					t.Errorf("all=%v: the listener's panic did not come through", all)
				}
			}()
			n := 0
			r.Read(context.Background(), capture.ListenerFunc(func(*capture.Record) {
				if n++; n == 3 {
					panic("listener")
				}
			}))
		}()
	}
}

// A cancelled context ends the run with the reader (and its read-ahead,
// in the default view).
func TestWorkersContextCancel(t *testing.T) {
	f := lossy(t, 4, 300)
	for _, all := range []bool{true, false} {
		r := openTwoWorkers(t, f, all)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			r.Read(ctx, capture.ListenerFunc(func(*capture.Record) { cancel() }))
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("all=%v: Read did not end after its context was cancelled", all)
		}
		r.Close()
		cancel()
	}
}
