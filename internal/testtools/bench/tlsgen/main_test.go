package main

import (
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// TestGenerateSmall writes 2 MB captures, TLS 1.3 and 1.2, and checks their
// shape: every connection opens with a ClientHello whose random the key log
// names four times (TLS 1.3: its traffic secrets) or once (TLS 1.2: its
// master secret), the broker is on the chosen port, and the frame counts add
// up.
func TestGenerateSmall(t *testing.T) {
	for _, c := range []struct {
		suite    string
		keyLines int
	}{{"TLS_AES_128_GCM_SHA256", 4}, {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", 1}} {
		t.Run(c.suite, func(t *testing.T) { generateSmall(t, c.suite, c.keyLines) })
	}
	if lookupSuite("TLS_NO_SUCH_SUITE") != nil {
		t.Error("an unknown suite name was found")
	}
}

func generateSmall(t *testing.T, suiteName string, keyLines int) {
	suite := lookupSuite(suiteName)
	if suite == nil || isTLS12(suite) != strings.Contains(suiteName, "ECDHE") {
		t.Fatalf("lookupSuite(%s) = %+v", suiteName, suite)
	}
	dir := t.TempDir()
	o := options{out: filepath.Join(dir, "b.pcap"), keylog: filepath.Join(dir, "b.keylog"),
		size: 2 << 20, conns: 3, frameSize: 16 << 10, aclEvery: 10, seed: 1, port: 9093, suite: suite}
	st, err := generate(o)
	if err != nil {
		t.Fatal(err)
	}
	if st.cipher != suiteName {
		t.Errorf("cipher %s", st.cipher)
	}
	if st.bytes < o.size || st.bytes > o.size+256<<10 {
		t.Errorf("%d bytes, want just over %d", st.bytes, o.size)
	}
	if st.acls != st.frames/10 {
		t.Errorf("%d CreateAcls in %d frames, want one in ten", st.acls, st.frames)
	}
	keylog, err := os.ReadFile(o.keylog)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(o.out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	first := map[layers.TCPPort]bool{}
	var packets int64
	for {
		data, _, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		packets++
		p := gopacket.NewPacket(data, layers.LinkTypeEthernet, gopacket.Default)
		tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if tcp == nil {
			t.Fatalf("packet %d is not TCP", packets)
		}
		if tcp.SrcPort != 9093 && tcp.DstPort != 9093 {
			t.Fatalf("packet %d: ports %d -> %d", packets, tcp.SrcPort, tcp.DstPort)
		}
		if tcp.DstPort == 9093 && len(tcp.Payload) > 0 && !first[tcp.SrcPort] {
			first[tcp.SrcPort] = true
			b := tcp.Payload
			if len(b) < 43 || b[0] != 22 || b[5] != 1 {
				t.Fatalf("connection %d does not open with a ClientHello", tcp.SrcPort)
			}
			if n := strings.Count(string(keylog), " "+hex.EncodeToString(b[11:43])+" "); n != keyLines {
				t.Errorf("connection %d: key log names its client random %d times, want %d", tcp.SrcPort, n, keyLines)
			}
		}
	}
	if len(first) != o.conns || packets != st.packets {
		t.Errorf("%d connections, %d packets; want %d, %d", len(first), packets, o.conns, st.packets)
	}
}
