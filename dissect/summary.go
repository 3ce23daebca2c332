package dissect

import (
	"strconv"
	"strings"
)

// summarize writes the one-line summary a person scans, e.g.
// "CreateAcls v3 request corr=7: ALLOW User:alice WRITE on TOPIC orders (LITERAL) from *, +1 more".
// It reads the tree, so a partial decode still summarises what it holds.
// It appends to one buffer: it runs for every frame decoded.
func summarize(m *Message) string {
	b := make([]byte, 0, 128)
	body := m.Tree.Child(bodyName(m))
	if rawToken := m.APIKey == saslTokenKey && body != nil && body.Name == "token"; rawToken {
		// A raw token has no version or correlation id to show.
		b = append(b, "SASL token "...)
		b = append(b, m.Direction.String()...)
		b = append(b, ": "...)
		b = appendToken(b, body)
		return string(appendMalformed(b, m))
	}
	b = append(b, m.APIName...)
	b = append(b, " v"...)
	b = strconv.AppendInt(b, int64(m.APIVersion), 10)
	b = append(b, ' ')
	b = append(b, m.Direction.String()...)
	b = append(b, " corr="...)
	b = strconv.AppendInt(b, int64(m.CorrelationID), 10)
	b = append(b, ": "...)
	head := len(b)
	switch {
	case body == nil:
	case m.APIKey == 30 && m.Direction == Request:
		b = appendList(b, body.Child("Creations"), aclText)
	case m.APIKey == 31 && m.Direction == Request:
		b = appendList(b, body.Child("Filters"), filterText)
	case m.APIKey == 30:
		b = appendResults(b, body, "Results", "result", nil)
	case m.APIKey == 31:
		b = appendResults(b, body, "FilterResults", "filter", deletedCount)
	case m.APIKey == saslHandshakeKey || m.APIKey == saslAuthenticateKey:
		b = appendSASL(b, m, body)
	}
	if len(b) == head && m.Direction == Request {
		if c := m.Tree.Find("RequestHeader", "client_id"); c != nil && !c.Null && c.Str != "" {
			b = append(b, "client "...)
			b = append(b, Escape(c.Str)...)
		}
	}
	if len(b) == head {
		b = b[:head-2] // no detail: drop the ": "
	}
	return string(appendMalformed(b, m))
}

