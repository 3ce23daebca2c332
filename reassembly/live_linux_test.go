//go:build linux

package reassembly

import (
	"bytes"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLiveLoopback captures a real TCP conversation on lo: two request
// frames and a response, then FIN both ways. Every packet on lo must come
// once (AF_PACKET delivers lo traffic twice; see skipOutgoing), Close from
// another goroutine must stop a waiting Next, and the WriteTo copy must give
// the same events when read back as a file.
func TestLiveLoopback(t *testing.T) {
	var copyBuf bytes.Buffer
	src, err := OpenLive("lo", LiveOptions{WriteTo: &copyBuf})
	if err != nil {
		switch {
		case os.Getenv("CI") == "true":
			t.Fatalf("CI runs as root and must capture: %v", err)
		case os.Geteuid() != 0:
			t.Skipf("live capture needs root: %v", err)
		}
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	server := netip.MustParseAddrPort(ln.Addr().String())
	cfg := testConfig()
	cfg.BrokerPorts = PortSet{}
	cfg.BrokerPorts.Add(server.Port())

	// The reader goroutine owns the Pipeline; ended says ConnEnd was seen.
	r := &recorder{}
	ended := make(chan struct{}, 1)
	var stopped time.Time
	done := make(chan error)
	var stats Stats
	go func() {
		p := NewPipeline(cfg, func(e Event) {
			r.emit(e)
			if _, ok := e.(*ConnEnd); ok {
				select {
				case ended <- struct{}{}:
				default:
				}
			}
		})
		for {
			data, ci, link, err := src.Next()
			if err != nil {
				stopped = time.Now()
				p.Close()
				stats = p.Stats()
				if err == io.EOF {
					err = nil
				}
				done <- err
				return
			}
			p.Packet(data, ci, link)
		}
	}()

	req1, req2 := kreq(30, 3, 101, "live", 50), kreq(31, 3, 102, "live", 3000)
	resp := kresp(102, 20)
	served := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		got := make([]byte, len(req1)+len(req2))
		if _, err := io.ReadFull(c, got); err != nil {
			served <- err
			return
		}
		if !bytes.Equal(got, cat(req1, req2)) {
			served <- io.ErrUnexpectedEOF
			return
		}
		if _, err := c.Write(resp); err != nil {
			served <- err
			return
		}
		_, err = io.Copy(io.Discard, c) // until the client's FIN
		served <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	client := netip.MustParseAddrPort(c.LocalAddr().String())
	for _, b := range [][]byte{req1, req2} {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]byte, len(resp))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-served; err != nil {
		t.Fatalf("server: %v", err)
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Error("no ConnEnd within 5 s")
	}

	start := time.Now()
	go src.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next still running 5 s after Close")
	}
	t.Logf("Next returned %v after Close (poll interval %v)", stopped.Sub(start), pollInterval)

	// Packet numbers depend on unrelated lo traffic: compare them below
	// against the file copy only.
	var lines []string
	for _, l := range r.lines {
		lines = append(lines, l[:strings.Index(l+" pk=", " pk=")])
	}
	want := []string{
		"frame c1> off=0 size=" + itoa(len(req1)),
		"frame c1> off=" + itoa(len(req1)) + " size=" + itoa(len(req2)),
		"frame c1< off=0 size=" + itoa(len(resp)),
		endLine(1, client, server, false),
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("live events:\n%s\nwant:\n%s", strings.Join(r.lines, "\n"), strings.Join(want, "\n"))
	}
	wantFrames(t, r, req1, req2, resp)
	for i, f := range eventsOf[*Frame](r) {
		fromClient := i < 2
		src, dst := client, server
		if !fromClient {
			src, dst = server, client
		}
		wantKey := ConnKey{Client: client, Server: server, ID: 1}
		if f.Conn != wantKey || f.ConnID != 1 || f.FromClient != fromClient || f.Src != src || f.Dst != dst || f.Truncated {
			t.Errorf("frame %d: %+v", i, f.Flow)
		}
		if len(f.Packets) == 0 || f.First.After(f.Last) || time.Since(f.First) > time.Minute {
			t.Errorf("frame %d: packets %v, times %v..%v", i, f.Packets, f.First, f.Last)
		}
	}
	if stats.Retransmissions != 0 || stats.Connections != 1 {
		t.Errorf("stats %+v: lo packets seen twice?", stats)
	}

	// The WriteTo copy read back as a file gives the same events.
	fr, err := readAllWith(t, writeFile(t, "live.pcap", copyBuf.Bytes()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, fr, r.lines...)
	wantFrames(t, fr, req1, req2, resp)
}
