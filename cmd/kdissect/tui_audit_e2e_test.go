package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// The explorer's audit view (key a), in a real terminal: the blind spots
// first, in the words `kdissect audit` writes them on stderr; then every
// kind of change, with its principal, as the audit's table words it. And
// --tui -Y opens the explorer on that filter.
func TestTUIEndToEndAuditViewAndFilterFlag(t *testing.T) {
	tmux := testkit.NeedCommand(t, "tmux")
	bin := kdissectBinary(t)

	// openAudit opens the view once the capture is read and returns the
	// screen and the line of its title.
	openAudit := func(tm *tmuxTerm) (*paneScreen, int) {
		t.Helper()
		tm.waitFor("the capture, fully read", func(s *paneScreen) bool { return s.contains(" · done") })
		tm.keys("a")
		s := tm.waitFor("the audit view", func(s *paneScreen) bool { return s.contains(" Security changes  ") })
		i, _ := s.line("Security changes  ")
		return s, i
	}

	t.Run("tls without keys: the blind spot at the top", func(t *testing.T) {
		const tlsPath = "../../testdata/pcaps/tls13-acls.pcap"
		_, stderr, code := runCLI(t, "", "audit", tlsPath)
		if code != exitIncomplete {
			t.Fatalf("kdissect audit: exit %d: %s", code, stderr)
		}
		var want []string
		for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			s, ok := strings.CutPrefix(l, "kdissect: ")
			if !ok || !strings.Contains(s, "not decrypted") {
				t.Fatalf("kdissect audit's stderr: %q", stderr)
			}
			want = append(want, s)
		}
		tm := startTmux(t, tmux, 160, 40, bin, "--tui", tlsPath)
		s, i := openAudit(tm)
		for k, w := range want {
			if got := strings.TrimSpace(s.text[i+1+k]); got != "! blind spot: "+w {
				t.Errorf("line %d under the title: %q, want %q", k+1, got, "! blind spot: "+w)
			}
		}
		if h := strings.Fields(s.text[i+1+len(want)]); len(h) == 0 || h[0] != "#" {
			t.Errorf("the table's heading does not follow the blind spots:\n%s", strings.Join(s.text, "\n"))
		}
		tm.quit(0)
	})

	t.Run("every kind, with the principal", func(t *testing.T) {
		pcap, port, _ := kindsCapture(t)
		p := strconv.Itoa(port)
		const w, h = 200, 60
		// The view draws the audit's table at the pane's width less one.
		table, stderr, code := runCLI(t, "", "audit", "--width", strconv.Itoa(w-1), "--port", p, pcap)
		if code != exitOK {
			t.Fatalf("kdissect audit: exit %d: %s", code, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
		rows := lines[1 : len(lines)-1]
		for _, kind := range []string{"scram upsert", "scram delete", "quota set", "config set", "config delete", "config replace"} {
			if !strings.Contains(table, kind) {
				t.Fatalf("the audit of the kinds capture has no %q row:\n%s", kind, table)
			}
		}
		// Without --all or --api: the explorer's default selection holds
		// every API the audit view reads.
		tm := startTmux(t, tmux, w, h, bin, "--tui", "--port", p, pcap)
		s, i := openAudit(tm)
		if !strings.Contains(s.text[i], fmt.Sprintf("  %d rows · ", len(rows))) {
			t.Errorf("title %q, want %d rows", s.text[i], len(rows))
		}
		if got := strings.TrimSpace(s.text[i+1]); got != strings.TrimSpace(lines[0]) {
			t.Fatalf("heading %q, want %q", got, lines[0])
		}
		if !strings.Contains(lines[0], "PRINCIPAL") {
			t.Errorf("no principal column: %q", lines[0])
		}
		shown := 0
		for k, r := range rows {
			l := i + 2 + k
			if l >= h-4 || strings.TrimSpace(s.text[l]) == strings.TrimSpace(lines[len(lines)-1]) {
				break
			}
			if got := strings.TrimRight(s.text[l], " "); got != " "+strings.TrimRight(r, " ") {
				t.Errorf("row %d:\n got %q\nwant %q", k, got, " "+r)
			}
			shown++
		}
		if shown < min(len(rows), 20) {
			t.Errorf("%d of %d rows compared:\n%s", shown, len(rows), strings.Join(s.text, "\n"))
		}
		tm.quit(0)
	})

	t.Run("-Y opens the explorer on the filter", func(t *testing.T) {
		rows := summaryRows(t, kadmCapture)
		n := 0
		for _, r := range rows {
			if strings.HasPrefix(r.api, "DeleteAcls ") && r.dir == "rsp" {
				n++
			}
		}
		const expr = `api == "DeleteAcls" && direction == "response"`
		tm := startTmux(t, tmux, 120, 40, bin, "--tui", "-Y", expr, kadmCapture)
		title := fmt.Sprintf("%d of %d messages · filter %q", n, len(rows), expr)
		tm.waitFor("the list filtered", func(s *paneScreen) bool { return strings.Contains(s.text[0], title) && s.contains(" · done") })
		// The bar holds it, to be changed as if typed.
		tm.keys("f")
		tm.waitFor("the filter in the bar", func(s *paneScreen) bool { return s.contains(" filter › " + expr + "█") })
		tm.keys("Escape")
		tm.waitFor("the bar closed on the filter", func(s *paneScreen) bool {
			return strings.Contains(s.text[0], title) && !s.contains("filter › ")
		})
		tm.keys("Escape")
		tm.waitFor("the filter cleared", func(s *paneScreen) bool {
			return strings.Contains(s.text[0], fmt.Sprintf(" %d messages · done", len(rows))) && !strings.Contains(s.text[0], "filter")
		})
		tm.quit(0)
	})
}
