package render

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Progress draws a bar on stderr while a long read runs; it stays silent
// when stderr is not a terminal (or mode is "never"), so scripts and logs
// never see it. The run reports every thousand packets or so; the bar
// redraws at most five times a second, after a quiet first half second.
type Progress struct {
	w     io.Writer
	on    bool
	next  time.Time
	start time.Time
	drawn bool
}

// NewProgress returns a bar for mode "auto" (when w is a terminal),
// "always" or "never".
func NewProgress(w io.Writer, mode string) *Progress {
	on := mode == "always" || (mode == "auto" && IsTerminal(w))
	return &Progress{w: w, on: on, start: time.Now()}
}

// IsTerminal says whether w is a character device.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Update draws done bytes of total.
func (p *Progress) Update(done, total int64) {
	if !p.on || total <= 0 {
		return
	}
	now := time.Now()
	if now.Before(p.next) || now.Sub(p.start) < 500*time.Millisecond {
		return
	}
	p.next = now.Add(200 * time.Millisecond)
	frac := min(float64(done)/float64(total), 1)
	const width = 30
	n := int(frac * width)
	mbps := float64(done) / 1e6 / now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r[%s%s] %3.0f%% %.0f MB/s ", strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, mbps)
	p.drawn = true
}

// Done clears the bar.
func (p *Progress) Done() {
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 60))
		p.drawn = false
	}
}
