// Package tlsdec decrypts TLS 1.2 and 1.3 connections seen on the wire with the secrets of an NSS key
// log (SSLKEYLOGFILE). It sits between TCP ordering and whatever parses the application protocol, and
// knows nothing of that protocol: it is fed each direction's ordered bytes and hands back the
// plaintext application data, with events for everything it cannot decode.
//
// Only the record layer, the TLS 1.3 key schedule (HKDF-Expand-Label, KeyUpdate) and the TLS 1.2 PRF
// are written here; every primitive comes from the standard library (crypto/aes, crypto/cipher,
// crypto/hmac, crypto/hkdf, crypto/sha*) or golang.org/x/crypto (chacha20poly1305, cryptobyte).
//
// # Use
//
// One KeyLog for the run (LoadKeyLogs, with Follow for live capture; ParseKeyLog, Merge), one
// Conn per TCP connection whose first client bytes satisfy LooksLikeTLS. Feed each direction's bytes
// in order, in any chunking; report lost bytes with Gap, and call End when the connection or the
// capture ends. Conn calls out with:
//
//   - KindData: plaintext application bytes of one record. Offset counts the plaintext handed out in
//     that direction, so frames can be cut from it as from a TCP stream; Data is only valid during the
//     call (it is Conn's buffer: copy what must be kept).
//   - KindSession, once: the version, suite and whether there are keys are known (Info).
//   - KindProblem: an oversize or malformed record header, a record failing its tag or MAC, a record
//     cut by a gap, a handshake message that does not parse. After a header problem or a gap the
//     direction looks for the next record that decrypts (KindResync says where decoding resumed and
//     how many bytes were skipped); after a failed tag the key is wrong and the direction stays silent.
//     Plaintext on the two sides of a problem or a gap is never contiguous: the caller must treat a
//     KindProblem or KindResync as a gap in the plaintext stream.
//   - KindAlert: a TLS alert (close_notify included).
//   - KindLimit: the Budget refused to buffer a record, which is passed over, or the records waiting
//     for the other direction's hello, which are given up; like a KindProblem, a gap in the plaintext.
//
// Positions (Output.Pos) are byte offsets in the direction's TCP stream as fed, bytes lost in gaps
// included when Gap was told how many.
//
// A connection without keys is not an error: its records are counted (Info.Records), passed over
// without being buffered, and Info.Reason says why (e.g. "no key for client random 1a2b3c4d5e6f7a8b…").
// Records that need the other direction's hello (a server's encrypted records before the ClientHello
// was fed, a client's before the ServerHello) are held, up to 1 MiB, and decoded once it comes.
//
// Nothing is buffered between records: a record that comes whole is decrypted from the caller's
// bytes into a buffer the Conns of one goroutine share (NewShared, NewConnWith), and what must wait
// (a record split across Feeds, a handshake message split across records, records waiting for a
// hello, bytes scanned after a gap) is kept in a buffer sized to what is pending, held against a
// Budget first. When the Budget refuses, the Conn goes without (KindLimit).
//
// With a Reader (SetReader), the records that give only frame heads to what reads them are
// decrypted only there, by their offset in the record (the keystream of counter mode started
// there, or a CBC block from the one before it), and their tag or MAC is not checked
// (Output.Unverified, Info.Unverified); the rest of their plaintext is KindSkip. Every other
// record is opened whole and authenticated: those giving a byte to anything read beyond a head,
// the first under each key, handshake and alert records.
//
// Not handled: TLS 1.2 renegotiation (its records fail authentication), TLS 1.0/1.1, SSLv2 hellos,
// resynchronising a TLS 1.3 direction whose Finished was lost in a gap, and 0-RTT data under a suite
// other than the connection's.
package tlsdec
