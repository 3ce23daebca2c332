// Package reassembly turns captured packets into Kafka frames.
//
// It reads pcap/pcapng files or a live interface (Source), decodes
// link/IP/TCP headers with one allocation-free parser, puts each TCP
// direction back in order by sequence number, splits the byte stream at
// Kafka's int32 size prefixes and reports what it finds as Events. It knows
// nothing about Kafka beyond the framing and the position of the
// correlation ID: whether a frame looks like a request is decided by the
// caller (Config.PlausibleRequest), so this package imports no kdissect
// package.
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
// A direction is "in sync" when the next byte is known to start a frame: after
// a SYN, and after each complete frame. It is out of sync when the capture
// starts in the middle of the stream, after a gap (lost segment, snaplen cut,
// buffer limit) and after a corrupt size prefix. Bytes are never stitched
// across a gap. Out of sync, every byte position is a candidate frame start,
// tried in order, and the first candidate that passes these tests wins (the
// bytes before it are reported as Unparseable):
//
//   - size bound: the int32 prefix n satisfies MinRequestSize <= n <= MaxFrame
//     for client→broker, MinResponseSize <= n <= MaxFrame for broker→client;
//   - client→broker: Config.PlausibleRequest(b) is true, where b is the
//     4-byte prefix followed by the first min(n, HeadLen) bytes of the frame;
//     a nil PlausibleRequest accepts any size-bounded candidate;
//   - broker→client: the int32 after the prefix (the correlation ID) equals
//     the correlation ID of one of the last RecentRequests requests seen in
//     the other direction of the same connection. A response stream whose
//     requests were not captured therefore stays out of sync: without the
//     request a response cannot be decoded anyway.
//
// When a gap cuts a frame whose size was known and the gap ends inside that
// frame, candidates before the frame's end are not tried: the known boundary
// is trusted over a scan through body bytes.
//
// In sync, only the size bound (with the minimum of 4) is checked; a prefix
// outside it is corruption, never an allocation: it is reported as
// Unparseable bytes and the direction re-synchronises one byte later.
//
// # TCP
//
// Out-of-order segments are copied and held until the hole before them is
// filled, Config.ReorderWait of capture time passes, a buffer cap is hit, the
// connection ends or the input ends; then the hole becomes a Gap. A FIN after
// missing bytes waits the same way. Timeouts are checked once per second of
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
