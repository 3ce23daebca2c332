// Package oneframe is the run of kdissect frame: one Kafka frame, size
// prefix included, read from a file, standard input or hex, decoded with
// what a developer checking an encoder needs to hear about it, and
// rendered.
package oneframe

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/render"
)

// MaxInput bounds what Read reads: a frame is at most --max-frame bytes in
// a capture too.
const MaxInput = 64 << 20

// Read returns the frame given as hexIn or as the one file of args ("-":
// stdin). Mistakes in how it was given are capture.UsageErrors.
func Read(hexIn string, args []string, stdin io.Reader) ([]byte, error) {
	switch {
	case hexIn != "" && len(args) > 0:
		return nil, capture.UsageError{Msg: "give the frame either with --hex or as a FILE, not both"}
	case hexIn != "":
		return ParseHex(hexIn)
	case len(args) == 0:
		return nil, capture.UsageError{Msg: "no frame: give a FILE, - for standard input, or --hex"}
	case len(args) > 1:
		// A hex string split by the shell lands here: join it back.
		if b, err := ParseHex(strings.Join(args, "")); err == nil {
			return b, nil
		}
		return nil, capture.UsageError{Msg: "one frame at a time: give a single FILE"}
	}
	var r io.Reader = stdin
	name := "standard input"
	if args[0] != "-" {
		name = args[0]
		st, err := os.Stat(name)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: %v", name, capture.PlainErr(err))
		case st.IsDir():
			return nil, fmt.Errorf("%s: is a directory, not a frame file", name)
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, capture.PlainErr(err))
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %v", name, capture.PlainErr(err))
	case len(b) > MaxInput:
		return nil, fmt.Errorf("%s: more than %d MiB: not a single frame", name, MaxInput>>20)
	case len(b) == 0:
		return nil, fmt.Errorf("%s: empty: no frame to decode", name)
	}
	return b, nil
}

// ParseHex reads --hex: spaces, colons and a 0x prefix are ignored.
func ParseHex(s string) ([]byte, error) {
	s = strings.NewReplacer(" ", "", "\n", "", "\t", "", ":", "", "\r", "").Replace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" {
		return nil, capture.UsageError{Msg: "--hex is empty"}
	}
	if len(s)%2 == 1 {
		return nil, capture.UsageError{Msg: fmt.Sprintf("--hex has an odd number of digits (%d)", len(s))}
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		if e, ok := err.(hex.InvalidByteError); ok {
			return nil, capture.UsageError{Msg: fmt.Sprintf("--hex: %q is not a hex digit", rune(e))}
		}
		return nil, capture.UsageError{Msg: "--hex: " + err.Error()}
	}
	return b, nil
}

// Options say how to read the frame.
type Options struct {
	// Response: the frame is a response of APIKey at APIVersion (a
	// response does not carry them); else a request.
	Response           bool
	APIKey, APIVersion int16
	ShowSecrets        bool
	MaxNodes           int // dissect.Options.MaxNodes
}

// Decode decodes frame with reg. For a request it also returns notes, one
// sentence each, for the user: that the bytes also decode exactly as an ACL
// response (and the flags that read them so), or else why they do not look
// like a request. They do not change the decode.
func Decode(reg *dissect.Registry, frame []byte, o Options) (m *dissect.Message, notes []string) {
	if o.Response {
		return reg.Decode(frame, dissect.Options{Direction: dissect.Response, APIKey: o.APIKey, APIVersion: o.APIVersion,
			ShowSecrets: o.ShowSecrets, MaxNodes: o.MaxNodes}), nil
	}
	m = reg.Decode(frame, dissect.Options{ShowSecrets: o.ShowSecrets, MaxNodes: o.MaxNodes})
	if (m.APIKey == 30 || m.APIKey == 31) && len(m.Problems) == 0 {
		return m, nil // an ACL message decoded clean needs no second reading
	}
	if notes = responseFits(reg, frame); notes == nil {
		if why := notARequest(frame); why != "" {
			notes = []string{"these bytes do not look like a Kafka request frame: " + why}
		}
	}
	return m, notes
}

// responseFits says, for each ACL response the frame also decodes as
// exactly (every byte consumed, no problem), which versions and how to read
// it so: a response does not carry its API key, so without the flags it is
// read as whatever request its correlation id's bytes spell, typically
// "Produce v0".
func responseFits(reg *dissect.Registry, frame []byte) []string {
	fits := map[int16][]string{}
	best := map[int16]int16{}
	var keys []int16
	for o := range reg.NewDecoder().Fits(frame, dissect.Options{}, nil) {
		if fits[o.APIKey] == nil {
			keys = append(keys, o.APIKey)
			best[o.APIKey] = o.APIVersion // the newest comes first
		}
		fits[o.APIKey] = append([]string{fmt.Sprintf("v%d", o.APIVersion)}, fits[o.APIKey]...)
	}
	var notes []string
	for _, key := range keys {
		notes = append(notes, fmt.Sprintf("this frame also decodes exactly as a %s response (%s); to read it so, add --response --api %d --version %d",
			dissect.APIName(key), strings.Join(fits[key], ", "), key, best[key]))
	}
	return notes
}

// notARequest says why frame's first bytes are not a Kafka request's
// header, or "" when they could be.
func notARequest(frame []byte) string {
	h, ok := dissect.PeekRequest(frame)
	var why []string
	if !ok {
		return fmt.Sprintf("%d bytes, fewer than a request header's 12", len(frame))
	}
	if int64(h.Size) != int64(len(frame))-4 {
		why = append(why, fmt.Sprintf("its size prefix says %d bytes follow, but %d do", h.Size, len(frame)-4))
	}
	switch {
	case h.APIKey < 0 || h.APIKey > dissect.MaxAPIKey || dissect.MaxVersion(h.APIKey) < 0:
		why = append(why, fmt.Sprintf("API key %d is not one Kafka defines", h.APIKey))
	case h.APIVersion < 0 || h.APIVersion > dissect.MaxVersion(h.APIKey):
		why = append(why, fmt.Sprintf("%s has no version %d (the newest is %d)", dissect.APIName(h.APIKey), h.APIVersion, dissect.MaxVersion(h.APIKey)))
	}
	return strings.Join(why, "; ")
}

// Append renders m in form f (a tree with its byte layout when hexDump)
// after out.
func Append(out []byte, m *dissect.Message, f render.Form, hexDump bool) []byte {
	switch f {
	case render.JSON:
		out = dissect.AppendJSON(out, m)
		return append(out, '\n')
	case render.Summary:
		out = append(out, dissect.Escape(m.Summary)...)
		return append(out, '\n')
	}
	out = dissect.AppendText(out, m.Tree)
	if hexDump {
		out = append(out, '\n')
		out = dissect.AppendLayout(out, m)
	}
	return out
}
