package dissect

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The fast paths of the JSON writer must write what the general ones do.

func TestAppendJSONInt(t *testing.T) {
	for _, v := range []int64{0, 1, 9, 10, 99, 100, 101, 999, 1000, 12345, 99999999, 1e8, 1e8 + 1, -1, -100, 1 << 40, -1 << 63} {
		if got, want := string(appendJSONInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Errorf("appendJSONInt(%d) = %q, want %q", v, got, want)
		}
	}
	// Each width, at its edges: the leading zeros the word drops.
	for p := int64(1); p <= 1e9; p *= 10 {
		for _, v := range []int64{p - 1, p, p + 1, 2*p - 1, 9 * p} {
			if got, want := string(appendJSONInt(nil, v)), strconv.FormatInt(v, 10); got != want {
				t.Errorf("appendJSONInt(%d) = %q, want %q", v, got, want)
			}
		}
	}
	for v := int64(0); v < 200000; v += 7 {
		if got, want := string(appendJSONInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Fatalf("appendJSONInt(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestRecordBytesJSON(t *testing.T) {
	cases := []string{
		"a", `"`, `\`, `{"id":1,"s":"a\"b\\c"}`, "plain text of some length",
		strings.Repeat(`x"\`, 60), strings.Repeat("é", 100), "tab\there", "\x00\x01", "\x7f", "\xff",
		strings.Repeat("abcdefg\"", 30), "bidi\u202e", "zero\u200bwidth",
	}
	// A quote, a backslash or a character of 2-4 bytes at every position
	// of the words copied whole, and around the cut at recordTextMax.
	for _, c := range []string{`"`, `\`, "é", "€", "𝄞"} {
		for i := 0; i < 40; i++ {
			cases = append(cases, strings.Repeat("a", i)+c+strings.Repeat("b", 40-i))
		}
		for i := recordTextMax - 5; i <= recordTextMax+1; i++ {
			cases = append(cases, strings.Repeat("a", i)+c+strings.Repeat("b", 20))
		}
	}
	for _, v := range cases {
		n := &Node{Kind: KindBytes, Category: CatRecord, Bytes: []byte(v), lenKind: lenVarint, rawLen: int64(len(v))}
		want := string(appendJSONDisplay(nil, n))
		got := `"` + string(n.appendLenNote(appendRecordBytesJSON(nil, n.Bytes))) + `"`
		if got != want {
			t.Errorf("%q: %s, want %s", v, got, want)
		}
	}
}

func TestPrintableUTF8Words(t *testing.T) {
	ref := func(v []byte) bool {
		for _, r := range string(v) {
			if !strconv.IsPrint(r) {
				return false
			}
		}
		return utf8.Valid(v)
	}
	base := []byte("0123456789abcdef0123456789abcdef")
	for i := range base {
		for _, c := range []byte{0, 0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xff, '"'} {
			v := append([]byte(nil), base...)
			v[i] = c
			if got, want := printableUTF8(v), ref(v); got != want {
				t.Errorf("printableUTF8(%q) = %v, want %v", v, got, want)
			}
		}
	}
}

// A node whose name, type, doc or category differ from the cached
// entry's, even with the same key, gets parts of its own.
func TestNodeJSONPartsNotStale(t *testing.T) {
	a := &Node{Name: "Record[1]", Type: "Record", Doc: "x", Category: CatRecord, noval: true}
	b := &Node{Name: "Record[1]", Type: "Record", Doc: "y", Category: CatRecord, noval: true}
	c := &Node{Name: "Record[1]", Type: "Record", Doc: "y", Category: CatRecordBatch, noval: true}
	d := &Node{Name: "Rxxxxx[1]", Type: "Record", Doc: "y", Category: CatRecordBatch, noval: true}
	for i := 0; i < 2; i++ {
		for _, n := range []*Node{a, b, c, d} {
			got := string(appendNodeJSON(nil, n))
			want := `{"name":"` + n.Name + `","type":"Record","value":null,"display":"","offset":0,"size":0,"doc":"` + n.Doc + `","category":"` + n.Category.String() + `","children":[]}`
			if got != want {
				t.Errorf("%s\nwant %s", got, want)
			}
		}
	}
}

// Workers render at once: the parts cache is shared by them.
func TestAppendJSONConcurrent(t *testing.T) {
	m := Builtin().Decode(deleteResp20(), Options{Direction: Response, APIKey: 31, APIVersion: 3})
	want := string(AppendJSON(nil, m))
	done := make(chan string)
	for g := 0; g < 4; g++ {
		go func() {
			var got []byte
			for i := 0; i < 50; i++ {
				got = AppendJSON(got[:0], m)
				// Nodes of other names in the same slots, so that entries are replaced while others read them.
				AppendJSON(nil, &Message{Tree: &Node{Name: "x" + strconv.Itoa(i), Type: "t", noval: true}})
			}
			done <- string(got)
		}()
	}
	for g := 0; g < 4; g++ {
		if got := <-done; got != want {
			t.Fatal("concurrent rendering differs")
		}
	}
}

// TestNodeJSONManyElements: a batch of more records than the parts cache
// has slots renders without building parts again (it rebuilt them for
// every node once Record[i] names filled the cache), and the same tree
// renders the same bytes each time.
func TestNodeJSONManyElements(t *testing.T) {
	var rs []kmsg.Record
	for i := range 20000 {
		rs = append(rs, rec(int32(i), fmt.Sprintf("k%d", i), "v"))
	}
	m := Builtin().Decode(produce(9, batch(t, batchSpec{records: rs})), Options{})
	if len(m.Problems) > 0 {
		t.Fatal(m.Problems)
	}
	first := AppendJSON(nil, m)
	buf := make([]byte, 0, 2*len(first))
	if a := testing.AllocsPerRun(3, func() { buf = AppendJSON(buf[:0], m) }); a > 0 {
		t.Errorf("rendering %d records allocated %.0f times", len(rs), a)
	}
	if !bytes.Equal(buf, first) {
		t.Error("the second rendering differs from the first")
	}
}

// Nodes at the same depth and position, whose strings equal those of the
// memo's entry in content but not in memory, or differ in content, get
// parts of their own.
func TestNodeJSONMemoByContent(t *testing.T) {
	name := strings.Repeat("n", 3)
	leaves := []*Node{
		{Name: "nnn", Type: "int8", Doc: "d", Category: CatRecord, noval: true},
		{Name: name, Type: "int8", Doc: "d", Category: CatRecord, noval: true},
		{Name: name, Type: "int8", Doc: strings.Repeat("d", 2), Category: CatRecord, noval: true},
		{Name: name, Type: "int16", Doc: "d", Category: CatRecordBatch, noval: true},
		{Name: "x[1]", Type: "int16", Doc: "d", Category: CatRecordBatch, noval: true},
		{Name: "x[2]", Type: "int16", Doc: "d", Category: CatRecordBatch, noval: true},
	}
	const group = `{"name":"g","type":"","value":null,"display":"","offset":0,"size":0,"doc":"","category":"frame","children":[`
	root := &Node{Name: "g", noval: true}
	want := group
	for i, n := range leaves {
		root.Children = append(root.Children, &Node{Name: "g", noval: true, Children: []*Node{n}})
		if i > 0 {
			want += ","
		}
		want += group + `{"name":"` + n.Name + `","type":"` + n.Type + `","value":null,"display":"","offset":0,"size":0,"doc":"` + n.Doc + `","category":"` + n.Category.String() + `","children":[]}]}`
	}
	want += "]}"
	if got := string(appendNodeJSON(nil, root)); got != want {
		t.Errorf("%s\nwant %s", got, want)
	}
}
