package dissect

import "testing"

// TestEscape pins the one escaping policy that the text output, the JSON
// summaries and the explorer share.
func TestEscape(t *testing.T) {
	cases := map[string]string{
		"plain":                "plain",
		"User:alice":           "User:alice",
		"a\x1b[31mred":         `a\x1b[31mred`,
		"bell\x07":             `bell\a`,
		"nl\nx\ttab":           `nl\nx\ttab`,
		"nul\x00":              `nul\x00`,
		"del\x7f":              `del\x7f`,
		"bad\xff\xfeutf8":      `bad\xff\xfeutf8`,
		"c1\u009b31m":          `c1\u009b31m`,
		"bidi\u202eevil":       `bidi\u202eevil`,
		"zw\u200bsp":           `zw\u200bsp`,
		"bom\ufeff":            `bom\ufeff`,
		"iso\u2066late":        `iso\u2066late`,
		"ls\u2028":             `ls\u2028`,
		"ünïcödé 日本":           "ünïcödé 日本",
		`already \x1b escaped`: `already \x1b escaped`,
	}
	for in, want := range cases {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
		if got := Escape(Escape(in)); got != want {
			t.Errorf("Escape(Escape(%q)) = %q, want %q: escaping twice changes the text", in, got, want)
		}
		if got := string(appendEscape([]byte("x"), in)); got != "x"+want {
			t.Errorf("appendEscape(%q) = %q, want %q", in, got, "x"+want)
		}
	}
	if got, want := quote("a\"b\x1b"), `"a\"b\x1b"`; got != want {
		t.Errorf("Quote = %s, want %s", got, want)
	}
	if got, want := quote("orders"), `"orders"`; got != want {
		t.Errorf("Quote = %s, want %s", got, want)
	}
}

func TestAppendHead(t *testing.T) {
	n := &Node{Name: "Name\x1b", Type: "string", Kind: KindString, Str: "ev\u202eil", Offset: 0x1a, Size: 9, Doc: "doc"}
	if got, want := string(AppendHead(nil, n)), `Name\x1b string = "ev\u202eil" [0x001a, 9B]`; got != want {
		t.Errorf("AppendHead = %s, want %s", got, want)
	}
	if got, want := string(appendLabel(nil, n)), `Name\x1b string = "ev\u202eil" [0x001a, 9B] doc`; got != want {
		t.Errorf("AppendLabel = %s, want %s", got, want)
	}
	if got, want := string(AppendSpan(nil, 0x12345, 70000)), "[0x12345, 70000B]"; got != want {
		t.Errorf("AppendSpan = %s, want %s", got, want)
	}
}
