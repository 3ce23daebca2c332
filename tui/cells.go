package tui

// Fitting text to a pane: cutting and padding styled text to a number of
// terminal cells, and the scroll offset that keeps a row in view.

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

func clamp(v, lo, hi int) int {
	if v > hi {
		v = hi
	}
	if v < lo {
		v = lo
	}
	return v
}

// revealRow returns the scroll offset that keeps row visible in a pane of
// height rows showing n rows, moving as little as possible.
func revealRow(offset, row, height, n int) int {
	if height <= 0 {
		return 0
	}
	if row < offset {
		offset = row
	}
	if row >= offset+height {
		offset = row - height + 1
	}
	return clamp(offset, 0, max(n-height, 0))
}

// fit truncates s (which may hold styling) to w cells, marking the cut
// with an ellipsis, and pads it with spaces to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := lipgloss.Width(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = lipgloss.Width(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// cell writes s fitted to w cells and a separating space.
func cell(b *strings.Builder, s string, w int, right bool) {
	if right {
		if sw := lipgloss.Width(s); sw < w {
			b.WriteString(strings.Repeat(" ", w-sw))
		}
	}
	b.WriteString(fitNoPad(s, w))
	if !right {
		if sw := lipgloss.Width(s); sw < w {
			b.WriteString(strings.Repeat(" ", w-sw))
		}
	}
	b.WriteByte(' ')
}

func fitNoPad(s string, w int) string {
	if lipgloss.Width(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}
