package dissect

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// The records of Produce requests and Fetch responses: RecordBatch v2
// (magic 2) and the legacy MessageSet (magic 0 and 1), whose compressed
// payloads are decompressed into sources of their own (Message.Sources).
//
// Nothing found in records stops the walk of the message around them: a
// batch that does not parse is a problem at its offset and a partial node,
// and the next field of the message is read as if the records were fine.
// Every length is checked against the bytes of the region it claims
// before it is used, and decompression never goes past the cap.

// recWalk decodes the entries of one records field, or the records of one
// decompressed source. It builds nodes with the decoder's storage and
// cursor (d.b, d.off, d.end), pointing them at the source it reads and
// putting them back after.
type recWalk struct {
	d     *decoder
	src   uint16 // the source offsets count in: 0 the frame
	depth int    // compressed MessageSet wrappers around this walk
	// cut: the entry being read is known to end early, and says so once;
	// the fields it cuts short do not each add a problem.
	cut bool
	// at is where in the frame the compressed bytes this source came
	// from begin. Problems count their offsets in the frame, so one
	// found in a source is placed there and says where in the source it is.
	at int
}

// maxSources bounds the decompressed sources of one message: Node.Source
// numbers them in 16 bits.
const maxSources = math.MaxUint16

// maxWrapperDepth bounds MessageSet wrappers inside wrappers. Kafka writes
// one level; the format allows more, and each level is a decompression.
const maxWrapperDepth = 8

// maxDecompressedFactor is how many times Options.MaxDecompressed the
// batches of one message may decompress to together: each batch is
// capped on its own, and a message of many small bombs still is too.
const maxDecompressedFactor = 4

// DefaultMaxNodes is the size of tree (in nodes, of some 200 bytes each)
// past which a message is no longer dissected: a kilobyte of zstd can
// decompress to millions of minimal records, and so can 8 MB of a plain
// batch or of an array of empty strings; a tree of them would be a few
// hundred times their bytes. Wireshark stops a packet's tree at a million
// items (gui.max_tree_items) for the same reason.
const DefaultMaxNodes = 1 << 21

func (d *decoder) nodeBudget() int {
	if d.opts.MaxNodes > 0 {
		return d.opts.MaxNodes
	}
	return DefaultMaxNodes
}

// overBudget ends the dissection of a message whose tree has reached the
// budget: the bytes left in the region are one node with the problem.
func (d *decoder) overBudget() {
	n := d.node("unknown", "bytes", KindBytes)
	n.Bytes = d.b[d.off:d.end:d.end]
	n.Size = d.end - d.off
	n.Doc = "bytes not dissected"
	d.fail(n, d.off, fmt.Sprintf("fields from here on not dissected: the message has %d nodes, the most one may have (--max-nodes raises it)", d.used))
	d.off = d.end
}

func (o *Options) maxDecompressed() int {
	if o.MaxDecompressed <= 0 {
		return DefaultMaxDecompressed
	}
	return o.MaxDecompressed
}

// records dissects the value of records field n, whose bytes have just
// been read: a sequence of RecordBatch v2 or MessageSet v0/v1 entries.
// The cursor is left where it was, after the field.
func (d *decoder) records(n *Node) {
	if n.noval || n.Null || len(n.Bytes) == 0 || n.redact != 0 {
		return
	}
	if n.Name == "UnalignedRecords" {
		// A FetchSnapshot chunk starts wherever the client asked (its
		// Position), not at a batch.
		n.note = "snapshot bytes, not aligned to record batches"
		return
	}
	off, end, cat := d.off, d.end, d.cat
	mark := len(d.stack)
	w := recWalk{d: d, src: n.Source}
	d.off, d.end = off-len(n.Bytes), off
	batches, messages := w.entries(off, -1)
	d.adopt(n, mark)
	d.off, d.end, d.cat = off, end, cat
	n.note = entriesNote(batches, messages)
}

// entries decodes batches and messages until end. wrapper is the magic of
// the MessageSet wrapper they were decompressed from, -1 at the top.
func (w *recWalk) entries(end int, wrapper int8) (batches, messages int) {
	d := w.d
	for d.off < end {
		// Both formats have their magic byte at offset 16; a region too
		// short to hold it is read as a batch, cut.
		magic := int8(2)
		switch {
		case end-d.off > 16:
			magic = int8(d.b[d.off+16])
		case wrapper >= 0:
			w.rest(end, fmt.Sprintf("%d bytes after the last message, too few for another", end-d.off))
			return
		}
		var ok bool
		switch {
		case wrapper >= 0 && magic != 0 && magic != 1:
			w.rest(end, fmt.Sprintf("magic %d inside a MessageSet wrapper: only messages of magic 0 and 1 nest", magic))
			return
		case magic == 2:
			ok = w.batch(batches, end)
			batches++
		case magic == 0 || magic == 1:
			ok = w.message(messages, end, wrapper)
			messages++
		default:
			w.rest(end, fmt.Sprintf("magic %d: neither a RecordBatch (2) nor a MessageSet message (0, 1)", magic))
			return
		}
		if !ok {
			break
		}
	}
	return
}

// rest shows the bytes up to end as one node with a problem.
func (w *recWalk) rest(end int, msg string) {
	d := w.d
	n := w.node("unknown", "bytes", KindBytes)
	n.Bytes = d.b[d.off:end:end]
	n.Size = end - d.off
	n.Doc = "bytes that are not a record batch"
	w.problem(n, d.off, msg)
	d.off = end
}

func entriesNote(batches, messages int) string {
	switch {
	case messages == 0 && batches == 1:
		return "1 record batch"
	case messages == 0:
		return strconv.Itoa(batches) + " record batches"
	case batches == 0 && messages == 1:
		return "MessageSet of 1 message"
	case batches == 0:
		return "MessageSet of " + strconv.Itoa(messages) + " messages"
	}
	return strconv.Itoa(batches) + " record batches, " + strconv.Itoa(messages) + " MessageSet messages"
}

