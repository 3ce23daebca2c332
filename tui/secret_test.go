package tui

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

const tuiPassword = "hunter2-Pa55w0rd"

// plainAuthFrame is a SaslAuthenticate v1 request carrying a SASL/PLAIN
// token for alice, its body built byte by byte.
func plainAuthFrame() []byte {
	tok := "\x00alice\x00" + tuiPassword
	body := binary.BigEndian.AppendUint32(nil, uint32(len(tok)))
	return testkit.Request(36, 1, 2, testkit.Ptr("c"), false, append(body, tok...))
}

// paneBytes reads the hex and ASCII columns of the byte pane back (masked
// bytes as '*'), across rows.
func paneBytes(t *testing.T, rows []string) (hexCol, asciiCol []byte) {
	for _, row := range rows {
		if len(row) < 4+2+16*3+1+1+16 {
			continue
		}
		cells := strings.Fields(row[6 : 6+16*3+1])
		for _, c := range cells {
			if c == "**" {
				hexCol = append(hexCol, '*')
				continue
			}
			b, err := hex.DecodeString(c)
			if err != nil {
				t.Fatalf("cell %q in %q", c, row)
			}
			hexCol = append(hexCol, b...)
		}
		asciiCol = append(asciiCol, strings.TrimRight(row[6+16*3+2:], " ")...)
	}
	return hexCol, asciiCol
}

// TestHexPaneMasksSecrets: the password's bytes are masked in both
// columns of the byte pane, and shown when the message was decoded with
// ShowSecrets.
func TestHexPaneMasksSecrets(t *testing.T) {
	reg := dissect.NewRegistry().AddSASL()
	frame := plainAuthFrame()
	st := stylesFor(colorprofile.NoTTY)
	pwHex := hex.EncodeToString([]byte(tuiPassword))
	for _, show := range []bool{false, true} {
		m := reg.Decode(frame, dissect.Options{Mechanism: "PLAIN", ShowSecrets: show})
		var h hexModel
		h.setData(frame, m.Tree)
		rows := h.view(&st, h.width(), h.rows(), 0, len(frame), true)
		hexCol, asciiCol := paneBytes(t, rows)
		if len(hexCol) != len(frame) || len(asciiCol) != len(frame) {
			t.Fatalf("read back %d hex and %d ASCII bytes of %d:\n%s", len(hexCol), len(asciiCol), len(frame), strings.Join(rows, "\n"))
		}
		n := len(frame) - len(tuiPassword)
		var ascii []byte
		for _, c := range frame[:n] {
			ascii = append(ascii, printable(c))
		}
		masked := strings.Repeat("*", len(tuiPassword))
		wantHex, wantASCII := string(frame[:n])+masked, string(ascii)+masked
		if show {
			wantHex, wantASCII = string(frame), string(ascii)+tuiPassword
		}
		if string(hexCol) != wantHex || string(asciiCol) != wantASCII {
			t.Errorf("show=%v:\n%s", show, strings.Join(rows, "\n"))
		}
		all := strings.Join(rows, "\n")
		if got := strings.Contains(all, tuiPassword) || strings.Contains(hex.EncodeToString(hexCol), pwHex); got != show {
			t.Errorf("show=%v: password visible=%v:\n%s", show, got, all)
		}
	}
}

// TestExplorerHidesSecrets: the whole screen (list, tree, bytes, status
// line), with the password field selected, never shows the password.
func TestExplorerHidesSecrets(t *testing.T) {
	reg := dissect.NewRegistry().AddSASL()
	frame := plainAuthFrame()
	for _, show := range []bool{false, true} {
		msg := reg.Decode(frame, dissect.Options{Mechanism: "PLAIN", ShowSecrets: show})
		load := func(int) (*dissect.Message, error) { return msg, nil }
		m := newTestModel(t, load, []Entry{entryOf(0, t0, "10.0.0.1:50312", "10.0.0.2:9092", msg, -1)}, 160, 50)
		// Expand everything, then walk the tree to the last field: the password.
		m = send(m, keys("tab", "e", "G")...)
		screen := strings.Join(screenLines(t, m), "\n")
		if !strings.Contains(screen, "password") {
			t.Fatalf("password field not on screen:\n%s", screen)
		}
		if got := strings.Contains(screen, tuiPassword); got != show {
			t.Errorf("show=%v: password on screen=%v:\n%s", show, got, screen)
		}
		if !show && !strings.Contains(screen, "<redacted, 16 bytes>") {
			t.Errorf("no redaction on screen:\n%s", screen)
		}
		// Searching for the password does not find it: a match would tell
		// what it is. Start from the root so that a match has to move.
		m = send(m, keys("g")...)
		m = send(m, join(keys("/"), typed("hunter2"), keys("enter"))...)
		if n := m.tree.selected(); (n != nil && n.Name == "password") != show {
			t.Errorf("show=%v: search for the password selected %+v", show, n)
		}
	}
}
