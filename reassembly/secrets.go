package reassembly

// SecretsTLSKeyLog is the secrets type of a pcapng Decryption Secrets
// Block holding an NSS key log (what `editcap --inject-secrets tls,FILE`
// writes, and Wireshark decrypts with).
const SecretsTLSKeyLog = 0x544c534b

// maxSecrets caps what the Decryption Secrets Blocks of one file may hand
// over, all together: a key log is a few hundred bytes per connection, and
// a block's length is the file's word.
const maxSecrets = 16 << 20

const (
	ngSectionHeader = 0x0a0d0d0a
	ngSecrets       = 0x0000000a
	ngByteOrder     = 0x1a2b3c4d
)

// secrets hands over the Decryption Secrets Block in g.body (its type and
// length, secrets type, secrets length, the secrets, padding, options,
// the block's length again), which ngGuard collected as it passed: before
// the reader parses the packets after it, as Wireshark requires of a
// file (secrets come before the packets they decrypt).
func (g *ngGuard) secrets() {
	g.keep = false
	b := g.body[8:]
	if len(b) < 8 {
		return
	}
	kind, n := g.order.Uint32(b), g.order.Uint32(b[4:])
	if int64(n) > int64(len(b)-8) {
		return // a secrets length beyond the block: not a block to trust
	}
	g.given += int(n)
	g.onSecrets(kind, b[8:8+n])
	if cap(g.body) > 64<<10 {
		g.body = nil
	}
}