// ---- RecordBatch v2 ----

// batchHeader is the size of a v2 batch header, base offset to record
// count; batch_length counts the bytes after itself.
const (
	batchHeader    = 61
	batchMinLength = batchHeader - 12
	batchCRCFrom   = 21 // the CRC covers the attributes to the end
)

// batch decodes the v2 batch at the cursor; false means no entry can
// follow it (it was cut, or its length is unusable).
func (w *recWalk) batch(i, end int) bool {
	d := w.d
	d.cat = CatRecordBatch
	start := d.off
	bn, mark := w.open(indexedName(batchNames, "RecordBatch", i), "RecordBatch v2", KindStruct)
	bn.noval, bn.Doc = true, docBatch
	defer func() { w.close(bn, mark); w.cut = false }()
	if end-start < 12 {
		w.partial(bn, start, docPartialBatch, fmt.Sprintf("partial record batch: %d bytes, too few for its offset and length", end-start))
	}
	if _, ok := w.fixed("base_offset", "int64", docBaseOffset, 8); !ok {
		d.off = end
		return false
	}
	ln, ok := w.fixed("batch_length", "int32", docBatchLength, 4)
	if !ok {
		d.off = end
		return false
	}
	if ln.Int < batchMinLength {
		w.problem(ln, ln.Offset, fmt.Sprintf("batch_length %d is below the %d bytes of a batch header: where the next batch starts is unknown", ln.Int, batchMinLength))
		d.off = end
		return false
	}
	stop, cut := d.off+int(ln.Int), false
	if stop > end {
		w.partial(bn, start, docPartialBatch, fmt.Sprintf("partial record batch: batch_length says %d bytes follow, %d are here", ln.Int, end-d.off))
		stop, cut = end, true
	}
	saved := d.end
	d.end = stop
	defer func() { d.off, d.end = stop, saved }()

	// Only a cut batch runs out of bytes in its header (its length is at
	// least the header's): the first field it cuts ends it.
	if _, ok := w.fixed("partition_leader_epoch", "int32", docLeaderEpoch, 4); !ok {
		return false
	}
	mn, ok := w.fixed("magic", "int8", docMagic, 1)
	if !ok {
		return false
	}
	if mn.Int != 2 {
		w.problem(mn, mn.Offset, fmt.Sprintf("magic %d in a record batch: 2 expected", mn.Int))
	}
	crc, ok := w.fixed("crc", "uint32", docCRC, 4)
	if !ok {
		return false
	}
	crc.Int = int64(uint32(crc.Int))
	if cut {
		crc.note = crcNote(uint32(crc.Int), "not checked: the batch is cut")
	} else if got := crc32.Checksum(d.b[start+batchCRCFrom:stop], castagnoli); got != uint32(crc.Int) {
		crc.note = crcNote(uint32(crc.Int), "mismatch")
		w.problem(crc, crc.Offset, fmt.Sprintf("CRC-32C mismatch: the batch says %#08x, its bytes give %#08x", uint32(crc.Int), got))
	} else {
		crc.note = crcNote(uint32(crc.Int), "valid")
	}
	an, ok := w.fixed("attributes", "int16", docBatchAttrs, 2)
	if !ok {
		return false
	}
	an.note = batchAttrNames()[an.Int&0x7f]
	codec, control := int(an.Int&7), an.Int&attrControl != 0
	if codec > codecZstd {
		w.problem(an, an.Offset, fmt.Sprintf("unknown compression codec %d", codec))
	}
	if _, ok := w.fixed("last_offset_delta", "int32", docLastOffsetDelta, 4); !ok {
		return false
	}
	tn, ok := w.fixed("base_timestamp", "int64", docBaseTimestamp, 8)
	if !ok {
		return false
	}
	if an.Int&0x40 != 0 {
		tn.Doc = docDeleteHorizon
	}
	tn.note = timeNote(tn.Int)
	if tn, ok = w.fixed("max_timestamp", "int64", docMaxTimestamp, 8); !ok {
		return false
	}
	tn.note = timeNote(tn.Int)
	for _, f := range [...]struct {
		name, typ, doc string
		size           int
	}{
		{"producer_id", "int64", docProducerID, 8},
		{"producer_epoch", "int16", docProducerEpoch, 2},
		{"base_sequence", "int32", docBaseSequence, 4},
	} {
		if _, ok := w.fixed(f.name, f.typ, f.doc, f.size); !ok {
			return false
		}
	}
	cn, ok := w.fixed("record_count", "int32", docRecordCount, 4)
	if !ok {
		return false
	}
	count := cn.Int
	if count < 0 {
		w.problem(cn, cn.Offset, fmt.Sprintf("record_count %d is negative", count))
		count = 0
	}
	d.cat = CatRecord
	if d.opts.BatchHeaders {
		w.skipRecords(codec, stop, count)
		return !cut
	}
	if codec == codecNone {
		rn, rmark := w.open("records", "[]Record", KindArray)
		rn.Doc = docRecords
		rn.Int = w.recordList(rn, count, control, cut)
		w.close(rn, rmark)
		w.trailing(stop, "bytes after the last record of the batch")
		return !cut
	}
	w.compressedRecords(codec, stop, count, control, cut)
	return !cut
}

// skipRecords passes over a batch's records, from the cursor to stop, as
// one node counting the header's record_count (Options.BatchHeaders).
func (w *recWalk) skipRecords(codec, stop int, count int64) {
	d := w.d
	rn := w.node("records", "[]Record", KindArray)
	rn.Doc = docRecords
	rn.Int = count
	rn.Size = stop - d.off
	rn.note = skippedNotes[min(codec, len(skippedNotes)-1)]
	d.off = stop
}

