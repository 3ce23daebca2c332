package tui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"

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
