package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
	"github.com/kdissect/kdissect/tui"
)

// The explorer's model driven with the entries of a real capture, read by
// the same session and store that `kdissect --tui` uses. The expectations
// come from other code paths of the CLI (--summary, --json) and from the
// Kafka wire encoding itself, not from the explorer.

// Principals the explorer tests look for. Both captures (the recorded kadm
// traffic and the one built below) carry them: alice in the first
// CreateAcls request, Zoë (non-ASCII, so search has to fold case on runes)
// in a later one.
const (
	firstPrincipal  = "User:alice"
	searchPrincipal = "User:Zoë"
)

const kadmCapture = "../../testdata/pcaps/kadm-acls.pcap"

// tuiCapture is one capture the explorer tests run on.
type tuiCapture struct {
	name string
	path string
}

// tuiCaptures are the recorded kadm capture, when it is in the tree, and a
// capture built here with a malformed request, so that the errors filter
// has something to find.
func tuiCaptures(t *testing.T) []tuiCapture {
	cs := []tuiCapture{{"built", builtACLCapture(t)}}
	if _, err := os.Stat(kadmCapture); err == nil {
		cs = append(cs, tuiCapture{"kadm-acls", kadmCapture})
	}
	return cs
}

// builtACLCapture is CreateAcls and DeleteAcls v3 traffic encoded by
// franz-go's kmsg on one connection: alice's ACL (created, then deleted),
// Zoë's two ACLs, and a CreateAcls request whose array is cut short
// (malformed) with the broker's INVALID_REQUEST answer.
func builtACLCapture(t *testing.T) string {
	b := newPcap(t)
	c := openConn(b, 50500, 9092)
	creation := func(principal, resource string) kmsg.CreateACLsRequestCreation {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType = kmsg.ACLResourceTypeTopic
		cr.ResourceName = resource
		cr.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
		cr.Principal = principal
		cr.Host = "*"
		cr.Operation = kmsg.ACLOperationWrite
		cr.PermissionType = kmsg.ACLPermissionTypeAllow
		return cr
	}
	createReq := func(cs ...kmsg.CreateACLsRequestCreation) []byte {
		r := kmsg.NewCreateACLsRequest()
		r.Version = 3
		r.Creations = cs
		return r.AppendTo(nil)
	}
	req := func(key int16, corr int32, body []byte) []byte {
		return testkit.Request(key, 3, corr, testkit.Ptr("kadm"), true, body)
	}
	resp := func(corr int32, body []byte) []byte {
		return testkit.Response(corr, true, body)
	}

	c.Send(true, req(30, 2, createReq(creation(firstPrincipal, "orders"))))
	c.Send(false, resp(2, createResp(0)))
	c.Send(true, req(30, 3, createReq(creation(searchPrincipal, "orders"), creation(searchPrincipal, "payments"))))
	c.Send(false, resp(3, createResp(0, 0)))

	del := kmsg.NewDeleteACLsRequest()
	del.Version = 3
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType = kmsg.ACLResourceTypeTopic
	name, principal := "orders", firstPrincipal
	f.ResourceName, f.Principal = &name, &principal
	f.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
	f.Operation = kmsg.ACLOperationAny
	f.PermissionType = kmsg.ACLPermissionTypeAny
	del.Filters = append(del.Filters, f)
	delResp := kmsg.NewDeleteACLsResponse()
	delResp.Version = 3
	delResp.Results = append(delResp.Results, kmsg.NewDeleteACLsResponseResult())
	c.Send(true, req(31, 4, del.AppendTo(nil)))
	c.Send(false, resp(4, delResp.AppendTo(nil)))

	// Two creations announced (compact length 3), one present: the
	// decoder runs out of bytes in the second. The frame itself is whole,
	// so reassembly hands it over and only the dissector complains.
	bad := createReq(creation("User:mallory", "orders"))
	bad[0] = 3
	c.Send(true, req(30, 5, bad[:len(bad)-1]))
	c.Send(false, resp(5, createResp(42))) // INVALID_REQUEST
	return b.File(t)
}

