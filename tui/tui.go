// Package tui is kdissect's interactive hex explorer: a Wireshark-style
// three-pane view (message list, field tree, byte layout) over a capture's
// decoded Kafka frames.
//
// The explorer keeps only the index of a capture (one Entry per frame) and
// decodes the selected message on demand through a Loader, caching the last
// few. Entries may arrive while the capture is still being read: Run drains
// the entry and progress channels with commands, so the list appears at
// once and fills as the reader makes progress.
package tui

import (
	"net/netip"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/dissect/audit"
)

// Entry is one row of the message list: the index of a frame, without its
// tree. Text fields come from the wire and are escaped before display.
type Entry struct {
	Index         int // identifies the frame to the Loader; Peer refers to it
	Time          time.Time
	Src, Dst      string
	Direction     dissect.Direction
	APIKey        int16
	APIName       string
	APIVersion    int16
	CorrelationID int32
	Summary       string
	HasProblems   bool   // the decoder found the frame malformed
	KafkaError    string // name of the first non-zero error code in a response, "" when none
	Peer          int    // Index of the matching request/response, or -1
	// Who is the connection's identity when the message was seen, as a
	// summary line ends with it ("User:alice", "User:bob (failed)"); ""
	// when unknown.
	Who string
	// Identity is who stood behind the connection when the message was
	// seen, as Who names it: the audit view's principals come from it, so
	// that they read as `kdissect audit` writes them.
	Identity dissect.Identity
	// TLS names the session the message was decrypted from ("TLS 1.3
	// TLS_AES_128_GCM_SHA256"); "" for plaintext.
	TLS string
	// Software is the client software the connection's ApiVersions
	// request named ("kgo 1.20"), "" when none did.
	Software string

	// What the display filter reads besides the above, as NDJSON names it.
	ClientID     string // the request header's client_id; HasClientID false when it has none (or is null)
	HasClientID  bool
	Latency      time.Duration // on a response: from its request's last byte to its first
	HasLatency   bool
	StreamOffset int64   // the first byte's offset in its direction's stream
	Packets      []int32 // the numbers of the packets that carried it
	Size         int     // the frame's size, size prefix included
	File         string  // the capture file, "" live
	Inferred     bool    // decoded by guessing the request (--guess)
	Forwarded    bool    // an Envelope carrying a forwarded message
	// ForwardedPrincipal and ForwardedClient are who an Envelope request
	// says the request it forwards is by; "" and not valid when unknown.
	ForwardedPrincipal string
	ForwardedClient    netip.Addr
	// TLSVersion, TLSCipher and TLSSNI are the decrypted session's; ""
	// for plaintext.
	TLSVersion, TLSCipher, TLSSNI string
	// HasSoftware: the connection's ApiVersions request named its client
	// software, SoftwareName and SoftwareVersion.
	SoftwareName, SoftwareVersion string
	HasSoftware                   bool
}

// failed reports whether the entry is what the errors filter keeps: a
// malformed frame, or a response carrying a Kafka error code.
func (e *Entry) failed() bool { return e.HasProblems || e.KafkaError != "" }

// Loader decodes the frame with the given Entry.Index. It is called for
// the selected message only; the explorer caches the last few results.
type Loader func(index int) (*dissect.Message, error)

// Options configure the explorer.
type Options struct {
	Title string // shown in the title bar, e.g. the capture file name
	Live  bool   // follow new entries while the selection is on the last row
	// Registry names the body fields of the filter bar's language (the
	// run's, with --schema-dir); nil is dissect.Builtin().
	Registry *dissect.Registry
	// Filter is the display filter to start with, in the filter bar's
	// language; one that does not compile is shown in the bar, not applied.
	Filter string
	// BlindSpots, when set, are what the audit could not see so far
	// (Feed.BlindSpots): the audit view lists them at its top.
	BlindSpots func() []audit.BlindSpot
}

// EntriesMsg appends entries to the list, in capture order.
type EntriesMsg []Entry

// ProgressMsg reports how far the reader has got through the capture.
// Total is 0 when the size is unknown (live capture, pipe).
type ProgressMsg struct {
	Done, Total int64
	Finished    bool
	Err         error
	// Undecrypted is how many TLS connections were seen so far that could
	// not be decrypted: an empty list then says why.
	Undecrypted int
}

// Run shows the explorer full screen until the user quits. Entries and
// progress reports are read from the channels as they arrive (either may be
// nil); closing them is how the reader says it is done.
func Run(load Loader, entries <-chan Entry, progress <-chan ProgressMsg, opt Options) error {
	_, err := run(load, entries, progress, opt)
	return err
}

// run is Run with the program options open, for tests (input and output
// without a terminal).
func run(load Loader, entries <-chan Entry, progress <-chan ProgressMsg, opt Options, popts ...tea.ProgramOption) (Model, error) {
	m := New(load, opt)
	m.entriesCh = entries
	m.progressCh = progress
	final, err := tea.NewProgram(m, popts...).Run()
	fm, _ := final.(Model)
	return fm, err
}

// maxBatch bounds how many entries one drain command delivers, so a fast
// reader cannot starve rendering.
const maxBatch = 4096

// Messages of the channel-drain commands. They are distinct from the
// exported EntriesMsg/ProgressMsg so that only a drained batch re-issues
// the drain: a message sent by other means never starts a second reader.
type (
	entriesDrainedMsg  struct{ entries EntriesMsg }
	entriesClosedMsg   struct{}
	progressDrainedMsg struct{ p ProgressMsg }
	progressClosedMsg  struct{}
)

// drainEntries blocks for one entry, then takes whatever else is ready
// without blocking, up to maxBatch.
func drainEntries(ch <-chan Entry) tea.Cmd {
	return func() tea.Msg {
		e, ok := <-ch
		if !ok {
			return entriesClosedMsg{}
		}
		batch := EntriesMsg{e}
		for len(batch) < maxBatch {
			select {
			case e, ok := <-ch:
				if !ok {
					return entriesDrainedMsg{batch} // the next drain sees the close
				}
				batch = append(batch, e)
			default:
				return entriesDrainedMsg{batch}
			}
		}
		return entriesDrainedMsg{batch}
	}
}

// drainProgress blocks for one report and keeps only the latest of those
// already queued.
func drainProgress(ch <-chan ProgressMsg) tea.Cmd {
	return func() tea.Msg {
		p, ok := <-ch
		if !ok {
			return progressClosedMsg{}
		}
		for {
			select {
			case q, ok := <-ch:
				if !ok {
					return progressDrainedMsg{p}
				}
				p = q
			default:
				return progressDrainedMsg{p}
			}
		}
	}
}
