package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// evictCapture: a connection cut inside a CreateAcls request, then a
// second connection, which --max-conns 1 makes room for.
func evictCapture(t *testing.T) (string, int) {
	b := newPcap(t)
	req := testkit.WithCorr(seed(t, "createacls-v3-request"), 2, true)
	c1 := openConn(b, 50501, 9092)                // packets at .001 and .002
	c1.Send(true, req[:10])                       // .003
	c2 := openConn(b, 50502, 9092)                // .004: the table is full
	c2.Send(true, testkit.WithCorr(req, 3, true)) // .006
	return b.File(t), len(req)
}

func TestMaxConnsEvictsLeastRecentlyActive(t *testing.T) {
	file, size := evictCapture(t)
	out, stderr, code := runCLI(t, "", "--json", "--max-conns", "1", file)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	fileKey := `,"file":` + strconv.Quote(file) + `}`
	want := []string{
		`{"event":"evicted","time":"2026-03-01T12:00:00.004Z","src":"192.0.2.10:50501","dst":"192.0.2.1:9092","last_seen":"2026-03-01T12:00:00.003Z","max_conns":1` + fileKey,
		`{"event":"incomplete","time":"2026-03-01T12:00:00.004Z","src":"192.0.2.10:50501","dst":"192.0.2.1:9092","stream_offset":0,"have":10,"want":` + strconv.Itoa(size) + `,"reason":"evicted"` + fileKey,
	}
	if len(lines) != 3 || lines[0] != want[0] || lines[1] != want[1] || !strings.Contains(lines[2], `"src":"192.0.2.10:50502"`) {
		t.Fatalf("got:\n%s\nwant:\n%s\nand the second connection's request", out, strings.Join(want, "\n"))
	}

	out, _, _ = runCLI(t, "", "--summary", "--max-conns", "1", file)
	first := strings.SplitN(out, "\n", 2)[0]
	if w := "!! 2026-03-01T12:00:00.004000Z 192.0.2.10:50501 → 192.0.2.1:9092 evicted (--max-conns 1 reached), idle since 2026-03-01T12:00:00.003000Z"; first != w {
		t.Errorf("summary line\n%s\nwant\n%s", first, w)
	}

	// The default cap keeps both.
	out, _, _ = runCLI(t, "", "--json", file)
	if strings.Contains(out, "evicted") {
		t.Errorf("evicted under the default --max-conns:\n%s", out)
	}
	_, stderr, code = runCLI(t, "", "--max-conns", "0", file)
	if code != 1 || !strings.HasPrefix(stderr, "kdissect: --max-conns must be at least 1\n") {
		t.Errorf("--max-conns 0: exit %d, stderr %q", code, stderr)
	}
}