// captureEntries reads a capture with the reader runCaptureTUI starts
// (default flags: --port 9092 with detection, the ACL APIs) and returns
// every entry the explorer would receive and the store's loader. Progress
// is drained alongside, as the explorer does; its last report must say
// the reading finished without error.
// startReader opens path with o and starts reading it as the explorer
// does (tui.StartReader).
func startReader(t *testing.T, o capture.Options, path string) (tui.Loader, <-chan tui.Entry, <-chan tui.ProgressMsg, func(bool) (bool, error)) {
	t.Helper()
	r, err := capture.Open(o, []string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	rd := tui.StartReader(context.Background(), r)
	return rd.Load, rd.Entries, rd.Progress, rd.Result
}

func captureEntries(t *testing.T, path string) ([]tui.Entry, tui.Loader) {
	t.Helper()
	load, ech, pch, result := startReader(t, capture.DefaultOptions(), path)
	var entries []tui.Entry
	var last tui.ProgressMsg
	for ech != nil || pch != nil {
		select {
		case e, ok := <-ech:
			if !ok {
				ech = nil
				continue
			}
			entries = append(entries, e)
		case p, ok := <-pch:
			if !ok {
				pch = nil
				continue
			}
			last = p
		}
	}
	if _, err := result(true); err != nil {
		t.Fatal(err)
	}
	if !last.Finished || last.Err != nil {
		t.Errorf("last progress report %+v, want finished without error", last)
	}
	if len(entries) == 0 {
		t.Fatalf("%s: no entries", path)
	}
	return entries, load
}

// summaryRow is one message line of `kdissect --summary`.
type summaryRow struct {
	index          int
	src, dst       string
	api            string // "CreateAcls v3"
	dir            string // "req" or "rsp", as the list shows it
	corr           string
	info           string
	peer           int // from "(response #N)" / "(request #N)"; 0 when none
	hasPeerComment bool
}

var summaryLine = regexp.MustCompile(`^#(\d+) \S+ (\S+) → (\S+) (\S+ v\d+) (request|response) corr=(-?\d+)(?:: (.*?))?(?: \((?:response|request) #(\d+)(?:, [^)]*)?\))?(?: by (.+))?$`)

// summaryRows runs `kdissect --summary` on the capture: the messages the
// explorer must list, in the same order.
func summaryRows(t *testing.T, path string) []summaryRow {
	t.Helper()
	out, stderr, code := runCLI(t, "", "--summary", path)
	if code != 0 && code != exitMalformed {
		t.Fatalf("--summary: exit %d: %s", code, stderr)
	}
	var rows []summaryRow
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.HasPrefix(l, "!! ") {
			continue // events are not listed in the explorer
		}
		m := summaryLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unparsed --summary line %q", l)
		}
		r := summaryRow{src: m[2], dst: m[3], api: m[4], corr: m[6], info: m[7]}
		r.index, _ = strconv.Atoi(m[1])
		r.dir = "req"
		if m[5] == "response" {
			r.dir = "rsp"
		}
		if m[8] != "" {
			r.peer, _ = strconv.Atoi(m[8])
		}
		if m[9] != "" { // the list shows who, as the summary line does
			r.info += " by " + m[9]
		}
		rows = append(rows, r)
	}
	return rows
}

// failure is a message the errors filter must keep, from `kdissect --json`:
// one with problems, or a response with a non-zero error code.
type failure struct {
	index     int
	problems  bool
	errorName string // the first non-zero ErrorCode's name, "" when none
}

