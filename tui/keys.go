package tui

import "github.com/charmbracelet/bubbles/key"

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
		Toggle:      b("enter/spc", "expand/collapse", "enter", " "),
		ExpandAll:   b("e", "expand all", "e"),
		CollapseAll: b("c", "collapse all", "c"),
		Search:      b("/", "search", "/"),
		Next:        b("n", "next match", "n"),
		Prev:        b("N", "previous match", "N"),
		Filter:      b("f", "filter", "f"),
		Peer:        b("p", "request↔response", "p"),
		Audit:       b("a", "ACL change log", "a"),
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
		{k.Search, k.Next, k.Prev, k.Filter, k.Peer, k.Audit, k.Help, k.Cancel, k.Quit},
	}
}
