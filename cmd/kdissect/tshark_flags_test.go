package main

import (
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
