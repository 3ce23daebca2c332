package tlslayer_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/render"
	"github.com/kdissect/kdissect/internal/testtools/traffic"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

// Selective decryption (only the heads of frames nobody reads, the rest
// passed over) must not change a byte of any output: every form, every
// suite, heads at record starts and inside records, shown frames and
// skipped ones.

// outputs runs a capture through every output form, with only the ACL
// APIs shown or every one (all), and returns them by name.
func outputs(t *testing.T, pcap, keylog string, all bool) map[string][]byte {
	t.Helper()
	o := capture.Options{Ports: "9092", MaxFrame: 64 << 20, MaxConns: 1 << 20, MaxDecompressed: 64 << 20, All: all,
		KeyLogs: []string{keylog}}
	r, err := capture.Open(o, []string{pcap}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	forms := map[string]struct {
		f   render.Form
		hex bool
	}{"text": {render.Tree, false}, "-x": {render.Tree, true}, "summary": {render.Summary, false}, "json": {render.JSON, false}}
	bufs := map[string]*bytes.Buffer{}
	var ps []*render.Printer
	var ls []capture.Listener
	for name, f := range forms {
		b := new(bytes.Buffer)
		bufs[name] = b
		p := render.NewPrinter(b, f.f, f.hex, false)
		ps = append(ps, p)
		ls = append(ls, p)
	}
	res, err := r.Read(context.Background(), capture.Tee(ls...))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{"result": fmt.Appendf(nil, "%+v", res)}
	for _, p := range ps {
		if err := p.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range bufs {
		out[name] = b.Bytes()
	}
	return out
}

// sameOutputs compares a capture's outputs decrypted whole and selectively.
func sameOutputs(t *testing.T, pcap, keylog string) {
	t.Helper()
	for _, all := range []bool{false, true} {
		was := tlslayer.SetDecryptAll(true)
		full := outputs(t, pcap, keylog, all)
		tlslayer.SetDecryptAll(false)
		sel := outputs(t, pcap, keylog, all)
		tlslayer.SetDecryptAll(was)
		for name, want := range full {
			if got := sel[name]; !bytes.Equal(got, want) {
				t.Errorf("%s all=%v: %s differs decrypted selectively (%d bytes, whole %d):\n%s",
					filepath.Base(pcap), all, name, len(got), len(want), firstDiff(got, want))
			}
		}
		if len(full["json"]) == 0 {
			t.Errorf("%s: no output", pcap)
		}
	}
}

func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) && i < len(lb); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d:\n  selective: %.300s\n  whole:     %.300s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("one ends first (%d and %d lines)", len(la), len(lb))
}

func TestSelectiveShippedCapture(t *testing.T) {
	d := "../../testdata/pcaps/"
	sameOutputs(t, d+"tls13-acls.pcap", d+"tls13-acls.keylog")
}

// TestSelectiveGenerated: bulk traffic (Produce frames nobody is shown, a
// CreateAcls every tenth frame) under every AEAD suite and a CBC one, with
// frames of 16 KiB (heads at record starts) and smaller ones written three
// at a time, which put heads inside records, records across frames and
// (8180) a head across two records.
func TestSelectiveGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TLS captures")
	}
	type gen struct {
		suite uint16
		tls12 bool
		frame int
	}
	var gens []gen
	for _, s := range []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256} {
		gens = append(gens, gen{s, false, 16 << 10}, gen{s, false, 5003}, gen{s, false, 8180})
	}
	for _, s := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA} {
		gens = append(gens, gen{s, true, 16 << 10}, gen{s, true, 7001}, gen{s, true, 8180})
	}
	dir := t.TempDir()
	if d := os.Getenv("KDISSECT_KEEP_GENERATED"); d != "" {
		dir = d // to look at them
	}
	for _, g := range gens {
		name := fmt.Sprintf("%s-%d", tls.CipherSuiteName(g.suite), g.frame)
		t.Run(name, func(t *testing.T) {
			pcap, keys := filepath.Join(dir, name+".pcap"), filepath.Join(dir, name+".keylog")
			if err := generate(pcap, keys, g.suite, g.tls12, g.frame, 60); err != nil {
				t.Fatal(err)
			}
			sameOutputs(t, pcap, keys)
		})
	}
}

