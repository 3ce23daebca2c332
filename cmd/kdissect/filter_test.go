package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// Display filters (-Y) and statistics (-z), issue 17: each example of the
// issue and README gives exactly the NDJSON lines a script would select
// from kdissect --json, and each statistic the figures computed here from
// that same NDJSON.

var shippedPcaps = []string{"kadm-acls", "raw-versions", "sarama-acls", "sasl-scram-acls", "sasl-v0-acls"}

func shipped(name string) string { return "../../testdata/pcaps/" + name + ".pcap" }

// slowCapture has three CreateAcls exchanges answered after 1, 150 and 300
// ms.
func slowCapture(t *testing.T) string {
	b := newPcap(t)
	c := openConn(b, 50500, 9092)
	for i, wait := range []time.Duration{0, 150 * time.Millisecond, 300 * time.Millisecond} {
		corr := int32(10 + i)
		c.Send(true, testkit.WithCorr(seed(t, "createacls-v3-request"), corr, true))
		b.Wait(wait)
		c.Send(false, testkit.WithCorr(seed(t, "createacls-v3-response"), corr, false))
	}
	return b.File(t)
}

// treeNodes are the nodes of an NDJSON message's body called name.
func treeNodes(m map[string]any, name string) []map[string]any {
	var out []map[string]any
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if n["name"] == name {
			out = append(out, n)
		}
		kids, _ := n["children"].([]any)
		for _, k := range kids {
			walk(k.(map[string]any))
		}
	}
	tree, _ := m["tree"].(map[string]any)
	if tree == nil {
		return nil
	}
	for _, c := range tree["children"].([]any) {
		if c := c.(map[string]any); strings.HasSuffix(c["category"].(string), "body") {
			walk(c)
		}
	}
	return out
}

func anyNode(m map[string]any, name string, ok func(n map[string]any) bool) bool {
	for _, n := range treeNodes(m, name) {
		if ok(n) {
			return true
		}
	}
	return false
}

func isMessage(m map[string]any) bool { _, ev := m["event"]; return !ev }

// jsonMalformed is capture.Malformed as the NDJSON says it.
func jsonMalformed(m map[string]any) bool {
	switch m["event"] {
	case nil:
		p, _ := m["problems"].([]any)
		return len(p) > 0 && m["inferred"] != true
	case "unparseable":
		return m["leading"] != true
	case "tls_problem":
		return true
	}
	return false
}

var filterExamples = []struct {
	expr  string
	files func(t *testing.T) []string
	want  func(m map[string]any) bool
}{
	{`api == "CreateAcls" && principal == "User:alice"`, nil, func(m map[string]any) bool {
		return isMessage(m) && m["api_name"] == "CreateAcls" && m["principal"] == "User:alice"
	}},
	{`api == "DeleteAcls" && direction == "response" && ErrorCode ~= 0`, nil, func(m map[string]any) bool {
		return isMessage(m) && m["api_name"] == "DeleteAcls" && m["direction"] == "response" &&
			anyNode(m, "ErrorCode", func(n map[string]any) bool { v, ok := n["value"].(float64); return ok && v != 0 })
	}},
	{`Principal contains "alice" && !(principal == "User:admin")`, nil, func(m map[string]any) bool {
		return isMessage(m) && m["principal"] != "User:admin" &&
			anyNode(m, "Principal", func(n map[string]any) bool { s, _ := n["value"].(string); return strings.Contains(s, "alice") })
	}},
	{`ResourceName matches "^orders" && Operation in {"WRITE" "ALL"}`, nil, func(m map[string]any) bool {
		return isMessage(m) &&
			anyNode(m, "ResourceName", func(n map[string]any) bool {
				s, _ := n["value"].(string)
				return regexp.MustCompile(`(?i)^orders`).MatchString(s)
			}) &&
			anyNode(m, "Operation", func(n map[string]any) bool { return n["value"] == 4.0 || n["value"] == 2.0 })
	}},
	{`latency_us > 100000`, func(t *testing.T) []string { return []string{slowCapture(t)} }, func(m map[string]any) bool {
		v, ok := m["latency_us"].(float64)
		return ok && v > 100000
	}},
	{`event == "gap" || malformed`, func(t *testing.T) []string { return []string{lossyCapture(t)} }, func(m map[string]any) bool {
		return m["event"] == "gap" || jsonMalformed(m)
	}},
}