// failures runs `kdissect --json` and returns the messages with problems
// or with a Kafka error code, in order: what the errors filter must keep.
// The error's name is read from the code's display, "42 (INVALID_REQUEST)".
func failures(t *testing.T, path string) []failure {
	t.Helper()
	type node struct {
		Name     string          `json:"name"`
		Value    json.RawMessage `json:"value"`
		Display  string          `json:"display"`
		Children []*node         `json:"children"`
	}
	var firstError func(n *node) string
	firstError = func(n *node) string {
		if n.Name == "ErrorCode" || n.Name == "TopLevelErrorCode" {
			if v, err := strconv.Atoi(string(n.Value)); err == nil && v != 0 {
				name, ok := strings.CutSuffix(n.Display[strings.Index(n.Display, "(")+1:], ")")
				if !ok {
					t.Fatalf("error code display %q names no error", n.Display)
				}
				return name
			}
		}
		for _, c := range n.Children {
			if s := firstError(c); s != "" {
				return s
			}
		}
		return ""
	}
	out, _, _ := runCLI(t, "", "--json", path)
	var fs []failure
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var m struct {
			Index     *int              `json:"index"`
			Event     string            `json:"event"`
			Direction string            `json:"direction"`
			Problems  []json.RawMessage `json:"problems"`
			Tree      *node             `json:"tree"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("--json line %q: %v", l, err)
		}
		if m.Event != "" || m.Index == nil {
			continue
		}
		f := failure{index: *m.Index, problems: len(m.Problems) > 0}
		if m.Direction == "response" && m.Tree != nil {
			f.errorName = firstError(m.Tree)
		}
		if f.problems || f.errorName != "" {
			fs = append(fs, f)
		}
	}
	return fs
}

// tuiDriver drives a tui.Model the way bubbletea would, and reads its
// screen without styling.
type tuiDriver struct {
	t    *testing.T
	m    tea.Model
	w, h int
}

func newTUIDriver(t *testing.T, path string, w, h int) *tuiDriver {
	t.Helper()
	entries, load := captureEntries(t, path)
	x := &tuiDriver{t: t, m: tui.New(load, tui.Options{Title: filepath.Base(path)}), w: w, h: h}
	x.send(tea.WindowSizeMsg{Width: w, Height: h})
	x.send(tui.EntriesMsg(entries))
	x.send(tui.ProgressMsg{Finished: true})
	return x
}

// send updates the model with each message, then with the answers of the
// commands it gave (the search and the filter decode in the background),
// until none is left, as the program would.
func (x *tuiDriver) send(msgs ...tea.Msg) {
	for _, msg := range msgs {
		queue := []tea.Msg{msg}
		for steps := 0; len(queue) > 0; steps++ {
			if steps > 1_000_000 {
				x.t.Fatal("the explorer's commands never stop answering")
			}
			var cmd tea.Cmd
			x.m, cmd = x.m.Update(queue[0])
			queue = append(queue[1:], runCmd(cmd)...)
		}
	}
}

// runCmd runs a command, and those of a batch, for their messages.
func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch msg := cmd().(type) {
	case nil, tea.QuitMsg:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, runCmd(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

// press sends named keys: "tab", "down", "enter", "esc", "ctrl+u", or
// runes typed one by one.
func (x *tuiDriver) press(names ...string) {
	for _, n := range names {
		switch n {
		case "tab":
			x.send(tea.KeyPressMsg{Code: tea.KeyTab})
		case "down":
			x.send(tea.KeyPressMsg{Code: tea.KeyDown})
		case "up":
			x.send(tea.KeyPressMsg{Code: tea.KeyUp})
		case "enter":
			x.send(tea.KeyPressMsg{Code: tea.KeyEnter})
		case "esc":
			x.send(tea.KeyPressMsg{Code: tea.KeyEscape})
		case "ctrl+u":
			x.send(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
		default:
			for _, r := range n {
				if r == ' ' {
					x.send(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
				} else {
					x.send(tea.KeyPressMsg{Code: r, Text: string(r)})
				}
			}
		}
	}
}

// screen is the view as plain text, one string a line. The geometry is
// checked on the way: every frame must fill the window exactly.
func (x *tuiDriver) screen() []string {
	x.t.Helper()
	lines := strings.Split(ansi.Strip(x.m.View().Content), "\n")
	if len(lines) != x.h {
		x.t.Fatalf("view has %d lines, want %d", len(lines), x.h)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w != x.w {
			x.t.Errorf("line %d is %d cells wide, want %d: %q", i, w, x.w, l)
		}
	}
	return lines
}

func (x *tuiDriver) status() string  { return strings.TrimSpace(x.screen()[x.h-3]) }
func (x *tuiDriver) keyLine() string { return strings.TrimSpace(x.screen()[x.h-1]) }
func (x *tuiDriver) title() string   { return strings.TrimSpace(x.screen()[0]) }

var (
	listRow    = regexp.MustCompile(`^([> ])([!E ]) *(\d+) +\S+ (\S+) → (\S+) +(req|rsp) (\S+ v\d+) +(-?\d+) (.*)$`)
	fieldsHead = regexp.MustCompile(`Fields · #(\d+) `)
)

// rows are the list rows on screen (the list must be tall enough to show
// them all).
func (x *tuiDriver) rows() [][]string {
	var out [][]string
	for _, l := range x.screen()[2:] {
		m := listRow.FindStringSubmatch(strings.TrimRight(l, " "))
		if m == nil {
			break
		}
		out = append(out, m)
	}
	return out
}

// shown is the index of the message whose tree is shown, from the tree
// pane's title, and checks that the list cursor is on the same message.
func (x *tuiDriver) shown() int {
	x.t.Helper()
	var fromTree int
	for _, l := range x.screen() {
		if m := fieldsHead.FindStringSubmatch(l); m != nil {
			fromTree, _ = strconv.Atoi(m[1])
		}
	}
	for _, r := range x.rows() {
		if r[1] == ">" {
			if n, _ := strconv.Atoi(r[3]); n != fromTree {
				x.t.Errorf("list cursor on #%d, tree shows #%d", n, fromTree)
			}
		}
	}
	return fromTree
}

// compactString is a flexible version's encoding of s: uvarint(len+1), s.
func compactString(s string) []byte {
	return append(binary.AppendUvarint(nil, uint64(len(s)+1)), s...)
}

// fieldSpan is the "[0xOFFSET, SIZEB]" the explorer must show for the one
// compact string s in the frame, found by its encoding.
func fieldSpan(t *testing.T, raw []byte, s string) string {
	t.Helper()
	enc := compactString(s)
	off := bytes.Index(raw, enc)
	if off < 0 || bytes.Count(raw, enc) != 1 {
		t.Fatalf("%q is not exactly once in the frame", s)
	}
	return fmt.Sprintf("[0x%04x, %dB]", off, len(enc))
}

// Width 120 is the stacked layout (the one the e2e test sees); height 60
// leaves the list room for all of the kadm capture's rows.
const modelW, modelH = 120, 60

func TestTUIModelListsTheCapture(t *testing.T) {
	for _, c := range tuiCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			want := summaryRows(t, c.path)
			x := newTUIDriver(t, c.path, modelW, modelH)
			if got, w := x.title(), fmt.Sprintf("kdissect · %s · %d messages · done", filepath.Base(c.path), len(want)); got != w {
				t.Errorf("title %q, want %q", got, w)
			}
			failed := map[int]failure{}
			for _, f := range failures(t, c.path) {
				failed[f.index] = f
			}
			rows := x.rows()
			if len(rows) != len(want) {
				t.Fatalf("%d rows on screen, --summary has %d messages:\n%s", len(rows), len(want), strings.Join(x.screen(), "\n"))
			}
			for i, r := range rows {
				w := want[i]
				got := fmt.Sprintf("#%s %s → %s %s %s corr=%s", r[3], r[4], r[5], r[6], r[7], r[8])
				exp := fmt.Sprintf("#%d %s → %s %s %s corr=%s", w.index, w.src, w.dst, w.dir, w.api, w.corr)
				if got != exp {
					t.Errorf("row %d: %s, want %s", i, got, exp)
				}
				// Marked ! when malformed, E with a Kafka error code, else
				// not at all.
				f := failed[w.index]
				mark := " "
				switch {
				case f.problems:
					mark = "!"
				case f.errorName != "":
					mark = "E"
				}
				if r[2] != mark {
					t.Errorf("row %d (#%d) marked %q, want %q", i, w.index, r[2], mark)
				}
				// Info is the summary after its "API vN dir corr=N: " lead,
				// led by the Kafka error's name, cut to the column with an
				// ellipsis.
				info := strings.TrimRight(r[9], " ")
				if f.errorName != "" {
					rest, ok := strings.CutPrefix(info, f.errorName+" · ")
					if !ok {
						t.Errorf("row %d info %q does not lead with the error %s", i, r[9], f.errorName)
					}
					info = rest
				}
				if p, cut := strings.CutSuffix(info, "…"); cut {
					info = p
				}
				if !strings.HasPrefix(w.info, info) || info == "" && w.info != "" {
					t.Errorf("row %d info %q, want (a prefix of) %q", i, r[9], w.info)
				}
			}
			if rows[0][1] != ">" || x.shown() != want[0].index {
				t.Errorf("first row not selected: cursor %q, tree shows #%d", rows[0][1], x.shown())
			}
		})
	}
}

