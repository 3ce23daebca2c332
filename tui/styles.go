package tui

import (
	"image/color"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/kdissect/kdissect/dissect"
)

// numCats is one more than the highest dissect.Category; the byte layout
// uses index numCats for bytes no node covers.
const numCats = int(dissect.CatRecord) + 1

// Styles is every style the explorer renders with. Styles render at full
// colour: the program downsamples the screen to the terminal's colour
// profile as it draws it, so nothing here depends on the terminal.
type Styles struct {
	Title         lipgloss.Style
	Header        lipgloss.Style // pane header
	HeaderFocused lipgloss.Style
	Row           lipgloss.Style
	Selected      lipgloss.Style // cursor row of the focused pane
	SelectedBlur  lipgloss.Style // cursor row of another pane
	Problem       lipgloss.Style // rows with problems
	KafkaError    lipgloss.Style // rows of responses with a Kafka error code
	Dim           lipgloss.Style
	Offset        lipgloss.Style // hex offset column
	Separator     lipgloss.Style

	// Byte layout, indexed by dissect.Category; [numCats] is uncovered.
	Cat       [numCats + 1]lipgloss.Style
	CatMark   [numCats + 1]lipgloss.Style // selected field's bytes
	HexCursor lipgloss.Style

	StatusPath lipgloss.Style
	StatusText lipgloss.Style
	Doc        lipgloss.Style
	Notice     lipgloss.Style
	Prompt     lipgloss.Style

	Help help.Styles
}

// catColors is the legend of the byte layout, one colour per kind of
// region (frame, rpc header, request body, response body, tagged_fields,
// record batch, record), then uncovered bytes.
var catColors = [numCats + 1]color.Color{
	lipgloss.Color("33"), lipgloss.Color("178"), lipgloss.Color("42"),
	lipgloss.Color("170"), lipgloss.Color("208"), lipgloss.Color("81"),
	lipgloss.Color("227"), lipgloss.Color("244"),
}

// NewStyles builds the explorer's colour styles.
func NewStyles() Styles {
	c := lipgloss.Color
	ns := lipgloss.NewStyle
	var s Styles
	s.Title = ns().Bold(true).Foreground(c("231")).Background(c("24"))
	s.Header = ns().Foreground(c("250")).Background(c("236"))
	s.HeaderFocused = ns().Bold(true).Foreground(c("231")).Background(c("25"))
	s.Row = ns()
	s.Selected = ns().Bold(true).Foreground(c("231")).Background(c("25"))
	s.SelectedBlur = ns().Background(c("238"))
	s.Problem = ns().Foreground(c("203"))
	s.KafkaError = ns().Foreground(c("209"))
	s.Dim = ns().Foreground(c("244"))
	s.Offset = ns().Foreground(c("244"))
	s.Separator = ns().Foreground(c("240"))
	for i, cc := range catColors {
		s.Cat[i] = ns().Foreground(cc)
		s.CatMark[i] = ns().Bold(true).Foreground(c("16")).Background(cc)
	}
	s.HexCursor = ns().Bold(true).Underline(true).Foreground(c("16")).Background(c("231"))
	s.StatusPath = ns().Bold(true)
	s.StatusText = ns()
	s.Doc = ns().Italic(true).Foreground(c("250"))
	s.Notice = ns().Foreground(c("220"))
	s.Prompt = ns().Bold(true).Foreground(c("220"))

	key := ns().Foreground(c("110"))
	desc := ns().Foreground(c("246"))
	sep := ns().Foreground(c("240"))
	s.Help = help.Styles{
		Ellipsis: sep, ShortKey: key, ShortDesc: desc, ShortSeparator: sep,
		FullKey: key, FullDesc: desc, FullSeparator: sep,
	}
	return s
}

// monoStyles are the styles without colour, for terminals that must not
// get any (NO_COLOR): the selection, the marked bytes and the hex cursor
// are told apart by reverse video, bold and underline alone.
func monoStyles() Styles {
	ns := lipgloss.NewStyle
	var s Styles
	s.Title = ns().Bold(true).Reverse(true)
	s.Header = ns().Reverse(true)
	s.HeaderFocused = ns().Bold(true).Reverse(true)
	s.Row = ns()
	s.Selected = ns().Bold(true).Reverse(true)
	s.SelectedBlur = ns().Reverse(true)
	s.Problem = ns().Bold(true)
	s.KafkaError = ns().Bold(true)
	s.Dim = ns().Faint(true)
	s.Offset = ns().Faint(true)
	s.Separator = ns()
	for i := range s.Cat {
		s.Cat[i] = ns()
		s.CatMark[i] = ns().Bold(true).Reverse(true)
	}
	// Inside the marked field (where it usually is) the cursor is the one
	// byte not reversed; elsewhere it is still underlined.
	s.HexCursor = ns().Bold(true).Underline(true)
	s.StatusPath = ns().Bold(true)
	s.StatusText = ns()
	s.Doc = ns().Italic(true)
	s.Notice = ns().Bold(true)
	s.Prompt = ns().Bold(true)

	key := ns().Bold(true)
	desc := ns()
	sep := ns().Faint(true)
	s.Help = help.Styles{
		Ellipsis: sep, ShortKey: key, ShortDesc: desc, ShortSeparator: sep,
		FullKey: key, FullDesc: desc, FullSeparator: sep,
	}
	return s
}

// stylesFor are the styles for a terminal of colour profile p. At ASCII
// (NO_COLOR) the program drops colours but keeps attributes: the colour
// styles would then leave the selection as bare bold text, so the mono
// ones take over. At NoTTY every attribute goes too, and no style is
// drawn at all (the zero Styles render text as it is).
func stylesFor(p colorprofile.Profile) Styles {
	switch p {
	case colorprofile.NoTTY:
		return Styles{}
	case colorprofile.ASCII:
		return monoStyles()
	}
	return NewStyles()
}
