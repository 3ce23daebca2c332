package main

import (
	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/tui"
)

// runFrameTUI opens one decoded frame in the explorer.
func runFrameTUI(m *dissect.Message) error {
	entries := make(chan tui.Entry, 1)
	e := tui.EntryOf(m)
	e.Index, e.Peer = 1, -1
	entries <- e
	close(entries)
	load := func(int) (*dissect.Message, error) { return m, nil }
	return tui.Run(load, entries, nil, tui.Options{Title: "frame"})
}