// skippedNotes are made once: BatchHeaders runs for every batch of a
// busy capture.
var skippedNotes = func() []string {
	out := make([]string, codecZstd+2)
	for c := range out {
		out[c] = codecName(c) + ", not dissected: batch headers only"
	}
	out[codecZstd+1] = "compressed with an unknown codec, not dissected: batch headers only"
	return out
}()

// compressedRecords decodes the compressed records of a batch, from the
// cursor to stop, in a source of their own.
func (w *recWalk) compressedRecords(codec, stop int, count int64, control, cut bool) {
	d := w.d
	payload := d.b[d.off:stop:stop]
	rn, rmark := w.open("records", "[]Record", KindArray)
	rn.Doc = docRecords
	rn.Size = len(payload)
	d.off = stop
	if codec > codecZstd {
		rn.noval = true
		rn.note = "compressed with an unknown codec: not decompressed"
		w.close(rn, rmark)
		return
	}
	if cut {
		// A cut stream could be decompressed as far as it goes, but a
		// reader of Kafka's would drop the whole batch: so does this one.
		rn.noval = true
		rn.note = codecName(codec) + ", cut: not decompressed"
		w.close(rn, rmark)
		return
	}
	data, src, err := w.decompress(codec, 2, payload, rn.Offset)
	if err != nil {
		rn.noval = true
		rn.note = codecName(codec) + ", not decompressed"
		w.problem(rn, rn.Offset, err.Error())
		w.close(rn, rmark)
		return
	}
	inner := recWalk{d: d, src: src, depth: w.depth, at: w.frameAt(rn.Offset)}
	b, off, end := d.b, d.off, d.end
	d.b, d.off, d.end = data, 0, len(data)
	rn.Int = inner.recordList(rn, count, control, false)
	inner.trailing(len(data), "bytes after the last record of the decompressed batch")
	d.adopt(rn, rmark)
	d.b, d.off, d.end = b, off, end
	rn.note = compressedNote(codec, len(payload), len(data), src)
}

func compressedNote(codec, from, to int, src uint16) string {
	return codecName(codec) + ", " + strconv.Itoa(from) + " bytes decompressed to " + strconv.Itoa(to) + " in source #" + strconv.Itoa(int(src))
}

// decompress decompresses payload, which starts at off of the walk's
// source and holds the entries of a magic version, into a new source of
// the message within the caps.
func (w *recWalk) decompress(codec int, magic int8, payload []byte, off int) ([]byte, uint16, error) {
	d, m := w.d, &w.d.m
	if len(m.Sources) >= maxSources {
		return nil, 0, fmt.Errorf("%s: not decompressed, the message has %d decompressed batches already", codecName(codec), maxSources)
	}
	per := d.opts.maxDecompressed()
	left := maxDecompressedFactor*per - m.unpacked
	limit := min(per, left)
	if limit <= 0 {
		return nil, 0, fmt.Errorf("%s: not decompressed, the message's batches decompressed to %d bytes already (%d times --max-decompressed)", codecName(codec), m.unpacked, maxDecompressedFactor)
	}
	data, err := decompress(codec, magic, payload, limit)
	if err != nil {
		if _, big := err.(errTooBig); big && limit < per {
			return nil, 0, fmt.Errorf("%s: decompresses to more than the %d bytes the message has left of %d times --max-decompressed", codecName(codec), limit, maxDecompressedFactor)
		}
		if strings.HasPrefix(err.Error(), codecName(codec)+":") {
			return nil, 0, err // the library names itself already
		}
		return nil, 0, fmt.Errorf("%s: %v", codecName(codec), err)
	}
	m.unpacked += len(data)
	m.Sources = append(m.Sources, Source{Codec: codecName(codec), Data: data, Parent: int(w.src), Offset: off, Size: len(payload)})
	return data, uint16(len(m.Sources)), nil
}

// recordList decodes up to count records as children of rn (open), until
// the region ends; it returns how many it decoded.
func (w *recWalk) recordList(rn *Node, count int64, control, cut bool) int64 {
	d := w.d
	var i int64
	for ; i < count && d.off < d.end; i++ {
		if d.used >= d.nodeBudget() {
			w.rest(d.end, fmt.Sprintf("records from here on not dissected: the message has %d nodes, the most one may have (--max-nodes raises it)", d.used))
			return i
		}
		if !w.record(i, control) {
			// The record said what is wrong; that the count is not
			// reached follows from it.
			return i + 1
		}
	}
	if i < count && !cut {
		w.problem(rn, d.off, fmt.Sprintf("record_count says %d records, the batch holds %d", count, i))
	}
	return i
}

// record decodes one record; false means the records after it cannot be
// found.
func (w *recWalk) record(i int64, control bool) bool {
	d := w.d
	typ := "Record"
	if control {
		typ = "ControlRecord"
	}
	rn, mark := w.open(indexedName(recordNames, "Record", int(i)), typ, KindStruct)
	rn.noval = true
	defer func() { w.close(rn, mark) }()
	ln, l, ok := w.varint("length", "varint", docRecordLength, 5)
	if !ok {
		d.off = d.end
		return false
	}
	// attributes, timestamp and offset deltas, key and value lengths and
	// header count: a byte each at least.
	const minRecord = 6
	if l < minRecord {
		w.problem(ln, ln.Offset, fmt.Sprintf("record length %d is below the %d bytes of a record's fields", l, minRecord))
		d.off = d.end
		return false
	}
	stop, cut := d.off+int(l), false
	if int64(d.end-d.off) < l {
		w.truncated(ln, ln.Offset, fmt.Sprintf("record length %d exceeds the %d bytes left", l, d.end-d.off))
		stop, cut = d.end, true
	}
	saved, quiet := d.end, w.cut
	d.end, w.cut = stop, quiet || cut
	ok = w.recordFields(control)
	if ok && !cut { // a cut record's length is wrong: the bytes after its fields are not its own
		w.trailing(stop, "bytes of the record after its headers")
	}
	d.off, d.end, w.cut = stop, saved, quiet
	return !cut
}