// appendMalformed names the first problem of a malformed message.
func appendMalformed(b []byte, m *Message) []byte {
	if len(m.Problems) > 0 {
		b = append(b, " [malformed: "...)
		b = append(b, Escape(m.Problems[0].Message)...)
		if len(m.Problems) > 1 {
			b = append(b, ", +"...)
			b = strconv.AppendInt(b, int64(len(m.Problems)-1), 10)
			b = append(b, " more"...)
		}
		b = append(b, ']')
	}
	return b
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

// appendList shows the first element of an array and how many follow.
func appendList(b []byte, arr *Node, text func([]byte, *Node) []byte) []byte {
	switch {
	case arr == nil || !arr.HasValue():
		return b
	case arr.Null:
		return append(b, "null list"...)
	case arr.Int == 0:
		return append(b, "nothing (0 entries)"...)
	}
	var first *Node
	for _, c := range arr.Children {
		if c.Kind == KindStruct {
			first = c
			break
		}
	}
	if first == nil {
		return appendPlural(b, arr.Int, "entry") // the walk stopped before the first element
	}
	b = text(b, first)
	if arr.Int > 1 {
		b = append(b, ", +"...)
		b = strconv.AppendInt(b, arr.Int-1, 10)
		b = append(b, " more"...)
	}
	return b
}

// aclText renders an ACL binding as "ALLOW User:alice WRITE on TOPIC orders (LITERAL) from *".
func aclText(b []byte, e *Node) []byte {
	return appendBinding(b, e, "ResourceType", "ResourceName", "ResourcePatternType", "Principal", "Host")
}

func filterText(b []byte, e *Node) []byte {
	return appendBinding(b, e, "ResourceTypeFilter", "ResourceNameFilter", "PatternTypeFilter", "PrincipalFilter", "HostFilter")
}

func appendBinding(b []byte, e *Node, rtype, rname, ptype, principal, host string) []byte {
	b = appendSym(b, e.Child("PermissionType"))
	b = append(b, ' ')
	b = appendText(b, e.Child(principal))
	b = append(b, ' ')
	b = appendSym(b, e.Child("Operation"))
	b = append(b, " on "...)
	b = appendSym(b, e.Child(rtype))
	b = append(b, ' ')
	b = appendText(b, e.Child(rname))
	b = append(b, " ("...)
	if p := e.Child(ptype); p != nil {
		b = appendSym(b, p)
	} else {
		b = append(b, "LITERAL"...) // versions before 1 have no pattern type: literal names only
	}
	b = append(b, ") from "...)
	return appendText(b, e.Child(host))
}

// appendSym shows an enum value by name; "?" when the frame does not hold it.
func appendSym(b []byte, n *Node) []byte {
	if n == nil || !n.HasValue() {
		return append(b, '?')
	}
	if s := n.EnumName(); s != "" {
		return append(b, s...)
	}
	return strconv.AppendInt(b, n.Int, 10)
}

// appendText shows a wire string escaped; null filters match anything.
func appendText(b []byte, n *Node) []byte {
	switch {
	case n == nil || !n.HasValue():
		return append(b, '?')
	case n.Null:
		return append(b, "(any)"...)
	case n.Str == "":
		return append(b, `""`...)
	}
	return append(b, Escape(n.Str)...)
}

// appendResults counts successes and failures in a result array and
// names the first failure.
func appendResults(b []byte, body *Node, field, noun string, extra func(*Node) int64) []byte {
	arr := body.Child(field)
	if arr == nil {
		return b
	}
	var n, failed, more int64
	var firstErr *Node
	for _, e := range arr.Children {
		if e.Kind != KindStruct {
			continue
		}
		n++
		if extra != nil {
			more += extra(e)
		}
		if ec := e.Child("ErrorCode"); ec != nil && ec.HasValue() && ec.Int != 0 {
			failed++
			if firstErr == nil {
				firstErr = e
			}
		}
	}
	b = appendPlural(b, n, noun)
	if extra != nil {
		b = append(b, ", "...)
		b = appendPlural(b, more, "ACL")
		b = append(b, " deleted"...)
	}
	switch {
	case failed > 0:
		b = append(b, ", "...)
		b = strconv.AppendInt(b, failed, 10)
		b = append(b, " failed: "...)
		b = appendSym(b, firstErr.Child("ErrorCode"))
		if msg := firstErr.Child("ErrorMessage"); msg != nil && !msg.Null && msg.Str != "" {
			b = append(b, ' ')
			b = append(b, quote(msg.Str)...)
		}
	case n > 0:
		b = append(b, ", all ok"...)
	}
	if t := body.Child("ThrottleTimeMs"); t != nil && t.HasValue() && t.Int != 0 {
		b = append(b, ", throttled "...)
		b = strconv.AppendInt(b, t.Int, 10)
		b = append(b, "ms"...)
	}
	return b
}

// deletedCount counts the ACLs a DeleteAcls filter result deleted.
func deletedCount(e *Node) int64 {
	var k int64
	if arr := e.Child("MatchingAcls"); arr != nil {
		for _, a := range arr.Children {
			if a.Kind == KindStruct {
				if ec := a.Child("ErrorCode"); ec != nil && ec.HasValue() && ec.Int == 0 {
					k++
				}
			}
		}
	}
	return k
}

func appendPlural(b []byte, n int64, noun string) []byte {
	b = strconv.AppendInt(b, n, 10)
	b = append(b, ' ')
	switch {
	case n == 1:
		return append(b, noun...)
	case strings.HasSuffix(noun, "y"):
		b = append(b, noun[:len(noun)-1]...)
		return append(b, "ies"...)
	}
	b = append(b, noun...)
	return append(b, 's')
}

func plural(n int64, noun string) string { return string(appendPlural(nil, n, noun)) }
