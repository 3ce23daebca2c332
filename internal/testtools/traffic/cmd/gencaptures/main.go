// Command gencaptures records the traffic scenarios of internal/testtools/traffic on
// the loopback interface and writes, for each, a pcap and a sidecar
// FILE.expect.json with what the clients sent and received.
//
// It needs root (or CAP_NET_RAW). From the module root:
//
//	go run ./internal/testtools/traffic/cmd/gencaptures -out testdata/pcaps
//
// By default the packets are captured by kdissect itself (built from
// ./cmd/kdissect and run as `kdissect --iface lo --port PORT -w FILE
// --summary`); -capture=pcapgo captures inside this program instead.
//
// -synth writes the TLS and SASL captures instead, which need no root: the
// clients' bytes are recorded on their sockets and written as a pcap
// (traffic.BuildTLSCapture), with the TLS key log next to it:
//
//	go run ./internal/testtools/traffic/cmd/gencaptures -out testdata/pcaps -synth shipped
//	go run ./internal/testtools/traffic/cmd/gencaptures -out /tmp/caps -synth all
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

// outputs names the files of each scenario.
var outputs = map[string]string{
	traffic.ScenarioKadm:        "kadm-acls",
	traffic.ScenarioRawVersions: "raw-versions",
	traffic.ScenarioSarama:      "sarama-acls",
}

type options struct {
	out      string
	capture  string
	kdissect string
	iface    string
	settle   time.Duration
	only     string
	keep     bool
	synth    string
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "testdata/pcaps", "directory for the .pcap and .expect.json files")
	flag.StringVar(&o.capture, "capture", "kdissect", "who captures: kdissect (the kdissect binary's --iface -w) or pcapgo (this program)")
	flag.StringVar(&o.kdissect, "kdissect", "", "kdissect binary to use (default: go build ./cmd/kdissect into a temporary directory)")
	flag.StringVar(&o.iface, "iface", "lo", "loopback interface to capture on")
	flag.DurationVar(&o.settle, "settle", 300*time.Millisecond, "wait this long after the capture is up and after the scenario ends")
	flag.StringVar(&o.only, "only", "", "comma separated scenarios to run (default all: "+strings.Join(traffic.Names(), ",")+")")
	flag.BoolVar(&o.keep, "keep-unfiltered", false, "keep packets of other ports in the pcap (default: drop every packet not to or from the broker port)")
	flag.StringVar(&o.synth, "synth", "", "write synthesized TLS/SASL captures instead: comma separated scenarios, \"shipped\" ("+
		strings.Join(traffic.ShippedSecureNames(), ",")+") or \"all\" ("+strings.Join(traffic.SecureNames(), ",")+"); "+traffic.ScenarioRecords+": the records of every codec")
	flag.Parse()
	run := run
	if o.synth != "" {
		run = runSynth
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "gencaptures: %v\n", err)
		os.Exit(1)
	}
}

func run(o options) error {
	names := traffic.Names()
	if o.only != "" {
		names = strings.Split(o.only, ",")
	}
	for _, n := range names {
		if _, ok := outputs[n]; !ok {
			return fmt.Errorf("unknown scenario %q", n)
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	switch o.capture {
	case "kdissect":
		if o.kdissect == "" {
			dir, err := os.MkdirTemp("", "gencaptures")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			o.kdissect = filepath.Join(dir, "kdissect")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "go", "build", "-o", o.kdissect, "./cmd/kdissect")
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("building kdissect (run from the module root): %w", err)
			}
		}
	case "pcapgo":
	default:
		return fmt.Errorf("-capture %q: want kdissect or pcapgo", o.capture)
	}
	for _, n := range names {
		if err := one(o, n); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	return nil
}

// capturer is a running capture.
type capturer interface {
	// Stop ends the capture and returns once the pcap is complete.
	Stop() error
}

func one(o options, name string) error {
	port, err := traffic.FreePort()
	if err != nil {
		return err
	}
	b, err := traffic.StartBroker(port)
	if err != nil {
		return err
	}
	defer b.Close()

	base := filepath.Join(o.out, outputs[name])
	pcapPath := base + ".pcap"
	var c capturer
	switch o.capture {
	case "kdissect":
		c, err = startKdissect(o, port, pcapPath)
	case "pcapgo":
		c, err = startPcapgo(o.iface, port, pcapPath)
	}
	if err != nil {
		return err
	}
	time.Sleep(o.settle)

	ctx, cancel := context.WithTimeout(context.Background(), traffic.DefaultTimeout)
	res, runErr := traffic.RunContext(ctx, name, b.Addr)
	cancel()
	time.Sleep(o.settle)
	stopErr := c.Stop()
	if runErr != nil {
		return runErr
	}
	if stopErr != nil {
		return stopErr
	}

	st, err := filterPcap(pcapPath, port, !o.keep)
	if err != nil {
		return fmt.Errorf("checking %s: %w", pcapPath, err)
	}
	if st.kept == 0 {
		return fmt.Errorf("%s holds no packets of port %d", pcapPath, port)
	}

	js, err := res.ExpectJSON(port)
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".expect.json", js, 0o644); err != nil {
		return err
	}
	if k, ok := c.(*kdissectCapture); ok && k.lines != 2*len(res.Exchanges) {
		fmt.Fprintf(os.Stderr, "warning: %s: kdissect printed %d summary lines live, want %d (a request and a response per exchange)\n",
			name, k.lines, 2*len(res.Exchanges))
	}
	fi, _ := os.Stat(pcapPath)
	v := traffic.Versions(res.Exchanges)
	fmt.Printf("%s: %s (%d bytes, %d packets, %d dropped from other ports), %d exchanges, CreateAcls versions %v, DeleteAcls versions %v\n",
		name, pcapPath, fi.Size(), st.kept, st.dropped, len(res.Exchanges), v[traffic.APICreateAcls], v[traffic.APIDeleteAcls])
	return nil
}