// generate writes a capture of one TLS connection whose client sends
// frames Kafka frames of frameSize bytes (Produce v9 heads over random
// bodies, a CreateAcls v3 request every tenth), each answered, and its key
// log: tlsgen's traffic, in any suite.
func generate(pcap, keylog string, suite uint16, tls12 bool, frameSize, frames int) error {
	certs, err := traffic.TestCerts()
	if err != nil {
		return err
	}
	if !tls12 {
		defer traffic.SteerTLS13(suite)()
	}
	f, err := os.Create(pcap)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	var kl lockedBuf
	synth, err := traffic.NewSynth(bw)
	if err != nil {
		return err
	}
	wire := traffic.NewStreamingWire(renumber{synth})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	srv := &tls.Config{Certificates: []tls.Certificate{certs.Server}}
	cli := &tls.Config{RootCAs: certs.Pool, ServerName: traffic.BrokerSNI, KeyLogWriter: &kl}
	if tls12 {
		cli.MaxVersion, cli.CipherSuites = tls.VersionTLS12, []uint16{suite}
	}
	srvErr := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			srvErr <- err
			return
		}
		srvErr <- serve(tls.Server(c, srv))
	}()
	raw, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
	if err != nil {
		return err
	}
	tc := tls.Client(wire.Wrap(raw), cli)
	if err := tc.Handshake(); err != nil {
		return err
	}
	if got := tc.ConnectionState().CipherSuite; got != suite {
		return fmt.Errorf("negotiated %s", tls.CipherSuiteName(got))
	}
	rng := rand.New(rand.NewPCG(uint64(frameSize), uint64(suite)))
	body := make([]byte, frameSize)
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	var resp []byte
	batch := 3
	if frameSize == 16<<10 {
		batch = 1
	}
	for n := 1; n <= frames; n += batch {
		var fr []byte
		for k := n; k < n+batch; k++ {
			if k%10 == 0 {
				fr = append(fr, createAcls(int32(k))...)
			} else {
				fr = append(fr, produce(int32(k), body)...)
			}
		}
		if _, err := tc.Write(fr); err != nil {
			return err
		}
		for range batch {
			if err := readFrame(tc, &resp); err != nil {
				return err
			}
		}
	}
	tc.Close()
	if err := <-srvErr; err != nil {
		return err
	}
	if err := wire.Err(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return os.WriteFile(keylog, kl.b.Bytes(), 0o600)
}

func readFrame(tc *tls.Conn, resp *[]byte) error {
	{
		var size [4]byte
		if _, err := io.ReadFull(tc, size[:]); err != nil {
			return err
		}
		*resp = append((*resp)[:0], make([]byte, binary.BigEndian.Uint32(size[:]))...)
		_, err := io.ReadFull(tc, *resp)
		return err
	}
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// renumber shows the server on port 9092.
type renumber struct{ sink traffic.WireSink }

func (r renumber) WireEvent(info traffic.WireConnInfo, ev traffic.WireEvent) error {
	sv := *info.Server
	sv.Port = 9092
	info.Server = &sv
	return r.sink.WireEvent(info, ev)
}

// produce is a Produce v9 request head over body, len(body) bytes in all.
func produce(corr int32, body []byte) []byte {
	f := binary.BigEndian.AppendUint32(nil, uint32(len(body)-4))
	f = binary.BigEndian.AppendUint16(f, 0)
	f = binary.BigEndian.AppendUint16(f, 9)
	f = binary.BigEndian.AppendUint32(f, uint32(corr))
	f = binary.BigEndian.AppendUint16(f, 3)
	f = append(f, "gen"...)
	f = append(f, 0)
	return append(f, body[len(f):]...)
}

// createAcls is a CreateAcls v3 request of one creation.
func createAcls(corr int32) []byte {
	b := []byte{0, 0, 0, 0, 0, 30, 0, 3}
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = append(b, 0, 3, 'g', 'e', 'n', 0) // client_id, no tags
	b = append(b, 2, 2, 6, 't', 'o', 'p', 'i', 'c', 3, 11, 'U', 's', 'e', 'r', ':', 'a', 'l', 'i', 'c', 'e', 2, '*', 4, 3, 0, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// serve answers each request: 40 bytes, or an empty CreateAcls v3
// response.
func serve(c *tls.Conn) error {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		b := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(r, b); err != nil {
			return err
		}
		out := []byte{0, 0, 0, 0, b[4], b[5], b[6], b[7], 0}
		if binary.BigEndian.Uint16(b) == 30 {
			out = append(out, 0, 0, 0, 0, 2, 1, 0, 1, 0) // throttle, one result: no error, null message
		} else {
			out = append(out, make([]byte, 40-len(out))...)
		}
		binary.BigEndian.PutUint32(out, uint32(len(out)-4))
		if _, err := c.Write(out); err != nil {
			return err
		}
	}
}
