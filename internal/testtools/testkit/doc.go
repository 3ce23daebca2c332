// Package testkit builds what the tests of several packages feed their code:
// Kafka frames (from header values and a body, or from franz-go's kmsg
// messages, an encoder independent of ours), pcap files of TCP connections
// (handshake, data, FIN, RST, lost and cut segments, several link types),
// and golden files that `go test -update` rewrites.
//
// It is one home for helpers that used to be near-copies in each package's
// tests. The frame and pcap builders do no testing-specific work, so the
// benchmark capture generator uses them too.
package testkit
