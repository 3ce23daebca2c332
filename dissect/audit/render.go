package audit

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/kdissect/kdissect/dissect"
)

// WriteJSON writes one JSON object a row (NDJSON), with the keys of the
// README's contract in that order; rows from Effect add "effect". Wire text
// is kept as sent, JSON-escaped (invalid UTF-8 becomes U+FFFD).
func WriteJSON(w io.Writer, rows []Row) error { return writeLines(w, rows, appendRowJSON) }

// writeLines writes each row as the line appendLine makes of it.
func writeLines(w io.Writer, rows []Row, appendLine func([]byte, *Row) []byte) error {
	var b []byte
	for i := range rows {
		b = appendLine(b[:0], &rows[i])
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func appendRowJSON(b []byte, r *Row) []byte {
	b = append(b, `{"time":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","client":`...)
	b = jsonAddr(b, r.Client)
	b = append(b, `,"broker":`...)
	b = jsonAddr(b, r.Broker)
	b = append(b, `,"principal":`...)
	b = jsonStr(b, r.Principal)
	b = append(b, `,"client_id":`...)
	b = jsonStr(b, r.ClientID)
	b = append(b, `,"action":"`...)
	b = append(b, r.Action...)
	b = append(b, `","api_version":`...)
	b = strconv.AppendInt(b, int64(r.APIVersion), 10)
	b = append(b, `,"correlation_id":`...)
	b = strconv.AppendInt(b, int64(r.CorrelationID), 10)
	b = append(b, `,"binding":`...)
	if r.Binding == (Binding{}) {
		// Not an ACL row, or a binding the capture did not hold.
		b = append(b, "null"...)
	} else {
		b = appendBindingJSON(b, &r.Binding)
	}
	b = append(b, `,"result":"`...)
	b = append(b, r.Result...)
	b = append(b, `","error_code":`...)
	b = jsonInt(b, r.ErrorCode)
	b = append(b, `,"error_name":`...)
	b = jsonStr(b, r.ErrorName)
	b = append(b, `,"error_message":`...)
	b = jsonStr(b, r.ErrorMessage)
	b = appendRowPlace(b, r)
	// The keys added after issue 10 come last, so that a script (and a
	// CSV column) finds the old ones where they were.
	b = append(b, `,"kind":"`...)
	b = append(b, r.kind()...)
	b = append(b, `","target":`...)
	b = appendTargetJSON(b, r)
	b = append(b, `,"client_software":`...)
	b = appendSoftwareJSON(b, r.Software)
	b = append(b, `,"forwarded_by":`...)
	b = appendForwardedJSON(b, r.ForwardedBy)
	if r.Inferred {
		b = append(b, `,"inferred":true`...)
	}
	if r.ValidateOnly {
		b = append(b, `,"validate_only":true`...)
	}
	if r.Effect != "" {
		b = append(b, `,"effect":"`...)
		b = append(b, r.Effect...)
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}

// appendSoftwareJSON writes the client software as the main command's
// NDJSON does: {"name", "version"}, or null.
func appendSoftwareJSON(b []byte, sw *dissect.ClientSoftware) []byte {
	if sw == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"name":`...)
	b = dissect.AppendJSONString(b, sw.Name)
	b = append(b, `,"version":`...)
	b = dissect.AppendJSONString(b, sw.Version)
	return append(b, '}')
}

func appendBindingJSON(b []byte, bd *Binding) []byte {
	b = append(b, `{"resource_type":`...)
	b = jsonStr(b, bd.ResourceType)
	b = append(b, `,"resource_name":`...)
	b = jsonStr(b, bd.ResourceName)
	b = append(b, `,"pattern_type":`...)
	b = jsonStr(b, bd.PatternType)
	b = append(b, `,"principal":`...)
	b = jsonStr(b, bd.Principal)
	b = append(b, `,"host":`...)
	b = jsonStr(b, bd.Host)
	b = append(b, `,"operation":`...)
	b = jsonStr(b, bd.Operation)
	b = append(b, `,"permission":`...)
	b = jsonStr(b, bd.Permission)
	return append(b, '}')
}

// kind is the row's kind; rows made before kinds existed are ACL rows.
func (r *Row) kind() Kind {
	if r.Kind == "" {
		return KindACL
	}
	return r.Kind
}

// appendTargetJSON writes the target with the keys of the row's kind (and,
// for a token, of its action); null for an ACL row.
func appendTargetJSON(b []byte, r *Row) []byte {
	t := r.Target
	if t == nil {
		return append(b, "null"...)
	}
	switch r.kind() {
	case KindSCRAM:
		b = append(b, `{"user":`...)
		b = jsonStr(b, t.User)
		b = append(b, `,"mechanism":`...)
		b = jsonStr(b, t.Mechanism)
		b = append(b, `,"iterations":`...)
		b = jsonInt(b, t.Iterations)
	case KindToken:
		b = append(b, `{"owner":`...)
		b = jsonStr(b, t.Owner)
		b = append(b, `,"renewers":[`...)
		for i, p := range t.Renewers {
			if i > 0 {
				b = append(b, ',')
			}
			b = dissect.AppendJSONString(b, p)
		}
		b = append(b, ']')
		switch r.Action {
		case Create:
			b = append(b, `,"max_lifetime_ms":`...)
			b = jsonInt(b, t.MaxLifetimeMs)
		case Renew:
			b = append(b, `,"renew_period_ms":`...)
			b = jsonInt(b, t.RenewPeriodMs)
		case Expire:
			b = append(b, `,"expiry_period_ms":`...)
			b = jsonInt(b, t.ExpiryPeriodMs)
		}
		b = append(b, `,"token_id":`...)
		b = jsonStr(b, t.TokenID)
	case KindQuota:
		b = append(b, `{"entity":[`...)
		for i, p := range t.Entity {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":`...)
			b = dissect.AppendJSONString(b, p.Type)
			b = append(b, `,"name":`...)
			b = jsonStr(b, p.Name)
			b = append(b, '}')
		}
		b = append(b, `],"key":`...)
		b = jsonStr(b, t.Key)
		b = append(b, `,"value":`...)
		b = jsonFloat(b, t.QuotaValue)
	case KindConfig:
		b = append(b, `{"resource_type":`...)
		b = jsonStr(b, t.ResourceType)
		b = append(b, `,"resource_name":`...)
		b = jsonStr(b, t.ResourceName)
		b = append(b, `,"key":`...)
		b = jsonStr(b, t.Key)
		b = append(b, `,"value":`...)
		b = jsonStr(b, t.Value)
	default:
		return append(b, "null"...)
	}
	return append(b, '}')
}

// jsonFloat writes a quota as JSON can hold it: NaN and the infinities
// have no JSON form and are written as strings.
func jsonFloat(b []byte, v *float64) []byte {
	switch {
	case v == nil:
		return append(b, "null"...)
	case math.IsNaN(*v) || math.IsInf(*v, 0):
		return dissect.AppendJSONString(b, strconv.FormatFloat(*v, 'g', -1, 64))
	}
	return strconv.AppendFloat(b, *v, 'g', -1, 64)
}

func jsonStr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return dissect.AppendJSONString(b, *s)
}

func jsonInt[T int | int16 | int64](b []byte, v *T) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*v), 10)
}

func jsonAddr(b []byte, a netip.AddrPort) []byte {
	if !a.IsValid() {
		return append(b, "null"...)
	}
	return dissect.AppendJSONString(b, addr(a))
}

// CSVHeader is the header line of WriteCSV: the JSON keys, binding's
// flattened with a "binding_" prefix.
var CSVHeader = []string{
	"time", "client", "broker", "principal", "client_id", "action", "api_version", "correlation_id",
	"binding_resource_type", "binding_resource_name", "binding_pattern_type", "binding_principal",
	"binding_host", "binding_operation", "binding_permission",
	"result", "error_code", "error_name", "error_message", "filter_index", "latency_us",
	"request_index", "response_index",
	// After the ACL columns, so that those keep their positions.
	"kind", "inferred", "validate_only",
	"target_user", "target_mechanism", "target_iterations",
	"target_owner", "target_renewers", "target_max_lifetime_ms", "target_renew_period_ms", "target_expiry_period_ms", "target_token_id",
	"target_entity", "target_resource_type", "target_resource_name", "target_key", "target_value",
	"client_software_name", "client_software_version",
	"forwarded_by_broker", "forwarded_by_principal",
}

// CSVOptions shape WriteCSV's output.
type CSVOptions struct {
	// Effect: the rows come from Effect and get an "effect" column.
	Effect bool
	// Raw leaves cells that a spreadsheet would run as a formula as they
	// are (the default neutralises them).
	Raw bool
}

// WriteCSV writes RFC 4180 CSV: one header line, then a record a row; rows
// from Effect (opt.Effect) add an "effect" column. Null is an empty field. Wire text is
// escaped as in the text output (control characters, escape sequences,
// bidi overrides and invalid UTF-8 as Go escapes): a CSV file is read on
// terminals too. A text cell that a spreadsheet would take for a formula
// (it starts with =, +, -, @, a tab or a carriage return) gets a leading
// ', as OWASP advises, unless opt.Raw.
func WriteCSV(w io.Writer, rows []Row, opt CSVOptions) error {
	cw := csv.NewWriter(w)
	head := CSVHeader
	if opt.Effect {
		head = append(head[:len(head):len(head)], "effect")
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	return writeCSVRows(cw, rows, opt)
}

// WriteCSVRows is WriteCSV without the header line, for rows that follow
// a capture batch by batch.
func WriteCSVRows(w io.Writer, rows []Row, opt CSVOptions) error {
	return writeCSVRows(csv.NewWriter(w), rows, opt)
}

func writeCSVRows(cw *csv.Writer, rows []Row, opt CSVOptions) error {
	// Only text cells are neutralised: the numbers are ours, and a
	// negative error code must stay a number.
	text := func(s *string) string {
		if opt.Raw {
			return esc(s)
		}
		return defuseFormula(esc(s))
	}
	rec := make([]string, 0, len(CSVHeader)+1)
	for i := range rows {
		r := &rows[i]
		rec = rec[:0]
		rec = append(rec,
			r.Time.UTC().Format(time.RFC3339Nano), addr(r.Client), addr(r.Broker),
			text(r.Principal), text(r.ClientID), string(r.Action),
			strconv.Itoa(int(r.APIVersion)), strconv.Itoa(int(r.CorrelationID)),
			text(r.Binding.ResourceType), text(r.Binding.ResourceName), text(r.Binding.PatternType),
			text(r.Binding.Principal), text(r.Binding.Host), text(r.Binding.Operation), text(r.Binding.Permission),
			r.Result, num(r.ErrorCode), text(r.ErrorName), text(r.ErrorMessage), num(r.FilterIndex),
			num(r.LatencyUs), num(r.RequestIndex), num(r.ResponseIndex),
			string(r.kind()), flag(r.Inferred), flag(r.ValidateOnly))
		rec = appendTargetCSV(rec, r, text)
		var swName, swVersion *string
		if r.Software != nil {
			swName, swVersion = &r.Software.Name, &r.Software.Version
		}
		rec = append(rec, text(swName), text(swVersion))
		if f := r.ForwardedBy; f != nil {
			rec = append(rec, addr(f.Broker), text(f.Principal))
		} else {
			rec = append(rec, "", "")
		}
		if opt.Effect {
			rec = append(rec, r.Effect)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func flag(b bool) string {
	if b {
		return "true"
	}
	return ""
}

// appendTargetCSV flattens the target into its target_ columns: a token's
// renewers joined with commas, a quota entity as type=name pairs (name
// <default> for the default entity).
func appendTargetCSV(rec []string, r *Row, text func(*string) string) []string {
	t := r.Target
	if t == nil {
		return append(rec, make([]string, 14)...)
	}
	var renewers, ent *string
	if r.kind() == KindToken {
		s := strings.Join(t.Renewers, ",")
		renewers = &s
	}
	if r.kind() == KindQuota {
		s := EntityText(t.Entity)
		ent = &s
	}
	quota := ""
	if t.QuotaValue != nil {
		quota = strconv.FormatFloat(*t.QuotaValue, 'g', -1, 64)
	}
	value := text(t.Value)
	if r.kind() == KindQuota {
		value = quota
	}
	return append(rec, text(t.User), text(t.Mechanism), num(t.Iterations),
		text(t.Owner), text(renewers), num(t.MaxLifetimeMs), num(t.RenewPeriodMs), num(t.ExpiryPeriodMs), text(t.TokenID),
		text(ent), text(t.ResourceType), text(t.ResourceName), text(t.Key), value)
}

// EntityText is a quota entity as type=name pairs, <default> for the
// default entity of a type.
func EntityText(ent []EntityPart) string {
	parts := make([]string, len(ent))
	for i, p := range ent {
		name := "<default>"
		if p.Name != nil {
			name = *p.Name
		}
		parts[i] = p.Type + "=" + name
	}
	return strings.Join(parts, ",")
}

// defuseFormula puts a ' before a cell that Excel, LibreOffice or Google
// Sheets would evaluate: one starting with =, +, - or @ (a formula, or a
// DDE call such as =cmd|' /C calc'!A0), or with a tab or a carriage
// return, after which some of them look for one.
func defuseFormula(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
}

func esc(s *string) string {
	if s == nil {
		return ""
	}
	return dissect.Escape(*s)
}

func num[T int | int16 | int64](v *T) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(int64(*v), 10)
}

func addr(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	if a.Port() == 0 {
		return a.Addr().String() // a forwarded client: its envelope names no port
	}
	return a.String()
}

// column of the table: its heading, its text for a row, the width it
// gives up last when the table must shrink (pref) and the width it never
// goes below (min).
type column struct {
	head      string
	min, pref int
	cell      func(r *Row) string
}

var (
	colEffect = column{head: "EFFECT", min: 7, cell: func(r *Row) string { return r.Effect }}
	colIndex  = column{head: "#", min: 7, cell: func(r *Row) string { // an index cut is no index
		switch {
		case r.RequestIndex != nil:
			return strconv.Itoa(*r.RequestIndex)
		case r.ResponseIndex != nil:
			return strconv.Itoa(*r.ResponseIndex)
		}
		return "-"
	}}
	colTime      = column{head: "TIME", min: 19, cell: func(r *Row) string { return r.Time.UTC().Format("2006-01-02 15:04:05") }}
	colClock     = column{head: "TIME", min: 8, cell: func(r *Row) string { return r.Time.UTC().Format("15:04:05") }}
	colClient    = column{head: "CLIENT", min: 9, cell: func(r *Row) string { return orDash(addr(r.Client)) }}
	colPrincipal = column{head: "PRINCIPAL", min: 6, pref: 16, cell: func(r *Row) string { return orDash(esc(r.Principal)) + forwardedText(r.ForwardedBy) }}
	colAction    = column{head: "ACTION", min: 6, cell: actionText}
	colBinding   = column{head: "BINDING", min: 16, pref: 44, cell: changeText}
	colResult    = column{head: "RESULT", min: 8, pref: 20, cell: resultText}
)

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// MaxCellWidth is the most display columns a table cell takes when the
// table has no width (WriteTable's width 0): without it, one long resource
// name widens its column, and pads every row, to its length. Cut cells end
// with …; csv and json hold the whole value.
const MaxCellWidth = 80

// WriteTable writes aligned columns no wider than width and a closing line
// that counts the changes (or, for Effect's rows and effect true, the
// bindings added and removed, with an EFFECT column). Where the natural
// table is too wide the CLIENT column goes first, then the date, then the
// widest columns are cut with …. Width 0 sets no limit on the line, but
// cuts each cell at MaxCellWidth. Wire text is escaped.
func WriteTable(w io.Writer, rows []Row, width int, effect bool) error {
	return WriteTableWith(w, rows, TableOptions{Width: width, Effect: effect})
}

// TableOptions shape WriteTableWith's table.
type TableOptions struct {
	Width  int
	Effect bool
	// Blind are the sentences of BlindSummary, written after the count
	// as "blind spot: ..." lines.
	Blind []string
}

// WriteTableWith is WriteTable with the blind spots in its footer. The
// change column is headed BINDING while every row is an ACL row (the
// table reads as it always has), CHANGE otherwise.
func WriteTableWith(w io.Writer, rows []Row, o TableOptions) error {
	width, effect := o.Width, o.Effect
	change := colBinding
	for i := range rows {
		if rows[i].kind() != KindACL {
			change.head = "CHANGE"
			break
		}
	}
	var cols []column
	if effect {
		cols = append(cols, colEffect)
	}
	cols = append(cols, colIndex, colTime, colClient, colPrincipal, colAction, change, colResult)
	// No cell can show more than the line holds: cutting it here also
	// spares measuring, then padding to, a cell of megabytes.
	cellMax := MaxCellWidth
	if width > 0 {
		cellMax = width
	}
	cells, widths := layoutCells(rows, cols, cellMax)
	if width > 0 && total(widths) > width {
		cols = slices.DeleteFunc(cols, func(c column) bool { return c.head == "CLIENT" })
		cols[slices.IndexFunc(cols, func(c column) bool { return c.head == "TIME" })] = colClock
		cells, widths = layoutCells(rows, cols, cellMax)
	}
	fit(widths, cols, width)
	var b strings.Builder
	var line strings.Builder
	for _, cl := range cells {
		line.Reset()
		for i, s := range cl {
			if i > 0 {
				line.WriteString("  ")
			}
			s = runewidth.Truncate(s, widths[i], "…")
			line.WriteString(s)
			if i < len(cl)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-runewidth.StringWidth(s)))
			}
		}
		l := line.String()
		// Columns at their minimum may still be too wide together: the
		// line itself is cut.
		if width > 0 && runewidth.StringWidth(l) > width {
			l = runewidth.Truncate(l, width, "…")
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if effect {
		b.WriteString(effectLine(rows))
	} else {
		b.WriteString(Summary(rows))
	}
	b.WriteByte('\n')
	for _, l := range o.Blind {
		b.WriteString("blind spot: ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// layoutCells is the heading and the cells of every row, each cut at
// cellMax columns, and the width of each column.
func layoutCells(rows []Row, cols []column, cellMax int) ([][]string, []int) {
	cells := make([][]string, 0, len(rows)+1)
	widths := make([]int, len(cols))
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.head
		widths[i] = len(c.head)
	}
	cells = append(cells, head)
	for i := range rows {
		line := make([]string, len(cols))
		for j, c := range cols {
			line[j] = clip(c.cell(&rows[i]), cellMax)
			widths[j] = max(widths[j], runewidth.StringWidth(line[j]))
		}
		cells = append(cells, line)
	}
	return cells, widths
}

// clip cuts s to at most w display columns, the last of them "…". Unlike
// runewidth.Truncate it does not measure the whole string first: it reads
// little further than the cut.
func clip(s string, w int) string {
	keep := w - runewidth.StringWidth("…") // the columns before an ellipsis
	n := 0
	for i, r := range s {
		rw := runewidth.RuneWidth(r)
		if n+rw > keep {
			// The rest may still fit whole in the columns left, ellipsis
			// included; it is measured only when it is short enough to.
			if rest := s[i:]; len(rest) <= 4*(w-n) && runewidth.StringWidth(rest) <= w-n {
				return s
			}
			return s[:i] + "…"
		}
		n += rw
	}
	return s
}

func total(widths []int) int {
	n := 2 * (len(widths) - 1)
	for _, w := range widths {
		n += w
	}
	return n
}

// fit shrinks the columns until the line fits: first those wider than
// their preferred width, the most excess first, then the widest, down to
// their minimums.
func fit(widths []int, cols []column, width int) {
	if width <= 0 {
		return
	}
	for _, floor := range []func(c column) int{
		func(c column) int { return max(c.pref, c.min) },
		func(c column) int { return c.min },
	} {
		for t := total(widths); t > width; t-- {
			best, most := -1, 0
			for i, w := range widths {
				if x := w - floor(cols[i]); x > 0 && (best < 0 || x > most || (x == most && w > widths[best])) {
					best, most = i, x
				}
			}
			if best < 0 {
				break
			}
			widths[best]--
		}
	}
}

// shortBinding is BindingText without what most bindings say: the
// LITERAL pattern and the host *.
func shortBinding(b *Binding) string {
	s := fmt.Sprintf("%s %s %s on %s %s", anyText(b.Permission), anyText(b.Principal), anyText(b.Operation),
		anyText(b.ResourceType), anyText(b.ResourceName))
	if b.PatternType == nil || *b.PatternType != "LITERAL" {
		s += " (" + anyText(b.PatternType) + ")"
	}
	if b.Host == nil || *b.Host != "*" {
		s += " from " + anyText(b.Host)
	}
	return s
}

// actionText is an ACL row's action, another kind's with the kind before
// it: "create", "scram upsert".
func actionText(r *Row) string {
	if r.kind() == KindACL {
		return string(r.Action)
	}
	return string(r.kind()) + " " + string(r.Action)
}

// changeText names the change in words, after actionText: the ACL binding,
// "alice SCRAM-SHA-512 (8192 iterations)", "BROKER 1 log.retention.ms=…".
func changeText(r *Row) string {
	t := r.Target
	s := ""
	switch {
	case r.kind() == KindACL && r.Binding == (Binding{}):
		s = "(binding not captured)"
	case r.kind() == KindACL:
		s = shortBinding(&r.Binding)
	case t == nil:
	case r.kind() == KindSCRAM:
		s = anyText(t.User)
		if t.Mechanism != nil {
			s += " " + dissect.Escape(*t.Mechanism)
		}
		if t.Iterations != nil {
			s += fmt.Sprintf(" (%d iterations)", *t.Iterations)
		}
	case r.kind() == KindToken:
		s = "of " + unknownText(t.Owner)
		if t.TokenID != nil {
			s += " id " + dissect.Escape(*t.TokenID)
		}
		if len(t.Renewers) > 0 {
			rs := make([]string, len(t.Renewers))
			for i, p := range t.Renewers {
				rs[i] = dissect.Escape(p)
			}
			s += " renewers " + strings.Join(rs, ",")
		}
		for _, d := range []struct {
			what string
			v    *int64
		}{{"max lifetime", t.MaxLifetimeMs}, {"renew for", t.RenewPeriodMs}, {"expire in", t.ExpiryPeriodMs}} {
			if d.v != nil {
				s += fmt.Sprintf(" %s %d ms", d.what, *d.v)
			}
		}
	case r.kind() == KindQuota:
		s = dissect.Escape(EntityText(t.Entity))
		if s == "" {
			s = "(any entity)"
		}
		if t.Key != nil {
			s += " " + dissect.Escape(*t.Key)
		}
		if t.QuotaValue != nil {
			s += "=" + strconv.FormatFloat(*t.QuotaValue, 'g', -1, 64)
		}
	case r.kind() == KindConfig:
		s = anyText(t.ResourceType) + " " + anyText(t.ResourceName)
		if t.Key != nil {
			s += " " + dissect.Escape(*t.Key)
		}
		if t.Value != nil {
			s += "=" + dissect.Escape(*t.Value)
		}
	}
	if r.ValidateOnly {
		s += " (validate only)"
	}
	if r.Inferred {
		s += " (inferred)"
	}
	return s
}

func unknownText(s *string) string {
	if s == nil {
		return "(unknown)"
	}
	return dissect.Escape(*s)
}

func anyText(s *string) string {
	if s == nil {
		return "(any)"
	}
	return dissect.Escape(*s)
}

func resultText(r *Row) string {
	if r.Result != ResultError {
		return r.Result
	}
	s := "error"
	if r.ErrorName != nil {
		s = *r.ErrorName
	}
	if r.ErrorMessage != nil && *r.ErrorMessage != s {
		s += ": " + dissect.Escape(*r.ErrorMessage)
	}
	return s
}

// Summary is the table's closing line: "41 changes by 3 principals: 30
// created, 9 deleted, 2 failed", then the rows whose filter matched nothing
// and those never answered, when there are any. Created and deleted count
// ACL bindings; the accepted changes of other kinds follow by kind
// ("scram: 2 upserted"), and describes (--reads) as reads.
func Summary(rows []Row) string {
	var created, deleted, failed, noMatch, noResp, unknown, reads int
	who := map[string]bool{}
	other := map[Kind]map[Action]int{}
	for i := range rows {
		r := &rows[i]
		switch {
		case r.Action == Describe:
			reads++
		case r.Result == ResultOK && r.kind() != KindACL:
			if other[r.kind()] == nil {
				other[r.kind()] = map[Action]int{}
			}
			other[r.kind()][r.Action]++
		case r.Result == ResultOK && r.Action == Create:
			created++
		case r.Result == ResultOK:
			deleted++
		case r.Result == ResultError:
			failed++
		case r.Result == ResultNoMatch:
			noMatch++
		case r.Result == ResultNoResponse:
			noResp++
		}
		if r.Principal != nil {
			who[*r.Principal] = true
		} else {
			unknown++
		}
	}
	by := plural(len(who), "principal")
	switch {
	case unknown > 0 && len(who) == 0:
		by = "unknown principals"
	case unknown > 0:
		by += " and unknown ones"
	}
	s := fmt.Sprintf("%s by %s: %d created, %d deleted", plural(len(rows)-reads, "change"), by, created, deleted)
	for _, k := range Kinds[1:] {
		acts := other[k]
		if len(acts) == 0 {
			continue
		}
		names := make([]string, 0, len(acts))
		for a := range acts {
			names = append(names, string(a))
		}
		slices.Sort(names)
		parts := make([]string, len(names))
		for i, a := range names {
			parts[i] = fmt.Sprintf("%d %s", acts[Action(a)], pastTense(Action(a)))
		}
		s += fmt.Sprintf(", %s: %s", k, strings.Join(parts, ", "))
	}
	s += fmt.Sprintf(", %d failed", failed)
	if noMatch > 0 {
		s += fmt.Sprintf(", %d matched nothing", noMatch)
	}
	if noResp > 0 {
		s += fmt.Sprintf(", %d unanswered", noResp)
	}
	if reads > 0 {
		s += ", " + plural(reads, "read")
	}
	return s
}

// pastTense is what a change did: "upserted", "set".
func pastTense(a Action) string {
	switch a {
	case Set:
		return "set"
	case Upsert, Delete, Expire, Renew, Remove, Replace, Create:
		return strings.TrimSuffix(string(a), "e") + "ed"
	case Append, Subtract:
		return string(a) + "ed"
	}
	return string(a)
}

func effectLine(rows []Row) string {
	added, removed := 0, 0
	other := map[Kind]map[string]int{}
	for i := range rows {
		switch r := &rows[i]; {
		case r.kind() != KindACL:
			if other[r.kind()] == nil {
				other[r.kind()] = map[string]int{}
			}
			other[r.kind()][r.Effect]++
		case r.Effect == "added":
			added++
		default:
			removed++
		}
	}
	s := fmt.Sprintf("net effect: %s added, %d removed", plural(added, "binding"), removed)
	for _, k := range Kinds[1:] {
		effs := other[k]
		if len(effs) == 0 {
			continue
		}
		names := make([]string, 0, len(effs))
		for e := range effs {
			names = append(names, e)
		}
		slices.Sort(names)
		for i, e := range names {
			names[i] = fmt.Sprintf("%d %s", effs[e], e)
		}
		s += fmt.Sprintf(", %s: %s", k, strings.Join(names, ", "))
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// appendRowPlace writes the row's filter index, latency and message
// indices (each after a comma): the json row and OCSF's unmapped share them.
func appendRowPlace(b []byte, r *Row) []byte {
	b = append(b, `,"filter_index":`...)
	b = jsonInt(b, r.FilterIndex)
	b = append(b, `,"latency_us":`...)
	b = jsonInt(b, r.LatencyUs)
	b = append(b, `,"request_index":`...)
	b = jsonInt(b, r.RequestIndex)
	b = append(b, `,"response_index":`...)
	b = jsonInt(b, r.ResponseIndex)
	return b
}
