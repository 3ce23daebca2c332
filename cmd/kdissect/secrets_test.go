package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/gopacket/pcapgo"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// withSecrets writes the packets of a pcap as pcapng with a Decryption
// Secrets Block of keys after its header blocks, as `editcap
// --inject-secrets tls,KEYS` does.
func withSecrets(t *testing.T, pcap string, keys []byte) string {
	t.Helper()
	pkts, _, link := readPcap(t, pcap)
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, link)
	if err != nil {
		t.Fatal(err)
	}
	w.Flush()
	head := buf.Len() // the section header and the interface
	for _, pk := range pkts {
		if err := w.WritePacket(pk.ci, pk.data); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	le := binary.LittleEndian
	body := le.AppendUint32(nil, 0x544c534b) // TLS key log
	body = le.AppendUint32(body, uint32(len(keys)))
	body = append(body, keys...)
	body = append(body, make([]byte, (4-len(body)%4)%4)...)
	n := uint32(12 + len(body))
	dsb := le.AppendUint32(le.AppendUint32(nil, 0x0a), n)
	dsb = le.AppendUint32(append(dsb, body...), n)
	out := filepath.Join(t.TempDir(), "embedded.pcapng")
	all := buf.Bytes()
	if err := os.WriteFile(out, append(append(all[:head:head], dsb...), all[head:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// A pcapng file that carries its key log decrypts without --tls-keylog,
// as in Wireshark: the same messages as the pcap with the key log given,
// no blind spot, and no secret in any output.
func TestEmbeddedKeyLog(t *testing.T) {
	keys, err := os.ReadFile(shippedTLS + ".keylog")
	if err != nil {
		t.Fatal(err)
	}
	// A line kdissect does not understand is the file's, not --tls-keylog's.
	file := withSecrets(t, shippedTLS+".pcap", append(append([]byte{}, keys...), "not a key log line\n"...))
	want, _, code := runCLI(t, "", "--summary", "--tls-keylog", shippedTLS+".keylog", shippedTLS+".pcap")
	if code != 0 || strings.Count(want, "CreateAcls") == 0 {
		t.Fatalf("the pcap with its key log: exit %d\n%s", code, want)
	}
	// Compressed, the capture inside is tapped after the decompressor.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	gzFile := file + ".gz"
	if err := os.WriteFile(gzFile, testkit.Gzip(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{file, gzFile} {
		got, stderr, code := runCLI(t, "", "--summary", f)
		if code != 0 || got != want || stderr != "" {
			t.Errorf("%s, with its key log inside: exit %d, stderr %q, output\n%s\nwant\n%s", f, code, stderr, got, want)
		}
	}
	out, stderr, code := runCLI(t, "", "audit", "--format", "json", file)
	if code != 0 || strings.Contains(out, "blind_spot") || !strings.Contains(out, `"principal":"User:mallory"`) {
		t.Errorf("audit: exit %d, stderr %q\n%s", code, stderr, out)
	}
	// Without the block the same file is not decrypted.
	plain := withSecrets(t, shippedTLS+".pcap", nil)
	if out, _, code := runCLI(t, "", "--summary", plain); code != 0 || strings.Contains(out, "CreateAcls") {
		t.Errorf("no secrets: exit %d\n%s", code, out)
	}
	var secrets []string
	for _, l := range strings.Split(string(keys), "\n") {
		if f := strings.Fields(l); len(f) == 3 && !strings.HasPrefix(l, "#") {
			secrets = append(secrets, f[2])
		}
	}
	if len(secrets) == 0 {
		t.Fatal("no secrets in the key log")
	}
	for _, mode := range [][]string{{"--all", "--json"}, {"--all", "-x"}, {"--all"}} {
		out, _, _ := runCLI(t, "", append(mode, file)...)
		for _, s := range secrets {
			b, _ := hex.DecodeString(s)
			if strings.Contains(out, s) || strings.Contains(out, hexDump(b[:8])) {
				t.Errorf("%v: the output holds the secret %s", mode, s)
			}
		}
	}
}

// hexDump is how -x writes bytes: two hex digits each, a space between.
func hexDump(b []byte) string {
	var s []string
	for _, c := range b {
		s = append(s, hex.EncodeToString([]byte{c}))
	}
	return strings.Join(s, " ")
}
