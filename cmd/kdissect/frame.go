package main

import (
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
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

// maxFrameInput bounds what the frame subcommand reads: a frame is at
// most --max-frame bytes in a capture too.
const maxFrameInput = 64 << 20

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
	positional, err := parseInterspersed(fs, frameUsage, args, stdout)
	if err != nil {
		return false, err
	}
	frame, err := readFrameInput(*hexIn, positional, stdin)
	if err != nil {
		return false, err
	}
	reg, err := capture.LoadRegistry(*schemaDir)
	if err != nil {
		return false, err
	}
	var m *dissect.Message
	if *response {
		if *apiFlag == "" || *version < 0 {
			return false, usageError{"a response needs --api and --version: it does not carry its API key"}
		}
		key, err := capture.ParseAPI(*apiFlag)
		if err != nil {
			return false, err
		}
		if *version > 32767 {
			return false, usageError{fmt.Sprintf("version %d is out of range", *version)}
		}
		m = reg.Decode(frame, dissect.Options{Direction: dissect.Response, APIKey: key, APIVersion: int16(*version), ShowSecrets: *showSecrets})
	} else {
		if *apiFlag != "" || *version >= 0 {
			return false, usageError{"--api and --version describe a response: add --response (a request carries its own)"}
		}
		m = reg.Decode(frame, dissect.Options{ShowSecrets: *showSecrets})
		if !cleanACL(m) && !hintResponse(reg, frame, stderr) {
			if why := notARequest(frame); why != "" {
				fmt.Fprintf(stderr, "kdissect: these bytes do not look like a Kafka request frame: %s\n", why)
			}
		}
	}
	if *tui {
		return len(m.Problems) > 0, runFrameTUI(m)
	}
	var out []byte
	switch {
	case *asJSON:
		out = dissect.AppendJSON(out, m)
		out = append(out, '\n')
	case *summary:
		out = append(out, dissect.Escape(m.Summary)...)
		out = append(out, '\n')
	default:
		out = dissect.AppendText(out, m.Tree)
		if *hexDump {
			out = append(out, '\n')
			out = dissect.AppendLayout(out, m)
		}
	}
	if _, err := stdout.Write(out); err != nil {
		return false, err
	}
	return len(m.Problems) > 0, nil
}

// cleanACL reports whether m is an ACL message decoded without a problem:
// then the frame needs no second reading.
func cleanACL(m *dissect.Message) bool {
	return (m.APIKey == 30 || m.APIKey == 31) && len(m.Problems) == 0
}

// hintResponse says on stderr when a frame given as a request also decodes
// exactly (every byte consumed, no problem) as an ACL response, and reports
// whether it did: a response does not carry its API key, so without the
// flags it is read as whatever request its correlation id's bytes spell,
// typically "Produce v0". The output stays the request decode asked for;
// the hint only names the flags, which is why it does not change the exit
// status.
func hintResponse(reg *dissect.Registry, frame []byte, stderr io.Writer) bool {
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
	for _, key := range keys {
		fmt.Fprintf(stderr, "kdissect: this frame also decodes exactly as a %s response (%s); to read it so, add --response --api %d --version %d\n",
			dissect.APIName(key), strings.Join(fits[key], ", "), key, best[key])
	}
	return len(keys) > 0
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

func readFrameInput(hexIn string, args []string, stdin io.Reader) ([]byte, error) {
	switch {
	case hexIn != "" && len(args) > 0:
		return nil, usageError{"give the frame either with --hex or as a FILE, not both"}
	case hexIn != "":
		return parseHex(hexIn)
	case len(args) == 0:
		return nil, usageError{"no frame: give a FILE, - for standard input, or --hex"}
	case len(args) > 1:
		// A hex string split by the shell lands here: join it back.
		if b, err := parseHex(strings.Join(args, "")); err == nil {
			return b, nil
		}
		return nil, usageError{"one frame at a time: give a single FILE"}
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
	b, err := io.ReadAll(io.LimitReader(r, maxFrameInput+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %v", name, capture.PlainErr(err))
	case len(b) > maxFrameInput:
		return nil, fmt.Errorf("%s: more than %d MiB: not a single frame", name, maxFrameInput>>20)
	case len(b) == 0:
		return nil, fmt.Errorf("%s: empty: no frame to decode", name)
	}
	return b, nil
}

func parseHex(s string) ([]byte, error) {
	s = strings.NewReplacer(" ", "", "\n", "", "\t", "", ":", "", "\r", "").Replace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" {
		return nil, usageError{"--hex is empty"}
	}
	if len(s)%2 == 1 {
		return nil, usageError{fmt.Sprintf("--hex has an odd number of digits (%d)", len(s))}
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		if e, ok := err.(hex.InvalidByteError); ok {
			return nil, usageError{fmt.Sprintf("--hex: %q is not a hex digit", rune(e))}
		}
		return nil, usageError{"--hex: " + err.Error()}
	}
	return b, nil
}
