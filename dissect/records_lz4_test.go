package dissect

import (
	"fmt"
	"strings"
	"testing"
)

// TestRecordsLZ4Magic0: librdkafka writes the LZ4 frame of a magic 0
// message with the descriptor checksum Kafka before 0.10 computed (over
// the frame's magic number too), which Kafka's reader ignores in magic 0
// messages. The frame is librdkafka 2.0.2's (kcat -z lz4 -X
// api.version.request=false -X broker.version.fallback=0.8.2). Its 30
// messages decode; the same compressed bytes in a magic 1 message, where
// Kafka checks the descriptor, are a problem at the value's bytes.
func TestRecordsLZ4Magic0(t *testing.T) {
	frame := readTestdata(t, "produce-v0-lz4-librdkafka.bin")
	m := Builtin().Decode(frame, Options{})
	if err := checkShape(m, frame, false); err != nil || len(m.Problems) > 0 {
		t.Fatalf("%v %v\n%s", err, m.Problems, AppendText(nil, m.Tree))
	}
	rn := recordsNode(t, m)
	if len(rn.Children) != 1 || len(m.Sources) != 1 || m.Sources[0].Codec != "lz4" {
		t.Fatalf("%d entries, sources %+v", len(rn.Children), m.Sources)
	}
	wrapper := rn.Children[0].Child("value")
	if len(wrapper.Children) != 30 {
		t.Fatalf("%d messages in the wrapper, want 30:\n%s", len(wrapper.Children), AppendText(nil, wrapper))
	}
	for i, in := range wrapper.Children {
		want := fmt.Sprintf("k0.8.2lz4-value-value-value-value-value-value-value-value-%d", i+1)
		if got := nullable(in.Child("value")); got != want || in.Source != 1 || in.Child("offset").Int != int64(i) {
			t.Errorf("message %d: value %q, source %d, offset %d", i, got, in.Source, in.Child("offset").Int)
		}
	}

	value := wrapper.Bytes
	set := messageV(1, 0, int8(codecLZ4), 1600000000000, nil, value)
	m = Builtin().Decode(produce(2, set), Options{})
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "header checksum") || strings.Contains(m.Problems[0].Message, "lz4: lz4:") {
		t.Errorf("magic 1 with the old checksum: problems %v", m.Problems)
	}
	if p := m.Problems; len(p) == 1 && p[0].Offset != len(produce(2, set))-len(value) {
		t.Errorf("problem at %d, want the value's first byte %d", p[0].Offset, len(produce(2, set))-len(value))
	}

	// A magic 0 value that is no lz4 frame, or one whose descriptor is
	// wrong beyond its checksum (version 0), is still a problem.
	bad := append([]byte(nil), value...)
	bad[4] &^= 0x40
	for _, v := range [][]byte{[]byte("not an lz4 frame"), bad} {
		m = Builtin().Decode(produce(0, messageV(0, 0, int8(codecLZ4), 0, nil, v)), Options{})
		if len(m.Problems) != 1 || !strings.HasPrefix(m.Problems[0].Message, "lz4: ") {
			t.Errorf("magic 0 value % x…: problems %v", v[:6], m.Problems)
		}
	}
}