func TestTUIModelPeerJump(t *testing.T) {
	for _, c := range tuiCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			want := summaryRows(t, c.path)
			req := want[0]
			if req.dir != "req" || req.peer == 0 {
				t.Fatalf("first message is not a matched request: %+v", req)
			}
			x := newTUIDriver(t, c.path, modelW, modelH)
			x.press("p")
			if got := x.shown(); got != req.peer {
				t.Fatalf("p on request #%d shows #%d, want its response #%d", req.index, got, req.peer)
			}
			x.press("p")
			if got := x.shown(); got != req.index {
				t.Fatalf("p on response #%d shows #%d, want request #%d", req.peer, got, req.index)
			}

			// A filter on the client's side of the connection keeps the
			// request and hides its response: p must say so and stay.
			x.press("f", "ctrl+u", req.src+" →", "enter")
			if got := x.shown(); got != req.index {
				t.Fatalf("filter %q moved the selection to #%d", req.src, got)
			}
			x.press("p")
			if got, w := x.keyLine(), fmt.Sprintf("the response (#%d) is hidden by the filter", req.peer); got != w {
				t.Errorf("p with the response filtered out: key line %q, want %q", got, w)
			}
			if got := x.shown(); got != req.index {
				t.Errorf("p with the response filtered out moved to #%d", got)
			}
		})
	}
}