// kdissectCapture is kdissect --iface running as a child process.
type kdissectCapture struct {
	cmd    *exec.Cmd
	done   chan error
	mu     sync.Mutex
	stderr bytes.Buffer
	stdout bytes.Buffer
	lines  int // summary lines kdissect printed
}

func startKdissect(o options, port int, pcapPath string) (*kdissectCapture, error) {
	cmd := exec.Command(o.kdissect, "--iface", o.iface, "--port", fmt.Sprint(port), "--detect=false", "-w", pcapPath, "--summary", "--progress", "never")
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	k := &kdissectCapture{cmd: cmd, done: make(chan error, 1)}
	cmd.Stdout = &lockedWriter{mu: &k.mu, w: &k.stdout}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(errPipe)
		once := false
		for sc.Scan() {
			line := sc.Text()
			k.mu.Lock()
			k.stderr.WriteString(line + "\n")
			k.mu.Unlock()
			if !once && strings.Contains(line, "capturing on") {
				once = true
				close(ready)
			}
		}
		if !once {
			close(ready)
		}
		k.done <- cmd.Wait()
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		return nil, errors.New("kdissect did not report that it is capturing within 10s")
	}
	k.mu.Lock()
	up := strings.Contains(k.stderr.String(), "capturing on")
	msg := k.stderr.String()
	k.mu.Unlock()
	if !up {
		<-k.done
		return nil, fmt.Errorf("kdissect did not start capturing: %s", strings.TrimSpace(msg))
	}
	return k, nil
}

func (k *kdissectCapture) Stop() error {
	_ = k.cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-k.done:
	case <-time.After(10 * time.Second):
		_ = k.cmd.Process.Kill()
		<-k.done
		return errors.New("kdissect did not stop within 10s of SIGINT")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	summary := strings.TrimSpace(k.stdout.String())
	if summary != "" {
		k.lines = strings.Count(summary, "\n") + 1
	}
	if err != nil {
		var ee *exec.ExitError
		// Exit status 2 means kdissect saw malformed Kafka data: keep the
		// capture, but say so.
		if errors.As(err, &ee) && ee.ExitCode() == 2 {
			fmt.Fprintf(os.Stderr, "kdissect reported malformed data (exit 2):\n%s\n", k.stderr.String())
			return nil
		}
		return fmt.Errorf("kdissect: %v\n%s", err, k.stderr.String())
	}
	return nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// runSynth writes the synthesized captures named by o.synth.
func runSynth(o options) error {
	var names []string
	switch o.synth {
	case "shipped":
		names = traffic.ShippedSecureNames()
	case "all":
		names = traffic.SecureNames()
	default:
		names = strings.Split(o.synth, ",")
	}
	for _, n := range names {
		if n == traffic.ScenarioRecords {
			pcapPath, exp, err := traffic.BuildRecordsCapture(o.out)
			if err != nil {
				return err
			}
			fmt.Printf("%s: %s, %d records produced, %d consumed, %d legacy messages\n", n, pcapPath, len(exp.Produced), len(exp.Consumed), len(exp.Legacy))
			continue
		}
		pcapPath, keylogPath, side, err := traffic.BuildTLSCapture(o.out, n)
		if err != nil {
			return err
		}
		fi, err := os.Stat(pcapPath)
		if err != nil {
			return err
		}
		var tlsConns int
		for _, c := range side.Connections {
			if c.TLS != nil {
				tlsConns++
			}
		}
		fmt.Printf("%s: %s (%d bytes), %d connections (%d TLS), %d exchanges", n, pcapPath, fi.Size(),
			len(side.Connections), tlsConns, len(side.Exchanges))
		if keylogPath != "" {
			fmt.Printf(", key log %s", keylogPath)
		}
		fmt.Println()
	}
	return nil
}
