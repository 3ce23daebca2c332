package main

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tshark's command line works as written: -o tls.keylog_file, -d
// tcp.port==P,kafka|tls and tls.port==P,kafka, -i, with Wireshark's field
// names in -Y (issue 18's tshark command, on the shipped TLS capture).
func TestTsharkPreferencesAndDecodeAs(t *testing.T) {
	const sarama = "../../testdata/pcaps/sarama-acls.pcap" // its broker is on port 45069
	same := []struct{ tshark, own []string }{
		{[]string{"--summary", "-r", shippedTLS + ".pcap", "-o", "tls.keylog_file:" + shippedTLS + ".keylog",
			"-d", "tcp.port==9092,tls", "-d", "tls.port==9092,kafka", "-Y", "kafka.api_key == 30"},
			[]string{"--summary", "--tls-keylog", shippedTLS + ".keylog", "-Y", "api_key == 30", shippedTLS + ".pcap"}},
		{[]string{"--summary", "-o", "ssl.keylog_file:" + shippedTLS + ".keylog", shippedTLS + ".pcap"},
			[]string{"--summary", "--tls-keylog", shippedTLS + ".keylog", shippedTLS + ".pcap"}},
		// -d adds to --port, given before it or after.
		{[]string{"--summary", "--detect=false", "-d", "tcp.port==45069,kafka", sarama},
			[]string{"--summary", "--detect=false", "--port", "9092,45069", sarama}},
		{[]string{"--summary", "--detect=false", "-d", "tcp.port==45000-45100,kafka", "--port", "9093", sarama},
			[]string{"--summary", "--detect=false", "--port", "9093,45000-45100", sarama}},
		{[]string{"audit", "--format", "csv", "-o", "tls.keylog_file:" + shippedTLS + ".keylog", shippedTLS + ".pcap"},
			[]string{"audit", "--format", "csv", "--tls-keylog", shippedTLS + ".keylog", shippedTLS + ".pcap"}},
	}
	for _, c := range same {
		got, gotErr, gotCode := runCLI(t, "", c.tshark...)
		want, wantErr, wantCode := runCLI(t, "", c.own...)
		if got != want || gotErr != wantErr || gotCode != wantCode || gotCode != 0 || !strings.Contains(got, "CreateAcls") && !strings.Contains(got, "create") {
			t.Errorf("%q: exit %d, stderr %q\n%s\nwant (%q) exit %d, stderr %q\n%s", c.tshark, gotCode, gotErr, got, c.own, wantCode, wantErr, want)
		}
	}
	if out, _, _ := runCLI(t, "", "--summary", "--detect=false", sarama); strings.Contains(out, "CreateAcls") {
		t.Error("without -d the sarama capture's port is found: the -d cases prove nothing")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "tcp.desegment:FALSE", shippedTLS + ".pcap"}, `kdissect: -o "tcp.desegment:FALSE": kdissect takes only tls.keylog_file:FILE (the same as --tls-keylog FILE)`},
		{[]string{"-d", "udp.port==9092,kafka", shippedTLS + ".pcap"}, `kdissect: -d "udp.port==9092,kafka": kdissect takes tcp.port==PORTS,kafka (or ,tls) and tls.port==PORTS,kafka`},
		{[]string{"-d", "tcp.port==9092,http", shippedTLS + ".pcap"}, `kdissect: -d "tcp.port==9092,http": kdissect takes tcp.port==PORTS,kafka (or ,tls) and tls.port==PORTS,kafka`},
		{[]string{"-d", "tcp.port==70000,kafka", shippedTLS + ".pcap"}, `kdissect: -d "tcp.port==70000,kafka": "70000" is not a port (1-65535)`},
		{[]string{"-i", "nosuch0", "-c", "1"}, `kdissect: no such interface "nosuch0"`},
	} {
		_, stderr, code := runCLI(t, "", c.args...)
		if first, _, _ := strings.Cut(stderr, "\n"); code != 1 || first != c.want {
			t.Errorf("%q: exit %d, stderr %q; want 1, %q", c.args, code, stderr, c.want)
		}
	}
}