func (w *recWalk) recordFields(control bool) bool {
	d := w.d
	if _, ok := w.fixed("attributes", "int8", docRecordAttrs, 1); !ok {
		return false
	}
	if _, _, ok := w.varint("timestamp_delta", "varlong", docTimestampDelta, 10); !ok {
		return false
	}
	if _, _, ok := w.varint("offset_delta", "varint", docOffsetDelta, 5); !ok {
		return false
	}
	key, keyAt, ok := w.varBytes("key", "bytes", docKey)
	if !ok {
		return false
	}
	ctype := int64(-1)
	if control {
		ctype = w.controlKey(key, keyAt)
	}
	value, valueAt, ok := w.varBytes("value", "bytes", docValue)
	if !ok {
		return false
	}
	if ctype == 0 || ctype == 1 {
		w.controlValue(value, valueAt)
	}
	hn, mark := w.open("headers", "[]Header", KindArray)
	hn.Doc = docHeaders
	defer func() { w.close(hn, mark) }()
	cn, count, ok := w.varint("length", "varint", "", 5)
	if !ok {
		hn.noval = true
		return false
	}
	switch count {
	case 0:
		cn.Doc = "no headers follow" // most records: made once, not per record
	default:
		cn.Doc = countDoc(count)
	}
	switch {
	case count < 0:
		w.problem(cn, cn.Offset, fmt.Sprintf("header count %d is negative", count))
		hn.noval = true
		return false
	case count > int64(d.end-d.off)/2: // a key length and a value length each
		w.problem(cn, cn.Offset, fmt.Sprintf("%d headers cannot fit in the %d bytes left", count, d.end-d.off))
		hn.noval = true
		return false
	}
	hn.Int = count
	for j := int64(0); j < count; j++ {
		h, hmark := w.open(indexedName(headerNames, "Header", int(j)), "Header", KindStruct)
		h.noval = true
		_, _, ok = w.varBytes("key", "string", docHeaderKey)
		if ok {
			_, _, ok = w.varBytes("value", "bytes", docHeaderValue)
		}
		w.close(h, hmark)
		if !ok {
			return false
		}
	}
	return true
}

// controlRecordType names the type in a control record's key; Kafka's
// controlRecordType (commit and abort markers, then KRaft's).
var controlRecordType = &Enum{title: "ControlRecordType", names: []string{
	"ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER", "KRAFT_VERSION", "KRAFT_VOTERS"}}

// controlKey dissects a control record's key (version, type) as children
// of key and returns the type, or -1.
func (w *recWalk) controlKey(key *Node, at int) int64 {
	if key.Null || key.noval {
		w.problem(key, key.Offset, "a control record without a key")
		return -1
	}
	typ := int64(-1)
	w.inside(key, at, func() {
		w.fixed("version", "int16", "version of the control record key", 2)
		if tn, ok := w.fixed("type", "int16", "what the control record marks", 2); ok {
			tn.enum = controlRecordType
			typ = tn.Int
		}
		w.trailing(w.d.end, "bytes after the control record key")
	})
	return typ
}

// controlValue dissects the value of a commit or abort marker.
func (w *recWalk) controlValue(value *Node, at int) {
	if value.Null || value.noval {
		w.problem(value, value.Offset, "a transaction marker without a value")
		return
	}
	w.inside(value, at, func() {
		w.fixed("version", "int16", "version of the transaction marker", 2)
		w.fixed("coordinator_epoch", "int32", "epoch of the transaction coordinator that wrote the marker", 4)
		w.trailing(w.d.end, "bytes after the transaction marker")
	})
}

// inside decodes children of n (the newest node) from its value, which
// starts at at and ends where n does.
func (w *recWalk) inside(n *Node, at int, fn func()) {
	d := w.d
	off, end := d.off, d.end
	d.off, d.end = at, n.Offset+n.Size
	mark := len(d.stack)
	fn()
	d.adopt(n, mark)
	d.off, d.end = off, end
}

// ---- MessageSet v0 and v1 ----

var msgTypes = [...]string{"Message v0", "Message v1"}