func TestFilterExamplesSelectWhatJQWould(t *testing.T) {
	for _, ex := range filterExamples {
		files := []string{}
		for _, n := range shippedPcaps {
			files = append(files, shipped(n))
		}
		if ex.files != nil {
			files = ex.files(t)
		}
		matched := 0
		for _, f := range files {
			all, _, _ := runCLI(t, "", "--json", "--all", f)
			var want []string
			for _, line := range strings.SplitAfter(all, "\n") {
				if line == "" {
					continue
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatal(err)
				}
				if ex.want(m) {
					want = append(want, line)
				}
			}
			got, stderr, code := runCLI(t, "", "--json", "--all", "-Y", ex.expr, f)
			if code == exitUsage {
				t.Fatalf("%s: %s", ex.expr, stderr)
			}
			if g := strings.Join(want, ""); got != g {
				t.Errorf("-Y '%s' %s:\n got %s\nwant %s", ex.expr, f, got, g)
			}
			matched += len(want)
			// The same messages in every form.
			sum, _, _ := runCLI(t, "", "--summary", "--all", "--filter", ex.expr, f)
			tree, _, _ := runCLI(t, "", "-x", "--all", "-Y", ex.expr, f)
			var headings []string
			for _, l := range strings.Split(tree, "\n") {
				if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "!!") {
					headings = append(headings, l)
				}
			}
			if s := strings.Join(headings, "\n"); strings.TrimSuffix(sum, "\n") != s {
				t.Errorf("-Y '%s' %s: the tree headings\n%s\nare not the summary\n%s", ex.expr, f, s, sum)
			}
		}
		if matched == 0 {
			t.Errorf("-Y '%s' matched nothing in %v: the test proves nothing", ex.expr, files)
		}
	}
}

// A filter that cannot work stops the run before it reads a packet: one
// sentence on stderr, exit 1, nothing on stdout.
func TestFilterErrorsStopBeforeReading(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-Y", `Principle == "User:alice"`, shipped("kadm-acls")},
			"kdissect: -Y: unknown field \"Principle\" at 1; did you mean \"Principal\"?\n"},
		{[]string{"--summary", "--filter", `api == "CreateAcls" && latency_us > "slow"`, shipped("kadm-acls")},
			"kdissect: -Y: cannot compare latency_us (a number) with \"slow\" at 37\n"},
		{[]string{"audit", "-Y", `bindng.principal == "User:bob"`, shipped("kadm-acls")},
			"kdissect: -Y: unknown field \"bindng.principal\" at 1; did you mean \"binding.principal\"?\n"},
		{[]string{"-z", "latncy", shipped("kadm-acls")},
			"kdissect: -z \"latncy\": not a statistic (they are apis, latency, errors, principals, conns, expert, io,stat[,SECONDS])\nRun 'kdissect --help' for usage.\n"},
		{[]string{"--tui", "-z", "apis", shipped("kadm-acls")},
			"kdissect: choose one of --json, --summary and --tui (the explorer has no statistics: -z and -q are not for it)\nRun 'kdissect --help' for usage.\n"},
		{[]string{"--tui", "-q", shipped("kadm-acls")},
			"kdissect: choose one of --json, --summary and --tui (the explorer has no statistics: -z and -q are not for it)\nRun 'kdissect --help' for usage.\n"},
		// Checked as for every other form, before the explorer opens.
		{[]string{"--tui", "-Y", `Principle == "x"`, shipped("kadm-acls")},
			"kdissect: -Y: unknown field \"Principle\" at 1; did you mean \"Principal\"?\n"},
	} {
		out, stderr, code := runCLI(t, "", c.args...)
		if code != exitUsage || out != "" || stderr != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr\n%q\nwant\n%q", c.args, code, out, stderr, c.want)
		}
	}
}