// -T fields: a line per record, each column the field's occurrences as
// -Y reads them; checked against the NDJSON of the same messages.
func TestTsharkFields(t *testing.T) {
	const sarama = "../../testdata/pcaps/sarama-acls.pcap"
	sel := []string{"-Y", "api_key in {30 31}"}
	out, stderr, code := runCLI(t, "", append([]string{"-T", "fields", "-E", "header=y", "-e", "index", "-e", "kafka.api_key",
		"-e", "correlation_id", "-e", "Principal", "-e", "ip.src", "-e", "tcp.dstport", "-e", "ErrorCode", sarama}, sel...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "index\tkafka.api_key\tcorrelation_id\tPrincipal\tip.src\ttcp.dstport\tErrorCode" {
		t.Errorf("header %q", lines[0])
	}
	js, _, _ := runCLI(t, "", append([]string{"--json", sarama}, sel...)...)
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(js), "\n") {
		var m struct {
			Index         *int
			APIKey        int `json:"api_key"`
			CorrelationID int `json:"correlation_id"`
			Src, Dst      string
			Tree          jsonNode
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m.Index == nil {
			continue // an event: its columns are empty
		}
		host, _, _ := strings.Cut(m.Src, ":")
		_, dport, _ := strings.Cut(m.Dst, ":")
		want = append(want, strings.Join([]string{strconv.Itoa(*m.Index), strconv.Itoa(m.APIKey), strconv.Itoa(m.CorrelationID),
			strings.Join(m.Tree.values("Principal"), ","), host, dport, strings.Join(m.Tree.values("ErrorCode"), ",")}, "\t"))
	}
	var got []string
	for _, l := range lines[1:] {
		if strings.Trim(l, "\t") != "" {
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) < 10 {
		t.Errorf("-T fields:\n%s\nwant (from --json)\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// -E: separator, aggregator, occurrence, quote.
	// occurrence, as tshark's, picks in every column.
	for _, c := range []struct {
		opts []string
		want string
	}{
		{[]string{"separator=,"}, "17,User:bob,User:Zoë,User:alice,User:Zoë"},
		{[]string{"aggregator=/s"}, "17\tUser:bob User:Zoë User:alice User:Zoë"},
		{[]string{"occurrence=f"}, "17\tUser:bob"},
		{[]string{"occurrence=l"}, "17\tUser:Zoë"},
		{[]string{"occurrence=2"}, "\tUser:Zoë"},
		{[]string{"occurrence=9"}, "\t"},
		{[]string{"quote=d"}, `"17"` + "\t" + `"User:bob","User:Zoë","User:alice","User:Zoë"`},
		{[]string{"separator=;", "aggregator=|", "header=y"}, "index;Principal\n17;User:bob|User:Zoë|User:alice|User:Zoë"},
	} {
		args := []string{"-T", "fields", "-e", "index", "-e", "Principal", "-Y", "index == 17", sarama}
		for _, o := range c.opts {
			args = append(args, "-E", o)
		}
		out, stderr, code := runCLI(t, "", args...)
		if code != 0 || out != c.want+"\n" {
			t.Errorf("-E %v: exit %d %s\n%q\nwant %q", c.opts, code, stderr, out, c.want+"\n")
		}
	}
	// No output form shows a secret unless --show-secrets; -T fields neither.
	for _, show := range []bool{false, true} {
		args := []string{"--all", "-T", "fields", "-e", "password", "-e", "AuthBytes", "-e", "proof", "-e", "token", "../../testdata/pcaps/sasl-scram-acls.pcap"}
		if show {
			args = append(args, "--show-secrets")
		}
		out, _, _ = runCLI(t, "", args...)
		shown := strings.Contains(out, "admin-secret") || strings.Contains(out, hex.EncodeToString([]byte("admin-secret")))
		if shown != show {
			t.Errorf("--show-secrets %v: the password shown %v:\n%s", show, shown, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-T", "json", sarama}, `kdissect: -T "json": kdissect writes text (the field trees) and fields (-e); for JSON, --json writes NDJSON (kdissect's own contract, see README)`},
		{[]string{"-T", "fields", sarama}, `kdissect: -T fields needs at least one -e FIELD`},
		{[]string{"-e", "api", sarama}, `kdissect: -e and -E are for -T fields`},
		{[]string{"-T", "fields", "-e", "api", "--json", sarama}, `kdissect: -T fields is an output form of its own: not with --json, --summary, --tui or -x`},
		{[]string{"-T", "fields", "-e", "Principle", sarama}, `kdissect: -e: unknown field "Principle"; did you mean "Principal"?`},
		{[]string{"-T", "fields", "-e", "a b", sarama}, `kdissect: -e: "a b" is not a field name`},
		{[]string{"-T", "fields", "-e", "api", "-E", "occurrence=0", sarama}, `kdissect: -E occurrence=0: not a value occurrence takes`},
		{[]string{"-T", "fields", "-e", "api", "-E", "bom=y", sarama}, `kdissect: -E bom=y: kdissect takes header=y|n, separator=/t|/s|C, aggregator=/s|C, occurrence=a|f|l|N and quote=d|s|n`},
	} {
		_, stderr, code := runCLI(t, "", c.args...)
		if first, _, _ := strings.Cut(stderr, "\n"); code != 1 || first != c.want {
			t.Errorf("%q: exit %d, stderr %q; want 1, %q", c.args, code, stderr, c.want)
		}
	}
}

// values are the values of the nodes named name, at any depth, as -T
// fields writes them.
func (n *jsonNode) values(name string) []string {
	var out []string
	if n.Name == name {
		switch v := n.Value.(type) {
		case float64:
			out = append(out, strconv.FormatInt(int64(v), 10))
		case string:
			out = append(out, v)
		}
	}
	for _, c := range n.Children {
		out = append(out, c.values(name)...)
	}
	return out
}

// Wire text in a column is escaped as everywhere else.
func TestTsharkFieldsEscapeWireText(t *testing.T) {
	out, stderr, code := runCLI(t, "", "-T", "fields", "-e", "Principal", "-e", "ResourceName", "-e", "client_id",
		"-e", "ErrorMessage", hostileACLCapture(t))
	if code != exitMalformed {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.ContainsAny(out, "\x1b\x07\u202e\xff") {
		t.Errorf("raw wire text:\n%q", out)
	}
	for _, want := range []string{`User:\x1b]0;pwned\a\x1b[2J\u202eeve` + "\t" + `ord\xffers` + "\t" + `cli\x1b[31m`, "\t\t\t" + `no \x1b[5mway\x1b[0m`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%q", want, out)
		}
	}
}

// writeCounter counts its Write calls.
type writeCounter struct{ n, bytes int }

func (w *writeCounter) Write(p []byte) (int, error) {
	w.n++
	w.bytes += len(p)
	return len(p), nil
}

// -l writes each record as it is printed, as tshark's; -n changes nothing.
func TestTsharkLineBuffered(t *testing.T) {
	const sarama = "../../testdata/pcaps/sarama-acls.pcap"
	plain, _, _ := runCLI(t, "", "--summary", sarama)
	for _, args := range [][]string{{"--summary"}, {"--summary", "-l"}, {"-n", "--summary", "-l"}, {"-T", "fields", "-e", "index", "-l"}} {
		var w writeCounter
		run(append(args, sarama), nil, &w, io.Discard)
		lines := strings.Count(plain, "\n")
		switch {
		case !slices.Contains(args, "-l") && w.n != 1:
			t.Errorf("%q: %d writes, want 1", args, w.n)
		case slices.Contains(args, "-l") && w.n < lines:
			t.Errorf("%q: %d writes for %d lines", args, w.n, lines)
		}
		if args[0] != "-T" && w.bytes != len(plain) {
			t.Errorf("%q: %d bytes, want %d", args, w.bytes, len(plain))
		}
	}
}

// -G fields lists the names -Y and -e take, a tab-separated line each, as
// tshark -G fields does; another report is a usage error.
func TestGlossaryFields(t *testing.T) {
	out, errOut, code := runCLI(t, "", "-G", "fields")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 500 {
		t.Fatalf("%d names", len(lines))
	}
	for _, want := range []string{"F\tapi_key\tint\tkdissect\t", "F\tkafka.acl_principal\tstring\twireshark\tPrincipal, PrincipalFilter",
		"F\tResourceName\tstring\tkafka\t"} {
		found := false
		for _, l := range lines {
			found = found || l == want
		}
		if !found {
			t.Errorf("no line %q", want)
		}
	}
	for _, l := range lines {
		if strings.Count(l, "\t") != 4 || !strings.HasPrefix(l, "F\t") {
			t.Errorf("line %q", l)
			break
		}
	}
	if _, errOut, code := runCLI(t, "", "-G", "protocols"); code != 1 || !strings.Contains(errOut, `-G "protocols": kdissect's glossary is fields`) {
		t.Errorf("-G protocols: exit %d, %q", code, errOut)
	}
}