// The errors filter keeps what an operator calls errors: malformed
// messages (marked !) and responses carrying a Kafka error code (marked E,
// the error named on the row). The built capture has one of each (the
// malformed request and its INVALID_REQUEST answer); the kadm capture has
// no malformed message but INVALID_REQUEST and CLUSTER_AUTHORIZATION_FAILED
// responses.
func TestTUIModelErrorsFilter(t *testing.T) {
	for _, c := range tuiCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			all := summaryRows(t, c.path)
			bad := failures(t, c.path)
			names := map[string]bool{}
			for _, f := range bad {
				names[f.errorName] = true
			}
			switch c.name {
			case "built":
				if len(bad) != 2 || !bad[0].problems || bad[1].errorName != "INVALID_REQUEST" {
					t.Fatalf("the built capture's failures are %+v, want a malformed request and an INVALID_REQUEST response", bad)
				}
			case "kadm-acls":
				if !names["CLUSTER_AUTHORIZATION_FAILED"] || !names["INVALID_REQUEST"] {
					t.Fatalf("the kadm capture's failures are %+v, want CLUSTER_AUTHORIZATION_FAILED and INVALID_REQUEST responses", bad)
				}
			}
			x := newTUIDriver(t, c.path, modelW, modelH)
			before := x.shown()
			x.press("f", "errors", "enter")
			if got, w := x.title(), fmt.Sprintf("%d of %d messages · filter \"errors\"", len(bad), len(all)); !strings.Contains(got, w) {
				t.Errorf("title %q lacks %q", got, w)
			}
			if got, w := x.keyLine(), fmt.Sprintf("filter \"errors\": %d of %d messages", len(bad), len(all)); got != w {
				t.Errorf("key line %q, want %q", got, w)
			}
			rows := x.rows()
			if len(rows) != len(bad) {
				t.Fatalf("%d rows after the errors filter, want %d (%+v)", len(rows), len(bad), bad)
			}
			for i, r := range rows {
				f := bad[i]
				mark := "E"
				if f.problems {
					mark = "!"
				}
				if n, _ := strconv.Atoi(r[3]); n != f.index || r[2] != mark {
					t.Errorf("row %d: #%s marked %q, want #%d marked %s", i, r[3], r[2], f.index, mark)
				}
				if f.errorName != "" && !strings.HasPrefix(r[9], f.errorName+" · ") {
					t.Errorf("row %d (#%d): info %q does not lead with the error %s", i, f.index, r[9], f.errorName)
				}
			}
			if got := x.shown(); got != bad[0].index {
				t.Errorf("after the filter the tree shows #%d, want #%d", got, bad[0].index)
			}
			if bad[0].problems {
				if st := x.screen()[x.h-2]; !strings.Contains(st, "!") {
					t.Errorf("root of a malformed message: the second status line names no problem: %q", st)
				}
			}
			// Each Kafka error is named in the tree's title when selected.
			for i, f := range bad {
				if i > 0 {
					x.press("down")
				}
				if f.errorName == "" {
					continue
				}
				if h := strings.Join(x.screen(), "\n"); !strings.Contains(h, fmt.Sprintf("Fields · #%d ", f.index)) ||
					!regexp.MustCompile(`Fields · #\d+ .* · E `+f.errorName).MatchString(h) {
					t.Errorf("#%d selected: the tree title does not name %s", f.index, f.errorName)
				}
			}
			// Clearing the filter brings every row back.
			x.press("f", "ctrl+u", "enter")
			if got := len(x.rows()); got != len(all) {
				t.Errorf("%d rows after clearing the filter, want %d", got, len(all))
			}
			// A filter nothing matches says so, in the list and on the
			// status line, and clearing it brings the selection back.
			x.press("up", "up")
			before = x.shown()
			x.press("f", "ctrl+u", "nosuchapi", "enter")
			want := `no message matches the filter "nosuchapi"`
			if s := strings.Join(x.screen(), "\n"); !strings.Contains(s, "("+want+")") {
				t.Errorf("the list does not say %q:\n%s", want, s)
			}
			if got := x.status(); got != want {
				t.Errorf("status %q, want %q", got, want)
			}
			x.press("f", "ctrl+u", "enter")
			if x.shown() != before {
				t.Errorf("an empty filter result lost the selection: #%d, was #%d", x.shown(), before)
			}
		})
	}
}

