package tui

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/internal/testtools/testkit"
)

// gzipProduce is a Produce v9 request of one gzip batch holding one
// record, built with kmsg.
func gzipProduce() []byte {
	r := kmsg.Record{Key: []byte("k"), Value: []byte("hello")}
	body := r.AppendTo(nil)[1:] // Length 0 is one varint byte
	raw := append(kbin.AppendVarint(nil, int32(len(body))), body...)
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(raw)
	w.Close()
	b := kmsg.RecordBatch{Magic: 2, Attributes: 1, NumRecords: 1, Records: z.Bytes(), Length: int32(49 + z.Len())}
	batch := b.AppendTo(nil)
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "orders"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = batch
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	return testkit.KmsgRequest(req, 1, testkit.Ptr("producer"))
}

// TestHexShowsDecompressedSource: selecting a node of a decompressed batch
// shows that batch's bytes in the hex pane, painted by its own nodes;
// selecting a node of the frame shows the frame again; a byte of the
// decompressed bytes selects the node that holds it.
func TestHexShowsDecompressedSource(t *testing.T) {
	frame := gzipProduce()
	load := func(int) (*dissect.Message, error) { return dissect.Builtin().Decode(frame, dissect.Options{}), nil }
	msg, _ := load(0)
	if len(msg.Problems) > 0 || len(msg.Sources) != 1 {
		t.Fatalf("problems %v, %d sources", msg.Problems, len(msg.Sources))
	}
	m := newTestModel(t, load, []Entry{entryOf(0, t0, "10.0.0.1:5000", "10.0.0.2:9092", msg, 0)}, 120, 50)
	if m.cur == nil || m.hex.src != 0 || !bytes.Equal(m.hex.raw, frame) {
		t.Fatalf("the hex pane does not start on the frame")
	}
	var value, batch *dissect.Node
	m.cur.Tree.Walk(func(n *dissect.Node, _ int) {
		switch {
		case n.Name == "value" && n.Source == 1:
			value = n
		case n.Name == "RecordBatch[0]":
			batch = n
		}
	})
	if value == nil || batch == nil {
		t.Fatal("no record value or batch in the tree")
	}

	m.tree.setAll(true)
	m.tree.selectPath(m.cur.Tree.AtSource(1, value.Offset))
	m.syncFromTree()
	if m.hex.src != 1 || !bytes.Equal(m.hex.raw, m.cur.Sources[0].Data) {
		t.Fatalf("selecting the record's value shows source %d (%d bytes)", m.hex.src, len(m.hex.raw))
	}
	if got := dissect.Category(m.hex.cats[value.Offset]); got != dissect.CatRecord {
		t.Errorf("the value's bytes are painted %v", got)
	}
	if lo, hi := m.marked(); lo != value.Offset || hi != value.Offset+value.Size || m.hex.cursor != value.Offset {
		t.Errorf("marked [%d, %d), cursor %d; the value is [%d, %d)", lo, hi, m.hex.cursor, value.Offset, value.Offset+value.Size)
	}

	// A byte of the decompressed bytes selects the node that holds it.
	m.hex.cursor = value.Offset + 2
	m.syncFromHex()
	if m.tree.selected() != value {
		t.Errorf("the cursor in the value selects %v", m.tree.selected().Name)
	}

	m.tree.selectPath(m.cur.Tree.At(batch.Offset))
	m.syncFromTree()
	if m.hex.src != 0 || !bytes.Equal(m.hex.raw, frame) {
		t.Fatalf("selecting the batch shows source %d", m.hex.src)
	}
	if got := dissect.Category(m.hex.cats[batch.Offset]); got != dissect.CatRecordBatch {
		t.Errorf("the batch's bytes are painted %v", got)
	}
}

// The two record categories have colours of their own, apart from the
// others and from uncovered bytes.
func TestRecordCategoryColours(t *testing.T) {
	seen := map[any]dissect.Category{}
	for _, c := range dissect.Categories() {
		col := catColors[c]
		if prev, dup := seen[col]; dup {
			t.Errorf("%v and %v share a colour", prev, c)
		}
		seen[col] = c
	}
	if _, dup := seen[catColors[numCats]]; dup {
		t.Error("a category has the colour of uncovered bytes")
	}
}