// message decodes the legacy message at the cursor; false means no entry
// can follow it. wrapper is the magic of the compressed message it was
// found in, -1 at the top.
func (w *recWalk) message(i, end int, wrapper int8) bool {
	d := w.d
	d.cat = CatRecord
	start := d.off
	magic := d.b[d.off+16]
	mn, mark := w.open(indexedName(messageNames, "Message", i), msgTypes[magic], KindStruct)
	mn.noval, mn.Doc = true, docMessage
	defer func() { w.close(mn, mark); w.cut = false }()
	on, _ := w.fixed("offset", "int64", docMsgOffset, 8)
	if wrapper == 1 {
		on.Doc = docInnerOffset
	}
	sn, ok := w.fixed("message_size", "int32", docMsgSize, 4)
	if !ok {
		d.off = end
		return false
	}
	minSize := int64(14) // crc, magic, attributes, key and value lengths
	if magic == 1 {
		minSize += 8 // the timestamp
	}
	if sn.Int < minSize {
		w.problem(sn, sn.Offset, fmt.Sprintf("message_size %d is below the %d bytes of a v%d message: where the next message starts is unknown", sn.Int, minSize, magic))
		d.off = end
		return false
	}
	stop, cut := d.off+int(sn.Int), false
	if stop > end {
		w.partial(mn, start, docPartialMessage, fmt.Sprintf("partial message: message_size says %d bytes follow, %d are here", sn.Int, end-d.off))
		stop, cut = end, true
	}
	saved := d.end
	d.end = stop
	defer func() { d.off, d.end = stop, saved }()

	crc, ok := w.fixed("crc", "uint32", docMsgCRC, 4)
	crc.Int = int64(uint32(crc.Int))
	switch got := crc32.ChecksumIEEE(d.b[start+16 : stop]); {
	case !ok:
	case cut:
		crc.note = crcNote(uint32(crc.Int), "not checked: the message is cut")
	case got != uint32(crc.Int):
		crc.note = crcNote(uint32(crc.Int), "mismatch")
		w.problem(crc, crc.Offset, fmt.Sprintf("CRC-32 mismatch: the message says %#08x, its bytes give %#08x", uint32(crc.Int), got))
	default:
		crc.note = crcNote(uint32(crc.Int), "valid")
	}
	if !ok {
		return false // cut in its header
	}
	w.fixed("magic", "int8", docMagic, 1)
	if wrapper >= 0 && int8(magic) != wrapper {
		w.problem(mn, start+16, fmt.Sprintf("a v%d message inside a v%d wrapper", magic, wrapper))
	}
	an, ok := w.fixed("attributes", "int8", docMsgAttrs, 1)
	if !ok {
		return false
	}
	an.note = legacyAttrNames()[an.Int&0x0f]
	codec := int(an.Int & 7)
	if magic == 1 {
		tn, ok := w.fixed("timestamp", "int64", docMsgTimestamp, 8)
		if !ok {
			return false
		}
		tn.note = timeNote(tn.Int)
	}
	if _, ok := w.int32Bytes("key", docKey); !ok {
		return !cut
	}
	if codec != codecNone {
		// The wrapper of a compressed set is the batch of its day.
		mn.Category = CatRecordBatch
		for _, c := range d.stack[mark:] {
			c.Category = CatRecordBatch
		}
	}
	vn, ok := w.int32Bytes("value", docValue)
	if !ok {
		return !cut
	}
	if codec != codecNone {
		vn.Category = CatRecordBatch // compressed messages, not a record's value
		switch {
		case vn.Null:
		case d.opts.BatchHeaders:
			vn.Doc, vn.note = docWrapped, codecName(codec)+", not decompressed: batch headers only"
		default:
			w.wrapped(vn, int8(magic), codec)
		}
	}
	w.trailing(stop, "bytes after the value of the message")
	return !cut
}

// wrapped decompresses the value of a wrapper message vn (the newest
// node) and decodes the messages inside as its children.
func (w *recWalk) wrapped(vn *Node, magic int8, codec int) {
	d := w.d
	vn.Doc = docWrapped
	switch {
	case codec > codecLZ4:
		w.problem(vn, vn.Offset, fmt.Sprintf("compression codec %d (%s) in a v%d message: only gzip, snappy and lz4 predate magic 2", codec, codecName(codec), magic))
		return
	case w.depth >= maxWrapperDepth:
		w.problem(vn, vn.Offset, fmt.Sprintf("compressed messages nested %d deep: not decompressed", w.depth+1))
		return
	}
	at := vn.Offset + vn.Size - len(vn.Bytes)
	data, src, err := w.decompress(codec, magic, vn.Bytes, at)
	if err != nil {
		w.problem(vn, at, err.Error())
		return
	}
	inner := recWalk{d: d, src: src, depth: w.depth + 1, at: w.frameAt(at)}
	b, off, end := d.b, d.off, d.end
	mark := len(d.stack)
	d.b, d.off, d.end = data, 0, len(data)
	_, n := inner.entries(len(data), magic)
	d.adopt(vn, mark)
	d.b, d.off, d.end = b, off, end
	vn.note = codecName(codec) + ", " + strconv.Itoa(len(vn.Bytes)) + " bytes decompressed to " + strconv.Itoa(len(data)) +
		" in source #" + strconv.Itoa(int(src)) + ": " + strconv.Itoa(n) + " messages"
}

// attrControl is the bit of a v2 batch's attributes that makes it a
// control batch: its records are transaction markers.
const attrControl = 0x20

// ---- primitives ----

