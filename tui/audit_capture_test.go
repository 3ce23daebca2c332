package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/render"
)

// The explorer's audit view names the principals `kdissect audit` names,
// row for row, on the shipped plaintext, SASL and TLS captures: both read
// one capture run and pair with one audit.Log.
func TestAuditViewMatchesTheAuditOnShippedCaptures(t *testing.T) {
	const dir = "../testdata/pcaps/"
	for _, c := range []struct{ name, keylog string }{
		{"kadm-acls", ""},
		{"sasl-scram-acls", ""},
		{"sasl-v0-acls", ""},
		{"tls13-acls", dir + "tls13-acls.keylog"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := capture.DefaultOptions()
			if c.keylog != "" {
				o.KeyLogs = []string{c.keylog}
			}
			open := func() *capture.Run {
				r, err := capture.Open(o, []string{dir + c.name + ".pcap"}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(r.Close)
				return r
			}
			var out bytes.Buffer
			a := render.NewAudit(&out, render.AuditOptions{Format: "json"})
			if _, err := open().Read(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			var want []any
			named := false
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var row map[string]any
				if err := json.Unmarshal([]byte(line), &row); err != nil {
					t.Fatal(err)
				}
				want = append(want, row["principal"])
				named = named || row["principal"] != nil
			}
			if !named && c.name != "kadm-acls" {
				t.Fatalf("kdissect audit names no principal on %s", c.name)
			}

			rd := StartReader(context.Background(), open())
			go func() {
				for range rd.Progress {
				}
			}()
			var entries []Entry
			for e := range rd.Entries {
				entries = append(entries, e)
			}
			m := newTestModel(t, rd.Load, entries, 160, 48)
			m = send(m, keys("a")...)
			if len(m.audit.rows) != len(want) {
				t.Fatalf("explorer: %d rows, kdissect audit: %d", len(m.audit.rows), len(want))
			}
			for i, r := range m.audit.rows {
				var got any
				if r.Principal != nil {
					got = *r.Principal
				}
				if got != want[i] {
					t.Errorf("row %d: explorer %v, kdissect audit %v", i, got, want[i])
				}
			}
		})
	}
}