func TestTUIModelSearchPrincipal(t *testing.T) {
	for _, c := range tuiCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			var target summaryRow
			for _, r := range summaryRows(t, c.path) {
				if r.dir == "req" && strings.Contains(r.info, searchPrincipal) {
					target = r
					break
				}
			}
			if target.index == 0 {
				t.Fatalf("no request of %s in --summary", searchPrincipal)
			}
			_, load := captureEntries(t, c.path)
			m, err := load(target.index)
			if err != nil {
				t.Fatal(err)
			}
			raw := m.Raw
			x := newTUIDriver(t, c.path, modelW, modelH)
			// Lower case: search ignores case, on non-ASCII runes too.
			x.press("/", strings.ToLower(searchPrincipal), "enter")
			if got := x.shown(); got != target.index {
				t.Fatalf("/ %s shows #%d, want #%d", searchPrincipal, got, target.index)
			}
			// The first matching field is selected: the first creation's
			// principal, which is the first occurrence in the frame.
			enc := compactString(searchPrincipal)
			off := bytes.Index(raw, enc)
			wantSpan := fmt.Sprintf("[0x%04x, %dB]", off, len(enc))
			st := x.status()
			if !strings.HasPrefix(st, "CreateAclsRequest > Creations > AclCreation[0] > Principal "+wantSpan+" string = \""+searchPrincipal+"\"") {
				t.Errorf("status after the search: %q\nwant the first creation's Principal %s", st, wantSpan)
			}
			// From the tree, n goes on to the next field that matches in the
			// same message, without wrapping until it passes the last one.
			var offs []int
			for i := 0; i < len(raw); i++ {
				if bytes.HasPrefix(raw[i:], enc) {
					offs = append(offs, i)
				}
			}
			if len(offs) < 2 {
				t.Fatalf("%s is once in #%d: n has nowhere to go", searchPrincipal, target.index)
			}
			x.press("tab")
			for _, next := range offs[1:] {
				x.press("n")
				if st := x.status(); !strings.Contains(st, " > Principal "+fmt.Sprintf("[0x%04x, %dB]", next, len(enc))) {
					t.Fatalf("n: status %q, want the next Principal at 0x%04x", st, next)
				}
				if got := x.keyLine(); strings.Contains(got, "wrapped") {
					t.Errorf("n to the Principal at 0x%04x: key line %q", next, got)
				}
			}
			// Past the last, the next message that holds it in any field
			// (per --json), or round to the first field when none does.
			holders := messagesHolding(t, c.path, searchPrincipal)
			if len(holders) == 0 || holders[0] != target.index {
				t.Fatalf("--json: %s is first in %v, want #%d first", searchPrincipal, holders, target.index)
			}
			x.press("n")
			if len(holders) == 1 {
				if st := x.status(); !strings.Contains(st, " > Principal "+wantSpan) {
					t.Errorf("n past the last Principal: status %q, want the first one %s", st, wantSpan)
				}
				if got := x.keyLine(); got != "search wrapped" {
					t.Errorf("n past the last Principal: key line %q, want \"search wrapped\"", got)
				}
				return
			}
			if got := x.shown(); got != holders[1] {
				t.Fatalf("n past the last Principal of #%d shows #%d, want #%d, the next message holding %s", target.index, got, holders[1], searchPrincipal)
			}
			// The status line is cut at the width; the tree row is not.
			if st := x.status(); !strings.Contains(st, " > Principal [") {
				t.Errorf("n into #%d: status %q, want a Principal field", holders[1], st)
			}
			if !slices.ContainsFunc(x.screen(), func(l string) bool {
				return strings.HasPrefix(l, ">") && strings.Contains(l, `Principal string = "`+searchPrincipal+`"`)
			}) {
				t.Errorf("n into #%d: the tree's selected row is not a Principal of %s:\n%s", holders[1], searchPrincipal, strings.Join(x.screen(), "\n"))
			}
			// [ goes back to where the search left.
			x.press("[")
			if got := x.shown(); got != target.index {
				t.Errorf("[ after the search shows #%d, want #%d", got, target.index)
			}
		})
	}
}

