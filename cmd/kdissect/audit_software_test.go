package main

import (
	"encoding/csv"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every audit row names the client software its connection's ApiVersions
// v3+ request announced, in each format and as a filter key. The figures
// are what the real clients sent when the captures were made: kadm is
// franz-go ("kgo"), the sarama of sarama-acls is new enough to send v3,
// and the SaslHandshake v0 clients of sasl-v0-acls send no ApiVersions at
// all (their rows carry null).
func TestAuditClientSoftware(t *testing.T) {
	kgo := map[string]any{"name": "kgo", "version": "v1.22.3"}
	sarama := map[string]any{"name": "sarama", "version": "v1.61.1"}
	for _, c := range []struct {
		pcap string
		want func(row map[string]any) any
	}{
		{"kadm-acls", func(map[string]any) any { return kgo }},
		{"sarama-acls", func(map[string]any) any { return sarama }},
		{"sasl-v0-acls", func(r map[string]any) any {
			if strings.HasPrefix(r["client_id"].(string), "kdissect-v0-sarama-") {
				return nil
			}
			return map[string]any{"name": "kdissect-traffic", "version": "1.0.0"}
		}},
	} {
		pcap := "../../testdata/pcaps/" + c.pcap + ".pcap"
		out, stderr, code := runCLI(t, "", "audit", "--format", "json", pcap)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.pcap, code, stderr)
		}
		rows := parseNDJSON(t, out)
		nulls := 0
		for i, r := range rows {
			want := c.want(r)
			if v, ok := r["client_software"]; !ok || !reflect.DeepEqual(v, want) {
				t.Errorf("%s row %d: client_software %v, want %v", c.pcap, i, r["client_software"], want)
			}
			if want == nil {
				nulls++
			}
		}
		if len(rows) == 0 || c.pcap == "sasl-v0-acls" && (nulls == 0 || nulls == len(rows)) {
			t.Fatalf("%s: %d rows, %d without client software", c.pcap, len(rows), nulls)
		}

		// -Y on the rows' keys: present, absent, by name.
		for expr, n := range map[string]int{
			`client_software.name`:                      len(rows) - nulls,
			`!client_software.name`:                     nulls,
			`client_software.name == "sarama"`:          map[bool]int{true: len(rows)}[c.pcap == "sarama-acls"],
			`client_software.version matches "^v1[.]2"`: map[bool]int{true: len(rows)}[c.pcap == "kadm-acls"],
		} {
			out, stderr, _ := runCLI(t, "", "audit", "--format", "json", "-Y", expr, pcap)
			if got := len(parseNDJSON(t, out)); got != n {
				t.Errorf("%s -Y %s: %d rows, want %d (%s)", c.pcap, expr, got, n, stderr)
			}
		}

		// CSV: the two columns, empty for null.
		cout, _, _ := runCLI(t, "", "audit", "--format", "csv", pcap)
		recs, err := csv.NewReader(strings.NewReader(cout)).ReadAll()
		if err != nil || len(recs) != len(rows)+1 {
			t.Fatalf("%s csv: %d records, %v", c.pcap, len(recs), err)
		}
		name, version := slices.Index(recs[0], "client_software_name"), slices.Index(recs[0], "client_software_version")
		if name < 0 || version != name+1 {
			t.Fatalf("%s csv header %v", c.pcap, recs[0])
		}
		for i, r := range rows {
			wn, wv := "", ""
			if sw, ok := c.want(r).(map[string]any); ok {
				wn, wv = sw["name"].(string), sw["version"].(string)
			}
			if recs[i+1][name] != wn || recs[i+1][version] != wv {
				t.Errorf("%s csv row %d: %q %q, want %q %q", c.pcap, i, recs[i+1][name], recs[i+1][version], wn, wv)
			}
		}

		// OCSF: in unmapped, as the row has it.
		oout, _, _ := runCLI(t, "", "audit", "--format", "ocsf", pcap)
		events := parseNDJSON(t, oout)
		if len(events) != len(rows) {
			t.Fatalf("%s: %d ocsf events for %d rows", c.pcap, len(events), len(rows))
		}
		for i, e := range events {
			um, _ := e["unmapped"].(map[string]any)
			if v, ok := um["client_software"]; !ok || !reflect.DeepEqual(v, c.want(rows[i])) {
				t.Errorf("%s ocsf %d: unmapped.client_software %v", c.pcap, i, um["client_software"])
			}
		}
	}
}