// The filter knows the fields of the definitions the run decodes with:
// --schema-dir's too.
func TestFilterNamesSchemaDirFields(t *testing.T) {
	src, err := os.ReadFile("../../testdata/schemas/DescribeAclsRequest.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	def := strings.ReplaceAll(string(src), `"HostFilter"`, `"HostPattern"`)
	if err := os.WriteFile(dir+"/DescribeAclsRequest.json", []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	file := shipped("sasl-scram-acls")
	_, stderr, code := runCLI(t, "", "--summary", "--all", "-Y", "HostPattern", file)
	if code != exitUsage || stderr != "kdissect: -Y: unknown field \"HostPattern\" at 1\n" {
		t.Errorf("without --schema-dir: exit %d %s", code, stderr)
	}
	out, stderr, code := runCLI(t, "", "--summary", "--all", "--schema-dir", dir, "-Y", `HostPattern || api == "DescribeAcls" && HostFilter`, file)
	if code != exitOK || strings.Count(out, "\n") != 1 || !strings.Contains(out, "DescribeAcls v3 request") {
		t.Errorf("with --schema-dir: exit %d %s\n%s", code, stderr, out)
	}
}

// tshark's spellings: -r FILE, -V, -c N on files.
func TestTsharkSpellings(t *testing.T) {
	a, b := shipped("kadm-acls"), shipped("sarama-acls")
	plain, _, _ := runCLI(t, "", a, b)
	for _, args := range [][]string{{"-r", a, "-r", b}, {"-r", a, b}, {"-V", "-r", a, b}} {
		if out, stderr, code := runCLI(t, "", args...); out != plain || code != exitOK {
			t.Errorf("%q: exit %d %s\n%s", args, code, stderr, out)
		}
	}
	out, _, _ := runCLI(t, "", "--summary", "-c", "3", "-r", a)
	if n := strings.Count(out, "\n#"); !strings.HasPrefix(out, "!!") || n != 3 {
		t.Errorf("-c 3: %d messages\n%s", n, out)
	}
	aud, _, _ := runCLI(t, "", "audit", "--format", "json", b)
	if out, _, _ := runCLI(t, "", "audit", "--format", "json", "-r", b); out != aud || aud == "" {
		t.Errorf("audit -r:\n%s\nwant\n%s", out, aud)
	}
}

// kdissect audit -Y keeps the rows it matches, named by their keys.
func TestAuditFilterOnRowKeys(t *testing.T) {
	for _, c := range []struct {
		expr string
		want func(r map[string]any) bool
	}{
		{`result == "error"`, func(r map[string]any) bool { return r["result"] == "error" }},
		{`kind == "acl" && action == "create" && binding.principal contains "alice"`, func(r map[string]any) bool {
			b, _ := r["binding"].(map[string]any)
			p, _ := b["principal"].(string)
			return r["kind"] == "acl" && r["action"] == "create" && strings.Contains(p, "alice")
		}},
		{`principal != "User:admin" && binding.operation in {"ALL" "ANY"}`, func(r map[string]any) bool {
			b, _ := r["binding"].(map[string]any)
			return r["principal"] != "User:admin" && (b["operation"] == "ALL" || b["operation"] == "ANY")
		}},
		{`error_code == "CLUSTER_AUTHORIZATION_FAILED"`, func(r map[string]any) bool { return r["error_code"] == 31.0 }},
	} {
		matched := 0
		for _, n := range shippedPcaps {
			all, _, code := runCLI(t, "", "audit", "--format", "json", shipped(n))
			rows, blind := splitAudit(t, all)
			got, stderr, gotCode := runCLI(t, "", "audit", "--format", "json", "-Y", c.expr, shipped(n))
			if gotCode != code {
				t.Fatalf("%s: exit %d, without -Y %d: %s", c.expr, gotCode, code, stderr)
			}
			gotRows, gotBlind := splitAudit(t, got)
			var want []map[string]any
			for _, r := range rows {
				if c.want(r) {
					want = append(want, r)
				}
			}
			if !reflect.DeepEqual(gotRows, want) || !reflect.DeepEqual(gotBlind, blind) {
				t.Errorf("audit -Y '%s' %s:\n got %v\nwant %v", c.expr, n, gotRows, want)
			}
			matched += len(want)
		}
		if matched == 0 {
			t.Errorf("audit -Y '%s' matched nothing", c.expr)
		}
	}
	// The table counts what it shows.
	out, _, _ := runCLI(t, "", "audit", "-Y", `result == "error"`, shipped("sarama-acls"))
	if !strings.Contains(out, "3 changes by 2 principals") {
		t.Errorf("table:\n%s", out)
	}
}

// nearest is the nearest-rank percentile, computed the long way.
func nearest(v []float64, p float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[int(math.Ceil(p/100*float64(len(s))))-1]
}

func sizeOnWire(m map[string]any) float64 {
	frame := m["tree"].(map[string]any)["children"].([]any)[0].(map[string]any)
	return frame["children"].([]any)[0].(map[string]any)["value"].(float64) + 4
}

// statsFromJSON computes every -z table from kdissect --json's lines.
func statsFromJSON(t *testing.T, out string) map[string][]map[string]any {
	type acc struct {
		row  map[string]any
		lats []float64
	}
	tables := map[string]map[string]*acc{}
	order := map[string][]string{}
	get := func(stat, key string, init map[string]any) *acc {
		if tables[stat] == nil {
			tables[stat] = map[string]*acc{}
		}
		a := tables[stat][key]
		if a == nil {
			init["stat"] = stat
			a = &acc{row: init}
			tables[stat][key] = a
			order[stat] = append(order[stat], key)
		}
		return a
	}
	inc := func(r map[string]any, k string, n float64) { r[k] = r[k].(float64) + n }
	for _, m := range parseNDJSON(t, out) {
		if !isMessage(m) {
			continue
		}
		api, key, dir := m["api_name"], m["api_key"], m["direction"].(string)
		size := sizeOnWire(m)
		a := get("apis", fmt.Sprint(api, m["api_version"]), map[string]any{"api": api, "api_key": key,
			"api_version": m["api_version"], "requests": 0.0, "responses": 0.0, "bytes": 0.0})
		inc(a.row, dir+"s", 1)
		inc(a.row, "bytes", size)
		if l, ok := m["latency_us"].(float64); ok {
			a := get("latency", fmt.Sprint(api), map[string]any{"api": api, "api_key": key})
			a.lats = append(a.lats, l)
		}
		if dir == "response" {
			seen := map[float64]bool{}
			var walk func(n map[string]any)
			walk = func(n map[string]any) {
				if v, ok := n["value"].(float64); ok && strings.HasSuffix(n["name"].(string), "ErrorCode") && v != 0 {
					name := any(nil)
					if d := regexp.MustCompile(`^-?\d+ \(([A-Z_]+)\)$`).FindStringSubmatch(n["display"].(string)); d != nil {
						name = d[1]
					}
					a := get("errors", fmt.Sprint(api, v), map[string]any{"api": api, "api_key": key, "error": name,
						"error_code": v, "count": 0.0, "responses": 0.0})
					inc(a.row, "count", 1)
					if !seen[v] {
						seen[v] = true
						inc(a.row, "responses", 1)
					}
				}
				kids, _ := n["children"].([]any)
				for _, k := range kids {
					walk(k.(map[string]any))
				}
			}
			walk(m["tree"].(map[string]any))
		}
		auth, _ := m["auth"].(map[string]any)
		p := get("principals", fmt.Sprint(m["principal"], api), map[string]any{"principal": m["principal"], "api": api,
			"api_key": key, "requests": 0.0, "responses": 0.0, "failed_authentications": 0.0})
		inc(p.row, dir+"s", 1)
		if auth != nil && auth["failed"] == true && (dir == "response" || m["peer"] == nil) {
			inc(p.row, "failed_authentications", 1)
		}
		client, broker := m["src"], m["dst"]
		if dir == "response" {
			client, broker = broker, client
		}
		c := get("conns", fmt.Sprint(m["file"], client, broker), map[string]any{"client": client, "broker": broker,
			"principal": nil, "client_software": nil, "tls": m["tls"], "messages": 0.0, "bytes": 0.0,
			"first": m["time"], "file": m["file"]})
		inc(c.row, "messages", 1)
		inc(c.row, "bytes", size)
		c.row["last"] = m["time"]
		if m["principal"] != nil {
			c.row["principal"] = m["principal"]
		}
		if sw := m["client_software"]; sw != nil {
			c.row["client_software"] = sw
		}
	}
	out2 := map[string][]map[string]any{}
	for stat, keys := range order {
		for _, k := range keys {
			a := tables[stat][k]
			if stat == "latency" {
				a.row["count"] = float64(len(a.lats))
				for _, p := range []float64{50, 90, 99} {
					a.row[fmt.Sprintf("p%d_us", int(p))] = nearest(a.lats, p)
				}
				a.row["max_us"] = nearest(a.lats, 100)
			}
			out2[stat] = append(out2[stat], a.row)
		}
	}
	return out2
}

// sameRows compares rows as sets: the order of the tables is checked on
// its own.
func sameRows(t *testing.T, what string, got, want []map[string]any) {
	t.Helper()
	key := func(r map[string]any) string { b, _ := json.Marshal(r); return string(b) }
	var g, w []string
	for _, r := range got {
		g = append(g, key(r))
	}
	for _, r := range want {
		w = append(w, key(r))
	}
	sort.Strings(g)
	sort.Strings(w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, strings.Join(g, "\n     "), strings.Join(w, "\n     "))
	}
}

func TestStatisticsAgreeWithJSON(t *testing.T) {
	cases := [][]string{}
	for _, n := range shippedPcaps {
		cases = append(cases, []string{"--all", shipped(n)})
	}
	cases = append(cases,
		[]string{"--all", "--tls-keylog", "../../testdata/pcaps/tls13-acls.keylog", shipped("tls13-acls")},
		[]string{shipped("sarama-acls"), shipped("kadm-acls")},
		[]string{slowCapture(t)},
		[]string{"--all", "-Y", `principal == "User:alice" || api == "ApiVersions"`, shipped("sasl-scram-acls")})
	seen := map[string]bool{}
	for _, args := range cases {
		msgs, _, _ := runCLI(t, "", append([]string{"--json"}, args...)...)
		want := statsFromJSON(t, msgs)
		zs := []string{"-q", "--json"}
		for _, s := range []string{"apis", "latency", "errors", "principals", "conns"} {
			zs = append(zs, "-z", s)
		}
		out, stderr, code := runCLI(t, "", append(zs, args...)...)
		if code == exitUsage {
			t.Fatalf("%q: %s", args, stderr)
		}
		got := map[string][]map[string]any{}
		var statOrder []string
		for _, r := range parseNDJSON(t, out) {
			s := r["stat"].(string)
			if len(statOrder) == 0 || statOrder[len(statOrder)-1] != s {
				statOrder = append(statOrder, s)
			}
			got[s] = append(got[s], r)
		}
		for _, s := range []string{"apis", "latency", "errors", "principals", "conns"} {
			sameRows(t, fmt.Sprintf("-z %s %q", s, args), got[s], want[s])
			if len(want[s]) > 0 {
				seen[s] = true
			}
		}
		// -z order is the order asked for; without -q the messages come
		// first, unchanged.
		for i, s := range statOrder {
			if i > 0 && s == statOrder[i-1] {
				t.Errorf("rows of %s are not together", s)
			}
		}
		both, _, _ := runCLI(t, "", append([]string{"--json", "-z", "apis"}, args...)...)
		if !strings.HasPrefix(both, msgs) || strings.Count(both[len(msgs):], `{"stat":"apis"`) != len(want["apis"]) {
			t.Errorf("%q: messages then the apis rows, got\n%s", args, both[len(msgs):])
		}
	}
	for _, s := range []string{"apis", "latency", "errors", "principals", "conns"} {
		if !seen[s] {
			t.Errorf("no capture gave a %s row: the test proves nothing", s)
		}
	}
}

// The tables hold the JSON's figures, aligned under their headings, after
// the messages.
func TestStatisticsTables(t *testing.T) {
	file := shipped("sasl-scram-acls")
	out, _, code := runCLI(t, "", "--summary", "--all", "-z", "latency", "-z", "principals", file)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	sum, _, _ := runCLI(t, "", "--summary", "--all", file)
	if !strings.HasPrefix(out, sum) {
		t.Fatalf("the messages do not come first")
	}
	tables := out[len(sum):]
	js, _, _ := runCLI(t, "", "-q", "--json", "--all", "-z", "latency", file)
	for _, r := range parseNDJSON(t, js) {
		line := fmt.Sprintf("%-16s  %5.0f  %3.0f  %4.0f  %4.0f  %4.0f  %3.0f\n", r["api"], r["count"], r["p50_us"], r["p90_us"], r["p99_us"], r["max_us"], r["api_key"])
		if !strings.Contains(tables, line) {
			t.Errorf("no line %q in\n%s", line, tables)
		}
	}
	for _, want := range []string{
		"== latency: response latency per API in µs, request's last byte to response's first (nearest-rank percentiles)\nAPI               COUNT  P50   P90   P99   MAX  KEY\n",
		"\n== principals: messages per principal and API, and refused authentications\n",
		"User:bob       SaslAuthenticate         2          1            1   36\n",
	} {
		if !strings.Contains(tables, want) {
			t.Errorf("no %q in\n%s", want, tables)
		}
	}
	if q, _, _ := runCLI(t, "", "-q", "--all", "-z", "latency", "-z", "principals", file); q != tables {
		t.Errorf("-q:\n%s\nwant\n%s", q, tables)
	}
	if q, _, code := runCLI(t, "", "-q", file); q != "" || code != exitOK {
		t.Errorf("-q without -z prints nothing: %q", q)
	}
}
