package jsonc

import "testing"

func TestStripKeepsStringsAndOffsets(t *testing.T) {
	in := "{\"a\": \"x // y\\\" // z\", // gone\n\"b\": 1 // too\n}"
	want := "{\"a\": \"x // y\\\" // z\",        \n\"b\": 1       \n}"
	if got := string(Strip([]byte(in))); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
