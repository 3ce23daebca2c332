package tui

import (
	tea "charm.land/bubbletea/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/colorprofile"

	"github.com/kdissect/kdissect/dissect"
)

// Wire text with escape sequences, controls, bidi overrides and invalid
// UTF-8 in every place it can reach the screen never reaches it raw.
func TestHostileTextNeverReachesTheScreen(t *testing.T) {
	const evil = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil\xff\xfe\r\n"
	e := Entry{Index: 0, Src: "10.0.0.1:1" + evil, Dst: "b" + evil, APIName: "Create" + evil, APIKey: 30,
		Summary: "ALLOW " + evil, HasProblems: true, KafkaError: "ERR" + evil, Peer: -1}
	msg := fakeMessage(e, evil, "topic"+evil)
	msg.Tree.Children[2].Children[0].Doc = "doc" + evil
	msg.Tree.Children[2].Children[0].Problems = []dissect.Problem{{Offset: 12, Message: "bad" + evil}}
	msg.Problems = []dissect.Problem{{Offset: 12, Message: "msg" + evil}}
	msg.Tree.Children[2].Name = "Body" + evil
	load := func(int) (*dissect.Message, error) { return msg, nil }

	for _, p := range []colorprofile.Profile{colorprofile.NoTTY, colorprofile.ANSI256} {
		m := New(load, Options{Title: "t" + evil})
		m.setStyles(stylesFor(p))
		screens := []string{}
		m = newTestModelFrom(t, m, []Entry{e}, 120, 30)
		screens = append(screens, m.render())
		// Walk onto the hostile field, search and filter with it showing.
		m = send(m, keys("2", "G", "k")...)
		screens = append(screens, m.render())
		m = send(m, join(keys("/"), typed("evil"), keys("enter"))...)
		screens = append(screens, m.render())
		m = send(m, join(keys("f"), typed("create"), keys("enter"))...)
		screens = append(screens, m.render())
		m = send(m, join(keys("f", "ctrl+u"), typed("nothing"), keys("enter"))...)
		screens = append(screens, m.render())
		if !strings.Contains(m.render(), `no message matches the filter "nothing"`) {
			t.Errorf("profile %v: no empty-filter message:\n%s", p, m.render())
		}
		m = send(m, join(keys("f", "ctrl+u"), keys("enter"))...)
		screens = append(screens, m.render())
		// The column is cut to the width left, so only the error's head shows.
		if !strings.Contains(m.render(), `ERR\x1b]0;pwne`) {
			t.Errorf("profile %v: the Kafka error is not shown escaped:\n%s", p, m.render())
		}
		m = send(m, keys("?")...)
		screens = append(screens, m.render())
		for i, s := range screens {
			if !utf8.ValidString(s) {
				t.Errorf("profile %v screen %d: invalid UTF-8", p, i)
			}
			for _, bad := range []string{"\x07", "\x1b]", "\x1b[2J", "\u202e", "\x9b", "\r", "\u009b"} {
				if strings.Contains(s, bad) {
					t.Errorf("profile %v screen %d contains %q raw", p, i, bad)
				}
			}
			if p == colorprofile.NoTTY && strings.Contains(s, "\x1b") {
				t.Errorf("plain screen %d contains ESC", i)
			}
			if !strings.Contains(s, `\x1b]0;pwned\a`) { // dissect.Escape: BEL is \a, as in the text output
				t.Errorf("profile %v screen %d: the escaped text is not shown", p, i)
			}
		}
	}
}

func newTestModelFrom(t *testing.T, m Model, entries []Entry, w, h int) Model {
	t.Helper()
	return send(m, tea_WindowSize(w, h), EntriesMsg(entries))
}

func tea_WindowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