// frameAt is the frame offset problems at off of this walk's source get.
func (w *recWalk) frameAt(off int) int {
	if w.src == 0 {
		return off
	}
	return w.at
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (w *recWalk) node(name, typ string, k Kind) *Node {
	n := w.d.node(name, typ, k)
	n.Source = w.src
	return n
}

func (w *recWalk) open(name, typ string, k Kind) (*Node, int) {
	n := w.node(name, typ, k)
	return n, len(w.d.stack)
}

func (w *recWalk) close(n *Node, mark int) { w.d.close(n, mark) }

// partial marks entry n (a batch or message starting at off) as cut by
// the end of its records. In a response's records that is the protocol
// at work: a broker reads a partition's log up to a byte limit, which may
// fall inside a batch, and sends the bytes as they are; consumers skip the
// partial entry. So it gets doc, not a problem. Anywhere else (a Produce
// request, decompressed bytes) it is damage: msg is its problem. Either
// way the fields it cuts short add none.
func (w *recWalk) partial(n *Node, off int, doc, msg string) {
	if w.src == 0 && w.d.opts.Direction == Response {
		n.Doc = doc
	} else {
		w.problem(n, off, msg)
	}
	w.cut = true
}

// partialEntry reports whether n is a record batch or legacy message that
// a response's records end inside (recWalk.partial): what it holds is not
// delivered.
func (n *Node) partialEntry() bool { return n.Doc == docPartialBatch || n.Doc == docPartialMessage }

// truncated is problem for running out of bytes, which a cut entry has
// said already.
func (w *recWalk) truncated(n *Node, off int, msg string) {
	if !w.cut {
		w.problem(n, off, msg)
	}
}

func (w *recWalk) problem(n *Node, off int, msg string) {
	p := Problem{Offset: off, Message: msg}
	if w.src != 0 {
		p.Offset = w.at
		p.Message = string(appendSourceSpanAt(nil, int(w.src), off)) + ": " + msg
	}
	n.Problems = append(n.Problems, p)
	w.d.probs = append(w.d.probs, p)
}

// fixed reads a big-endian signed integer of size bytes as a leaf. One
// that does not fit in the region gets a problem and no value.
func (w *recWalk) fixed(name, typ, doc string, size int) (*Node, bool) {
	d := w.d
	n := w.node(name, typ, KindInt)
	n.Doc = doc
	if d.end-d.off < size {
		n.noval = true
		w.truncated(n, d.off, fmt.Sprintf("truncated: %s needs %d bytes, %d left", name, size, max(d.end-d.off, 0)))
		return n, false
	}
	b := d.b[d.off : d.off+size]
	switch size {
	case 1:
		n.Int = int64(int8(b[0]))
	case 2:
		n.Int = int64(int16(binary.BigEndian.Uint16(b)))
	case 4:
		n.Int = int64(int32(binary.BigEndian.Uint32(b)))
	default:
		n.Int = int64(binary.BigEndian.Uint64(b))
	}
	d.off += size
	n.Size = size
	return n, true
}

// varint reads a zigzag varint of at most maxLen bytes (5 for Kafka's
// varint, 10 for its varlong) as a leaf.
func (w *recWalk) varint(name, typ, doc string, maxLen int) (*Node, int64, bool) {
	d := w.d
	n := w.node(name, typ, KindInt)
	n.Doc = doc
	v, size, msg := zigzag(d.b[d.off:d.end], maxLen)
	if msg != "" {
		n.noval = true
		w.varintProblem(n, msg)
		return n, 0, false
	}
	d.off += size
	n.Int, n.Size = v, size
	return n, v, true
}

func (w *recWalk) varintProblem(n *Node, msg string) {
	if msg == msgVarintCut {
		w.truncated(n, n.Offset, msg)
	} else {
		w.problem(n, n.Offset, msg)
	}
}

const msgVarintCut = "truncated: varint runs past the end"

// zigzag decodes a zigzag varint of at most maxLen bytes; msg says what
// is wrong with it.
func zigzag(b []byte, maxLen int) (v int64, size int, msg string) {
	var u uint64
	for i := 0; i < maxLen; i++ {
		if i >= len(b) {
			return 0, 0, msgVarintCut
		}
		c := b[i]
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if (maxLen == 5 && u > math.MaxUint32) || (i == 9 && c > 1) {
				return 0, 0, "varint overflows " + strconv.Itoa(maxLen*7/8*8) + " bits"
			}
			return int64(u>>1) ^ -int64(u&1), i + 1, ""
		}
	}
	return 0, 0, "varint longer than " + strconv.Itoa(maxLen) + " bytes"
}

// varBytes reads a record's key, value, header key (str) or header value:
// a zigzag varint length, -1 for null, and that many bytes, one node for
// both. It returns the node and where its bytes start.
func (w *recWalk) varBytes(name, typ, doc string) (*Node, int, bool) {
	d := w.d
	str := typ == "string"
	k := KindBytes
	if str {
		k = KindString
	}
	n := w.node(name, typ, k)
	n.Doc = doc
	l, size, msg := zigzag(d.b[d.off:d.end], 5)
	if msg != "" {
		n.noval = true
		w.varintProblem(n, msg)
		return n, 0, false
	}
	n.lenKind, n.rawLen = lenVarint, l
	return w.lengthBytes(n, l, size, str)
}

// int32Bytes reads a MessageSet key or value: an int32 length, -1 for
// null, and that many bytes.
func (w *recWalk) int32Bytes(name, doc string) (*Node, bool) {
	d := w.d
	n := w.node(name, "bytes", KindBytes)
	n.Doc = doc
	if d.end-d.off < 4 {
		n.noval = true
		w.problem(n, d.off, fmt.Sprintf("truncated: the length of %s needs 4 bytes, %d left", name, max(d.end-d.off, 0)))
		return n, false
	}
	l := int64(int32(binary.BigEndian.Uint32(d.b[d.off:])))
	n.lenKind, n.rawLen = lenInt32, l
	n, _, ok := w.lengthBytes(n, l, 4, false)
	return n, ok
}

// lengthBytes reads the l bytes after a length prefix of size bytes.
func (w *recWalk) lengthBytes(n *Node, l int64, size int, str bool) (*Node, int, bool) {
	d := w.d
	d.off += size
	at := d.off
	switch {
	case l == -1:
		n.Null = true
	case l < -1:
		n.noval = true
		w.problem(n, n.Offset, fmt.Sprintf("%s length %d is negative", n.Name, l))
	case l > int64(d.end-d.off):
		n.noval = true
		w.truncated(n, n.Offset, fmt.Sprintf("%s length %d exceeds the %d bytes left", n.Name, l, d.end-d.off))
	default:
		v := d.b[d.off : d.off+int(l) : d.off+int(l)]
		if str {
			n.Str = string(v)
			if !utf8.Valid(v) {
				w.problem(n, d.off, "header key is not valid UTF-8")
			}
		} else {
			n.Bytes = v
		}
		d.off += int(l)
	}
	n.Size = d.off - n.Offset
	return n, at, !n.noval
}

// trailing flags the bytes of the region before to that nothing read.
func (w *recWalk) trailing(to int, what string) {
	d := w.d
	if d.off >= to {
		return
	}
	n := w.node("trailing", "bytes", KindBytes)
	n.Bytes = d.b[d.off:to:to]
	n.Size = to - d.off
	n.Doc = what
	w.problem(n, d.off, strconv.Itoa(n.Size)+" "+what)
	d.off = to
}

