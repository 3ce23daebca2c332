package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/filter"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
)

// update is one Update without running the commands it gives: what the
// screen shows while the background works.
func update(m Model, msg tea.Msg) (Model, tea.Cmd) {
	nm, cmd := m.Update(msg)
	return nm.(Model), cmd
}

func shownIndexes(m Model) []int {
	var out []int
	for r := 0; r < m.list.len(); r++ {
		out = append(out, m.list.at(r).Index)
	}
	return out
}

func screenHas(t *testing.T, m Model, s string) bool {
	t.Helper()
	return strings.Contains(strings.Join(screenLines(t, m), "\n"), s)
}

// The filter bar takes the language of -Y, applies each text as it is
// typed when it compiles, shows the error in place when it does not (the
// list keeps the last good filter), and walks its history with ↑ and ↓.
func TestFilterBarLanguage(t *testing.T) {
	fc := newFake(20)
	m := newTestModel(t, fc.load, fc.entries, 100, 30)
	m = send(m, join(keys("f"), typed(`api == "DeleteAcls"`))...)
	if m.input != inputFilter || m.list.len() != 10 || m.list.at(0).APIName != "DeleteAcls" {
		t.Fatalf("typing a filter: input %v, %d rows", m.input, m.list.len())
	}
	if !screenHas(t, m, ` filter › api == "DeleteAcls"█`) || !screenHas(t, m, "✓ 10 of 20 messages") {
		t.Errorf("the bar does not show the text and its count:\n%s", m.render())
	}

	// An incomplete expression: its error in place, the list unchanged.
	m = send(m, typed(" &&")...)
	if m.bar.err == nil || m.list.filter != `api == "DeleteAcls"` || m.list.len() != 10 {
		t.Errorf("a syntax error: err %v, filter %q, %d rows", m.bar.err, m.list.filter, m.list.len())
	}
	if !screenHas(t, m, "✗ ") {
		t.Errorf("no error on the bar:\n%s", m.render())
	}

	// A misspelt field: the error names the column with a caret under it.
	m = send(m, join(keys("ctrl+u"), typed(`Principle == "x"`))...)
	if m.bar.err == nil || !strings.Contains(m.bar.err.Error(), `did you mean "Principal"`) {
		t.Fatalf("a misspelt field: %v", m.bar.err)
	}
	lines := screenLines(t, m)
	if want := strings.Repeat(" ", len([]rune(barPrompt))) + "^ ✗ unknown field"; !strings.HasPrefix(lines[2], want) {
		t.Errorf("the error line %q, want it to start %q", lines[2], want)
	}
	if m.list.len() != 10 {
		t.Errorf("the list lost its last good filter: %d rows", m.list.len())
	}

	// Enter has nothing to apply; Esc leaves the bar on the last good
	// filter.
	m = send(m, keys("enter")...)
	if m.input != inputFilter {
		t.Errorf("enter on an error left the bar")
	}
	m = send(m, keys("esc")...)
	if m.input != inputNone || m.list.filter != `api == "DeleteAcls"` {
		t.Errorf("esc: input %v, filter %q", m.input, m.list.filter)
	}
	m = send(m, join(keys("f", "ctrl+u"), typed(`api == "DeleteAcls"`), keys("enter"))...)
	if !strings.Contains(m.render(), `filter "api == \"DeleteAcls\"": 10 of 20 messages`) {
		t.Errorf("no notice after enter:\n%s", m.render())
	}

	// A body field, by Kafka's name: the messages are decoded to match.
	m = send(m, join(keys("f", "ctrl+u"), typed(`Principal contains "user1"`), keys("enter"))...)
	if got := fmt.Sprint(shownIndexes(m)); got != "[1 10 11 12 13 14 15 16 17 18 19]" {
		t.Errorf("Principal contains \"user1\" shows %s", got)
	}

	// ↑ and ↓ walk what was applied; each is applied again.
	m = send(m, join(keys("f", "ctrl+u"), typed("malformed"))...)
	if m.list.len() != 4 {
		t.Fatalf("malformed: %d rows", m.list.len())
	}
	m = send(m, keys("up")...)
	if string(m.text) != `Principal contains "user1"` || m.list.len() != 11 {
		t.Errorf("↑: text %q, %d rows", string(m.text), m.list.len())
	}
	m = send(m, keys("up")...)
	if string(m.text) != `api == "DeleteAcls"` || m.list.len() != 10 {
		t.Errorf("↑↑: text %q, %d rows", string(m.text), m.list.len())
	}
	m = send(m, keys("up", "down")...)
	if string(m.text) != `Principal contains "user1"` {
		t.Errorf("↑↑↑↓: text %q", string(m.text))
	}
	m = send(m, keys("down")...)
	if string(m.text) != "malformed" || m.list.len() != 4 {
		t.Errorf("↓ past the newest: text %q (want the draft), %d rows", string(m.text), m.list.len())
	}
	m = send(m, keys("esc", "esc")...)
	if m.list.filtered() || m.list.len() != 20 {
		t.Errorf("esc esc: filter %q, %d rows", m.list.filter, m.list.len())
	}
	// The bar opened on the newest filter: ↑ goes to the one before it.
	m = send(m, join(keys("f"), typed(`api == "DeleteAcls"`), keys("enter", "f", "up"))...)
	if string(m.text) != "malformed" { // applied from the draft, then left with esc
		t.Errorf("↑ on the newest filter: text %q", string(m.text))
	}
}

