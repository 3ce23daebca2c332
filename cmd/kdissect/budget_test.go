package main

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// TestMaxNodesFlag: --max-nodes caps the tree of every message a view
// decodes; the message past it is malformed data (exit 2) with the problem
// naming the flag, and without the flag the same capture is clean.
func TestMaxNodesFlag(t *testing.T) {
	frame := testkit.EmptyGroups(3000, 7)
	pc := newPcap(t)
	c := openConn(pc, 50610, 9092)
	c.Send(true, frame)
	file := pc.File(t)

	if out, stderr, code := runCLI(t, "", "--all", "--json", file); code != exitOK || strings.Contains(out, "not dissected") {
		t.Errorf("default: exit %d: %s", code, stderr)
	}
	for _, view := range [][]string{{"--json"}, {}, {"-x"}} {
		args := append(append([]string{"--all", "--max-nodes", "500"}, view...), file)
		out, stderr, code := runCLI(t, "", args...)
		if code != exitMalformed || !strings.Contains(out, "fields from here on not dissected") || !strings.Contains(out, "(--max-nodes raises it)") {
			t.Errorf("%v: exit %d, want %d: %.300s %s", view, code, exitMalformed, out, stderr)
		}
	}
	out, stderr, code := runCLI(t, "", "frame", "--max-nodes", "500", "--hex", hex.EncodeToString(frame))
	if code != exitMalformed || !strings.Contains(out, "(--max-nodes raises it)") {
		t.Errorf("frame --max-nodes: exit %d: %.300s %s", code, out, stderr)
	}
	if _, stderr, code := runCLI(t, "", "--all", "--max-nodes", "-1", file); code != exitUsage || !strings.Contains(stderr, "--max-nodes") {
		t.Errorf("--max-nodes -1: exit %d: %s", code, stderr)
	}
}
