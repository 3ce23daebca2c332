package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

// -Y and -z on a live capture: only the DeleteAcls messages come out, as
// they happen, and the statistics when the capture stops.
func TestLiveCaptureFilterAndStatistics(t *testing.T) {
	needRoot(t)
	bin := kdissectBinary(t)
	broker, err := traffic.StartBroker(0)
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	cmd := exec.Command(bin, "--iface", "lo", "--port", strconv.Itoa(broker.Port), "--detect=false", "--json",
		"--duration", "60s", "-Y", `api == "DeleteAcls"`, "-z", "apis")
	stdout, _ := cmd.StdoutPipe()
	lines := make(chan map[string]any, 1024)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("bad NDJSON %q: %v", sc.Text(), err)
			}
			lines <- m
		}
		close(lines)
	}()
	errText := startLive(t, cmd)
	exchanges, err := traffic.Run("kadm", broker.Addr)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := traffic.ExpectJSON(exchanges)
	var sc sidecar
	if err := json.Unmarshal(want, &sc); err != nil {
		t.Fatal(err)
	}
	deletes := 0
	for _, ex := range sc.Exchanges {
		if ex.API == 31 {
			deletes++
		}
	}
	if deletes == 0 {
		t.Fatal("kadm's scenario has no DeleteAcls")
	}
	messages := 0
	deadline := time.After(30 * time.Second)
	for messages < 2*deletes {
		select {
		case m := <-lines:
			if m["api_name"] != "DeleteAcls" || m["stat"] != nil {
				t.Fatalf("the filter let through %v", m)
			}
			messages++
		case <-deadline:
			t.Fatalf("%d of %d DeleteAcls messages printed: %s", messages, 2*deletes, errText())
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	var rows []map[string]any
	for m := range lines {
		if m["stat"] == nil {
			t.Errorf("a message after the capture stopped: %v", m)
		}
		rows = append(rows, m)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kdissect exited with %v: %s", err, errText())
	}
	var req, resp float64
	for _, r := range rows {
		if r["stat"] != "apis" || r["api"] != "DeleteAcls" {
			t.Errorf("row %v", r)
		}
		req += r["requests"].(float64)
		resp += r["responses"].(float64)
	}
	if int(req) != deletes || int(resp) != deletes {
		t.Errorf("-z apis counted %v requests and %v responses, want %d of each", req, resp, deletes)
	}
}
