package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
	"github.com/mattn/go-runewidth"
)

// End-to-end: the real binary in a real terminal. tmux hosts kdissect in a
// detached 120x40 pane; the test types keys with send-keys and reads the
// screen, colours included, with capture-pane -e. What it checks is what
// the model tests cannot: that the program starts on a terminal, takes keys
// from it, draws the selected field's bytes highlighted, and gives the
// terminal back when it quits.

// e2eWait bounds every wait on the terminal. The screen normally settles
// in milliseconds; the bound only turns a hang into a failure.
const e2eWait = 20 * time.Second

// tmuxTerm is one tmux server on a private socket with one pane running
// kdissect.
type tmuxTerm struct {
	t      *testing.T
	tmux   string
	socket string
	env    []string
	// socketPath is where tmux put the socket (under $TMUX_TMPDIR or /tmp).
	socketPath string
	w, h       int
}

const tmuxTarget = "e2e"

// startTmux starts argv in a detached w×h tmux pane. The server has its
// own socket (parallel runs and a developer's own tmux don't meet) and a
// config written here, not ~/.tmux.conf: TERM=xterm-256color, and no
// NO_COLOR, COLORTERM or CI from the caller's environment, so kdissect
// draws in 256 colours whatever runs the test. (Terminal libraries have
// taken a CI variable to mean "no terminal" and dropped every colour; CI
// sets CI=true, but the pane is a terminal all the same.)
//
// kdissect runs under a shell that reports its exit status on the pane and
// then idles: the test can read the status, and the state kdissect left the
// terminal in, from a pane that is still alive (tmux resets some of that
// state when a pane dies).
func startTmux(t *testing.T, tmux string, w, h int, argv ...string) *tmuxTerm {
	t.Helper()
	return startTmuxEnv(t, tmux, nil, w, h, argv...)
}

// startTmuxEnv is startTmux with more variables (NAME=value) in the pane's
// environment.
func startTmuxEnv(t *testing.T, tmux string, env []string, w, h int, argv ...string) *tmuxTerm {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "tmux.conf")
	err := os.WriteFile(conf, []byte(strings.Join([]string{
		"set -g remain-on-exit on", // a crash of the shell still leaves the screen to read
		"set -g default-terminal xterm-256color",
		"set -g status off",
		"set-environment -gu NO_COLOR",
		"set-environment -gu COLORTERM",
		"set-environment -gu CLICOLOR_FORCE",
		"set-environment -gu CI",
		"",
	}, "\n")), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	tm := &tmuxTerm{
		t: t, tmux: tmux, w: w, h: h,
		socket: fmt.Sprintf("kdissect-e2e-%d-%d", os.Getpid(), time.Now().UnixNano()),
	}
	// Outside any tmux the test may itself run in: $TMUX would only
	// confuse the client.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			tm.env = append(tm.env, kv)
		}
	}
	t.Cleanup(func() {
		// Always: a server left behind would keep kdissect running. tmux
		// leaves its socket file behind; it is ours to remove.
		exec.Command(tm.tmux, "-L", tm.socket, "kill-server").Run()
		if tm.socketPath != "" {
			os.Remove(tm.socketPath)
		}
	})
	args := []string{"-f", conf, "new-session", "-d", "-s", tmuxTarget,
		"-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "-e", "TERM=xterm-256color"}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	args = append(args, "--",
		// Several arguments: tmux execs them without another shell, and
		// this one passes argv on unquoted.
		"sh", "-c", `"$0" "$@"; echo "kdissect exited $?"; exec sleep 600`)
	tm.run(append(args, argv...)...)
	tm.socketPath = tm.display("#{socket_path}")
	return tm
}

