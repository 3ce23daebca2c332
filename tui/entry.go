package tui

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/dissect"
)

// EntryOf is the list row of a decoded message, without its place in the
// capture: the caller sets Index, Time, Src, Dst, Peer, Who and Identity.
// It lives here so that the CLI and the explorer's tests share one
// mapping.
func EntryOf(m *dissect.Message) Entry {
	e := Entry{
		Direction: m.Direction, APIKey: m.APIKey, APIName: m.APIName, APIVersion: m.APIVersion,
		CorrelationID: m.CorrelationID, Summary: m.Summary, HasProblems: len(m.Problems) > 0,
		Size: frameSize(m), Forwarded: m.Inner != nil,
	}
	e.ClientID, e.HasClientID = clientID(m.Tree)
	if f := m.Forwarded; f != nil && m.Inner != nil {
		e.ForwardedPrincipal, e.ForwardedClient = f.Principal, f.Client
	}
	if m.Direction == dissect.Response {
		e.KafkaError = kafkaError(m.Tree)
	}
	return e
}

// frameSize is the frame's size, size prefix included, as the prefix says
// (the NDJSON size), so a frame whose body was not kept still has one.
func frameSize(m *dissect.Message) int {
	if len(m.Raw) >= 4 {
		return int(binary.BigEndian.Uint32(m.Raw)) + 4
	}
	return len(m.Raw)
}

// clientID is the request header's client_id, when it has a non-null one.
func clientID(root *dissect.Node) (string, bool) {
	if root == nil {
		return "", false
	}
	for _, c := range root.Children {
		if c.Category != dissect.CatHeader {
			continue
		}
		if n := c.Child("client_id"); n != nil && n.HasValue() && !n.Null {
			return n.Str, true
		}
	}
	return "", false
}

// kafkaError is the name of the first non-zero error code in a tree, in
// pre-order (a top-level error before the per-item ones), or "".
func kafkaError(n *dissect.Node) string {
	if n == nil {
		return ""
	}
	if (n.Name == "ErrorCode" || n.Name == "TopLevelErrorCode") && n.Kind == dissect.KindInt && n.HasValue() && n.Int != 0 {
		if name := n.EnumName(); name != "" && !strings.HasPrefix(name, "unknown ") {
			return name
		}
		return "error " + strconv.FormatInt(n.Int, 10) // a code the table does not know
	}
	for _, c := range n.Children {
		if s := kafkaError(c); s != "" {
			return s
		}
	}
	return ""
}