// The explorer's older shorthand keeps working where it is not the
// language: errors, part of an API name, part of a connection. A word that
// is not a field says so in the bar, so a misspelt field is not silent.
func TestFilterBarShorthand(t *testing.T) {
	reg := dissect.Builtin()
	for _, c := range []struct {
		text  string
		short shorthand
	}{
		{"errors", shortErrors}, {"!", shortErrors}, {"acls", shortText}, {"10.0.0.2", shortText},
		{"10.0.0.1:5000 →", shortText}, {"nosuchapi", shortText},
		{"api", shortNone}, {`api == "CreateAcls"`, shortNone}, {"malformed", shortNone},
	} {
		lf, err := compileFilter(c.text, reg)
		if err != nil || lf.short != c.short {
			t.Errorf("%q: %+v, %v; want shorthand %d", c.text, lf, err, c.short)
		}
	}
	for _, text := range []string{`api == `, `Principle contains "x"`, `api == "CreateAcl"`, "acls and"} {
		if _, err := compileFilter(text, reg); err == nil {
			t.Errorf("%q compiled", text)
		}
	}
	// Typed, a shorthand waits for Enter: the letters of a word on its
	// way to a field name would filter the list meanwhile.
	fc := newFake(6)
	m := newTestModel(t, fc.load, fc.entries, 200, 30)
	m = send(m, join(keys("f"), typed("Principle"))...)
	if m.list.len() != 6 || !screenHas(t, m, `enter applies the shorthand: the API name or the connection contains "Principle" · not a filter: unknown field "Principle" at 1; did you mean "Principal"?`) {
		t.Errorf("a single misspelt field: %d rows\n%s", m.list.len(), m.render())
	}
	m = send(m, keys("enter")...)
	if m.list.len() != 0 || m.list.filter != "Principle" {
		t.Errorf("enter: %d rows, filter %q", m.list.len(), m.list.filter)
	}
	// So does an empty text: clearing it to type another keeps the list.
	m = send(m, keys("f", "ctrl+u")...)
	if m.list.filter != "Principle" || !screenHas(t, m, "enter: every message") {
		t.Errorf("an empty text applied at once: filter %q", m.list.filter)
	}
	m = send(m, keys("enter")...)
	if m.list.filtered() {
		t.Errorf("enter on an empty text left the filter %q", m.list.filter)
	}
}

