package audit

import (
	"bytes"
	"encoding/csv"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// formulaRow is a create row whose wire text is what a spreadsheet runs.
func formulaRow() Row {
	p := testkit.Ptr[string]
	code := int16(-1)
	return Row{
		Time:      time.Date(2026, 11, 29, 18, 24, 48, 0, time.UTC),
		Client:    netip.MustParseAddrPort("192.0.2.10:50500"),
		Broker:    netip.MustParseAddrPort("192.0.2.1:9092"),
		Principal: p("User:admin"),
		ClientID:  p("@SUM(1+1)*cmd|' /C calc'!A0"),
		Action:    Create, APIVersion: 3, CorrelationID: 7,
		Binding: Binding{ResourceType: p("TOPIC"), ResourceName: p(`=HYPERLINK("http://evil.example/","click")`),
			PatternType: p("LITERAL"), Principal: p("+User:x"), Host: p("-2+3"), Operation: p("\tWRITE"), Permission: p("\r=1")},
		Result: ResultError, ErrorCode: &code, ErrorName: p("UNKNOWN_SERVER_ERROR"), ErrorMessage: p("=cmd|/C!A0"),
	}
}

func csvRecord(t *testing.T, rows []Row, opt CSVOptions) map[string]string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteCSV(&b, rows, opt); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v:\n%s", len(recs), err, b.String())
	}
	m := map[string]string{}
	for i, h := range recs[0] {
		m[h] = recs[1][i]
	}
	return m
}

func TestCSVDefusesFormulas(t *testing.T) {
	rows := []Row{formulaRow()}
	want := map[string]string{
		"client_id":             `'@SUM(1+1)*cmd|' /C calc'!A0`,
		"binding_resource_name": `'=HYPERLINK("http://evil.example/","click")`,
		"binding_principal":     "'+User:x",
		"binding_host":          "'-2+3",
		// A tab or CR is escaped as wire text before it can lead a cell.
		"binding_operation":    `\tWRITE`,
		"binding_permission":   `\r=1`,
		"error_message":        "'=cmd|/C!A0",
		"error_code":           "-1", // a number of ours, not text
		"principal":            "User:admin",
		"binding_pattern_type": "LITERAL",
	}
	got := csvRecord(t, rows, CSVOptions{})
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if v != "" && strings.IndexByte("=+-@\t\r", v[0]) >= 0 && k != "error_code" {
			t.Errorf("%s starts a formula: %q", k, v)
		}
	}

	raw := csvRecord(t, rows, CSVOptions{Raw: true})
	if raw["binding_resource_name"] != `=HYPERLINK("http://evil.example/","click")` || raw["binding_host"] != "-2+3" ||
		raw["client_id"] != "@SUM(1+1)*cmd|' /C calc'!A0" || raw["binding_operation"] != `\tWRITE` {
		t.Errorf("Raw altered cells: %q", raw)
	}

	var b bytes.Buffer
	WriteCSVRows(&b, rows, CSVOptions{})
	if !strings.Contains(b.String(), `'=HYPERLINK(`) {
		t.Errorf("WriteCSVRows leaves the formula: %s", b.String())
	}
}

func TestDefuseFormula(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "=1": "'=1", "+1": "'+1", "-1": "'-1", "@x": "'@x", "\tx": "'\tx", "\rx": "'\rx",
		"a=1": "a=1", " =1": " =1", "'=1": "'=1", "orders": "orders",
	} {
		if got := defuseFormula(in); got != want {
			t.Errorf("defuseFormula(%q) = %q, want %q", in, got, want)
		}
	}
}

// One 60 KB resource name among 3,000 rows, no width known: every row was
// padded to the name's length (180 MB). A cell now stops at MaxCellWidth.
func TestTableWithoutWidthCapsCells(t *testing.T) {
	long := strings.Repeat("x", 60_000)
	rows := make([]Row, 3000)
	for i := range rows {
		rows[i] = formulaRow()
		rows[i].Binding.ResourceName = testkit.Ptr("orders")
	}
	rows[1234].Binding.ResourceName = &long
	rows[99].Principal = testkit.Ptr(strings.Repeat("日", 5000)) // wide runes count double
	var b bytes.Buffer
	if err := WriteTable(&b, rows, 0, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(rows)+2 {
		t.Fatalf("%d lines", len(lines))
	}
	widest := 0
	for _, l := range lines[:len(lines)-1] {
		widest = max(widest, runewidth.StringWidth(l))
	}
	// Seven columns, none above MaxCellWidth, two spaces between them.
	if limit := 7*MaxCellWidth + 12; widest > limit || b.Len() > len(lines)*limit*3 {
		t.Errorf("widest line %d columns (limit %d), %d bytes in all", widest, limit, b.Len())
	}
	l := lines[1+1234]
	if !strings.Contains(l, "on TOPIC xxxx") || !strings.Contains(l, "…") {
		t.Errorf("the long name is not cut with an ellipsis: %.200q", l)
	}
	if l := lines[1+99]; !strings.Contains(l, "日日…") {
		t.Errorf("the wide principal is not cut: %.200q", l)
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"abc", 80, "abc"},
		{"日本語", 6, "日本語"},
		{"日本語x", 6, "日本…"},
		{"日本語", 5, "日本…"},
		{"", 4, ""},
		{strings.Repeat("é", 100), 10, strings.Repeat("é", 9) + "…"},
	} {
		got := clip(c.s, c.w)
		if got != c.want || runewidth.StringWidth(got) > c.w {
			t.Errorf("clip(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
	}
}
