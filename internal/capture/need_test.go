package capture

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/dissect"
)

// needFunc is a Needer of functions.
type needFunc struct {
	need   func(r *Record) Need
	record func(r *Record)
}

func (n needFunc) Record(r *Record)    { n.record(r) }
func (n needFunc) Need(r *Record) Need { return n.need(r) }

// headOf is what a filter reads of a message's header, as one string.
func headOf(r *Record) string {
	m, x := r.Message, &r.Exchange
	cid := "-"
	for _, c := range m.Tree.Children {
		if c.Category == dissect.CatHeader {
			if n := c.Child("client_id"); n != nil && n.HasValue() && !n.Null {
				cid = fmt.Sprintf("%q", n.Str)
			}
		}
	}
	return fmt.Sprintf("%s %d %s v%d corr=%d client_id=%s raw=%d peer=%d who=%s file=%s off=%d packets=%v",
		m.Direction, m.APIKey, m.APIName, m.APIVersion, m.CorrelationID, cid, len(m.Raw), x.Peer, x.Identity, r.File, r.Offset, r.Packets)
}

// The record a Needer is asked about says of the header exactly what the
// decoded message says, on every message of every shipped capture (every
// API, TLS decrypted, SASL v0 raw tokens among them).
func TestNeedHeadIsTheDecodedHeader(t *testing.T) {
	const dir = "../../testdata/pcaps/"
	for _, name := range []string{"kadm-acls", "raw-versions", "records-codecs", "sarama-acls", "sasl-scram-acls", "sasl-v0-acls", "tls13-acls"} {
		o := DefaultOptions()
		o.All = true
		if name == "tls13-acls" {
			o.KeyLogs = []string{dir + name + ".keylog"}
		}
		r, err := Open(o, []string{dir + name + ".pcap"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		asked := map[int]string{}
		messages, compared, tokens := 0, 0, 0
		_, err = r.Read(t.Context(), needFunc{
			need: func(r *Record) Need {
				if len(r.Message.Problems) != 0 || r.Malformed || r.Message.Summary != "" {
					t.Errorf("%s #%d: the head record holds what only decoding gives", name, r.Exchange.Index)
				}
				asked[r.Exchange.Index] = headOf(r)
				return NeedBody
			},
			record: func(r *Record) {
				if r.Kind != KindMessage {
					return
				}
				messages++
				h, ok := asked[r.Exchange.Index]
				if !ok {
					if r.Message.APIName != "SaslToken" {
						t.Errorf("%s #%d (%s): not asked about", name, r.Exchange.Index, r.Message.APIName)
					}
					tokens++
					return
				}
				compared++
				if got := headOf(r); got != h {
					t.Errorf("%s #%d:\n head    %s\n decoded %s", name, r.Exchange.Index, h, got)
				}
			},
		})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if messages == 0 || compared+tokens != messages {
			t.Errorf("%s: %d of %d messages compared (%d raw SASL tokens)", name, compared, messages, tokens)
		}
	}
}

// A message the listener needs nothing of is not handed to it, and still
// counts toward -c: the listener sees what it would have seen of the
// first N messages.
func TestNeedNothingIsPassedOver(t *testing.T) {
	const pcap = "../../testdata/pcaps/kadm-acls.pcap"
	read := func(count int, need func(*Record) Need) []string {
		o := DefaultOptions()
		o.All, o.Count = true, count
		r, err := Open(o, []string{pcap}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var seen []string
		if _, err := r.Read(t.Context(), needFunc{need: need, record: func(r *Record) {
			if r.Kind == KindMessage {
				seen = append(seen, fmt.Sprintf("%d:%s", r.Exchange.Index, r.Message.Direction))
			}
		}}); err != nil {
			t.Fatal(err)
		}
		return seen
	}
	body := func(*Record) Need { return NeedBody }
	requestsOnly := func(r *Record) Need {
		if r.Message.Direction == dissect.Response {
			return NeedNothing
		}
		return NeedBody
	}
	for _, count := range []int{0, 7} {
		var want []string
		for _, s := range read(count, body) {
			if strings.HasSuffix(s, ":request") {
				want = append(want, s)
			}
		}
		got := read(count, requestsOnly)
		if fmt.Sprint(got) != fmt.Sprint(want) || len(got) == 0 {
			t.Errorf("-c %d: listener saw %v, want the requests %v", count, got, want)
		}
	}
}
