package tui

import (
	"errors"
	"strings"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/filter"
)

// listFilter is what the list is filtered by: a display filter of
// internal/filter's language, or one of the explorer's older shorthands
// where the text is not the language.
type listFilter struct {
	text  string         // as typed, trimmed
	f     *filter.Filter // the compiled filter; nil for a shorthand
	short shorthand
	sub   string // shortText: lower-cased
	// notField is why the shorthand's word is not a filter ("unknown
	// field ..."), shown in the bar so a misspelt field is not silent.
	notField error
}

type shorthand uint8

const (
	shortNone   shorthand = iota
	shortErrors           // malformed messages and responses with a Kafka error code
	shortText             // the API name or the connection contains the text
)

// needsBody: matching decodes the message, so it runs in the background.
func (lf *listFilter) needsBody() bool { return lf != nil && lf.f.NeedsBody() }

// operatorWords are the language's words: a text holding one is meant as
// the language, and its error is shown rather than read as a shorthand.
var operatorWords = map[string]bool{
	"eq": true, "ne": true, "any_ne": true, "lt": true, "le": true, "gt": true, "ge": true,
	"contains": true, "matches": true, "in": true, "and": true, "or": true, "not": true,
}

// compileFilter reads the bar's text. The language first: what compiles
// is a filter, even a bare word (a field's presence: "Metadata" is the
// body field, not the API; api == "Metadata" is the API). A text that does
// not compile and uses none of the language's operators is a shorthand,
// as the explorer's f took before the language: "errors" (also "error",
// "problems", "!"), or a part of an API name or of a connection. Anything
// else is the compile error, its column in it.
func compileFilter(text string, reg *dissect.Registry) (*listFilter, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	f, err := filter.CompileWith(text, reg)
	if err == nil {
		return &listFilter{text: text, f: f}, nil
	}
	switch strings.ToLower(text) {
	case "errors", "error", "problems", "!":
		return &listFilter{text: text, short: shortErrors}, nil
	}
	if strings.ContainsAny(text, `=<>!~&|(){}"`) {
		return nil, err
	}
	for _, w := range strings.Fields(text) {
		if operatorWords[strings.ToLower(w)] {
			return nil, err
		}
	}
	lf := &listFilter{text: text, short: shortText, sub: strings.ToLower(text)}
	var fe *filter.Error
	if errors.As(err, &fe) && strings.HasPrefix(fe.Msg, "unknown field") {
		lf.notField = err
	}
	return lf, nil
}

// match reports whether e passes; decode loads its message when the
// filter reads body fields (or problems).
func (lf *listFilter) match(e *Entry, decode func(int) *dissect.Message) bool {
	switch lf.short {
	case shortErrors:
		return e.failed()
	case shortText:
		f := lf.sub
		return strings.Contains(strings.ToLower(e.APIName), f) ||
			strings.Contains(strings.ToLower(e.Src), f) ||
			strings.Contains(strings.ToLower(e.Dst), f) ||
			strings.Contains(strings.ToLower(connText(e)), f)
	}
	return lf.f.Match(&entryFields{e: e, load: decode})
}

// describe is the bar's second line for an accepted text: what it means.
func (lf *listFilter) describe() string {
	switch lf.short {
	case shortErrors:
		return "shorthand: malformed messages (!) and responses with a Kafka error code (E)"
	case shortText:
		s := "shorthand: the API name or the connection contains " + quoteText(lf.text)
		if lf.notField != nil {
			s += " · not a filter: " + dissect.Escape(lf.notField.Error())
		} else {
			s += " · the language: api == \"CreateAcls\", src == 10.0.0.1:5000"
		}
		return s
	}
	return ""
}

func quoteText(s string) string { return "\"" + dissect.Escape(s) + "\"" }

// filterBar is the filter bar's state beyond the text being edited: its
// error, its history and the edit ↑ left.
type filterBar struct {
	err     error    // the text's compile error; the list keeps the last good filter
	history []string // filters applied, oldest first
	pos     int      // the history entry shown, len(history) while editing a new text
	draft   []rune   // the text being edited before ↑ went into the history
	keep    int      // the list position selected when the bar opened
	// pending is what Enter applies that typing does not: a shorthand,
	// or (text "") every message; nil when the list shows the text.
	pending *listFilter
	// left: the last key was the Esc that left the bar, so that a second
	// Esc clears the filter.
	left bool
}

// maxHistory bounds the bar's history.
const maxHistory = 50

func (b *filterBar) remember(text string) {
	if text == "" || (len(b.history) > 0 && b.history[len(b.history)-1] == text) {
		return
	}
	b.history = append(b.history, text)
	if len(b.history) > maxHistory {
		b.history = b.history[len(b.history)-maxHistory:]
	}
}

// errorColumn is the compile error's column (1-based, in runes), or 0.
func errorColumn(err error) int {
	var fe *filter.Error
	if errors.As(err, &fe) {
		return fe.Col
	}
	return 0
}
