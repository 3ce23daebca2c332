package capture

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/kdissect/kdissect/reassembly"
)

// Result is what the pipelines of a run saw.
type Result struct {
	// Malformed: some record was (Malformed).
	Malformed bool
	Stats     reassembly.Stats
	other     map[uint16]int64        // connections on other ports, by server port
	more      bool                    // more than the pipelines told apart
	detected  map[netip.AddrPort]bool // servers found by --detect
	refused   int64                   // connections whose TLS handshake a peer refused
	// undecrypted: TLS connections not decrypted, not refused; tlsReason
	// the first one's reason; keyLogs: --tls-keylog was given.
	undecrypted int64
	tlsReason   string
	keyLogs     bool
}

func (t *Result) add(p *reassembly.Pipeline) {
	list, more := p.OtherPorts()
	if t.other == nil {
		t.other, t.detected = map[uint16]int64{}, map[netip.AddrPort]bool{}
	}
	for _, pc := range list {
		t.other[pc.Port] += pc.Conns
	}
	t.more = t.more || more
	for s := range p.Detected() {
		t.detected[s] = true
	}
	t.Stats.Add(p.Stats())
}

// NoKafka explains an output without one Kafka frame on the given ports
// (the --port flag as typed): what the capture held instead and which
// --port to try. It is "" when frames were found.
func (t *Result) NoKafka(portFlag string) string {
	st := t.Stats
	if st.Frames > 0 {
		return ""
	}
	on := "port " + portFlag
	if strings.ContainsAny(portFlag, ",-") {
		on = "ports " + portFlag
	}
	if n := len(t.detected); n > 0 {
		// The connections counted include those --detect followed.
		const named = 3
		var at []string
		for _, s := range slices.SortedFunc(maps.Keys(t.detected), netip.AddrPort.Compare)[:min(n, named)] {
			at = append(at, s.String())
		}
		if n > named {
			at = append(at, fmt.Sprintf("%d more", n-named))
		}
		on += " or at " + strings.Join(at, ", ") + " (found by --detect)"
	}
	if st.Connections > 0 {
		conns := plural(st.Connections, "TCP connection")
		switch {
		case t.refused >= st.Connections && st.Connections == 1:
			return fmt.Sprintf("no Kafka frames in the %s on %s: its TLS handshake was refused", conns, on)
		case t.refused >= st.Connections:
			return fmt.Sprintf("no Kafka frames in the %s on %s: their TLS handshakes were refused", conns, on)
		case t.refused > 0:
			return fmt.Sprintf("no Kafka frames in the %s on %s: %d of them had their TLS handshake refused; the others encrypted (TLS), or not Kafka?", conns, on, t.refused)
		}
		if t.undecrypted > 0 && t.refused == 0 {
			return fmt.Sprintf("no Kafka frames in the %s on %s: %s", conns, on, t.undecryptedText(st.Connections))
		}
		return fmt.Sprintf("no Kafka frames in the %s on %s: encrypted (TLS), or not Kafka?", conns, on)
	}
	var list []reassembly.PortCount
	var conns int64
	for port, n := range t.other {
		list = append(list, reassembly.PortCount{Port: port, Conns: n})
		conns += n
	}
	if conns == 0 {
		// Packets of an unknown link type are reported on their own.
		if n := st.Packets - st.UnknownLink; n > 0 || st.Packets == 0 {
			return fmt.Sprintf("no Kafka traffic found: no TCP connection in %s", plural(n, "packet"))
		}
		return ""
	}
	slices.SortFunc(list, func(a, b reassembly.PortCount) int {
		if a.Conns != b.Conns {
			return cmp.Compare(b.Conns, a.Conns)
		}
		return cmp.Compare(a.Port, b.Port)
	})
	const shown, suggested = 5, 3
	var seen, try []string
	for i, pc := range list {
		if i == shown {
			more := plural(int64(len(list)-shown), "port")
			seen = append(seen, "and "+strings.Replace(more, " ", " more ", 1))
			break
		}
		seen = append(seen, fmt.Sprintf("%d (%d)", pc.Port, pc.Conns))
		if i < suggested {
			try = append(try, strconv.Itoa(int(pc.Port)))
		}
	}
	count := plural(conns, "TCP connection")
	if t.more {
		count = "more than " + count
	}
	where := "on port " + seen[0]
	if len(list) > 1 {
		where = "on ports " + strings.Join(seen, ", ")
	}
	return fmt.Sprintf("no Kafka traffic found on %s; saw %s %s: if Kafka is there, try --port %s",
		on, count, where, strings.Join(try, ","))
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

// undecryptedText says why the TLS connections among conns were not read,
// and how to read them when the reason is a missing key.
func (t *Result) undecryptedText(conns int64) string {
	var b strings.Builder
	switch {
	case t.undecrypted >= conns && conns == 1:
		b.WriteString("its TLS was not decrypted: ")
	case t.undecrypted >= conns:
		b.WriteString("their TLS was not decrypted (the first: ")
	default:
		fmt.Fprintf(&b, "%d of them TLS not decrypted (the first: ", t.undecrypted)
	}
	b.WriteString(t.tlsReason)
	if t.undecrypted < conns || conns > 1 {
		b.WriteByte(')')
	}
	if strings.HasPrefix(t.tlsReason, "no key for") && !t.keyLogs {
		b.WriteString("; give the clients' key log with --tls-keylog")
	}
	if t.undecrypted < conns {
		b.WriteString("; the others not Kafka?")
	}
	return b.String()
}
