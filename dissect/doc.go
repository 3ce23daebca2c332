// Package dissect turns the bytes of one Kafka frame into an annotated
// field tree: every field with its type, value, byte offset, size and
// description. It does no I/O: bytes in, tree out.
//
// Messages are described by definitions in Kafka's own JSON message format
// (defs/*.json, and more through a Registry's schema directory) and walked
// by one interpreter:
//
//   - schema.go reads definitions into Def and Field;
//   - frame.go decodes the size prefix, the request and response headers
//     and chooses the body's definition;
//   - walk.go walks a definition's fields at one version: structs, arrays
//     and the tagged-field section of flexible versions;
//   - wire.go reads the wire primitives: fixed-width values, varints and
//     length prefixes, each checked against the bytes left;
//   - arena.go holds the decoder's state and hands out the tree's nodes
//     from reusable slabs.
//   - envelope.go reads what an Envelope (API key 58) forwards as the
//     messages, principal and address they are, nested under its bytes.
//
// Malformed input never panics and never allocates from a length read off
// the wire; the walk stops at the first structural problem and keeps the
// partial tree, with the problem on the node where it happened.
//
// Wire text is escaped by one policy, Escape and Quote, which the text
// renderings here and the explorer (package tui) both use; JSON output is
// always valid UTF-8. Secrets found in SASL tokens are redacted unless
// Options.ShowSecrets asks for them.
package dissect
