package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressBar(t *testing.T) {
	feed := func(p *progress) {
		p.start = time.Now().Add(-time.Second) // past the quiet first half second
		for i := 1; i <= 3*4096; i++ {
			p.update(int64(i) * 1000)
		}
		p.done()
	}
	var quiet bytes.Buffer
	feed(newProgress(&quiet, "auto", 50_000_000)) // a buffer is not a terminal
	if quiet.Len() != 0 {
		t.Errorf("auto mode wrote to a non-terminal: %q", quiet.String())
	}
	var never bytes.Buffer
	feed(newProgress(&never, "never", 50_000_000))
	if never.Len() != 0 {
		t.Errorf("never mode wrote %q", never.String())
	}
	var shown bytes.Buffer
	feed(newProgress(&shown, "always", 50_000_000))
	out := shown.String()
	if !strings.Contains(out, "\r[") || !strings.Contains(out, "%") || !strings.HasSuffix(out, "\r") {
		t.Errorf("always mode: %q", out)
	}
	if !strings.Contains(out, " 8%") { // 4096 packets of 1000 bytes of 50 MB
		t.Errorf("first report should say 8%%: %q", out)
	}
}
