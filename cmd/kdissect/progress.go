package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress draws a bar on stderr while a long read runs; it stays silent
// when stderr is not a terminal (or --progress never), so scripts and logs
// never see it.
type progress struct {
	w     io.Writer
	on    bool
	total int64
	next  time.Time
	start time.Time
	drawn bool
	calls int
}

func newProgress(w io.Writer, mode string, total int64) *progress {
	on := mode == "always" || (mode == "auto" && isTerminal(w))
	return &progress{w: w, on: on && total > 0, total: total, start: time.Now()}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) update(done int64) {
	if !p.on {
		return
	}
	// Reading the clock for every packet would cost more than the bar is worth.
	if p.calls++; p.calls%4096 != 0 {
		return
	}
	now := time.Now()
	if now.Before(p.next) || now.Sub(p.start) < 500*time.Millisecond {
		return
	}
	p.next = now.Add(200 * time.Millisecond)
	frac := min(float64(done)/float64(p.total), 1)
	const width = 30
	n := int(frac * width)
	mbps := float64(done) / 1e6 / now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r[%s%s] %3.0f%% %.0f MB/s ", strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, mbps)
	p.drawn = true
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 60))
	}
}
