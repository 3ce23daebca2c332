package tui

import (
	"io"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kdissect/kdissect/dissect"
)

// numCats is one more than the highest dissect.Category; the byte layout
// uses index numCats for bytes no node covers.
const numCats = int(dissect.CatTaggedFields) + 1

// Styles is every style the explorer renders with. All are made from one
// renderer, so a test can pin the colour profile without touching
// lipgloss's package-level default.
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
// region (frame, rpc header, request body, response body, tagged_fields).
var catColors = [numCats + 1]lipgloss.Color{"33", "178", "42", "170", "208", "244"}

// NewStyles builds the styles on r; nil means lipgloss's default renderer.
func NewStyles(r *lipgloss.Renderer) Styles {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	ns := r.NewStyle
	var s Styles
	s.Title = ns().Bold(true).Foreground(lipgloss.Color("231")).Background(lipgloss.Color("24"))
	s.Header = ns().Foreground(lipgloss.Color("250")).Background(lipgloss.Color("236"))
	s.HeaderFocused = ns().Bold(true).Foreground(lipgloss.Color("231")).Background(lipgloss.Color("25"))
	s.Row = ns()
	s.Selected = ns().Bold(true).Foreground(lipgloss.Color("231")).Background(lipgloss.Color("25"))
	s.SelectedBlur = ns().Background(lipgloss.Color("238"))
	s.Problem = ns().Foreground(lipgloss.Color("203"))
	s.KafkaError = ns().Foreground(lipgloss.Color("209"))
	s.Dim = ns().Foreground(lipgloss.Color("244"))
	s.Offset = ns().Foreground(lipgloss.Color("244"))
	s.Separator = ns().Foreground(lipgloss.Color("240"))
	for i, c := range catColors {
		s.Cat[i] = ns().Foreground(c)
		s.CatMark[i] = ns().Bold(true).Foreground(lipgloss.Color("16")).Background(c)
	}
	s.HexCursor = ns().Bold(true).Underline(true).Foreground(lipgloss.Color("16")).Background(lipgloss.Color("231"))
	s.StatusPath = ns().Bold(true)
	s.StatusText = ns()
	s.Doc = ns().Italic(true).Foreground(lipgloss.Color("250"))
	s.Notice = ns().Foreground(lipgloss.Color("220"))
	s.Prompt = ns().Bold(true).Foreground(lipgloss.Color("220"))

	key := ns().Foreground(lipgloss.Color("110"))
	desc := ns().Foreground(lipgloss.Color("246"))
	sep := ns().Foreground(lipgloss.Color("240"))
	s.Help = help.Styles{
		Ellipsis: sep, ShortKey: key, ShortDesc: desc, ShortSeparator: sep,
		FullKey: key, FullDesc: desc, FullSeparator: sep,
	}
	return s
}

// monoStyles are the styles without colour, for terminals that must not
// get any (NO_COLOR): the selection, the marked bytes and the hex cursor
// are told apart by reverse video, bold and underline alone. r must not be
// at the Ascii profile, which drops those attributes too.
func monoStyles(r *lipgloss.Renderer) Styles {
	ns := r.NewStyle
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

// autoStyles are the styles for the terminal r describes: the colours of
// NewStyles, or monoStyles at the ANSI profile when r's profile is Ascii.
// termenv picks Ascii for NO_COLOR (and for a CI variable, or an output
// that is no terminal), and at Ascii lipgloss drops attributes with the
// colours: nothing would show the selection.
func autoStyles(r *lipgloss.Renderer) Styles {
	if r.ColorProfile() != termenv.Ascii {
		return NewStyles(r)
	}
	mono := lipgloss.NewRenderer(io.Discard) // never asked to query the terminal
	mono.SetColorProfile(termenv.ANSI)
	return monoStyles(mono)
}
