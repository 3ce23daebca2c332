package dissect

import (
	"encoding/binary"
	"testing"
)

// PeekHead reads what Decode reads of a header, or declines: frames cut
// anywhere in their header, null and odd client ids, header v0, flexible
// headers, responses, a size prefix shorter than the header.
func TestPeekHeadReadsWhatDecodeReads(t *testing.T) {
	req := func(key, ver int16, corr int32, clientID []byte, null bool, rest ...byte) []byte {
		b := make([]byte, 12)
		binary.BigEndian.PutUint16(b[4:], uint16(key))
		binary.BigEndian.PutUint16(b[6:], uint16(ver))
		binary.BigEndian.PutUint32(b[8:], uint32(corr))
		if !(key == 7 && ver == 0) {
			n := len(clientID)
			if null {
				n = -1
			}
			b = binary.BigEndian.AppendUint16(b, uint16(int16(n)))
			b = append(b, clientID...)
		}
		b = append(b, rest...)
		binary.BigEndian.PutUint32(b, uint32(len(b)-4))
		return b
	}
	frames := [][]byte{
		req(30, 3, 7, []byte("kadm"), false, 0, 1, 0),
		req(30, 1, 7, []byte("sarama"), false, 0, 0, 0, 0),
		req(3, 12, -5, nil, true, 0),
		req(7, 0, 9, nil, false, 0, 0, 0, 1),
		req(18, 3, 1, []byte("a\x00\xffb"), false, 0),
		req(999, 0, 1, []byte("x"), false),
		req(30, 3, 2, []byte{}, false),
	}
	// Cut at every length, and a size prefix that ends inside the header.
	var all [][]byte
	for _, f := range frames {
		for n := 0; n <= len(f); n++ {
			all = append(all, f[:n])
		}
		short := append([]byte(nil), f...)
		binary.BigEndian.PutUint32(short, 9)
		all = append(all, short)
	}
	r := Builtin()
	compared := 0
	for _, f := range all {
		for _, o := range []Options{{Direction: Request}, {Direction: Request, Head: true}, {Direction: Response, APIKey: 30, APIVersion: 3}, {Direction: Response, APIKey: 18, APIVersion: 0}} {
			h, ok := r.PeekHead(f, o)
			if !ok {
				continue
			}
			compared++
			m := r.Decode(f, o)
			var cid string
			has := false
			for _, c := range m.Tree.Children {
				if c.Category == CatHeader {
					if n := c.Child("client_id"); n != nil && n.HasValue() && !n.Null {
						cid, has = n.Str, true
					}
				}
			}
			want := Head{Direction: m.Direction, APIKey: m.APIKey, APIVersion: m.APIVersion, APIName: m.APIName,
				CorrelationID: m.CorrelationID, ClientID: cid, HasClientID: has}
			if h != want {
				t.Errorf("% x %+v:\n peek   %+v\n decode %+v", f, o, h, want)
			}
		}
	}
	if compared < 40 {
		t.Errorf("only %d frames peeked at", compared)
	}
	if _, ok := r.PeekHead(frames[0], Options{Direction: Request, RawToken: true}); ok {
		t.Error("a raw SASL token has no header to peek at")
	}
}
