package dissect

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// rawHazard reports a rune that must never reach a terminal from a JSON
// line: a control character, a format character (bidi, zero width, BOM,
// tags) or a line separator.
func rawHazard(s string) (rune, bool) {
	for _, r := range s {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return r, true
		}
	}
	return 0, false
}

func TestAppendJSONStringEscapesFormatAndControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"User:\u202eevil\u202c":       `"User:\u202eevil\u202c"`, // RLO ... PDF
		"\u2066iso\u2069\u200f\u061c": `"\u2066iso\u2069\u200f\u061c"`,
		"zw\u200bj\u200dbom\ufeff":    `"zw\u200bj\u200dbom\ufeff"`,
		"soft\u00adhyphen":            `"soft\u00adhyphen"`,
		"tag\U000e0041":               `"tag\udb40\udc41"`, // a tag character, above the BMP
		"c1\u0085\u009b2J":            `"c1\u0085\u009b2J"`,
		"c0\x1b[31m\x07\x7f":          `"c0\u001b[31m\u0007\u007f"`,
		"ls\u2028ps\u2029":            `"ls\u2028ps\u2029"`,
		"q\"b\\\n\r\t":                `"q\"b\\\n\r\t"`,
		"bad\xff\xc3":                 `"bad\ufffd\ufffd"`,
		// Letters, marks and symbols beyond ASCII stay as they are.
		"Zoë ünï 日本 \u00a0nbsp ∑ 🙂": "\"Zoë ünï 日本 \u00a0nbsp ∑ 🙂\"",
	} {
		got := string(AppendJSONString(nil, in))
		if got != want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("%s: %v", got, err)
		} else if back != strings.ToValidUTF8(in, "\ufffd") && !strings.Contains(in, "\xff") {
			t.Errorf("%s parses as %q, want %q", got, back, in)
		}
	}
}

// Random strings over the hazards and ordinary text: the JSON is valid,
// holds no hazard raw, and parses back to the string (invalid bytes as
// U+FFFD, one each).
func TestAppendJSONStringProperty(t *testing.T) {
	alphabet := []string{"a", "\"", "\\", "\n", "\x00", "\x1b", "\x7f", "\xff", "\xe2\x80", "é", "日",
		"\xe6\x97", "\xc3", "\x97", "\u0085", "\u009f", "\u00a0", "\u00ad", "\u0890", "\ue000", "\u200b", "\u202e", "\u2028", "\u2066", "\ufeff", "\U0001f642", "\U000e007f"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		in := b.String()
		out := AppendJSONString(nil, in)
		if !json.Valid(out) {
			t.Fatalf("%q: invalid JSON %s", in, out)
		}
		if r, bad := rawHazard(string(out)); bad {
			t.Fatalf("%q: %U raw in %s", in, r, out)
		}
		var back string
		json.Unmarshal(out, &back)
		var want strings.Builder
		for i := 0; i < len(in); {
			r, n := utf8.DecodeRuneInString(in[i:])
			want.WriteRune(r) // RuneError for each invalid byte
			i += n
		}
		if back != want.String() {
			t.Fatalf("%q parses back as %q, want %q", in, back, want.String())
		}
	}
}

// A message whose client_id, principal and resource name carry bidi
// overrides and C1 controls: its JSON shows none of them raw, and a JSON
// reader gets the wire's values unchanged.
func TestMessageJSONHidesBidiFromTerminals(t *testing.T) {
	const (
		clientID  = "adm\u202eni\u202c\u0085"
		principal = "User:\u202etset\u202c\u2066x\u2069"
		resource  = "orders\u200b\ufeff\u009b31m"
	)
	req := kmsg.NewPtrCreateACLsRequest()
	req.SetVersion(3)
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceName, c.Principal, c.Host = resource, principal, "*"
	req.Creations = append(req.Creations, c)
	m := Builtin().Decode(testkit.KmsgRequest(req, 1, testkit.Ptr(clientID)), Options{})
	js := AppendJSON(nil, m)
	if r, bad := rawHazard(string(js)); bad {
		t.Fatalf("%U raw in %s", r, js)
	}
	var doc struct {
		Tree jsonTestNode `json:"tree"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"RequestHeader/client_id":                                 clientID,
		"CreateAclsRequest/Creations/AclCreation[0]/Principal":    principal,
		"CreateAclsRequest/Creations/AclCreation[0]/ResourceName": resource,
	} {
		n := doc.Tree.find(strings.Split(path, "/")...)
		if n == nil || n.Value != want {
			t.Errorf("%s = %+v, want %q", path, n, want)
		}
	}
	id := string(AppendIdentityJSON(nil, identityFromTLS("CN=\u202eevil")))
	if r, bad := rawHazard(id); bad || !strings.Contains(id, `"User:CN=\u202eevil"`) {
		t.Errorf("identity JSON %s (raw %U)", id, r)
	}
}

type jsonTestNode struct {
	Name     string         `json:"name"`
	Value    any            `json:"value"`
	Children []jsonTestNode `json:"children"`
}

func (n *jsonTestNode) find(path ...string) *jsonTestNode {
	if len(path) == 0 {
		return n
	}
	for i := range n.Children {
		if n.Children[i].Name == path[0] {
			return n.Children[i].find(path[1:]...)
		}
	}
	return nil
}

// Wire text beyond ASCII takes the per-rune path: its cost with the
// format-character check.
func BenchmarkAppendJSONStringUnicode(b *testing.B) {
	s := strings.Repeat("Zoë Müller 日本語 orders-ü ", 8)
	b.SetBytes(int64(len(s)))
	var dst []byte
	for b.Loop() {
		dst = AppendJSONString(dst[:0], s)
	}
}

// jsonEscapesRune skips the table for most runes: it must still agree with
// it on every rune.
func TestJSONEscapesRuneAgreesWithUnicode(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		want := unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
		if got := jsonEscapesRune(r); got != want {
			t.Errorf("jsonEscapesRune(%U) = %v, want %v", r, got, want)
		}
	}
}
