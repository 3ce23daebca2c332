package filter

import (
	"context"
	"fmt"
	"testing"

	"github.com/kdissect/kdissect/internal/capture"
)

// counted is a Needer around another that counts what it passes over.
type counted struct {
	capture.Needer
	skipped int
}

func (c *counted) Need(r *capture.Record) capture.Need {
	n := c.Needer.Need(r)
	if n == capture.NeedNothing {
		c.skipped++
	}
	return n
}

// A filter listener passes over undecoded the messages a term of the
// filter rejects by their header, and only those: what it hands on is
// what the filter keeps of every message decoded.
func TestListenerPassesOverWhatTheHeaderRejects(t *testing.T) {
	o := capture.DefaultOptions()
	o.All = true
	for _, c := range []struct {
		expr string
		some bool // some messages are passed over
	}{
		{`api == "CreateAcls"`, true},
		{`api == "CreateAcls" && Principal contains "alice"`, true},
		{`Principal contains "alice" && direction == "response"`, true},
		{`client_id contains "admin" && correlation_id < 4`, true},
		{`principal == "User:alice" && !tls`, true},
		{`api_key in {30 31} && (ErrorCode ~= 0 || latency_us > 100)`, true},
		{`event == "gap"`, true},
		{`api == "CreateAcls" || Principal contains "alice"`, false},
		{`Principal contains "alice"`, false},
		{`malformed && api == "Metadata"`, true},
		{`malformed || api == "Metadata"`, false},
		{`summary contains "orders"`, false},
		{`!(api == "Produce" && Principal)`, false},
	} {
		for _, file := range []string{"raw-versions.pcap", "sasl-v0-acls.pcap", "kadm-acls.pcap"} {
			f, err := Compile(c.expr)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			records(t, file, o, func(r *capture.Record) {
				if f.Record(r) {
					want = append(want, fmt.Sprint(r.Kind, r.Exchange.Index, r.Offset))
				}
			})
			l := &counted{Needer: Listener(f, capture.ListenerFunc(func(r *capture.Record) {
				got = append(got, fmt.Sprint(r.Kind, r.Exchange.Index, r.Offset))
			})).(capture.Needer)}
			run, err := capture.Open(o, []string{"../../testdata/pcaps/" + file}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := run.Read(context.Background(), l); err != nil {
				t.Fatal(err)
			}
			run.Close()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s on %s: handed on\n%v\nwant\n%v", c.expr, file, got, want)
			}
			if (l.skipped > 0) != c.some {
				t.Errorf("%s on %s: %d messages passed over", c.expr, file, l.skipped)
			}
		}
	}
}
