package render

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressBar(t *testing.T) {
	feed := func(p *Progress) {
		p.start = time.Now().Add(-time.Second) // past the quiet first half second
		for i := int64(1); i <= 3; i++ {
			p.Update(i*4_000_000, 50_000_000)
			p.next = time.Time{} // as if 200 ms had passed
		}
		p.Done()
	}
	var quiet bytes.Buffer
	feed(NewProgress(&quiet, "auto")) // a buffer is not a terminal
	if quiet.Len() != 0 {
		t.Errorf("auto mode wrote to a non-terminal: %q", quiet.String())
	}
	var never bytes.Buffer
	feed(NewProgress(&never, "never"))
	if never.Len() != 0 {
		t.Errorf("never mode wrote %q", never.String())
	}
	var shown bytes.Buffer
	feed(NewProgress(&shown, "always"))
	out := shown.String()
	if !strings.Contains(out, "\r[") || !strings.HasSuffix(out, "\r") {
		t.Errorf("always mode: %q", out)
	}
	for _, pct := range []string{" 8%", " 16%", " 24%"} {
		if !strings.Contains(out, pct) {
			t.Errorf("always mode should report%s: %q", pct, out)
		}
	}
	var early bytes.Buffer
	p := NewProgress(&early, "always")
	p.Update(1, 2) // within the first half second
	if early.Len() != 0 {
		t.Errorf("the bar drew in its first half second: %q", early.String())
	}
}
