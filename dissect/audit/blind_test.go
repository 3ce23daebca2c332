package audit

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

func TestBlindSummaryGroupsByReasonAndBroker(t *testing.T) {
	b2 := netip.MustParseAddrPort("192.0.2.2:9093")
	spots := []BlindSpot{
		{Reason: BlindUnmatched, Client: client, Broker: broker, Index: testkit.Ptr(4)},
		{Reason: BlindGap, Client: client, Broker: broker, Length: testkit.Ptr(int64(100))},
		{Reason: BlindGap, Client: client, Broker: broker, Length: testkit.Ptr(int64(-1))},
		{Reason: BlindTLSNoKeys, Client: client, Broker: b2},
		{Reason: BlindUnparseable, Client: client, Broker: b2, TLSProblem: "authentication_failed"},
		{Reason: BlindUnparseable, Client: client, Broker: broker, TLSProblem: "malformed_record"},
		{Reason: BlindUnparseable, Client: client, Broker: broker, Length: testkit.Ptr(int64(154))},
		{Reason: BlindIncomplete, Client: client, Broker: broker, APIKey: testkit.Ptr(int16(51)), FromClient: testkit.Ptr(true)},
	}
	rows := []Row{{Inferred: true, ResponseIndex: testkit.Ptr(4)}, {Inferred: true, ResponseIndex: testkit.Ptr(4)}, {ResponseIndex: testkit.Ptr(4)}}
	CountInferred(spots, rows)
	want := []string{
		"1 TLS connection to 192.0.2.2:9093 not decrypted (no keys): changes on them are not in this log",
		"2 gaps on connections to 192.0.2.1:9092 (100 bytes not captured, and more of unknown length): changes in them are not in this log",
		"2 stretches of bytes on connections to 192.0.2.1:9092 not read as Kafka frames (154 bytes skipped; 1 after a TLS problem, length unknown): changes in them are not in this log",
		"1 stretch of bytes on connections to 192.0.2.2:9093 not read as Kafka frames (1 after a TLS problem, length unknown): changes in them are not in this log",
		"1 frame cut short on connections to 192.0.2.1:9092 (1 AlterUserScramCredentials request): changes in them are not in this log",
		"1 response without its request on connections to 192.0.2.1:9092: 2 rows inferred from it (marked inferred), others may be missing",
	}
	wantSummary(t, spots, want)
	if BlindSummary(nil) != nil {
		t.Error("a complete log has a summary")
	}
	var b bytes.Buffer
	if err := WriteBlindSpotsJSON(&b, spots); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["event"] != "blind_spot" {
			t.Errorf("%q: %v", l, err)
		}
	}
}

// A TLS connection the capture picked up after its handshake is not one
// whose secrets a key log lacks: the sentence says which it was.
func TestBlindSummaryNamesMidstreamTLS(t *testing.T) {
	b2 := netip.MustParseAddrPort("192.0.2.2:9093")
	spots := []BlindSpot{
		{Reason: BlindTLSNoKeys, Client: client, Broker: broker, Midstream: true},
		{Reason: BlindTLSNoKeys, Client: client, Broker: b2, Midstream: true},
		{Reason: BlindTLSNoKeys, Client: client, Broker: b2},
		{Reason: BlindTLSNoKeys, Client: client, Broker: b2},
		// TLS records of connections picked up inside a record: unparseable.
		{Reason: BlindUnparseable, Client: client, Broker: broker, Length: testkit.Ptr(int64(100)), Midstream: true},
		{Reason: BlindUnparseable, Client: client, Broker: broker, Length: testkit.Ptr(int64(20)), Midstream: true},
		{Reason: BlindUnparseable, Client: client, Broker: b2, Length: testkit.Ptr(int64(100)), Midstream: true},
		{Reason: BlindUnparseable, Client: client, Broker: b2, Length: testkit.Ptr(int64(5))},
	}
	want := []string{
		"1 TLS connection to 192.0.2.1:9092 not decrypted (captured after the handshake): changes on them are not in this log",
		"3 TLS connections to 192.0.2.2:9093 not decrypted (2 without keys, 1 captured after the handshake): changes on them are not in this log",
		"2 stretches of bytes on connections to 192.0.2.1:9092 not read as Kafka frames (120 bytes skipped: TLS records of connections captured after their handshake): changes in them are not in this log",
		"2 stretches of bytes on connections to 192.0.2.2:9093 not read as Kafka frames (105 bytes skipped, 1 of the stretches TLS records captured after the handshake): changes in them are not in this log",
	}
	wantSummary(t, spots, want)
}

// wantSummary checks BlindSummary's sentences for spots.
func wantSummary(t *testing.T, spots []BlindSpot, want []string) {
	t.Helper()
	if got := BlindSummary(spots); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