// A filter on body fields decodes in the background, a chunk at a time:
// the title says how far it got, the list fills, and the entry selected
// before stays selected once the scan reaches it.
func TestBodyFilterInTheBackground(t *testing.T) {
	fc := newFake(600)
	m := newTestModel(t, fc.load, fc.entries, 160, 30)
	m = send(m, keys("G")...)
	m = send(m, keys("k")...) // #598, a CreateAcls request for User:user598
	m = send(m, keys("f", "ctrl+u")...)
	var cmd tea.Cmd
	for _, k := range typed(`Principal matches "user5[0-9]8$"`) {
		m, cmd = update(m, k)
	}
	if cmd == nil || !m.list.scanning() || m.list.len() != 0 {
		t.Fatalf("a body filter: cmd %v, scanning %v, %d rows", cmd != nil, m.list.scanning(), m.list.len())
	}
	if !strings.Contains(m.render(), "filtering 0%") {
		t.Errorf("no progress in the title:\n%s", m.render())
	}
	var chunks int
	for cmd != nil {
		msgs := runCmd(cmd)
		cmd = nil
		for _, msg := range msgs {
			if _, ok := msg.(filterChunkMsg); ok {
				chunks++
			}
			var c tea.Cmd
			m, c = update(m, msg)
			if c != nil {
				cmd = c
			}
		}
		if chunks == 1 && !strings.Contains(m.render(), fmt.Sprintf("filtering %d%%", scanChunk*100/600)) {
			t.Errorf("after one chunk:\n%s", m.render())
		}
	}
	if chunks != 3 {
		t.Errorf("%d chunks for 600 messages", chunks)
	}
	if got := fmt.Sprint(shownIndexes(m)); got != "[508 518 528 538 548 558 568 578 588 598]" {
		t.Errorf("shows %s", got)
	}
	if m.selectedIndex() != 598 {
		t.Errorf("selected #%d, want #598 kept", m.selectedIndex())
	}
	// New entries are decoded too.
	more := newFake(700).entries[600:]
	m = send(m, EntriesMsg(more))
	if got := shownIndexes(m); len(got) != 10 {
		t.Errorf("after 100 more entries (none a 5x8 user): %v", got)
	}
	if m.scan.len() > scanCacheSize {
		t.Errorf("the background cache holds %d messages, bound %d", m.scan.len(), scanCacheSize)
	}
}

