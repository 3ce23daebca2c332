// Package capture is one run of kdissect over a capture: it opens files,
// standard input or a live interface, builds the reassembly pipeline (with
// its TLS layer) and the dissect session once, owns the packet loops and
// their limits, and publishes what they find as one stream of Records, in
// capture order, to listeners (printers, the audit, the explorer).
//
// It also owns the run's policies, so that every listener gives the same
// answer: what counts as malformed (Malformed), the TLS session of each
// connection, the SASL definitions a --schema-dir must not take away, and
// guessing. It does no rendering.
package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly"
)

// Options are what a user chooses of a run. The zero value is not valid:
// start from DefaultOptions.
type Options struct {
	Ports     string // broker ports, a list and ranges ("9092,19090-19099")
	Detect    bool   // also find Kafka on other ports
	Iface     string // capture live on this interface; "" reads files
	Count     int    // stop after this many messages; 0: no limit
	Duration  time.Duration
	Write     string // live: also write the packets to this pcap file
	User      string // live: the user to parse packets as
	MaxFrame  int
	MaxConns  int
	SchemaDir string
	KeyLogs   []string // NSS key log files for TLS
	// APIs selects the messages handed out: nil is the ACL APIs (with
	// All, every API); else exactly these keys.
	APIs map[int16]bool
	All  bool
	// Guess decodes a response without its request as the first ACL
	// response definition that fits it exactly, marked inferred.
	Guess       bool
	ShowSecrets bool
	// Progress, when set, hears how many bytes of the files' total size
	// have been read, at most every few thousand packets.
	Progress func(done, total int64)
	// Warn takes the run's remarks that are not errors (key log lines
	// skipped, packets of an unknown link type, why nothing was found).
	Warn func(msg string)

	// MaxDecompressed caps what one record batch decompresses to
	// (dissect.Options.MaxDecompressed; 0 its default).
	MaxDecompressed int
	// MaxNodes caps a message's tree (dissect.Options.MaxNodes).
	MaxNodes int
	// BatchHeaders decodes records only as far as their batch headers
	// (dissect.Options.BatchHeaders): for views that show no record.
	BatchHeaders bool
	// Workers: 1 reads, reassembles and dissects on one goroutine; more
	// read and reassemble on one and dissect on the caller's; 0, the
	// default, is runtime.GOMAXPROCS(0). The output is the same.
	Workers int
}

// DefaultOptions are the command line's defaults.
func DefaultOptions() Options {
	return Options{
		Ports:    "9092",
		Detect:   true,
		MaxFrame: reassembly.DefaultMaxFrame,
		MaxConns: reassembly.DefaultMaxConns,

		MaxDecompressed: dissect.DefaultMaxDecompressed,
		MaxNodes:        dissect.DefaultMaxNodes,
	}
}

// UsageError is a choice of options that cannot run: the CLI answers it
// with its usage hint.
type UsageError struct{ Msg string }

func (e UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return UsageError{fmt.Sprintf(format, a...)} }

// Check refuses options that do not go together, before anything is
// opened.
func (o *Options) Check(files []string) error {
	switch {
	case o.Iface == "" && len(files) == 0:
		return usagef("no capture: give pcap/pcapng FILEs, - for standard input, or --iface NAME")
	case o.Iface != "" && len(files) > 0:
		return usagef("give either FILEs or --iface, not both")
	case o.Iface == "" && o.Write != "":
		return usagef("-w writes the packets of a live capture: it goes with --iface")
	case o.Iface == "" && o.Duration != 0:
		return usagef("--duration stops a live capture: it goes with --iface")
	case o.Iface == "" && o.User != "":
		return usagef("--user goes with a live capture (--iface)")
	case o.Count < 0, o.Duration < 0:
		return usagef("-c and --duration take positive values")
	case o.MaxFrame < 16:
		return usagef("--max-frame must be at least 16 bytes")
	case o.MaxConns < 1:
		return usagef("--max-conns must be at least 1")
	case o.Workers < 0:
		return usagef("--workers takes a number of goroutines, 0 for the usable cores")
	case o.MaxDecompressed < 0:
		return usagef("--max-decompressed takes a number of bytes, 0 for the default")
	case o.MaxNodes < 0:
		return usagef("--max-nodes takes a number of nodes, 0 for the default")
	}
	return nil
}

// wants is the API selection.
func (o *Options) wants(key int16) bool {
	if o.APIs != nil {
		return o.APIs[key]
	}
	return o.All || key == 30 || key == 31
}

// ParseAPI takes an API key as a number or a Kafka name (CreateAcls, 30),
// and only one Kafka defines.
func ParseAPI(s string) (int16, error) {
	s = strings.TrimSpace(s)
	var k int
	if _, err := fmt.Sscanf(s, "%d", &k); err == nil && fmt.Sprint(k) == s {
		if k < 0 || k > int(dissect.MaxAPIKey) || dissect.MaxVersion(int16(k)) < 0 {
			return 0, usagef("%d is not an API key Kafka defines (0 to %d)", k, dissect.MaxAPIKey)
		}
		return int16(k), nil
	}
	if k, ok := dissect.APIKeyByName(s); ok {
		return k, nil
	}
	return 0, usagef("unknown API %q: give a number (30) or a name (CreateAcls)", s)
}

// ParseAPIs takes a comma-separated --api list; "" selects nothing (nil).
func ParseAPIs(s string) (map[int16]bool, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	m := map[int16]bool{}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, err := ParseAPI(part)
		if err != nil {
			return nil, usagef("--api: %v", err)
		}
		m[k] = true
	}
	return m, nil
}

// LoadRegistry is the built-in definitions plus every *.json definition in
// dir. The SASL definitions go back in after them: a connection's identity
// is read from their trees, and its secrets are redacted by them.
func LoadRegistry(dir string) (*dissect.Registry, error) {
	reg := dissect.NewRegistry()
	if dir == "" {
		return reg, nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--schema-dir %s: not a readable directory", dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
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
	return reg.AddSASL(), nil
}

// PlainErr drops the "open NAME:" prefix os errors repeat.
func PlainErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
