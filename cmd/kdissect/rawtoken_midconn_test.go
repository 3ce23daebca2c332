package main

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
)

// A connection picked up at a raw SASL token (its SaslHandshake v0 not
// captured, as when a damaged packet makes the reassembly start a new
// connection there) shows the token's password in no output: PLAIN with
// and without an authzid, and a SCRAM client-final whose proof is the
// secret, each followed by the client's next request, which is shown. The
// resync passes over the token, so even --show-secrets does not show it.
func TestPickedUpAtARawToken(t *testing.T) {
	frame := func(tok string) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...)
	}
	const proof = "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	for _, c := range []struct{ name, tok, secret string }{
		{"PLAIN", "\x00admin\x00picked-up-secret", "picked-up-secret"},
		{"PLAIN with authzid", "admin\x00admin\x00picked-up-secret", "picked-up-secret"},
		{"SCRAM client-final", "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=" + proof, proof},
	} {
		b := newPcap(t)
		conn := midConn(b, 40000, 9092)
		conn.Send(true, frame(c.tok))
		conn.Send(false, frame(""))
		conn.Send(true, metadataRequest(7))
		pcap := b.File(t)
		for _, mode := range [][]string{
			{"--all"}, {"--all", "--json"}, {"--all", "-x"}, {"--all", "--summary"}, {"--all", "--guess", "--json"},
			{"--all", "-T", "fields", "-e", "kafka.api_key"}, {"audit", "--format", "json"},
		} {
			out, stderr, _ := runCLI(t, "", append(mode, pcap)...)
			if strings.Contains(out+stderr, c.secret) {
				t.Errorf("%s %v: the secret is in the output:\n%s", c.name, mode, out)
			}
		}
		// a token is no plausible request header: the resync passes over
		// it as bytes before the first frame, counted and not dumped
		if out, _, _ := runCLI(t, "", "--all", "-x", "--show-secrets", pcap); !strings.Contains(out, "unparseable: skipped "+strconv.Itoa(4+len(c.tok))+" bytes before the first frame boundary") {
			t.Errorf("%s: the token is not passed over:\n%s", c.name, out)
		}
		if out, _, _ := runCLI(t, "", "--all", pcap); !strings.Contains(out, "Metadata v1 request corr=7") {
			t.Errorf("%s: the request after the token is not shown:\n%s", c.name, out)
		}
	}
}
