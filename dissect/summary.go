package dissect

import (
	"strconv"
	"strings"
)

// summarize writes the one-line summary a person scans, e.g.
// "CreateAcls v3 request corr=7: ALLOW User:alice WRITE on TOPIC orders (LITERAL) from *, +1 more".
// It reads the tree, so a partial decode still summarises what it holds.
func summarize(m *Message) string {
	var b strings.Builder
	b.WriteString(m.APIName)
	b.WriteString(" v")
	b.WriteString(strconv.Itoa(int(m.APIVersion)))
	b.WriteByte(' ')
	b.WriteString(m.Direction.String())
	b.WriteString(" corr=")
	b.WriteString(strconv.FormatInt(int64(m.CorrelationID), 10))
	body := m.Tree.Child(bodyName(m))
	detail := ""
	switch {
	case body == nil:
	case m.APIKey == 30 && m.Direction == Request:
		detail = listSummary(body.Child("Creations"), aclText)
	case m.APIKey == 31 && m.Direction == Request:
		detail = listSummary(body.Child("Filters"), filterText)
	case m.APIKey == 30:
		detail = resultsSummary(body, "Results", "result", nil)
	case m.APIKey == 31:
		detail = resultsSummary(body, "FilterResults", "filter", deletedCount)
	}
	if detail == "" && m.Direction == Request {
		if c := m.Tree.Find("RequestHeader", "client_id"); c != nil && !c.Null && c.Str != "" {
			detail = "client " + Escape(c.Str)
		}
	}
	if detail != "" {
		b.WriteString(": ")
		b.WriteString(detail)
	}
	if len(m.Problems) > 0 {
		b.WriteString(" [malformed: ")
		b.WriteString(m.Problems[0].Message)
		if len(m.Problems) > 1 {
			b.WriteString(", +" + strconv.Itoa(len(m.Problems)-1) + " more")
		}
		b.WriteByte(']')
	}
	return b.String()
}

func bodyName(m *Message) string {
	if m.Tree == nil {
		return ""
	}
	for _, c := range m.Tree.Children {
		if c.Category == CatRequestBody || c.Category == CatResponseBody {
			return c.Name
		}
	}
	return ""
}

// listSummary shows the first element of an array and how many follow.
func listSummary(arr *Node, text func(*Node) string) string {
	if arr == nil {
		return ""
	}
	if arr.Null {
		return "null list"
	}
	var elems []*Node
	for _, c := range arr.Children {
		if c.Kind == KindStruct {
			elems = append(elems, c)
		}
	}
	if arr.Int == 0 {
		return "nothing (0 entries)"
	}
	if len(elems) == 0 {
		return strconv.FormatInt(arr.Int, 10) + " entries"
	}
	s := text(elems[0])
	if arr.Int > 1 {
		s += ", +" + strconv.FormatInt(arr.Int-1, 10) + " more"
	}
	return s
}

// aclText renders an ACL binding as "ALLOW User:alice WRITE on TOPIC orders (LITERAL) from *".
func aclText(e *Node) string {
	return binding(e, "ResourceType", "ResourceName", "ResourcePatternType", "Principal", "Host")
}

func filterText(e *Node) string {
	return binding(e, "ResourceTypeFilter", "ResourceNameFilter", "PatternTypeFilter", "PrincipalFilter", "HostFilter")
}

func binding(e *Node, rtype, rname, ptype, principal, host string) string {
	var b strings.Builder
	b.WriteString(sym(e.Child("PermissionType")))
	b.WriteByte(' ')
	b.WriteString(text(e.Child(principal)))
	b.WriteByte(' ')
	b.WriteString(sym(e.Child("Operation")))
	b.WriteString(" on ")
	b.WriteString(sym(e.Child(rtype)))
	b.WriteByte(' ')
	b.WriteString(text(e.Child(rname)))
	if p := e.Child(ptype); p != nil {
		b.WriteString(" (" + sym(p) + ")")
	} else {
		b.WriteString(" (LITERAL)") // versions before 1 have no pattern type: literal names only
	}
	b.WriteString(" from ")
	b.WriteString(text(e.Child(host)))
	return b.String()
}

func sym(n *Node) string {
	if n == nil {
		return "?"
	}
	if s := n.EnumName(); s != "" {
		return s
	}
	return strconv.FormatInt(n.Int, 10)
}

// text shows a wire string escaped; null filters match anything.
func text(n *Node) string {
	switch {
	case n == nil:
		return "?"
	case n.Null:
		return "(any)"
	case n.Str == "":
		return `""`
	}
	return Escape(n.Str)
}

// resultsSummary counts successes and failures in a result array and names
// the first failure.
func resultsSummary(body *Node, field, noun string, extra func(*Node) int64) string {
	arr := body.Child(field)
	if arr == nil {
		return ""
	}
	var n, failed, more int64
	var first string
	for _, e := range arr.Children {
		if e.Kind != KindStruct {
			continue
		}
		n++
		if extra != nil {
			more += extra(e)
		}
		if ec := e.Child("ErrorCode"); ec != nil && ec.Int != 0 {
			failed++
			if first == "" {
				first = sym(ec)
				if msg := e.Child("ErrorMessage"); msg != nil && !msg.Null && msg.Str != "" {
					first += " " + Quote(msg.Str)
				}
			}
		}
	}
	s := plural(n, noun)
	if extra != nil {
		s += ", " + plural(more, "ACL") + " deleted"
	}
	switch {
	case failed > 0:
		s += ", " + strconv.FormatInt(failed, 10) + " failed: " + first
	case n > 0:
		s += ", all ok"
	}
	if t := body.Child("ThrottleTimeMs"); t != nil && t.Int != 0 {
		s += ", throttled " + strconv.FormatInt(t.Int, 10) + "ms"
	}
	return s
}

// deletedCount counts the ACLs a DeleteAcls filter result deleted.
func deletedCount(e *Node) int64 {
	var k int64
	if arr := e.Child("MatchingAcls"); arr != nil {
		for _, a := range arr.Children {
			if a.Kind == KindStruct {
				if ec := a.Child("ErrorCode"); ec != nil && ec.Int == 0 {
					k++
				}
			}
		}
	}
	return k
}

func plural(n int64, noun string) string {
	s := strconv.FormatInt(n, 10) + " " + noun
	if n != 1 {
		s += "s"
	}
	return s
}