// ---- names and notes ----

// Element names are made once and kept, as for arrays: a busy capture
// names the same Record[0] to Record[9999] in every batch. The tables
// grow to the largest index seen, up to maxNamed.
var (
	batchNames   = &nameTable{prefix: "RecordBatch"}
	recordNames  = &nameTable{prefix: "Record"}
	messageNames = &nameTable{prefix: "Message"}
	headerNames  = &nameTable{prefix: "Header"}
)

const maxNamed = 1 << 16

type nameTable struct {
	prefix string
	mu     sync.Mutex
	names  atomic.Pointer[[]string]
}

func indexedName(t *nameTable, _ string, i int) string {
	if p := t.names.Load(); p != nil && i < len(*p) {
		return (*p)[i]
	}
	if i >= maxNamed {
		return t.prefix + "[" + strconv.Itoa(i) + "]"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var old []string
	if p := t.names.Load(); p != nil {
		old = *p
	}
	if i < len(old) {
		return old[i]
	}
	grown := make([]string, max(64, 2*len(old), i+1))
	copy(grown, old)
	for j := len(old); j < len(grown); j++ {
		grown[j] = t.prefix + "[" + strconv.Itoa(j) + "]"
	}
	t.names.Store(&grown)
	return grown[i]
}

// batchAttrNames names every combination of the seven attribute bits a
// v2 batch uses, so that decoding picks a name instead of building one.
var batchAttrNames = sync.OnceValue(func() []string {
	out := make([]string, 128)
	for v := range out {
		s := codecName(v&7) + ", "
		if v&8 != 0 {
			s += "LogAppendTime"
		} else {
			s += "CreateTime"
		}
		if v&0x10 != 0 {
			s += ", transactional"
		}
		if v&attrControl != 0 {
			s += ", control"
		}
		if v&0x40 != 0 {
			s += ", delete horizon"
		}
		out[v] = s
	}
	return out
})

// legacyAttrNames names a MessageSet message's codec and (v1) timestamp type.
var legacyAttrNames = sync.OnceValue(func() []string {
	out := make([]string, 16)
	for v := range out {
		out[v] = codecName(v & 7)
		if v&8 != 0 {
			out[v] += ", LogAppendTime"
		}
	}
	return out
})

func crcNote(v uint32, status string) string {
	var b [10]byte
	h := strconv.AppendUint(b[:0], uint64(v), 16)
	out := make([]byte, 0, 12+len(status))
	out = append(out, "0x"...)
	for i := len(h); i < 8; i++ {
		out = append(out, '0')
	}
	out = append(out, h...)
	out = append(out, ", "...)
	return string(append(out, status...))
}

// timeNote is a timestamp in milliseconds since the epoch as UTC time;
// -1 is Kafka's "no timestamp".
func timeNote(ms int64) string {
	switch {
	case ms == -1:
		return "no timestamp"
	case ms < 0 || ms > 253402300799999: // past 9999-12-31: not a time anyone wrote
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// recordTextMax is how much of a key or value the text form shows.
const recordTextMax = 128

// appendRecordBytes is the text form of a record's key or value: the text
// itself when it is printable UTF-8, else hex, cut at recordTextMax.
func appendRecordBytes(b []byte, v []byte) []byte {
	if !printableUTF8(v) {
		return appendHexPrefix(b, v)
	}
	cut := recordTextCut(v)
	b = appendQuoteBytes(b, cut)
	return appendCutNote(b, cut, v)
}

// recordTextCut is the part of v the text form shows; v is printable
// UTF-8.
func recordTextCut(v []byte) []byte {
	if len(v) <= recordTextMax {
		return v
	}
	// v is valid UTF-8: a cut splits a character where the byte after it
	// continues one.
	k := recordTextMax
	for k > 0 && !utf8.RuneStart(v[k]) {
		k--
	}
	return v[:k]
}

func appendCutNote(b, cut, v []byte) []byte {
	if len(cut) < len(v) {
		b = append(b, "… ("...)
		b = appendJSONInt(b, int64(len(v)))
		b = append(b, " bytes)"...)
	}
	return b
}

// appendRecordBytesJSON is appendRecordBytes as appendJSONDisplay escapes
// it, in one pass: a quote or backslash of the text, quoted once for the
// display, is escaped again for JSON. Record values are often JSON text,
// with a quote every few bytes.
func appendRecordBytesJSON(b, v []byte) []byte {
	if !printableUTF8(v) {
		return appendHexPrefix(b, v) // hex digits and a count: nothing to escape
	}
	cut := recordTextCut(v)
	// Room for the worst case, every byte escaped, and the bytes written
	// in place: no append a quote.
	n := len(b)
	b = slices.Grow(b, 4+4*len(cut))
	out := b[n : n+4+4*len(cut)]
	out[0], out[1] = '\\', '"'
	j := 2
	t := cut
	// A word at a time: the bytes before its first quote or backslash
	// are copied with one store, then that one is escaped. JSON text has
	// a quote every few bytes, and runs of plain text between.
	for len(t) >= 8 {
		x := binary.LittleEndian.Uint64(t)
		binary.LittleEndian.PutUint64(out[j:], x)
		m := zeroBytes8(x^('"'*ones8)) | zeroBytes8(x^('\\'*ones8))
		if m == 0 {
			j, t = j+8, t[8:]
			continue
		}
		i := bits.TrailingZeros64(m) / 8
		j += i
		out[j], out[j+1], out[j+2], out[j+3] = '\\', '\\', '\\', t[i]
		j, t = j+4, t[i+1:]
	}
	for _, c := range t {
		if c == '"' || c == '\\' {
			out[j], out[j+1], out[j+2] = '\\', '\\', '\\'
			j += 3
		}
		out[j] = c
		j++
	}
	out[j], out[j+1] = '\\', '"'
	b = b[:n+j+2]
	return appendCutNote(b, cut, v)
}

// appendQuoteBytes is appendQuote for bytes, without copying them to a
// string when no character needs escaping (printableUTF8 has ruled out
// the controls).
func appendQuoteBytes(b, v []byte) []byte {
	// strconv.Quote of printable text escapes only quotes and
	// backslashes: done here a run at a time, without decoding runes.
	b = append(b, '"')
	q, bs := bytes.IndexByte(v, '"'), bytes.IndexByte(v, '\\')
	for q >= 0 || bs >= 0 {
		i := q
		if i < 0 || bs >= 0 && bs < i {
			i = bs
		}
		b = append(b, v[:i]...)
		b = append(b, '\\', v[i])
		v = v[i+1:]
		// The index not used moves with v; the one used is looked for again.
		if i == q {
			q = bytes.IndexByte(v, '"')
			if bs >= 0 {
				bs -= i + 1
			}
		} else {
			bs = bytes.IndexByte(v, '\\')
			if q >= 0 {
				q -= i + 1
			}
		}
	}
	b = append(b, v...)
	return append(b, '"')
}

// appendHexPrefix is the hex form bytes get everywhere: the first 32.
func appendHexPrefix(b []byte, v []byte) []byte {
	const max = 32
	b = append(b, "0x"...)
	b = appendHexBytes(b, v[:min(len(v), max)])
	if len(v) > max {
		b = append(b, "… ("...)
		b = appendJSONInt(b, int64(len(v)))
		b = append(b, " bytes)"...)
	}
	return b
}

func appendHexBytes(b, v []byte) []byte {
	const digits = "0123456789abcdef"
	for _, c := range v {
		b = append(b, digits[c>>4], digits[c&0xf])
	}
	return b
}

// printableUTF8 is whether v is valid UTF-8 of printable characters only
// (strconv.IsPrint: no controls, no format or bidi characters).
func printableUTF8(v []byte) bool {
	for i := 0; i < len(v); {
		for i+8 <= len(v) && printableASCII8(v[i:i+8]) {
			i += 8
		}
		if i == len(v) {
			break
		}
		if c := v[i]; c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(v[i:])
		if r == utf8.RuneError && size == 1 || !strconv.IsPrint(r) {
			return false
		}
		i += size
	}
	return true
}

const ones8 = 0x0101010101010101

// zeroBytes8 has the high bit set of each zero byte of x, and maybe of
// bytes above one: a borrow can flag a byte past a zero, never one
// before the first, so the lowest bit set is the first zero byte.
func zeroBytes8(x uint64) uint64 {
	return (x - ones8) &^ x & 0x8080808080808080
}

// printableASCII8 reports whether the 8 bytes of v are all printable
// ASCII (0x20-0x7e), tested as one word: keys and values are mostly such
// text. A false answer may be wrong (a borrow across bytes); the byte
// loop decides.
func printableASCII8(v []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := binary.LittleEndian.Uint64(v)
	below := (x - 0x20*ones) &^ x // a byte below 0x20
	high := x | (x + ones)        // a byte of 0x7f or more
	return (below|high)&highs == 0
}

// ---- docs ----

const (
	docBatch           = "a record batch (magic 2)"
	docPartialBatch    = "the start of a record batch, cut where the broker's read of the log stopped: consumers skip it"
	docPartialMessage  = "the start of a message, cut where the broker's read of the log stopped: consumers skip it"
	docBaseOffset      = "offset of the first record; the broker assigns offsets, a producer writes 0"
	docBatchLength     = "bytes of the batch after this field"
	docLeaderEpoch     = "epoch of the partition leader that wrote the batch; -1 from a producer"
	docMagic           = "format version of the entry: 2 a record batch, 0 and 1 MessageSet messages"
	docCRC             = "CRC-32C of the batch from its attributes to its end"
	docBatchAttrs      = "bits 0-2 compression, 3 timestamp type, 4 transactional, 5 control, 6 delete horizon"
	docLastOffsetDelta = "offset delta of the batch's last record"
	docBaseTimestamp   = "timestamp of the first record, in ms since the epoch"
	docDeleteHorizon   = "delete horizon of the compacted batch, in ms since the epoch (attribute bit 6)"
	docMaxTimestamp    = "largest timestamp of the batch's records, in ms since the epoch"
	docProducerID      = "id of the idempotent or transactional producer; -1 for none"
	docProducerEpoch   = "epoch of the producer id; -1 for none"
	docBaseSequence    = "sequence number of the first record for its producer and partition; -1 for none"
	docRecordCount     = "number of records in the batch"
	docRecords         = "the batch's records"
	// The docs of a record's fields are short: they repeat for every
	// record, in every line of the text tree and every node of the JSON.
	docRecordLength   = "bytes after this length"
	docRecordAttrs    = "unused"
	docTimestampDelta = "ms after base_timestamp"
	docOffsetDelta    = "offsets after base_offset"
	docKey            = "record key; null for none"
	docValue          = "record value; null for a tombstone"
	docHeaders        = "record headers"
	docHeaderKey      = "header name"
	docHeaderValue    = "header value"
	docMessage        = "a MessageSet message (magic 0 or 1)"
	docMsgOffset      = "offset of the message; a producer writes 0 or a count"
	docInnerOffset    = "offset relative to the wrapper's first message (inner message of a magic 1 wrapper)"
	docMsgSize        = "bytes of the message after this field"
	docMsgCRC         = "CRC-32 of the message from its magic to its end"
	docMsgAttrs       = "bits 0-2 compression, 3 timestamp type (magic 1)"
	docMsgTimestamp   = "timestamp in ms since the epoch"
	docWrapped        = "compressed MessageSet of the messages inside this wrapper"
)
