package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/testtools/traffic"
	"github.com/kdissect/kdissect/tui"
)

const saslCapture = "../../testdata/pcaps/sasl-scram-acls.pcap"

// TestNoPasswordInAnyOutput: the SASL PLAIN passwords that cross the wire
// in the shipped captures appear in no output of any mode, and appear with
// --show-secrets where the output shows the SASL messages.
func TestNoPasswordInAnyOutput(t *testing.T) {
	for _, c := range []struct {
		pcap, keylog string
		pws          []string
	}{
		{saslCapture, "", traffic.PlainPasswords()},
		{"../../testdata/pcaps/kadm-acls.pcap", "", traffic.PlainPasswords()},
		// kafkajs's PLAIN logins (testdata/pcaps/clients/kafkajs-sasl.js),
		// one of them refused; and the same inside TLS 1.3, decrypted.
		{"../../testdata/pcaps/kafkajs-sasl.pcap", "", []string{"admin-secret", "wrong-admin-password"}},
		{"../../testdata/pcaps/kafkajs-sasl-tls.pcap", "../../testdata/pcaps/kafkajs-sasl-tls.keylog", []string{"admin-secret", "wrong-admin-password"}},
	} {
		pcap, pws := c.pcap, c.pws
		args := func(mode ...string) []string {
			if c.keylog != "" {
				mode = append(mode, "--tls-keylog", c.keylog)
			}
			return append(mode, pcap)
		}
		for _, mode := range [][]string{
			{}, {"--summary"}, {"--json"}, {"-x"}, {"--all"}, {"--all", "-x"}, {"--all", "--json"}, {"--all", "--summary"},
			{"--all", "--guess", "--json"},
			{"audit"}, {"audit", "--format", "csv"}, {"audit", "--format", "json"}, {"audit", "--effect"},
		} {
			out, stderr, code := runCLI(t, "", args(mode...)...)
			if code != 0 {
				t.Fatalf("%v %s: exit %d: %s", mode, pcap, code, stderr)
			}
			for _, pw := range pws {
				if strings.Contains(out, pw) || strings.Contains(stderr, pw) {
					t.Errorf("%v %s: password %q in the output", mode, pcap, pw)
				}
			}
			if strings.Contains(out, "SaslAuthenticate") != (len(mode) > 0 && mode[0] == "--all") {
				t.Errorf("%v %s: SaslAuthenticate shown: %v", mode, pcap, !(len(mode) > 0 && mode[0] == "--all"))
			}
		}
		for _, mode := range [][]string{{"--all"}, {"--all", "--json"}} {
			out, _, _ := runCLI(t, "", args(append(mode, "--show-secrets")...)...)
			for _, pw := range pws {
				if !strings.Contains(out, pw) {
					t.Errorf("%v --show-secrets %s: password %q not shown", mode, pcap, pw)
				}
			}
		}
		for _, show := range []bool{false, true} {
			screens := explorerScreens(t, pcap, c.keylog, show)
			if !strings.Contains(screens, "by User:admin") {
				t.Errorf("explorer %s: no message shown as by User:admin", pcap)
			}
			for _, pw := range pws {
				if got := strings.Contains(screens, pw); got != show {
					t.Errorf("explorer %s show-secrets=%v: password %q on screen: %v", pcap, show, pw, got)
				}
			}
		}
	}
}

// explorerScreens reads a capture as the explorer does, every API shown,
// and returns every screen of it (the tree of each message with its
// password field selected) and every decoded message's renderings.
func explorerScreens(t *testing.T, path, keylog string, showSecrets bool) string {
	t.Helper()
	o := capture.DefaultOptions()
	o.All, o.ShowSecrets = true, showSecrets
	if keylog != "" {
		o.KeyLogs = []string{keylog}
	}
	load, ech, pch, result := startReader(t, o, path)
	go func() {
		for range pch {
		}
	}()
	var entries []tui.Entry
	for e := range ech {
		entries = append(entries, e)
	}
	if _, err := result(true); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		m, err := load(e.Index)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(dissect.AppendText(nil, m.Tree))
		b.Write(dissect.AppendJSON(nil, m))
		b.Write(dissect.AppendHexDump(nil, m.Raw, m.Tree))
	}
	m := tui.New(load, tui.Options{Title: "t"})
	var model tea.Model = m
	model, _ = model.Update(tea.WindowSizeMsg{Width: 160, Height: 60})
	model, _ = model.Update(tui.EntriesMsg(entries))
	model, _ = model.Update(tui.ProgressMsg{Finished: true})
	for range entries {
		b.WriteString(ansi.Strip(model.View().Content))
		model, _ = model.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	return b.String()
}

// TestAuditNamesTheConnectionsPrincipal: without a hook, audit rows name
// the principal each connection authenticated as, and it is the one the
// clients' sidecar names.
func TestAuditNamesTheConnectionsPrincipal(t *testing.T) {
	for _, name := range []string{"kadm-acls", "sarama-acls", "sasl-scram-acls"} {
		t.Run(name, func(t *testing.T) {
			sc, _, pcap := loadAuditCase(t, name)
			port := strconv.Itoa(sc.BrokerPort)
			want, _, _ := runAuditCLI(t, sidecarPrincipals(sc), "--format", "json", "--port", port, pcap)
			got, stderr, code := runAuditCLI(t, nil, "--format", "json", "--port", port, pcap)
			if code != 0 || got != want {
				t.Errorf("exit %d %s\nfrom the capture:\n%s\nfrom the sidecar:\n%s", code, stderr, got, want)
			}
			who := map[string]bool{}
			for _, r := range parseNDJSON(t, got) {
				p, _ := r["principal"].(string)
				who[p] = true
			}
			wantWho := map[string]bool{}
			for _, ex := range sc.Exchanges {
				wantWho["User:"+ex.User] = true
			}
			if !reflect.DeepEqual(who, wantWho) {
				t.Errorf("principals %v, want %v", who, wantWho)
			}
		})
	}
}