// messagesHolding is the index of each message whose --json line holds s
// (in its summary or any field), in order.
func messagesHolding(t *testing.T, path, s string) []int {
	t.Helper()
	out, _, _ := runCLI(t, "", "--json", path)
	var idx []int
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var m struct {
			Index *int   `json:"index"`
			Event string `json:"event"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("--json line %q: %v", l, err)
		}
		if m.Event == "" && m.Index != nil && strings.Contains(l, s) {
			idx = append(idx, *m.Index)
		}
	}
	return idx
}

func TestTUIModelTreeFieldStatus(t *testing.T) {
	for _, c := range tuiCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			first := summaryRows(t, c.path)[0]
			_, load := captureEntries(t, c.path)
			m, err := load(first.index)
			if err != nil {
				t.Fatal(err)
			}
			span := fieldSpan(t, m.Raw, firstPrincipal)
			rspan := fieldSpan(t, m.Raw, "orders")

			x := newTUIDriver(t, c.path, modelW, modelH)
			x.press("tab")
			if h := x.screen(); !strings.Contains(strings.Join(h, "\n"), "▶ Fields · #") {
				t.Fatalf("tab did not focus the tree:\n%s", strings.Join(h, "\n"))
			}
			// Walk down the tree until the principal; each step must
			// show a field of the request on the status line.
			var seen []string
			found := map[string]string{}
			for i := 0; i < 40 && found["Principal"] == ""; i++ {
				x.press("down")
				st := x.status()
				seen = append(seen, st)
				for _, f := range []string{"ResourceName", "Principal"} {
					if strings.HasPrefix(st, "CreateAclsRequest > Creations > AclCreation[0] > "+f+" ") {
						found[f] = st
					}
				}
			}
			if got, w := found["ResourceName"], "CreateAclsRequest > Creations > AclCreation[0] > ResourceName "+rspan+` string = "orders"`; !strings.HasPrefix(got, w) {
				t.Errorf("ResourceName status %q, want %q…", got, w)
			}
			if got, w := found["Principal"], "CreateAclsRequest > Creations > AclCreation[0] > Principal "+span+` string = "`+firstPrincipal+`"`; !strings.HasPrefix(got, w) {
				t.Errorf("Principal status %q, want %q…\nstatus lines on the way:\n%s", got, w, strings.Join(seen, "\n"))
			}
			if doc := strings.TrimSpace(x.screen()[x.h-2]); doc == "" {
				t.Error("no doc line for the principal")
			}
		})
	}
}

// The Kafka error of a response is its first non-zero error code, named;
// a code the table does not know is given by number.
func TestKafkaErrorOfResponse(t *testing.T) {
	resp := func(codes ...int16) *dissect.Message {
		frame := testkit.Response(7, true, createResp(codes...))
		m := dissect.NewRegistry().Decode(frame, dissect.Options{Direction: dissect.Response, APIKey: 30, APIVersion: 3})
		if len(m.Problems) > 0 {
			t.Fatalf("codes %v: %v", codes, m.Problems)
		}
		return m
	}
	for _, c := range []struct {
		codes []int16
		want  string
	}{
		{nil, ""},
		{[]int16{0, 0}, ""},
		{[]int16{0, 31, 42}, "CLUSTER_AUTHORIZATION_FAILED"},
		{[]int16{42}, "INVALID_REQUEST"},
		{[]int16{0, 9999}, "error 9999"},
	} {
		if got := tui.EntryOf(resp(c.codes...)).KafkaError; got != c.want {
			t.Errorf("codes %v: KafkaError %q, want %q", c.codes, got, c.want)
		}
	}
}

// createResp is the body of a CreateAcls v3 response with one result per
// error code.
func createResp(codes ...int16) []byte {
	r := kmsg.NewCreateACLsResponse()
	r.Version = 3
	for _, code := range codes {
		res := kmsg.NewCreateACLsResponseResult()
		res.ErrorCode = code
		r.Results = append(r.Results, res)
	}
	return r.AppendTo(nil)
}
