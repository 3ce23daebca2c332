package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A live capture started as root parses packets as nobody: once it says it
// is capturing, its real, effective, saved and file-system uids and gids are
// nobody's, its groups nobody's, it holds no capability, and it still
// decodes what it captures and writes it to -w.
func TestLiveCaptureDropsPrivileges(t *testing.T) {
	needRoot(t)
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	groups, err := nobody.GroupIds()
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(groups, func(i, j int) bool { return atoi(groups[i]) < atoi(groups[j]) })
	bin := kdissectBinary(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	request, response := seed(t, "createacls-v3-request"), seed(t, "createacls-v3-response")
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, len(request))
		if _, err := c.Read(buf); err == nil {
			c.Write(response)
		}
	}()

	pcapOut := filepath.Join(t.TempDir(), "live.pcap")
	cmd := exec.Command(bin, "--iface", "lo", "--port", port, "--detect=false", "--summary", "-c", "2", "-w", pcapOut)
	var out strings.Builder
	cmd.Stdout = &out
	errText := startLive(t, cmd)

	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Uid":    strings.Repeat(nobody.Uid+" ", 4),
		"Gid":    strings.Repeat(nobody.Gid+" ", 4),
		"Groups": strings.Join(groups, " ") + " ",
		"CapPrm": "0000000000000000 ",
		"CapEff": "0000000000000000 ",
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		if w, ok := want[k]; ok {
			if got := strings.Join(strings.Fields(v), " ") + " "; got != w {
				t.Errorf("%s: %q, want %q", k, got, w)
			}
			delete(want, k)
		}
	}
	if nobody.Uid != "65534" || len(want) > 0 {
		t.Errorf("nobody is uid %s; lines missing from /proc status: %v", nobody.Uid, want)
	}

	// One exchange on our own port; -c 2 ends the capture after it.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write(request)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, len(response))); err != nil {
		t.Fatal(err)
	}
	c.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("kdissect: %v: %s", err, errText())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("kdissect did not stop after two messages; printed:\n%s", out.String())
	}
	wantLines := "CreateAcls v3 request corr=0 CreateAcls v3 response corr=0"
	if got := summaryKinds(out.String()); got != wantLines {
		t.Errorf("live output %q, want %q:\n%s", got, wantLines, out.String())
	}

	// -w, opened as root before the drop, kept every packet after it.
	again, stderrText, code := runCLI(t, "", "--summary", "--port", port, "--detect=false", pcapOut)
	if code != 0 || summaryKinds(again) != wantLines {
		t.Errorf("-w file read back: exit %d, %s\n%s", code, stderrText, again)
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// summaryKinds reduces --summary lines to "API vN direction corr=N".
func summaryKinds(out string) string {
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 8 {
			kinds = append(kinds, strings.TrimSuffix(strings.Join(f[5:9], " "), ":"))
		}
	}
	return strings.Join(kinds, " ")
}

// A --user that does not exist stops a live capture before anything is
// opened: one sentence, exit 1, no -w file left behind. No root needed.
func TestLiveCaptureUnknownUser(t *testing.T) {
	w := filepath.Join(t.TempDir(), "never.pcap")
	_, stderr, code := runCLI(t, "", "--iface", "lo", "--user", "no-such-user-kdissect", "-w", w)
	if code != 1 || stderr != "kdissect: --user no-such-user-kdissect: no such user\n" {
		t.Errorf("exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(w); !os.IsNotExist(err) {
		t.Errorf("-w file created: %v", err)
	}
}
