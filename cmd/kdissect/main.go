// Command kdissect decodes Kafka traffic from captures, live interfaces or
// single frames into annotated field trees. It is flags, help and wiring:
// the run is internal/capture's, the output internal/render's and tui's.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/capture"
	_ "github.com/kdissect/kdissect/internal/hugepages" // before gopacket/layers' init: see there
)

// Exit codes: scripts rely on them.
const (
	exitOK        = 0
	exitUsage     = 1 // bad input or usage
	exitMalformed = 2 // the input held malformed Kafka data (still printed)
	// exitIncomplete: the audit's log may miss changes (blind spots). Malformed
	// data is a blind spot too, so 2 wins over 3; 1 over both.
	exitIncomplete = 3
)

// errIncomplete is what a command returns when its output may be
// incomplete (exit 3), having said why.
var errIncomplete = errors.New("the log may be incomplete")

func main() {
	// The memory limit is the binary's, not the library's: tests that
	// call the run must not change their own process's collector.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(capture.MemoryLimit)
	}
	os.Exit(guarded(os.Stderr, os.Getenv("KDISSECT_TRACEBACK") != "", func() int {
		return run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	}))
}

// guarded runs f and turns a panic into one sentence and exit 1: a user
// sees no stack trace, even for a bug. With traceback (KDISSECT_TRACEBACK
// set) the panic goes on, stack and all, for the bug report.
func guarded(stderr io.Writer, traceback bool, f func() int) (code int) {
	defer func() {
		if v := recover(); v != nil {
			if traceback {
				panic(v)
			}
			fmt.Fprintf(stderr, "kdissect: internal error: %s (a bug; KDISSECT_TRACEBACK=1 shows where it happened)\n", dissect.Escape(fmt.Sprint(v)))
			code = exitUsage
		}
	}()
	return f()
}

// commands are the subcommands; the main command reads captures.
var commands = map[string]func(args []string, stdin io.Reader, stdout, stderr io.Writer) (bool, error){
	"frame": runFrame,
	"audit": runAudit,
}

// run is main without the process: tests call it directly.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name, cmd := "", runCapture
	if len(args) > 0 {
		if args[0] == "help" {
			// "kdissect help [audit|frame]", as git and go have it.
			args = append(append([]string(nil), args[1:min(len(args), 2)]...), "--help")
		}
		if c, ok := commands[args[0]]; ok {
			name, cmd, args = args[0], c, args[1:]
		}
	}
	malformed, err := cmd(args, stdin, stdout, stderr)
	// A mistake on the command line: exit 1 with the usage hint of the
	// command it was made on.
	var ue capture.UsageError
	switch {
	case errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errIncomplete) && malformed:
		return exitMalformed
	case errors.Is(err, errIncomplete):
		return exitIncomplete
	case errors.As(err, &ue):
		help := "kdissect --help"
		if name != "" {
			help = "kdissect " + name + " --help"
		}
		fmt.Fprintf(stderr, "kdissect: %s\nRun '%s' for usage.\n", err, help)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "kdissect: %s\n", err)
		return exitUsage
	case malformed:
		return exitMalformed
	}
	return exitOK
}

var errHelp = errors.New("help shown")

// parseInterspersed parses flags wherever they stand among the positional
// arguments, as tshark and most tools allow ("kdissect x.pcap --json");
// everything after "--" is positional.
//
// Errors come back as capture.UsageError, in our words rather than the flag
// package's, and --help prints usage to stdout.
func parseInterspersed(fs *flag.FlagSet, usage string, args []string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	pos, err := parseArgs(fs, args)
	switch {
	case err == flag.ErrHelp:
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, usage)
		fs.PrintDefaults()
		return nil, errHelp
	case err != nil:
		return nil, capture.UsageError{Msg: flagError(err)}
	}
	return pos, nil
}

var (
	badValue    = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-([^:]+): (.*)$`)
	undefined   = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	needsArgRe  = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
	parseSuffix = regexp.MustCompile(`(parse error|invalid syntax|value out of range)$`)
)

// flagError says what the flag package found in one sentence of ours.
func flagError(err error) string {
	s := err.Error()
	if m := badValue.FindStringSubmatch(s); m != nil {
		what := m[3]
		if parseSuffix.MatchString(what) {
			what = "not a valid value"
			switch {
			case strings.HasPrefix(s, "invalid boolean"):
				what = "not true or false"
			case m[2] == "duration":
				what = "not a duration (e.g. 30s, 5m)"
			default:
				what = "not a whole number"
			}
		}
		return fmt.Sprintf("%s %q: %s", dashed(m[2]), m[1], what)
	}
	if m := undefined.FindStringSubmatch(s); m != nil {
		return fmt.Sprintf("unknown flag %s", dashed(m[1]))
	}
	if m := needsArgRe.FindStringSubmatch(s); m != nil {
		return fmt.Sprintf("%s needs a value", dashed(m[1]))
	}
	return s
}

// dashed writes a flag's name as the help text does: -Y, -c, --summary.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos, rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return append(pos, rest...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
