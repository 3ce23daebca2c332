package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	"github.com/kdissect/kdissect/internal/oneframe"
	"github.com/kdissect/kdissect/internal/render"
)

const frameUsage = `Usage: kdissect frame [flags] [FILE | -]

Decodes one Kafka frame (size prefix included) from a binary FILE, from
standard input (-), or from --hex. Requests carry their API key; a response
needs --response --api KEY --version N.

A frame given without --response that also decodes exactly as a CreateAcls
or DeleteAcls response gets a hint on standard error naming the flags; the
exit status is that of the request decode shown.

Examples (from the repository's root):
  kdissect frame testdata/frames/createacls-v3-request.bin
  kdissect frame -x --hex 00000015001e00030000000000000002000100010100000000
  kdissect frame --response --api CreateAcls --version 3 testdata/frames/createacls-v3-response.bin
  kdissect frame --json - < testdata/frames/createacls-v3-request.bin | jq .summary

Flags:
`

func runFrame(args []string, stdin io.Reader, stdout, stderr io.Writer) (bool, error) {
	fs := flag.NewFlagSet("kdissect frame", flag.ContinueOnError)
	hexIn := fs.String("hex", "", "the frame as hex (spaces, colons and a 0x prefix are ignored)")
	response := fs.Bool("response", false, "the frame is a response (needs --api and --version)")
	apiFlag := fs.String("api", "", "API key of the response: number or name (30, CreateAcls)")
	version := fs.Int("version", -1, "API version of the response")
	asJSON := fs.Bool("json", false, "print the message as JSON (the contract in README.md)")
	hexDump := fs.Bool("x", false, "add the byte layout: 16 bytes a row, annotated with the fields they hold")
	summary := fs.Bool("summary", false, "print the one-line summary only")
	schemaDir := fs.String("schema-dir", "", "load more message definitions (Kafka's JSON format) from `DIR`")
	tui := fs.Bool("tui", false, "open the frame in the interactive hex explorer")
	showSecrets := fs.Bool("show-secrets", false, "show SASL passwords, SCRAM proofs and tokens as they are on the wire")
	maxNodes := fs.Int("max-nodes", dissect.DefaultMaxNodes, "most `N` nodes of the message's tree (0: the default): past them the rest is one bytes field and a problem")
	positional, err := parseInterspersed(fs, frameUsage, args, stdout)
	if err != nil {
		return false, err
	}
	o := oneframe.Options{Response: *response, ShowSecrets: *showSecrets, MaxNodes: *maxNodes}
	switch {
	case *maxNodes < 0:
		return false, capture.UsageError{Msg: "--max-nodes takes a number of nodes, 0 for the default"}
	case *response && (*apiFlag == "" || *version < 0):
		return false, capture.UsageError{Msg: "a response needs --api and --version: it does not carry its API key"}
	case *response:
		if o.APIKey, err = capture.ParseAPI(*apiFlag); err != nil {
			return false, err
		}
		if *version > 32767 {
			return false, capture.UsageError{Msg: fmt.Sprintf("version %d is out of range", *version)}
		}
		o.APIVersion = int16(*version)
	case *apiFlag != "" || *version >= 0:
		return false, capture.UsageError{Msg: "--api and --version describe a response: add --response (a request carries its own)"}
	}
	// The flags first: a mistake in them is told before standard input
	// is read to its end.
	frame, err := oneframe.Read(*hexIn, positional, stdin)
	if err != nil {
		return false, err
	}
	reg, err := capture.LoadRegistry(*schemaDir)
	if err != nil {
		return false, err
	}
	m, notes := oneframe.Decode(reg, frame, o)
	for _, n := range notes {
		fmt.Fprintf(stderr, "kdissect: %s\n", n)
	}
	if *tui {
		return len(m.Problems) > 0, runFrameTUI(m)
	}
	form := render.Tree
	switch {
	case *asJSON:
		form = render.JSON
	case *summary:
		form = render.Summary
	}
	if _, err := stdout.Write(oneframe.Append(nil, m, form, *hexDump)); err != nil {
		return false, err
	}
	return len(m.Problems) > 0, nil
}
