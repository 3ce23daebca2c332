// Command kdissect decodes Kafka's ACL admin traffic (CreateAcls and
// DeleteAcls) from captures, live interfaces or single frames into
// annotated field trees.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kdissect/kdissect/dissect"
)

// Exit codes: scripts rely on them.
const (
	exitOK        = 0
	exitUsage     = 1 // bad input or usage
	exitMalformed = 2 // the input held malformed Kafka data (still printed)
)

// usageError is a mistake on the command line: exit 1 with the usage hint.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: tests call it directly.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var err error
	malformed := false
	switch {
	case len(args) > 0 && args[0] == "frame":
		malformed, err = runFrame(args[1:], stdin, stdout, stderr)
	case len(args) > 0 && args[0] == "audit":
		malformed, err = runAudit(args[1:], stdin, stdout, stderr)
	default:
		malformed, err = runCapture(args, stdin, stdout, stderr)
	}
	var ue usageError
	switch {
	case errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "kdissect: %s\nRun 'kdissect --help' for usage.\n", ue.msg)
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

// loadSchemaDir adds every *.json definition in dir to a registry built on
// the built-in definitions.
func loadSchemaDir(dir string) (*dissect.Registry, error) {
	reg := dissect.NewRegistry()
	if dir == "" {
		return reg, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--schema-dir %s: not a readable directory", dir)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("--schema-dir %s: no *.json message definitions in it", dir)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--schema-dir: %v", err)
		}
		if _, err := reg.AddJSON(src); err != nil {
			return nil, fmt.Errorf("--schema-dir: %s: %v", filepath.Base(f), err)
		}
	}
	return reg, nil
}

// parseAPI takes an API key as a number or a Kafka name (CreateAcls, 30).
func parseAPI(s string) (int16, error) {
	s = strings.TrimSpace(s)
	var k int
	if _, err := fmt.Sscanf(s, "%d", &k); err == nil && fmt.Sprint(k) == s {
		if k < 0 || k > 32767 {
			return 0, usageError{fmt.Sprintf("API key %d is out of range", k)}
		}
		return int16(k), nil
	}
	if k, ok := dissect.APIKeyByName(s); ok {
		return k, nil
	}
	return 0, usageError{fmt.Sprintf("unknown API %q: give a number (30) or a name (CreateAcls)", s)}
}

// parseInterspersed parses flags wherever they stand among the positional
// arguments, as tshark and most tools allow ("kdissect x.pcap --json");
// everything after "--" is positional.
//
// Errors come back as usageError and --help prints usage to stdout:
// the flag package's own printing is silenced.
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
		return nil, usageError{err.Error()}
	}
	return pos, nil
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