// TestIdentityOnEveryMessage: every ACL message of the SASL capture
// carries its connection's principal and auth, as the sidecar says, in
// NDJSON and at the end of its summary line; bob's SCRAM exchange, which
// the broker ends by closing the connection, is shown failed.
func TestIdentityOnEveryMessage(t *testing.T) {
	sc, err := traffic.LoadExpectFile(strings.TrimSuffix(saslCapture, ".pcap") + ".expect.json")
	if err != nil {
		t.Fatal(err)
	}
	type auth struct {
		Mechanism     *string `json:"mechanism"`
		Source        string  `json:"source"`
		Authenticated bool    `json:"authenticated"`
		Failed        bool    `json:"failed"`
	}
	type line struct {
		Index         int     `json:"index"`
		Src           string  `json:"src"`
		Dst           string  `json:"dst"`
		APIKey        int16   `json:"api_key"`
		Direction     string  `json:"direction"`
		CorrelationID int32   `json:"correlation_id"`
		Principal     *string `json:"principal"`
		Auth          *auth   `json:"auth"`
		Summary       string  `json:"summary"`
	}
	out, _, code := runCLI(t, "", "--all", "--json", saslCapture)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	conns := map[string]map[string]any{}
	raw, _ := json.Marshal(sc.Connections)
	var list []map[string]any
	json.Unmarshal(raw, &list)
	for _, c := range list {
		conns[fmt.Sprint(c["clientPort"])] = c
	}
	acl, failed := 0, 0
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var d line
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		client := d.Src
		if d.Direction == "response" {
			client = d.Dst
		}
		c := conns[client[strings.LastIndexByte(client, ':')+1:]]
		if c == nil {
			t.Fatalf("%s: no such connection in the sidecar", l[:80])
		}
		if d.Auth != nil && d.Auth.Failed {
			failed++
			if c["authenticated"] != false || d.Principal == nil || *d.Principal != "User:"+c["user"].(string) || d.APIKey != 36 || d.CorrelationID != 4 {
				t.Errorf("#%d failed: principal %v; connection %v", d.Index, d.Principal, c)
			}
		}
		if d.APIKey != 30 && d.APIKey != 31 {
			continue
		}
		acl++
		if d.Principal == nil || *d.Principal != c["principal"] || d.Auth == nil || d.Auth.Mechanism == nil ||
			*d.Auth.Mechanism != c["mechanism"] || d.Auth.Source != "sasl" || !d.Auth.Authenticated || d.Auth.Failed {
			t.Errorf("#%d: principal %v auth %+v; connection %v", d.Index, d.Principal, d.Auth, c)
		}
	}
	if acl != 2*len(sc.Exchanges) || failed != 1 {
		t.Errorf("%d ACL messages, %d failed authentications; want %d and 1", acl, failed, 2*len(sc.Exchanges))
	}
	// The summary line ends with the identity.
	out, _, _ = runCLI(t, "", "--all", "--summary", saslCapture)
	var ends []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if i := strings.LastIndex(l, " by "); i >= 0 && (strings.Contains(l, "Acls") || strings.Contains(l, "(failed)")) {
			ends = append(ends, l[i:])
		}
	}
	sort.Strings(ends)
	ends = compactStrings(ends)
	want := []string{" by User:admin", " by User:alice", " by User:bob (failed)", " by User:mallory", " by User:ops,eu=1"}
	if !reflect.DeepEqual(ends, want) {
		t.Errorf("summary lines end with %q, want %q", ends, want)
	}
}

func compactStrings(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// TestAnonymousWithoutApiVersions: a connection captured from its SYN is
// anonymous whatever request opens it (kafkajs opens its fetch
// connections with a Fetch, librdkafka without api.version.request with a
// Metadata); the same bytes picked up without the SYN, where a capture may
// have begun at a frame boundary, are by an unknown principal. audit says
// who made the change only in the first case.
func TestAnonymousWithoutApiVersions(t *testing.T) {
	for _, opened := range []bool{true, false} {
		b := newPcap(t)
		c := midConn(b, 50600, 9092)
		if opened {
			c.Syn()
			c.SynAck()
		}
		c.Send(true, metadataRequest(0))
		c.Send(false, metadataResponse(0))
		c.Send(true, aclRequest(t, 1, 120))
		c.Send(false, aclResponse(1, 0))
		file := b.File(t)
		want := map[bool]any{true: "User:ANONYMOUS", false: nil}[opened]
		lines := 0
		for _, l := range jsonLines(t, exitOK, "--all", file) {
			var m identityLine
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatal(err)
			}
			lines++
			if m.Principal != want || (m.Auth != nil) != opened {
				t.Errorf("opened=%v: %s: principal %v, auth %+v; want %v", opened, m.APIName, m.Principal, m.Auth, want)
			}
		}
		if lines != 4 {
			t.Errorf("opened=%v: %d messages, want 4", opened, lines)
		}
		out, _, _ := runCLI(t, "", "audit", "--format", "csv", file)
		if got := strings.Contains(out, ",User:ANONYMOUS,"); got != opened {
			t.Errorf("opened=%v: audit names User:ANONYMOUS: %v\n%s", opened, got, out)
		}
	}
}
