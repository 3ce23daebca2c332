package main

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/traffic"
)

// TestAuditTLSAndSASLCapturesMatchSidecars: the change log of every
// TLS/SASL/mTLS scenario, decrypted with its key log, holds exactly the
// rows the clients' own record implies, each naming the principal its
// connection authenticated as (SASL user or certificate DN), with no
// principal hook: identity comes from the capture alone.
func TestAuditTLSAndSASLCapturesMatchSidecars(t *testing.T) {
	for _, name := range traffic.SecureNames() {
		t.Run(name, func(t *testing.T) {
			c := buildTLSCapture(t, name)
			var args []string
			if c.keylog != "" {
				args = append(args, "--tls-keylog", c.keylog)
			}
			args = append(args, c.pcap)
			msgs := auditMessages(t, args...)
			out, stderr, code := runAuditCLI(t, nil, append([]string{"--format", "json"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := parseNDJSON(t, out)
			want := expectedRows(t, c.sc, msgs)
			if len(got) != len(want) || len(got) == 0 {
				t.Errorf("%d rows, want %d", len(got), len(want))
			}
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					gj, _ := json.Marshal(got[i])
					wj, _ := json.Marshal(want[i])
					t.Errorf("row %d:\n got %s\nwant %s", i, gj, wj)
				}
			}
		})
	}
}
