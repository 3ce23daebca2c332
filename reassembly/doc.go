// Package reassembly turns captured packets into frames of a protocol
// whose messages start with a size prefix, such as Kafka.
//
// It reads pcap/pcapng files or a live interface (Source), decodes
// link/IP/TCP headers with one allocation-free parser and reports what it
// finds as Events. Two parts do the work, each in its own files:
//
//   - TCP ordering (order.go) puts each direction back in order by sequence
//     number: one ordered byte stream per direction, with its gaps and the
//     packet number and capture time of its bytes;
//   - the framer (framer.go, resync.go, detect.go) cuts such a stream into
//     frames, and re-synchronises after a gap or corruption.
//
// A Layer (layer.go, asked for through Config.NewLayer) may sit between the
// two and transform a connection's streams, as TLS decryption does. The
// framer knows the protocol only through Config.Framing (FrameRules): how
// a size prefix reads, the smallest frames, whether a request's head is
// plausible, which key names a response's request, and which bodies are
// worth keeping (decided from a request's head, for it and its response).
// The Kafka rules are the caller's (dissect.KafkaFraming), so this package
// imports no kdissect package.
//
// # Stream offsets
//
// StreamOffset counts bytes from the first byte of a direction: ISN+1 when
// the SYN was captured, otherwise the first captured sequence number. Lost
// bytes still count, so offsets stay comparable across gaps. A bare ACK,
// FIN or RST (no SYN, no payload) does not start a connection: it is most
// often the tail of one that already ended.
//
// # Re-synchronisation
//
// These are the framer's rules; "prefix", "size" and "key" are as
// Config.Framing reads them (for Kafka: an int32 size prefix, the
// correlation id). A direction is "in sync" when the next byte is known to
// start a frame: after a SYN, and after each complete frame. It is out of
// sync when the capture starts in the middle of the stream, after a gap
// (lost segment, snaplen cut, buffer limit, a Layer's Gap) and after a
// corrupt size prefix. Bytes are never stitched across a gap. Out of sync,
// every byte position is a candidate frame start, tried in order, and the
// first candidate that passes these tests wins (the bytes before it are
// reported as Unparseable):
//
//   - size bound: the size n satisfies FrameRules.MinSize(fromClient,
//     false) <= n <= MaxFrame;
//   - client→broker: FrameRules.PlausibleRequest(b) is true, where b is the
//     prefix followed by the first min(n, HeadLen) bytes of the frame, or
//     by the bytes captured before a gap or the end of the direction when
//     fewer (so that a request cut there still has its header read; the
//     rules find a head too short to judge implausible);
//   - broker→client: the candidate's key (FrameRules.Key) equals the key
//     of one of the last RecentRequests requests seen in the other
//     direction of the same connection; or the candidate's frame
//     chain holds: following the size prefixes (each within the size bound)
//     from the candidate, a frame ends exactly where a response to such a
//     request starts, or exactly at the end of the captured bytes when a
//     gap or the end of the direction follows, or maxChainFrames (4) frames
//     follow each other exactly. A chain is followed over at most 64 KiB;
//     until its verdict is known the candidate waits for more bytes. So the
//     complete responses of a capture that starts mid-connection, whose
//     requests were not captured, are still cut out (the caller reports
//     them as responses without a request).
//
// A gap that ends inside a frame whose size is known does not put the
// direction out of sync: the frame's remaining bytes are counted, it is
// reported Incomplete at its end (Have counts every captured byte, those
// after the gap too) and the next frame starts at that end, the known
// boundary being trusted over a scan. A gap that runs past the end of the
// frame, or whose length is unknown, ends it at once (Incomplete, then out
// of sync after the gap).
//
// In sync, only the size bound (with the smaller of the two MinSize) is
// checked; a size outside it is corruption, never an allocation: it is
// reported as Unparseable bytes and the direction re-synchronises one byte
// later.
//
// # Layers
//
// With Config.NewLayer, the in-order bytes of both directions of a
// connection are held (at most 64 KiB each, within the buffer caps) until
// NewLayer has seen the client's first 16 bytes (or fewer, when a gap or
// the end comes first);
// its Layer, if any, then gets them and everything after, and its output is
// framed as above: frame offsets, gaps and packet numbers are the Layer's.
// Gap, Retransmission and BufferLimit events still describe the TCP stream;
// the raw bytes of a layered connection are never reported Unparseable.
// What a Layer buffers (LayerOutput.Hold) counts against MaxConnBuffer and
// MaxTotalBuffer like out-of-order data and frame bodies; a refusal is a
// BufferLimit event at the TCP offset of the bytes it would have held.
//
// The Pipeline's LayerOutput is also a Skipper: it tells the Layer which of
// a direction's next output bytes the framer will read (a frame's size
// prefix and head, a kept body) and which it passes over (a body that
// FrameRules.Keep did not keep), so that a Layer can spare making the
// latter and hand over only their count (Skipper.Skip); Settled says
// whether what it made cheaply went only to frames judged not kept.
//
// # TCP
//
// Out-of-order segments are copied and held until the hole before them is
// filled, Config.ReorderWait of capture time passes, a buffer cap is hit, the
// connection ends or the input ends; then the hole becomes a Gap. A FIN after
// missing bytes waits the same way. A hole the peer has acknowledged (an ACK
// number in the other direction beyond its start) is a Gap at once, as far as
// the ACK reaches: the peer received those bytes, so they will not be sent
// again and only the capture lost them (Wireshark's "ACKed unseen segment").
// The ACK of a segment is applied before the segment's own bytes, so a
// request that the ACK releases comes out before the response carrying it.
// A hole with nothing captured after it is left alone even when acknowledged
// (one byte beyond may be a FIN the capture missed): the next segment is held
// and then declared. A capture that shows an ACK before the data it
// acknowledges (directions captured apart, as on some SPAN ports) loses that
// data: it comes as a retransmission of bytes given up on. Frame.PeerPending
// tells a caller that a response came while the request direction still held
// bytes not yet released, so that its request may still come out. Timeouts are checked once per second of
// capture time, so a hole may wait up to a second longer than ReorderWait. A
// segment that lies (partly) before the stream position or inside already
// buffered data is a Retransmission; only the new bytes are used. The earliest
// segment of a connection captured without its SYN defines the start, so
// segments reordered before it count as retransmissions (at negative
// offsets). A SYN with a different ISN, or a segment more than FarAway bytes
// from the expected sequence number, starts a new connection on the same
// 4-tuple (new ConnKey.ID).
//
// Capture timestamps drive every timeout; wall-clock time is never used.
//
// A connection ends at FIN from both directions (or from one that began
// with its SYN while the other sent nothing, not even its SYN-ACK: that
// one is not captured, and not waited for), at RST, after Config.IdleTimeout without packets, when the
// input ends, or when Config.MaxConns connections are open and a new one
// comes: the least recently active is then Evicted.
//
// # Scale
//
// A capture may hold millions of connections, so nothing passes over all
// of them while packets come: the connection table is a hash table of
// pointers (conntable.go), open connections sit in a list ordered by last
// activity (idle timeouts and eviction take from its front), ended ones in
// a list ordered by end, and connections waiting for a hole in a heap
// ordered by deadline (evict.go). A tick costs what falls due, and the
// events of one tick come in creation order as a pass over all would emit
// them. An idle connection holds about 450 bytes: a direction is allocated
// on its first packet, times are kept as nanoseconds, resync state and
// buffers larger than a few hundred bytes are allocated only while needed
// (pool.go), and out-of-order data lives in reused chunks outside the Go
// heap.
package reassembly
