package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// kdissectBinary builds the command once for the tests that run it as a
// user would: in a terminal, or capturing live.
func kdissectBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kdissect-test")
		if err != nil {
			buildErr = err
			return
		}
		// Others must reach it: one test runs it as an unprivileged user.
		if buildErr = os.Chmod(dir, 0o755); buildErr != nil {
			return
		}
		binPath = filepath.Join(dir, "kdissect")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// TestMain removes the binary kdissectBinary built, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	if tlsCapDir != "" {
		os.RemoveAll(tlsCapDir) // see buildTLSCapture
	}
	os.Exit(code)
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// needRoot skips where live capture cannot work, except in CI, which runs
// as root: there a skip would hide a broken capture.
func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must run as root for the live-capture test")
		}
		t.Skip("live capture needs root")
	}
}

// A real client (franz-go kadm) talks to kfake on loopback while the
// kdissect binary captures lo; every ACL message it prints must match
// what the client sent and received.
func TestLiveCaptureOnLoopback(t *testing.T) {
	needRoot(t)
	bin := kdissectBinary(t)
	broker, err := traffic.StartBroker(0)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()

	pcapOut := filepath.Join(t.TempDir(), "live.pcap")
	cmd := exec.Command(bin, "--iface", "lo", "--port", strconv.Itoa(broker.Port), "--detect=false", "--json", "--duration", "60s", "-w", pcapOut)
	stdout, _ := cmd.StdoutPipe()
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	errText := startLive(t, cmd)

	exchanges, err := traffic.Run("kadm", broker.Addr)
	if err != nil {
		t.Fatal(err)
	}
	want, err := traffic.ExpectJSON(exchanges)
	if err != nil {
		t.Fatal(err)
	}
	var sc sidecar
	if err := json.Unmarshal(want, &sc); err != nil {
		t.Fatal(err)
	}

	// Collect until every ACL message has been printed, then stop the
	// capture the way a user does.
	var got []decodedLine
	messages := 0
	deadline := time.After(30 * time.Second)
collect:
	for messages < 2*len(sc.Exchanges) {
		select {
		case l, ok := <-lines:
			if !ok {
				break collect
			}
			var d decodedLine
			if err := json.Unmarshal([]byte(l), &d); err != nil {
				t.Fatalf("bad NDJSON %q: %v", l, err)
			}
			got = append(got, d)
			if d.Event == "" {
				messages++
			}
		case <-deadline:
			t.Fatalf("only %d of %d ACL messages printed", messages, 2*len(sc.Exchanges))
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	for l := range lines {
		var d decodedLine
		json.Unmarshal([]byte(l), &d)
		got = append(got, d)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kdissect exited with %v: %s", err, errText())
	}
	compareWithClients(t, sc, got)

	// -w kept the packets: reading them back gives the same messages.
	again := decodeCapture(t, "--port", strconv.Itoa(broker.Port), "--detect=false", pcapOut)
	compareWithClients(t, sc, again)
}

// startLive starts a live capture and waits until it says it is capturing;
// the function it returns gives what it has written on stderr so far. The
// process is killed when the test ends, if it is still running.
func startLive(t *testing.T, cmd *exec.Cmd) (stderr func() string) {
	t.Helper()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	var mu sync.Mutex
	var text strings.Builder
	stderr = func() string {
		mu.Lock()
		defer mu.Unlock()
		return text.String()
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		started := false
		for sc.Scan() {
			mu.Lock()
			text.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if !started && strings.Contains(sc.Text(), "capturing on ") {
				started = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("kdissect did not start capturing: %s", stderr())
	}
	return stderr
}

// A live capture that cannot start says why in one sentence and exits 1.
func TestLiveCaptureErrors(t *testing.T) {
	_, stderr, code := runCLI(t, "", "--iface", "nosuch0")
	if code != 1 || stderr != "kdissect: no such interface \"nosuch0\"\n" {
		t.Errorf("missing interface: exit %d, %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "", "-w", "x.pcap", "some.pcap")
	if code != 1 || !strings.HasPrefix(stderr, "kdissect: -w writes the packets of a live capture: it goes with --iface\n") {
		t.Errorf("-w without --iface: exit %d, %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "", "--duration", "5s", "some.pcap")
	if code != 1 || !strings.HasPrefix(stderr, "kdissect: --duration stops a live capture: it goes with --iface\n") {
		t.Errorf("--duration without --iface: exit %d, %q", code, stderr)
	}
	if os.Geteuid() != 0 {
		return
	}
	// As an unprivileged user (root can drop to nobody here).
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed")
	}
	out, err := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", kdissectBinary(t), "--iface", "lo").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || string(out) != "kdissect: capturing on lo needs root or CAP_NET_RAW\n" {
		t.Errorf("unprivileged: %v, %q", err, out)
	}
}

// -c N stops a live capture after N messages and --duration after a while,
// each with exit status 0 and everything printed.
func TestLiveCaptureStopsByItself(t *testing.T) {
	needRoot(t)
	bin := kdissectBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	request, response := seed(t, "createacls-v3-request"), seed(t, "createacls-v3-response")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 64)
			for {
				if _, err := c.Read(buf); err != nil {
					break
				}
				c.Write(response)
			}
			c.Close()
		}
	}()
	exchange := func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		c.Write(request)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		c.Read(make([]byte, 64))
	}
	run := func(args ...string) (string, time.Duration) {
		cmd := exec.Command(bin, append([]string{"--iface", "lo", "--port", strconv.Itoa(port), "--detect=false", "--summary"}, args...)...)
		stderr, _ := cmd.StderrPipe()
		var out strings.Builder
		cmd.Stdout = &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stderr)
		for sc.Scan() && !strings.Contains(sc.Text(), "capturing on lo") {
		}
		go func() {
			for sc.Scan() {
			}
		}()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Exchange until it stops by itself; the deadline only catches a
		// capture that never stops, so it is far beyond any --duration here.
		deadline := time.After(60 * time.Second)
		for {
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%v: %v", args, err)
				}
				return out.String(), time.Since(start)
			case <-deadline:
				cmd.Process.Kill()
				<-done
				t.Fatalf("%v did not stop by itself:\n%s", args, out.String())
			default:
				exchange()
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	out, _ := run("-c", "2")
	if n := strings.Count(out, "\n"); n != 2 || !strings.Contains(out, "CreateAcls v3 request") || !strings.Contains(out, "CreateAcls v3 response") {
		t.Errorf("-c 2 printed %d lines:\n%s", n, out)
	}
	out, took := run("--duration", "2s")
	if took < 2*time.Second || !strings.Contains(out, "CreateAcls v3 response") {
		t.Errorf("--duration 2s stopped after %v with:\n%s", took, out)
	}
}
