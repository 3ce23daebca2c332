package tui

import (
	"strconv"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// KeyMap is every key binding of the explorer; the help view lists them.
type KeyMap struct {
	Up, Down, Left, Right  key.Binding
	PageUp, PageDown       key.Binding
	Top, Bottom            key.Binding
	NextPane, PrevPane     key.Binding
	FocusList, FocusTree   key.Binding
	FocusHex               key.Binding
	Toggle                 key.Binding
	ExpandAll, CollapseAll key.Binding
	Search, Next, Prev     key.Binding
	Filter, Peer, Audit    key.Binding
	Back, Forward, Time    key.Binding
	Help, Cancel, Quit     key.Binding
	Submit                 key.Binding // in the search/filter prompt
}

// DefaultKeyMap is arrows plus vi keys, Wireshark-like where it has a
// convention.
func DefaultKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Up:          b("↑/k", "up", "up", "k"),
		Down:        b("↓/j", "down", "down", "j"),
		Left:        b("←/h", "collapse·parent·byte left", "left", "h"),
		Right:       b("→/l", "expand·child·byte right", "right", "l"),
		PageUp:      b("pgup/^b", "page up", "pgup", "ctrl+b"),
		PageDown:    b("pgdn/^f", "page down", "pgdown", "ctrl+f"),
		Top:         b("g/home", "first", "g", "home"),
		Bottom:      b("G/end", "last", "G", "end"),
		NextPane:    b("tab", "next pane", "tab"),
		PrevPane:    b("S-tab", "previous pane", "shift+tab"),
		FocusList:   b("1", "message list", "1"),
		FocusTree:   b("2", "field tree", "2"),
		FocusHex:    b("3", "bytes", "3"),
		Toggle:      b("enter/spc", "expand/collapse", "enter", "space"),
		ExpandAll:   b("e", "expand all", "e"),
		CollapseAll: b("c", "collapse all", "c"),
		Search:      b("/", "search", "/"),
		Next:        b("n", "next match", "n"),
		Prev:        b("N", "previous match", "N"),
		Filter:      b("f", "filter bar", "f"),
		Peer:        b("p", "request↔response", "p"),
		Audit:       b("a", "ACL change log", "a"),
		Back:        b("⌫/[", "back", "backspace", "["),
		Forward:     b("]", "forward", "]"),
		Time:        b("t", "time column", "t"),
		Help:        b("?", "help", "?"),
		Cancel:      b("esc", "cancel·clear", "esc"),
		Quit:        b("q/^c", "quit", "q", "ctrl+c"),
		Submit:      b("enter", "apply", "enter"),
	}
}

// ShortHelp is the one-line help at the bottom of the screen.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.NextPane, k.Toggle, k.Search, k.Filter, k.Peer, k.Help, k.Quit}
}

// FullHelp is every binding, grouped as the ? screen shows them.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Left, k.Right, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.NextPane, k.PrevPane, k.FocusList, k.FocusTree, k.FocusHex, k.Toggle, k.ExpandAll, k.CollapseAll},
		{k.Search, k.Next, k.Prev, k.Filter, k.Peer, k.Back, k.Forward},
		{k.Audit, k.Time, k.Help, k.Cancel, k.Quit},
	}
}

// splitKeys turns a key press that carries several runes into one press
// per rune. The terminal reader decides how keys that arrive together are
// grouped, not the explorer; a binding matches one key, so "jjjjj" in one
// press would otherwise move nothing.
func splitKeys(k tea.KeyPressMsg) []tea.KeyPressMsg {
	if utf8.RuneCountInString(k.Text) <= 1 {
		return []tea.KeyPressMsg{k}
	}
	return pastedKeys(k.Text)
}

// pastedKeys are the presses that would have typed s: pasted text acts as
// if it were typed, rune by rune. Line ends are Enter and tabs Tab; other
// controls are dropped, so a paste cannot send Esc or ctrl+c.
func pastedKeys(s string) []tea.KeyPressMsg {
	ks := make([]tea.KeyPressMsg, 0, len(s))
	prev := rune(0)
	for _, r := range s {
		switch {
		case r == '\n' && prev == '\r': // one line end
		case r == '\r' || r == '\n':
			ks = append(ks, tea.KeyPressMsg{Code: tea.KeyEnter})
		case r == '\t':
			ks = append(ks, tea.KeyPressMsg{Code: tea.KeyTab})
		case r == ' ':
			ks = append(ks, tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
		case strconv.IsPrint(r):
			ks = append(ks, tea.KeyPressMsg{Code: r, Text: string(r)})
		}
		prev = r
	}
	return ks
}