// Match on a list entry (the explorer's filter) agrees with Record on the
// run's record (the CLI's -Y) for every message of the shipped captures.
func TestFilterOnEntriesAgreesWithRecords(t *testing.T) {
	exprs := []string{
		`api == "CreateAcls" && principal == "User:admin"`,
		`api == "DeleteAcls" && direction == "response" && ErrorCode ~= 0`,
		`Principal contains "alice" && !(principal == "User:admin")`,
		`ResourceName matches "^orders" && Operation in {"WRITE" "ALL"}`,
		`latency_us > 100`, `event == "gap" || malformed`, `client_id contains "kgo"`, `client_id`,
		`size > 100`, `tls`, `tls.version == "1.3"`, `tls.cipher`, `src == 127.0.0.1:46058`, `dst`, `stream_offset > 500`,
		`peer`, `index >= 20`, `auth.mechanism == "SCRAM-SHA-256"`, `auth.source == "sasl"`, `auth.authenticated`,
		`api_key == 30`, `api_version == 3`, `correlation_id == 4`, `file contains "acls"`, `summary contains "orders"`,
		`inferred`, `forwarded`, `problems.message`, `time`, `api_name == "SaslAuthenticate"`,
		`client_software.name == "kgo"`, `client_software.version`,
		// Wireshark's names, the derived ones included.
		`kafka`, `!kafka`, `kafka.api_key == 31`, `kafka.error ~= 0`, `ip.src == 127.0.0.1`, `ip.addr == 127.0.0.0/8`,
		`tcp.port == 9092`, `tcp.dstport == 9092`, `tcp.srcport == 9092`, `packets in {20..40}`, `frame.number == 25`,
		`all packets > 30`,
	}
	const dir = "../testdata/pcaps/"
	matched := map[string]int{}
	for _, c := range []struct{ name, keylog string }{
		{"kadm-acls", ""}, {"sasl-scram-acls", ""}, {"sarama-acls", ""}, {"tls13-acls", dir + "tls13-acls.keylog"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := capture.DefaultOptions()
			if c.keylog != "" {
				o.KeyLogs = []string{c.keylog}
			}
			run, err := capture.Open(o, []string{dir + c.name + ".pcap"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			fs := make([]*filter.Filter, len(exprs))
			for i, x := range exprs {
				if fs[i], err = filter.CompileWith(x, run.Registry()); err != nil {
					t.Fatalf("%s: %v", x, err)
				}
			}
			feed := NewFeed(run.Registry())
			type want struct {
				e   Entry
				got []bool
			}
			var rows []want
			_, err = run.Read(context.Background(), capture.ListenerFunc(func(r *capture.Record) {
				var w want
				if r.Kind == capture.KindMessage {
					for _, f := range fs {
						w.got = append(w.got, f.Record(r))
					}
				}
				feed.Record(r)
				if r.Kind == capture.KindMessage {
					w.e = <-feed.entries
					rows = append(rows, w)
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range rows {
				load := func(i int) *dissect.Message {
					m, err := feed.Load(i)
					if err != nil {
						t.Fatal(err)
					}
					return m
				}
				for i, f := range fs {
					got := f.Match(&entryFields{e: &w.e, load: load})
					if got != w.got[i] {
						t.Errorf("#%d %s: the entry %v, the record %v", w.e.Index, exprs[i], got, w.got[i])
					}
					if got {
						matched[exprs[i]]++
					}
				}
			}
		})
	}
	// The comparison means something only where the filters hold.
	for _, x := range []string{exprs[0], exprs[1], exprs[3], `latency_us > 100`, `client_id`, `tls.version == "1.3"`,
		`src == 127.0.0.1:46058`, `stream_offset > 500`, `peer`, `auth.source == "sasl"`, `file contains "acls"`,
		`client_software.name == "kgo"`, `kafka`, `tcp.port == 9092`, `tcp.srcport == 9092`, `ip.addr == 127.0.0.0/8`, `packets in {20..40}`, `frame.number == 25`} {
		if matched[x] == 0 {
			t.Errorf("%s matched no message of the captures", x)
		}
	}
}

// Search finds a value in any field of any message, not only in the
// rows, decoding in the background with progress; it never finds a
// secret; n and N decode each message once per query.
func TestSearchAcrossFields(t *testing.T) {
	fc := newFake(1000)
	load := func(i int) (*dissect.Message, error) {
		fc.loads = append(fc.loads, i)
		e := fc.entries[i]
		res := fmt.Sprintf("topic%d", i)
		if i == 900 {
			res = "needle-topic" // in the body only: the summary says topic900
		}
		return fakeMessage(e, fmt.Sprintf("User:user%d", i), res), nil
	}
	m := newTestModel(t, load, fc.entries, 100, 30)
	m = send(m, join(keys("/"), typed("needle"))...)
	m, cmd := update(m, keyMsg("enter"))
	if cmd == nil || !m.search.active {
		t.Fatal("the search did not start in the background")
	}
	if got := strings.TrimSpace(screenLines(t, m)[m.height-1]); got != `searching "needle": 0 of 999 messages · esc stops` {
		t.Errorf("key line %q", got)
	}
	msgs := runCmd(cmd)
	m, cmd = update(m, msgs[0])
	if got := strings.TrimSpace(screenLines(t, m)[m.height-1]); got != fmt.Sprintf(`searching "needle": %d of 999 messages · esc stops`, scanChunk) {
		t.Errorf("after a chunk, key line %q", got)
	}
	m = send(m, runCmd(cmd)...)
	if m.selectedIndex() != 900 || m.tree.selected().Name != "ResourceName" || m.search.active {
		t.Fatalf("/needle: #%d %v active %v", m.selectedIndex(), m.tree.selected(), m.search.active)
	}
	// Back to where it started, then n again: nothing is decoded twice.
	m = send(m, keys("[")...)
	if m.selectedIndex() != 0 {
		t.Fatalf("[ after the search: #%d", m.selectedIndex())
	}
	before := len(fc.loads)
	m = send(m, keys("n")...)
	if m.selectedIndex() != 900 {
		t.Errorf("n: #%d", m.selectedIndex())
	}
	// One decode at most: the selection's own, when the background cache
	// let it go.
	if n := len(fc.loads) - before; n > 1 {
		t.Errorf("n over known messages decoded %d of them again", n)
	}
	if m.scan.len() > scanCacheSize {
		t.Errorf("the background cache holds %d messages, bound %d", m.scan.len(), scanCacheSize)
	}

	// Esc stops a search: its answers are dropped.
	m = send(m, keys("g")...)
	m = send(m, join(keys("/"), typed("user999x"))...)
	m, cmd = update(m, keyMsg("enter"))
	m = send(m, keys("esc")...)
	if m.search.active || !strings.Contains(m.render(), "search stopped") {
		t.Errorf("esc did not stop the search")
	}
	m = send(m, runCmd(cmd)...)
	if m.selectedIndex() != 0 {
		t.Errorf("a stopped search moved to #%d", m.selectedIndex())
	}
}

// A secret is in no field the search looks at: a password another message
// carries is not found from the list.
func TestSearchNeverFindsSecrets(t *testing.T) {
	reg := dissect.NewRegistry().AddSASL()
	fc := newFake(2)
	secret := reg.Decode(plainAuthFrame(), dissect.Options{Mechanism: "PLAIN"})
	load := func(i int) (*dissect.Message, error) {
		if i == 1 {
			return secret, nil
		}
		return fc.load(i)
	}
	entries := []Entry{fc.entries[0], entryOf(1, t0, "10.0.0.1:5000", "10.0.0.9:9092", secret, -1)}
	m := newTestModel(t, load, entries, 100, 30)
	m = send(m, join(keys("/"), typed("hunter2"), keys("enter"))...)
	if m.selectedIndex() != 0 || !strings.Contains(m.render(), "not found: hunter2") {
		t.Errorf("/hunter2: #%d\n%s", m.selectedIndex(), m.render())
	}
	// The field itself is found by its name.
	m = send(m, join(keys("/"), typed("password"), keys("enter"))...)
	if m.selectedIndex() != 1 || m.tree.selected().Name != "password" {
		t.Errorf("/password: #%d %v", m.selectedIndex(), m.tree.selected())
	}
}

// Backspace or [ goes back after p, an audit jump or a search, ] forward;
// the field selected is restored.
func TestBackAndForward(t *testing.T) {
	fc := newFake(6)
	fc.entries[0].Peer, fc.entries[1].Peer = 1, 0
	m := newTestModel(t, fc.load, fc.entries, 100, 30)
	m = send(m, keys("[")...)
	if !strings.Contains(m.render(), "nothing to go back to") {
		t.Errorf("[ with no jump:\n%s", m.render())
	}
	m = send(m, keys("2", "G")...) // #0's last field: ResourceName
	m = send(m, keys("p")...)
	if m.selectedIndex() != 1 {
		t.Fatalf("p: #%d", m.selectedIndex())
	}
	m = send(m, keys("backspace")...)
	if m.selectedIndex() != 0 || m.tree.selected().Name != "ResourceName" {
		t.Errorf("backspace: #%d %v", m.selectedIndex(), m.tree.selected())
	}
	m = send(m, keys("]")...)
	if m.selectedIndex() != 1 {
		t.Errorf("]: #%d", m.selectedIndex())
	}
	m = send(m, keys("]")...)
	if !strings.Contains(m.render(), "nothing to go forward to") {
		t.Errorf("] at the newest:\n%s", m.render())
	}
	// A search is a jump; moving by hand is not.
	m = send(m, keys("1", "j", "j")...)
	m = send(m, join(keys("/"), typed("user5"), keys("enter"))...)
	if m.selectedIndex() != 5 {
		t.Fatalf("/user5: #%d", m.selectedIndex())
	}
	m = send(m, keys("[")...)
	if m.selectedIndex() != 3 {
		t.Errorf("[ after the search: #%d, want #3", m.selectedIndex())
	}
	m = send(m, keys("[")...)
	if m.selectedIndex() != 0 {
		t.Errorf("[ [: #%d, want #0 (before p)", m.selectedIndex())
	}
	// A place the filter hides stays where it is.
	m = send(m, keys("]")...)
	m = filterTo(m, "deleteacls")
	m = send(m, keys("[")...)
	if m.selectedIndex() != 3 || !strings.Contains(m.render(), "#0 is hidden by the filter") {
		t.Errorf("[ to a hidden place: #%d\n%s", m.selectedIndex(), m.render())
	}

	// The audit view's Enter is a jump too.
	entries, aload := auditCapture(t)
	m = newTestModel(t, aload, entries, 160, 48)
	m = send(m, keys("G")...)
	last := m.selectedIndex()
	m = send(m, keys("a", "g", "enter")...)
	if m.selectedIndex() == last {
		t.Fatalf("the audit jump stayed on #%d", last)
	}
	m = send(m, keys("[")...)
	if m.selectedIndex() != last {
		t.Errorf("[ after the audit jump: #%d, want #%d", m.selectedIndex(), last)
	}
}

// t cycles the Time column: since the first message, the time of day,
// the delta from the previous row shown.
func TestTimeColumn(t *testing.T) {
	fc := newFake(4)
	fc.entries[3].Time = fc.entries[2].Time.Add(2500 * 1e3) // 2.5 ms after #2
	m := newTestModel(t, fc.load, fc.entries, 120, 30)
	row := func(r int) string { return m.list.rowText(r, 120) }
	if !strings.Contains(row(3), " 0.004500 ") || !strings.Contains(m.list.header(120), " Time ") {
		t.Errorf("relative: %q", row(3))
	}
	m = send(m, keys("t")...)
	if !strings.Contains(row(3), " 12:00:00.004500 ") || !strings.Contains(m.list.header(120), " UTC ") {
		t.Errorf("absolute: %q / %q", row(3), m.list.header(120))
	}
	m = send(m, keys("t")...)
	if !strings.Contains(row(3), " 0.002500 ") || !strings.Contains(row(0), " 0.000000 ") || !strings.Contains(m.list.header(120), "Delta") {
		t.Errorf("delta: %q, %q", row(3), row(0))
	}
	// From the previous row shown, not captured: #1 and #3 are 3.5 ms apart.
	m = filterTo(m, "deleteacls")
	if !strings.Contains(row(1), " 0.003500 ") {
		t.Errorf("delta, filtered: %q", row(1))
	}
	m = send(m, keys("t")...)
	if !strings.Contains(row(1), " 0.004500 ") {
		t.Errorf("back to relative: %q", row(1))
	}
	screenLines(t, m)
}

// On a TLS capture without keys the empty list says why; the feed counts
// the connections from the run's TLS session events.
func TestUndecryptedTLS(t *testing.T) {
	m := newTestModel(t, nil, nil, 100, 30)
	m = send(m, ProgressMsg{Finished: true, Undecrypted: 3})
	want := "3 TLS connections not decrypted: --tls-keylog"
	if !screenHas(t, m, "("+want+")") || strings.TrimSpace(screenLines(t, m)[m.height-3]) != want {
		t.Errorf("the empty list does not say %q:\n%s", want, m.render())
	}
	m = send(m, ProgressMsg{Undecrypted: 1}) // an older report never lowers it
	if !screenHas(t, m, want) {
		t.Errorf("a later report with a lower count changed it")
	}

	const path = "../testdata/pcaps/tls13-acls.pcap"
	for _, keylog := range []string{"", "../testdata/pcaps/tls13-acls.keylog"} {
		o := capture.DefaultOptions()
		if keylog != "" {
			o.KeyLogs = []string{keylog}
		}
		open := func() *capture.Run {
			r, err := capture.Open(o, []string{path}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.Close)
			return r
		}
		// What the run says, counted here plainly: connections with a
		// session that was not decrypted.
		conns := map[reassembly.ConnKey]bool{}
		if _, err := open().Read(context.Background(), capture.ListenerFunc(func(r *capture.Record) {
			if le, ok := r.Event.(*reassembly.LayerEvent); ok {
				if s, ok := le.Value.(*tlslayer.Session); ok && !s.Decrypted {
					conns[le.Conn] = true
				}
			}
		})); err != nil {
			t.Fatal(err)
		}
		if (keylog == "") != (len(conns) > 0) {
			t.Fatalf("keylog %q: %d connections not decrypted", keylog, len(conns))
		}
		rd := StartReader(context.Background(), open())
		var last ProgressMsg
		done := make(chan struct{})
		go func() {
			for p := range rd.Progress {
				last = p
			}
			close(done)
		}()
		var n int
		for range rd.Entries {
			n++
		}
		<-done
		if !last.Finished || last.Undecrypted != len(conns) {
			t.Errorf("keylog %q: last report %+v, want Finished and Undecrypted %d", keylog, last, len(conns))
		}
		if keylog == "" && n != 0 {
			t.Errorf("no keys, yet %d entries", n)
		}
	}
}

// Options.Filter starts the explorer filtered; one that does not compile
// opens the bar on it with its error.
func TestStartFilter(t *testing.T) {
	fc := newFake(10)
	m := New(fc.load, Options{Filter: `api == "DeleteAcls"`})
	m = send(m, tea.WindowSizeMsg{Width: 100, Height: 30}, EntriesMsg(fc.entries))
	if m.list.len() != 5 || m.selectedIndex() != 1 {
		t.Errorf("started filtered: %d rows, #%d", m.list.len(), m.selectedIndex())
	}
	m = New(fc.load, Options{Filter: `api = "DeleteAcls"`})
	m = send(m, tea.WindowSizeMsg{Width: 100, Height: 30}, EntriesMsg(fc.entries))
	if m.input != inputFilter || m.bar.err == nil || m.list.filtered() {
		t.Errorf("a bad start filter: input %v, err %v, filter %q", m.input, m.bar.err, m.list.filter)
	}
}

func TestScanCacheIsBounded(t *testing.T) {
	loads := 0
	load := func(i int) (*dissect.Message, error) {
		loads++
		return &dissect.Message{Raw: make([]byte, 100)}, nil
	}
	c := newScanCache(4, 250)
	for i := 0; i < 10; i++ {
		c.get(i, load)
	}
	if c.len() != 2 || c.bytes > 250 {
		t.Errorf("%d messages, %d bytes: want the byte bound to keep 2", c.len(), c.bytes)
	}
	c = newScanCache(3, 1<<20)
	for _, i := range []int{1, 2, 3, 1, 4} { // 1 used again: 2 goes first
		c.get(i, load)
	}
	if _, ok := c.peek(2); ok {
		t.Error("the least recently used stayed")
	}
	if !slices.Equal(c.order, []int{3, 1, 4}) {
		t.Errorf("order %v", c.order)
	}
}

// The bar's two lines come out of the panes: every size, narrow or wide,
// still fills the screen exactly, an error under a long text included.
func TestFilterBarGeometry(t *testing.T) {
	fc := newFake(30)
	for _, sz := range [][2]int{{minWidth, minHeight}, {80, 24}, {129, 40}, {160, 48}} {
		m := newTestModel(t, fc.load, fc.entries, sz[0], sz[1])
		m = send(m, join(keys("f"), typed(`api == "DeleteAcls" && direction == "request" && ResourceName contains "topic1" && Principle`))...)
		lines := screenLines(t, m)
		if m.bar.err == nil || !strings.HasPrefix(lines[1], barPrompt) || !strings.Contains(lines[2], "^") {
			t.Errorf("%dx%d: bar %q / %q", sz[0], sz[1], lines[1], lines[2])
		}
		if !strings.Contains(lines[1], "Principle█") {
			t.Errorf("%dx%d: the end of the text is not in view: %q", sz[0], sz[1], lines[1])
		}
		l := m.layout()
		if l.listHdr.y != 3 || !strings.Contains(lines[3], "No.") {
			t.Errorf("%dx%d: the list header is on line %d: %q", sz[0], sz[1], l.listHdr.y, lines[3])
		}
		m = send(m, keys("esc")...)
		if lines := screenLines(t, m); !strings.Contains(lines[1], "No.") {
			t.Errorf("%dx%d: the bar left its lines behind: %q", sz[0], sz[1], lines[1])
		}
	}
}