func (tm *tmuxTerm) run(args ...string) string {
	tm.t.Helper()
	cmd := exec.Command(tm.tmux, append([]string{"-L", tm.socket}, args...)...)
	cmd.Env = tm.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// capture is the pane's screen with its colours as SGR sequences.
func (tm *tmuxTerm) capture() string {
	tm.t.Helper()
	return tm.run("capture-pane", "-p", "-e", "-t", tmuxTarget)
}

func (tm *tmuxTerm) keys(keys ...string) {
	tm.t.Helper()
	tm.run(append([]string{"send-keys", "-t", tmuxTarget}, keys...)...)
}

func (tm *tmuxTerm) display(format string) string {
	tm.t.Helper()
	return strings.TrimSpace(tm.run("display-message", "-p", "-t", tmuxTarget, format))
}

// waitFor polls the screen until ok accepts it twice running, unchanged,
// and fails with the last screen after e2eWait. Once is not enough: the
// explorer writes only the lines that changed, and a capture can land
// between the title of a new view and the rest of it.
func (tm *tmuxTerm) waitFor(what string, ok func(s *paneScreen) bool) *paneScreen {
	tm.t.Helper()
	deadline := time.Now().Add(e2eWait)
	prev := "" // the last capture ok accepted, colours and all
	for {
		raw := tm.capture()
		s := parsePane(raw)
		if !ok(s) {
			prev = ""
		} else if raw == prev {
			return s
		} else {
			prev = raw
		}
		if time.Now().After(deadline) {
			state := "never accepted"
			if prev != "" {
				state = "accepted, but still changing"
			}
			tm.t.Fatalf("waited %v for %s (%s); the screen:\n%s", e2eWait, what, state, strings.Join(s.text, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exitRE is the shell's report on the pane after kdissect exits.
var exitRE = regexp.MustCompile(`kdissect exited (\d+)`)

// waitExit waits for kdissect to exit and returns its exit status.
func (tm *tmuxTerm) waitExit() int {
	tm.t.Helper()
	var code int
	tm.waitFor("kdissect to exit", func(s *paneScreen) bool {
		for _, l := range s.text {
			if m := exitRE.FindStringSubmatch(l); m != nil {
				code, _ = strconv.Atoi(m[1])
				return true
			}
		}
		return false
	})
	return code
}

// pid is the process id of kdissect: the one child of the pane's shell.
func (tm *tmuxTerm) pid() int {
	tm.t.Helper()
	sh := tm.display("#{pane_pid}")
	deadline := time.Now().Add(e2eWait)
	for {
		b, err := os.ReadFile("/proc/" + sh + "/task/" + sh + "/children")
		if f := strings.Fields(string(b)); err == nil && len(f) == 1 {
			pid, _ := strconv.Atoi(f[0])
			return pid
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("no kdissect under the pane's shell %s (%v)", sh, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sgrStyle is the SGR state of a cell, as far as the explorer uses it.
type sgrStyle struct {
	bold, italic, underline, reverse bool
	fg, bg                           string // "" is the terminal's default
}

type screenCell struct {
	r  rune
	st sgrStyle
}

// paneScreen is a captured pane: text lines and the cells behind them.
type paneScreen struct {
	text  []string
	cells [][]screenCell
}

// parsePane interprets capture-pane -e output. tmux writes each style
// change once, so the state carries over from line to line; a wide rune
// takes two cells (the second one a zero rune).
func parsePane(s string) *paneScreen {
	var sc paneScreen
	var cur sgrStyle
	var line []screenCell
	flush := func() {
		var b strings.Builder
		for _, c := range line {
			if c.r != 0 {
				b.WriteRune(c.r)
			}
		}
		sc.text = append(sc.text, b.String())
		sc.cells = append(sc.cells, line)
		line = nil
	}
	rs := []rune(strings.TrimSuffix(s, "\n"))
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\n':
			flush()
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
				j++
			}
			if j < len(rs) && rs[j] == 'm' {
				cur = applySGR(cur, string(rs[i+2:j]))
			}
			i = j
		case r == 0x1b: // another escape: skip it and the byte after
			i++
		default:
			line = append(line, screenCell{r, cur})
			if runewidth.RuneWidth(r) == 2 {
				line = append(line, screenCell{0, cur})
			}
		}
	}
	flush()
	return &sc
}

func applySGR(st sgrStyle, params string) sgrStyle {
	ps := strings.FieldsFunc(params, func(r rune) bool { return r == ';' || r == ':' })
	if len(ps) == 0 {
		return sgrStyle{}
	}
	for i := 0; i < len(ps); i++ {
		n, _ := strconv.Atoi(ps[i])
		switch {
		case n == 0:
			st = sgrStyle{}
		case n == 1:
			st.bold = true
		case n == 22:
			st.bold = false
		case n == 3:
			st.italic = true
		case n == 23:
			st.italic = false
		case n == 4:
			st.underline = true
		case n == 24:
			st.underline = false
		case n == 7:
			st.reverse = true
		case n == 27:
			st.reverse = false
		case n == 39:
			st.fg = ""
		case n == 49:
			st.bg = ""
		case (n >= 30 && n <= 37) || (n >= 90 && n <= 97):
			st.fg = ps[i]
		case (n >= 40 && n <= 47) || (n >= 100 && n <= 107):
			st.bg = ps[i]
		case (n == 38 || n == 48) && i+1 < len(ps):
			// 38;5;N or 38;2;R;G;B
			k := 3
			if ps[i+1] == "5" {
				k = 2
			} else if ps[i+1] == "2" {
				k = 5
			}
			end := min(i+k, len(ps)-1)
			c := strings.Join(ps[i+1:end+1], ";")
			if n == 38 {
				st.fg = c
			} else {
				st.bg = c
			}
			i = end
		}
	}
	return st
}

func (s *paneScreen) contains(sub string) bool {
	for _, l := range s.text {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// line is the first line starting with prefix (after leading blanks).
func (s *paneScreen) line(prefix string) (int, string) {
	for i, l := range s.text {
		if strings.HasPrefix(strings.TrimLeft(l, " "), prefix) {
			return i, l
		}
	}
	return -1, ""
}

// status is the first status line: two lines above the key line, which is
// the last line of the pane.
func (s *paneScreen) status(h int) string {
	if len(s.text) < h {
		return ""
	}
	return strings.TrimSpace(s.text[h-3])
}

var (
	hexRowRE    = regexp.MustCompile(`^([0-9a-f]{4,})  [0-9a-f]{2} `)
	bytesHeadRE = regexp.MustCompile(`^\s*(▶ )?Bytes \d+B`)
)

// hexCell is a byte as the hex pane shows it: its offset, its value read
// back from the screen, and the styles of its two hex digits and of its
// ASCII character.
type hexCell struct {
	off       int
	val       byte
	hex       [2]sgrStyle
	asc       sgrStyle
	ascii     rune
	hexStyled bool // both digits have one style
}

// hexPane reads the byte layout back from the screen. Its rows are xxd's:
// the offset, two spaces, 16 bytes each followed by a space (one more after
// the eighth), a space, then the 16 ASCII characters.
func (s *paneScreen) hexPane(t *testing.T) []hexCell {
	t.Helper()
	head := -1
	for i, l := range s.text {
		if bytesHeadRE.MatchString(l) {
			head = i
		}
	}
	if head < 0 {
		t.Fatalf("no Bytes pane on screen:\n%s", strings.Join(s.text, "\n"))
	}
	var out []hexCell
	for i := head + 1; i < len(s.text); i++ {
		m := hexRowRE.FindStringSubmatch(s.text[i])
		if m == nil {
			break
		}
		base, _ := strconv.ParseInt(m[1], 16, 64)
		ow := len(m[1])
		cells := s.cells[i]
		asciiCol := ow + 2 + 3*16 + 1 + 1
		for j := 0; j < 16; j++ {
			col := ow + 2 + 3*j
			if j >= 8 {
				col++
			}
			if col+1 >= len(cells) || cells[col].r == ' ' {
				break // past the last byte of the frame
			}
			v, err := hex.DecodeString(string([]rune{cells[col].r, cells[col+1].r}))
			if err != nil {
				t.Fatalf("hex row %q: byte %d is %q", s.text[i], j, string([]rune{cells[col].r, cells[col+1].r}))
			}
			b := hexCell{off: int(base) + j, val: v[0], hex: [2]sgrStyle{cells[col].st, cells[col+1].st}}
			b.hexStyled = cells[col].st == cells[col+1].st
			if asciiCol+j < len(cells) {
				b.ascii, b.asc = cells[asciiCol+j].r, cells[asciiCol+j].st
			}
			out = append(out, b)
		}
	}
	return out
}

// checkHighlight asserts that exactly the bytes [lo, hi) are highlighted
// in the hex pane, hex digits and ASCII alike: they share one style with a
// background colour, and no other byte has a background.
func checkHighlight(t *testing.T, s *paneScreen, bs []hexCell, lo, hi int) {
	t.Helper()
	var mark *sgrStyle
	for _, b := range bs {
		if !b.hexStyled {
			t.Errorf("byte 0x%04x: its two hex digits differ in style: %+v", b.off, b.hex)
		}
		in := b.off >= lo && b.off < hi
		for _, st := range []sgrStyle{b.hex[0], b.asc} {
			switch {
			case in && st.bg == "":
				t.Errorf("byte 0x%04x (%02x %q) is in the field [0x%04x, 0x%04x) but not highlighted: %+v", b.off, b.val, b.ascii, lo, hi, st)
			case !in && st.bg != "":
				t.Errorf("byte 0x%04x (%02x %q) is outside the field [0x%04x, 0x%04x) but highlighted: %+v", b.off, b.val, b.ascii, lo, hi, st)
			case in && mark == nil:
				m := st
				mark = &m
			case in && st != *mark:
				t.Errorf("byte 0x%04x: highlight %+v differs from the field's first byte's %+v", b.off, st, *mark)
			}
		}
	}
	if mark == nil {
		t.Fatalf("no highlighted byte; the screen:\n%s", strings.Join(s.text, "\n"))
	}
	if !mark.bold {
		t.Errorf("highlight %+v is not bold", *mark)
	}
	if t.Failed() {
		t.Logf("the screen:\n%s", strings.Join(s.text, "\n"))
	}
}

// checkReverseHighlight is checkHighlight without colours (NO_COLOR):
// exactly the bytes [lo, hi) are in reverse video and bold, hex digits and
// ASCII alike, except the cursor byte (cursor, or -1 when the bytes pane
// has no cursor), which is underlined and not reversed. No cell of the
// screen has a colour.
func checkReverseHighlight(t *testing.T, s *paneScreen, bs []hexCell, lo, hi, cursor int) {
	t.Helper()
	for y, line := range s.cells {
		for x, c := range line {
			if c.st.fg != "" || c.st.bg != "" {
				t.Errorf("cell (%d,%d) %q has a colour with NO_COLOR: %+v", x, y, c.r, c.st)
			}
		}
	}
	for _, b := range bs {
		if !b.hexStyled {
			t.Errorf("byte 0x%04x: its two hex digits differ in style: %+v", b.off, b.hex)
		}
		in := b.off >= lo && b.off < hi
		for _, st := range []sgrStyle{b.hex[0], b.asc} {
			switch {
			case b.off == cursor && (!st.underline || st.reverse):
				t.Errorf("byte 0x%04x (%02x %q) is the cursor: want it underlined, not reversed: %+v", b.off, b.val, b.ascii, st)
			case b.off == cursor:
			case in && !(st.reverse && st.bold):
				t.Errorf("byte 0x%04x (%02x %q) is in the field [0x%04x, 0x%04x) but not in bold reverse video: %+v", b.off, b.val, b.ascii, lo, hi, st)
			case !in && st.reverse:
				t.Errorf("byte 0x%04x (%02x %q) is outside the field [0x%04x, 0x%04x) but reversed: %+v", b.off, b.val, b.ascii, lo, hi, st)
			}
		}
	}
	if t.Failed() {
		t.Logf("the screen:\n%s", strings.Join(s.text, "\n"))
	}
}

func frameBytes(bs []hexCell) []byte {
	var b []byte
	for _, x := range bs {
		b = append(b, x.val)
	}
	return b
}

// listHeadRE is the list's column header on the focused list. No. is
// right-aligned: wide message numbers push it to the right.
var listHeadRE = regexp.MustCompile(`^▶ +No\. .*Connection .*Info`)

// selectedRow is the list's selected row (0 the first shown) and the
// number of rows with a cursor mark; -1 when the list is not on screen.
func selectedRow(s *paneScreen) (row, marked int) {
	hdr := -1
	for i, l := range s.text {
		if listHeadRE.MatchString(l) || strings.HasPrefix(l, "  No.") {
			hdr = i
			break
		}
	}
	if hdr < 0 {
		return -1, 0
	}
	row = -1
	for i := hdr + 1; i < len(s.text) && !strings.Contains(s.text[i], "Fields"); i++ {
		if strings.HasPrefix(s.text[i], ">") {
			row = i - hdr - 1
			marked++
		}
	}
	return row, marked
}

// firstScreen is the explorer's list drawn: the column header and a
// selected first row.
func firstScreen(s *paneScreen) bool {
	hdr := -1
	for i, l := range s.text {
		if listHeadRE.MatchString(l) {
			hdr = i
			break
		}
	}
	return hdr >= 0 && hdr+1 < len(s.text) && strings.HasPrefix(s.text[hdr+1], ">")
}

// toField focuses the tree and moves the cursor down to the first row
// whose label starts with name, pressing Down as many times as the rows
// on screen say, then waits for the status line to show that field at
// path (under the message's root).
func (tm *tmuxTerm) toField(path, name string) *paneScreen {
	tm.t.Helper()
	tm.keys("Tab")
	s := tm.waitFor("the tree to take the focus", func(s *paneScreen) bool { return s.contains("▶ Fields · #") })
	head, _ := s.line("▶ Fields · #")
	cursor, target := -1, -1
	for i := head + 1; i < len(s.text) && !bytesHeadRE.MatchString(s.text[i]); i++ {
		if strings.HasPrefix(s.text[i], ">") && cursor < 0 {
			cursor = i
		}
		if strings.Contains(s.text[i], "+-- "+name+" ") && target < 0 {
			target = i
		}
	}
	if cursor < 0 || target <= cursor {
		tm.t.Fatalf("no tree cursor, or no %s row below it; the screen:\n%s", name, strings.Join(s.text, "\n"))
	}
	downs := make([]string, target-cursor)
	for i := range downs {
		downs[i] = "Down"
	}
	tm.keys(downs...)
	return tm.waitFor("the status line to show "+path, func(s *paneScreen) bool {
		return strings.HasPrefix(s.status(tm.h), path+" ")
	})
}

// quit presses q and checks that kdissect exits with code and gives the
// terminal back: main screen, cursor shown, mouse reporting off.
func (tm *tmuxTerm) quit(code int) {
	tm.t.Helper()
	tm.quitBy(code, "q")
}

// quitBy is quit with other keys (send-keys arguments) to quit by.
func (tm *tmuxTerm) quitBy(code int, keys ...string) {
	tm.t.Helper()
	// The explorer runs on the alternate screen with mouse reporting
	// (button events, SGR encoding): what it has to undo.
	if got := tm.display("#{alternate_on} #{mouse_button_flag} #{mouse_sgr_flag}"); got != "1 1 1" {
		tm.t.Errorf("while running: alternate_on mouse_button mouse_sgr = %q, want \"1 1 1\"", got)
	}
	pid := tm.pid()
	tm.keys(keys...)
	if got := tm.waitExit(); got != code {
		tm.t.Errorf("exit status %d, want %d", got, code)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		tm.t.Errorf("kdissect (pid %d) still exists after it reported its exit", pid)
	}
	if got := tm.display("#{alternate_on} #{cursor_flag} #{mouse_any_flag} #{mouse_button_flag} #{mouse_sgr_flag}"); got != "0 1 0 0 0" {
		tm.t.Errorf("terminal after exit: alternate_on cursor mouse_any mouse_button mouse_sgr = %q, want \"0 1 0 0 0\"", got)
	}
	if s := parsePane(tm.capture()); s.contains("kdissect ·") {
		tm.t.Errorf("the explorer's screen is left on the main screen:\n%s", strings.Join(s.text, "\n"))
	}
}

func TestTUIEndToEndTmux(t *testing.T) {
	tmux := testkit.NeedCommand(t, "tmux")
	bin := kdissectBinary(t)

	t.Run("capture", func(t *testing.T) {
		// The recorded kadm traffic when it is in the tree, else the
		// capture the model tests build: both start with a CreateAcls
		// request for firstPrincipal.
		path := kadmCapture
		if _, err := os.Stat(path); err != nil {
			path = builtACLCapture(t)
		}
		tm := startTmux(t, tmux, 120, 40, bin, "--tui", path)
		s := tm.waitFor("the message list, fully read", func(s *paneScreen) bool {
			return firstScreen(s) && s.contains(" · done")
		})
		if !s.contains("CreateAcls v3") || !strings.HasPrefix(strings.TrimSpace(s.text[0]), "kdissect · "+filepath.Base(path)+" · ") {
			t.Fatalf("first screen:\n%s", strings.Join(s.text, "\n"))
		}

		field := "CreateAclsRequest > Creations > AclCreation[0] > Principal"
		s = tm.toField(field, "Principal")
		bs := s.hexPane(t)
		// Where the field is, from the bytes on screen and Kafka's
		// encoding of a compact string, not from the decoder.
		enc := compactString(firstPrincipal)
		lo := bytes.Index(frameBytes(bs), enc)
		if lo < 0 || bytes.Count(frameBytes(bs), enc) != 1 {
			t.Fatalf("%q is not exactly once in the bytes on screen:\n%s", firstPrincipal, strings.Join(s.text, "\n"))
		}
		hi := lo + len(enc)
		want := fmt.Sprintf(`%s [0x%04x, %dB] string = "%s"`, field, lo, len(enc), firstPrincipal)
		if st := s.status(tm.h); !strings.HasPrefix(st, want) {
			t.Errorf("status line %q, want %q…", st, want)
		}
		if lo/16 == (hi-1)/16 {
			t.Logf("the field is on one hex row; the test is stronger when it spans two")
		}
		checkHighlight(t, s, bs, lo, hi)
		tm.quit(0)
	})

	t.Run("nocolor", func(t *testing.T) {
		// NO_COLOR: the terminal's colour profile is then ASCII, and no
		// colour reaches it. The explorer must still show the selected
		// row, the field's bytes and the hex cursor, by reverse video,
		// bold and underline alone.
		path := kadmCapture
		if _, err := os.Stat(path); err != nil {
			path = builtACLCapture(t)
		}
		tm := startTmuxEnv(t, tmux, []string{"NO_COLOR=1"}, 120, 40, bin, "--tui", path)
		s := tm.waitFor("the message list, fully read", func(s *paneScreen) bool {
			return firstScreen(s) && s.contains(" · done")
		})
		hdr, _ := s.line("▶ ")
		if row := s.cells[hdr+1]; !row[0].st.reverse || !row[0].st.bold {
			t.Errorf("the focused list's selected row is not in bold reverse video: %+v", row[0].st)
		}

		field := "CreateAclsRequest > Creations > AclCreation[0] > Principal"
		s = tm.toField(field, "Principal")
		bs := s.hexPane(t)
		enc := compactString(firstPrincipal)
		lo := bytes.Index(frameBytes(bs), enc)
		if lo < 0 {
			t.Fatalf("%q is not in the bytes on screen:\n%s", firstPrincipal, strings.Join(s.text, "\n"))
		}
		checkReverseHighlight(t, s, bs, lo, lo+len(enc), -1)
		if row := s.cells[hdr+1]; !row[0].st.reverse {
			t.Errorf("the list's selected row, list not focused, is not in reverse video: %+v", row[0].st)
		}
		for i, l := range s.text {
			if strings.HasPrefix(l, ">") && strings.Contains(l, "Principal") && (!s.cells[i][0].st.reverse || !s.cells[i][0].st.bold) {
				t.Errorf("the tree's selected row is not in bold reverse video: %+v", s.cells[i][0].st)
			}
		}

		// The bytes focused: the cursor is on the field's first byte.
		tm.keys("Tab")
		s = tm.waitFor("the bytes to take the focus", func(s *paneScreen) bool { return s.contains("▶ Bytes ") })
		checkReverseHighlight(t, s, s.hexPane(t), lo, lo+len(enc), lo)
		tm.quit(0)
	})

	t.Run("stdin", func(t *testing.T) {
		// `kdissect --tui -` reads the capture from a pipe: the keys then
		// have to come from the terminal, not from standard input.
		path := kadmCapture
		if _, err := os.Stat(path); err != nil {
			path = builtACLCapture(t)
		}
		tm := startTmux(t, tmux, 120, 40, "sh", "-c", `cat "$0" | "$1" --tui -`, path, bin)
		s := tm.waitFor("the message list, fully read", func(s *paneScreen) bool {
			return firstScreen(s) && s.contains(" · done")
		})
		if !strings.HasPrefix(strings.TrimSpace(s.text[0]), "kdissect · standard input · ") {
			t.Errorf("title %q", s.text[0])
		}
		hdr := -1
		for i, l := range s.text {
			if listHeadRE.MatchString(l) {
				hdr = i
			}
		}
		second := strings.TrimLeft(s.text[hdr+2], " ")
		tm.keys("j")
		tm.waitFor("j to select the second row", func(s *paneScreen) bool {
			return strings.HasPrefix(s.text[hdr+2], ">") && strings.HasPrefix(strings.TrimLeft(s.text[hdr+2], "> "), strings.TrimSpace(second))
		})
		tm.quit(0)
	})

	t.Run("frame", func(t *testing.T) {
		// `kdissect frame --tui --hex` on the seed request. Its principal
		// is empty: one byte, placed by the reference tree.
		raw, err := os.ReadFile("../../testdata/frames/createacls-v3-request.bin")
		if err != nil {
			t.Fatal(err)
		}
		ref, err := os.ReadFile("../../testdata/frames/createacls-v3-request.tree")
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`Principal string = "" .*\[0x([0-9a-f]{4}), (\d+)B\]`).FindSubmatch(ref)
		if m == nil {
			t.Fatal("no Principal in the reference tree")
		}
		lo64, _ := strconv.ParseInt(string(m[1]), 16, 64)
		size, _ := strconv.Atoi(string(m[2]))
		lo := int(lo64)

		tm := startTmux(t, tmux, 120, 40, bin, "frame", "--tui", "--hex", hex.EncodeToString(raw))
		s := tm.waitFor("the frame's one-row list", firstScreen)
		if !strings.HasPrefix(strings.TrimSpace(s.text[0]), "kdissect · frame · 1 message") {
			t.Errorf("title %q", s.text[0])
		}
		field := "CreateAclsRequest > Creations > AclCreation[0] > Principal"
		s = tm.toField(field, "Principal")
		want := fmt.Sprintf(`%s [0x%04x, %dB] string = ""`, field, lo, size)
		if st := s.status(tm.h); !strings.HasPrefix(st, want) {
			t.Errorf("status line %q, want %q…", st, want)
		}
		bs := s.hexPane(t)
		if !bytes.Equal(frameBytes(bs), raw) {
			t.Errorf("hex pane shows % x, want the frame % x", frameBytes(bs), raw)
		}
		checkHighlight(t, s, bs, lo, lo+size)
		tm.quit(0)
	})

	t.Run("burst", func(t *testing.T) {
		// Keys that reach the terminal together (typed fast on a slow
		// link, a held key) come to the program in one read, and a paste
		// comes as one bracketed paste: every key in them acts.
		path := kadmCapture
		if _, err := os.Stat(path); err != nil {
			path = builtACLCapture(t)
		}
		tm := startTmux(t, tmux, 120, 40, bin, "--tui", path)
		s := tm.waitFor("the message list, fully read", func(s *paneScreen) bool {
			return firstScreen(s) && s.contains(" · done")
		})
		if row, _ := selectedRow(s); row != 0 {
			t.Fatalf("the first screen selects row %d:\n%s", row, strings.Join(s.text, "\n"))
		}
		moved := func(what string, want int) {
			t.Helper()
			var row, marked int
			// Give it time to act on every key, then read the one answer.
			tm.waitFor(what, func(s *paneScreen) bool {
				row, marked = selectedRow(s)
				return row == want && marked == 1
			})
		}
		tm.keys("-l", "jjjjj")
		moved("jjjjj sent at once to select row 5", 5)
		tm.keys("-l", "gjj")
		moved("gjj to select row 2", 2)
		tm.run("set-buffer", "-b", "e2e", "jjj")
		tm.run("paste-buffer", "-p", "-d", "-b", "e2e", "-t", tmuxTarget)
		moved("a paste of jjj to select row 5", 5)
		tm.quitBy(0, "-l", "qq")
	})
}

// TestVersionWaitsForNoTerminal: a command that is not the explorer
// neither writes to the terminal nor waits for it, even on a terminal that
// answers no query (script's pseudo-terminal answers none).
func TestVersionWaitsForNoTerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Fatalf("script (util-linux) not found: %v", err)
	}
	bin := kdissectBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, "-qc", bin+" --version", "/dev/null")
	start := time.Now()
	out, err := cmd.Output()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("script -qc '%s --version' /dev/null: %v (after %v)\n%q", bin, err, took, out)
	}
	if !strings.HasPrefix(string(out), "kdissect ") {
		t.Errorf("output %q is not the version", out)
	}
	if bytes.IndexByte(out, 0x1b) >= 0 {
		t.Errorf("--version wrote an escape sequence to the terminal: %q", out)
	}
	// The query it used to make waited 5 s for an answer; starting the
	// binary takes milliseconds.
	if took > time.Second {
		t.Errorf("--version on a terminal took %v", took)
	}
}

// fieldOnlyValue is a Host or Principal of a message in the capture's
// --json that no --summary line names: a search for it can only find it in
// the fields. It returns the value and the index of the first message that
// holds it anywhere in its --json line.
func fieldOnlyValue(t *testing.T, path string) (string, int) {
	t.Helper()
	sum, _, _ := runCLI(t, "", "--summary", path)
	js, _, _ := runCLI(t, "", "--json", path)
	type node struct {
		Name     string          `json:"name"`
		Value    json.RawMessage `json:"value"`
		Children []*node         `json:"children"`
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(js, "\n"), "\n") {
		var m struct {
			Index *int  `json:"index"`
			Tree  *node `json:"tree"`
		}
		if json.Unmarshal([]byte(l), &m) != nil || m.Index == nil {
			continue
		}
		lines = append(lines, l)
	}
	first := func(v string) int {
		for _, l := range lines {
			if strings.Contains(strings.ToLower(l), strings.ToLower(v)) {
				var m struct{ Index int }
				json.Unmarshal([]byte(l), &m)
				return m.Index
			}
		}
		return -1
	}
	var walk func(n *node) string
	walk = func(n *node) string {
		if n.Name == "Host" || n.Name == "Principal" {
			var v string
			if json.Unmarshal(n.Value, &v) == nil && len(v) > 3 && !strings.Contains(strings.ToLower(sum), strings.ToLower(v)) {
				return v
			}
		}
		for _, c := range n.Children {
			if v := walk(c); v != "" {
				return v
			}
		}
		return ""
	}
	for _, l := range lines {
		var m struct{ Tree *node }
		json.Unmarshal([]byte(l), &m)
		if m.Tree != nil {
			if v := walk(m.Tree); v != "" {
				return v, first(v)
			}
		}
	}
	t.Fatalf("every Host and Principal of %s is in its --summary", path)
	return "", 0
}

// treeShows is the message the tree pane shows, from its title.
func treeShows(s *paneScreen) int {
	for _, l := range s.text {
		if m := regexp.MustCompile(`Fields · #(\d+) `).FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return -1
}

// The filter bar, search across fields and the back key, in a real
// terminal: what the keys do when they come from a terminal (Esc alone,
// Backspace, ↑, text typed fast) rather than from a test's messages.
func TestTUIEndToEndFilterSearchBack(t *testing.T) {
	tmux := testkit.NeedCommand(t, "tmux")
	bin := kdissectBinary(t)
	path := kadmCapture
	if _, err := os.Stat(path); err != nil {
		path = builtACLCapture(t)
	}
	rows := summaryRows(t, path)
	var want []int
	for _, r := range rows {
		if strings.HasPrefix(r.api, "DeleteAcls ") && r.dir == "rsp" {
			want = append(want, r.index)
		}
	}
	if len(want) == 0 {
		t.Fatalf("no DeleteAcls response in %s", path)
	}
	const expr = `api == "DeleteAcls" && direction == "response"`

	t.Run("filterbar", func(t *testing.T) {
		tm := startTmux(t, tmux, 120, 40, bin, "--tui", path)
		tm.waitFor("the message list, fully read", func(s *paneScreen) bool { return firstScreen(s) && s.contains(" · done") })
		tm.keys("f")
		tm.waitFor("the filter bar", func(s *paneScreen) bool { return s.contains(" filter › █") })
		tm.keys("-l", expr)
		count := fmt.Sprintf("✓ %d of %d messages", len(want), len(rows))
		s := tm.waitFor("the filter applied as typed", func(s *paneScreen) bool { return s.contains(count) })
		var listed []int
		for _, l := range s.text {
			if m := regexp.MustCompile(`^[> ][!E ] +(\d+) .* rsp DeleteAcls v\d+ `).FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[1])
				listed = append(listed, n)
			} else if regexp.MustCompile(`^[> ][!E ] +\d+ \S+ \S+ → `).MatchString(l) {
				t.Errorf("a row the filter should hide: %q", l)
			}
		}
		if fmt.Sprint(listed) != fmt.Sprint(want) {
			t.Errorf("rows %v, want the DeleteAcls responses %v:\n%s", listed, want, strings.Join(s.text, "\n"))
		}
		// An error as it is typed, pointing at its column; the list keeps
		// the last good filter.
		tm.keys("-l", " && Principle")
		s = tm.waitFor("the error under the text", func(s *paneScreen) bool { return s.contains(`✗ unknown field "Principle"`) })
		i, _ := s.line("filter › ")
		col := strings.Index(s.text[i], "Principle")
		runes := func(s string) int { return len([]rune(s)) }
		if caret := strings.IndexRune(s.text[i+1], '^'); caret < 0 || runes(s.text[i+1][:caret]) != runes(s.text[i][:col]) {
			t.Errorf("the caret is not under the error's column:\n%s\n%s", s.text[i], s.text[i+1])
		}
		if !s.contains(fmt.Sprintf("%d of %d messages · filter", len(want), len(rows))) {
			t.Errorf("the list lost its last good filter:\n%s", strings.Join(s.text, "\n"))
		}
		// Esc leaves the bar on the last good filter; a second clears it.
		tm.keys("Escape")
		title := fmt.Sprintf("%d of %d messages · filter %q", len(want), len(rows), expr)
		tm.waitFor("the bar closed on the filter", func(s *paneScreen) bool {
			return strings.Contains(s.text[0], title) && !s.contains("filter › ")
		})
		tm.keys("Escape")
		tm.waitFor("the filter cleared", func(s *paneScreen) bool {
			return strings.Contains(s.text[0], fmt.Sprintf(" %d messages · done", len(rows))) && !strings.Contains(s.text[0], "filter")
		})
		// ↑ in the bar brings the filter back.
		tm.keys("f", "Up")
		tm.waitFor("↑ to recall the filter", func(s *paneScreen) bool {
			return s.contains(" filter › "+expr+"█") && s.contains(count)
		})
		tm.keys("Enter")
		tm.waitFor("enter to leave the bar", func(s *paneScreen) bool { return strings.Contains(s.text[0], title) && !s.contains("filter › ") })
		tm.quit(0)
	})

	t.Run("search", func(t *testing.T) {
		value, holder := fieldOnlyValue(t, path)
		t.Logf("searching for %q, in the fields of #%d only", value, holder)
		tm := startTmux(t, tmux, 120, 40, bin, "--tui", path)
		s := tm.waitFor("the message list, fully read", func(s *paneScreen) bool { return firstScreen(s) && s.contains(" · done") })
		start := treeShows(s)
		if start == holder {
			t.Fatalf("the first message already holds %q", value)
		}
		tm.keys("/")
		tm.keys("-l", strings.ToLower(value))
		tm.keys("Enter")
		s = tm.waitFor("the search to reach #"+strconv.Itoa(holder), func(s *paneScreen) bool { return treeShows(s) == holder })
		if st := s.status(tm.h); !strings.Contains(st, `"`+value+`"`) {
			t.Errorf("the field found is not selected: status %q", st)
		}
		// Backspace goes back to where the search started; ] forward.
		tm.keys("BSpace")
		tm.waitFor("backspace to go back to #"+strconv.Itoa(start), func(s *paneScreen) bool { return treeShows(s) == start })
		tm.keys("]")
		tm.waitFor("] to go forward to #"+strconv.Itoa(holder), func(s *paneScreen) bool { return treeShows(s) == holder })
		tm.keys("[")
		tm.waitFor("[ to go back to #"+strconv.Itoa(start), func(s *paneScreen) bool { return treeShows(s) == start })
		tm.quit(0)
	})

	t.Run("tls without keys", func(t *testing.T) {
		// The capture's TLS connections, as --json's tls_session events
		// count them: the empty list names how many were not decrypted.
		const tlsPath = "../../testdata/pcaps/tls13-acls.pcap"
		js, _, _ := runCLI(t, "", "--json", tlsPath)
		conns := map[string]bool{}
		for _, l := range strings.Split(strings.TrimRight(js, "\n"), "\n") {
			var ev struct {
				Event     string `json:"event"`
				Src       string `json:"src"`
				Dst       string `json:"dst"`
				Decrypted *bool  `json:"decrypted"`
			}
			if json.Unmarshal([]byte(l), &ev) == nil && ev.Event == "tls_session" && ev.Decrypted != nil && !*ev.Decrypted {
				conns[ev.Src+" "+ev.Dst] = true
			}
		}
		if len(conns) == 0 {
			t.Fatalf("--json names no TLS session left encrypted in %s", tlsPath)
		}
		want := fmt.Sprintf("%d TLS connections not decrypted: --tls-keylog", len(conns))
		if len(conns) == 1 {
			want = "1 TLS connection not decrypted: --tls-keylog"
		}
		tm := startTmux(t, tmux, 120, 40, bin, "--tui", tlsPath)
		tm.waitFor("the empty list to say why", func(s *paneScreen) bool { return s.contains("("+want+")") && s.contains(" · done") })
		tm.quit(0)
	})

	t.Run("back after p", func(t *testing.T) {
		tm := startTmux(t, tmux, 120, 40, bin, "--tui", path)
		s := tm.waitFor("the message list, fully read", func(s *paneScreen) bool { return firstScreen(s) && s.contains(" · done") })
		start := treeShows(s)
		tm.keys("p")
		s = tm.waitFor("p to the response", func(s *paneScreen) bool { return treeShows(s) != start && treeShows(s) > 0 })
		tm.keys("BSpace")
		tm.waitFor("backspace to the request", func(s *paneScreen) bool { return treeShows(s) == start })
		tm.quit(0)
	})
}
