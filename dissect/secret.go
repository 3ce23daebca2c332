package dissect

import (
	"slices"
	"strconv"
	"strings"
)

// Options say how Decode reads a frame.
type Options struct {
	// Direction: a request, or a response to a request of APIKey at
	// APIVersion (a response does not carry its API key).
	Direction          Direction
	APIKey, APIVersion int16
	// Head: the frame holds only its first bytes, the rest was
	// deliberately not kept (a capture skipped the body of an API it is not
	// showing in full): the size prefix is trusted, the walk stops where
	// the kept bytes end without calling that a problem, and the bytes not
	// kept are one node. Nodes may therefore extend past Message.Raw.
	Head bool
	// RawToken: the frame is a raw SASL token, as a client and broker
	// send them after a SaslHandshake v0 instead of SaslAuthenticate
	// requests: a 4-byte size, then the token, with no Kafka header. The
	// message's APIKey is SASLTokenKey.
	RawToken bool
	// Mechanism is the SASL mechanism the connection's SaslHandshake chose
	// (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI); "" when
	// it is not known, e.g. the handshake was not captured. It decides how
	// SaslAuthenticate's AuthBytes and raw SASL tokens are dissected.
	Mechanism string
	// ShowSecrets shows passwords, SCRAM proofs, bearer tokens and SASL
	// tokens that cannot be dissected as they are on the wire. Without it
	// they are redacted in every rendering: the text tree, JSON, the byte
	// layout and anything that masks Message.SecretRanges.
	ShowSecrets bool
	// MaxDecompressed caps the bytes one compressed record batch may
	// decompress to (0: DefaultMaxDecompressed); a message's batches
	// together get MaxDecompressedFactor times as many. A batch beyond
	// the cap is a problem at its offset, its records not dissected.
	MaxDecompressed int
	// MaxNodes caps the nodes of a message's tree (0: DefaultMaxNodes).
	// Past it the rest of the message is one bytes node with a problem.
	MaxNodes int
	// BatchHeaders decodes records only as far as their batch headers
	// (record count, codec, producer, CRC checked), for a view that shows
	// no record: no batch is decompressed and no record dissected; a
	// MessageSet wrapper's compressed value stays bytes.
	BatchHeaders bool
	// Inner, on an Envelope response: the API and version of the request
	// the Envelope request forwarded, which its ResponseData answers.
	Inner InnerAPI
	// Authenticating: the request comes on a connection whose SASL
	// exchange is under way (a mechanism chosen, not yet accepted), where
	// a frame that does not read as what it says may be a token. SASL: on
	// a connection that chose a mechanism at all, where a frame whose
	// header does not read (an unknown API, a cut string) may be a
	// misframed raw token.
	Authenticating, SASL bool
}

// redaction says how a node's value is hidden from renderings.
type redaction uint8

const (
	redactNone redaction = iota
	// redactSecret: the node's value is a secret; its value bytes (the
	// last secretLen bytes of the node) are masked in byte layouts.
	redactSecret
	// redactHolds: the value contains a secret that a descendant marks;
	// the value is not shown, and its bytes are masked where that
	// descendant says.
	redactHolds
)

// Redacted reports whether the node's value is hidden from renderings
// because it is, or contains, a secret.
func (n *Node) Redacted() bool { return n.redact != redactNone }

// secretLen is the number of value bytes behind a redacted value.
func (n *Node) secretLen() int {
	switch {
	case n.Kind == KindBytes && n.Bytes != nil:
		return len(n.Bytes)
	case n.Kind == KindString:
		// The length prefix before a string is not the secret.
		return len(n.Str)
	}
	return n.Size
}

func (n *Node) appendRedacted(b []byte) []byte {
	b = append(b, "<redacted, "...)
	b = strconv.AppendInt(b, int64(n.secretLen()), 10)
	return append(b, " bytes>"...)
}

// ByteRange is a span of a frame's bytes.
type ByteRange struct{ Offset, Size int }

// SecretRanges lists the bytes of the frame that hold secrets and must be
// masked wherever raw bytes are shown (hex and ASCII alike). It is empty
// when the message was decoded with ShowSecrets.
func (m *Message) SecretRanges() []ByteRange { return m.Tree.SecretRanges() }

// SecretRanges lists the secret bytes under n; see Message.SecretRanges.
func (n *Node) SecretRanges() []ByteRange {
	if n == nil {
		return nil
	}
	var out []ByteRange
	n.Walk(func(c *Node, _ int) {
		if c.redact == redactSecret {
			l := c.secretLen()
			out = append(out, ByteRange{Offset: c.Offset + c.Size - l, Size: l})
		}
	})
	return out
}

// secretMask marks, for each of n bytes, whether it is secret; nil when
// none is.
func secretMask(tree *Node, n int) []bool {
	rs := tree.SecretRanges()
	if len(rs) == 0 {
		return nil
	}
	mask := make([]bool, n)
	for _, r := range rs {
		for i := max(r.Offset, 0); i < r.Offset+r.Size && i < n; i++ {
			mask[i] = true
		}
	}
	return mask
}

// secretFields are the bytes fields whose value is a credential, by API
// key: a SCRAM credential's salt and salted password (what an attacker
// needs to log in as the user or attack the password offline), and a
// delegation token's HMAC (the token's password).
var secretFields = map[int16][]string{
	38: {"Hmac"}, // CreateDelegationToken
	39: {"Hmac"}, // RenewDelegationToken
	40: {"Hmac"}, // ExpireDelegationToken
	41: {"Hmac"}, // DescribeDelegationToken
	51: {"Salt", "SaltedPassword"},
	// An Envelope's forwarded messages are decoded as the messages they
	// are (envelope.go), their own secrets hidden by these rules.
}

// configAPIs carry config entries (Name, Value) whose values may be
// passwords: CreateTopics, DescribeConfigs, AlterConfigs and
// IncrementalAlterConfigs.
var configAPIs = map[int16]bool{19: true, 32: true, 33: true, 44: true}

// markSecrets marks the fields of d that hold secrets.
func markSecrets(d *Def) {
	names := secretFields[d.APIKey]
	var walk func(fs []*Field)
	walk = func(fs []*Field) {
		for _, f := range fs {
			switch {
			case d.APIKey == saslAuthenticateKey && f.Name == "AuthBytes" && f.kind == kBytes:
				f.saslToken = true
			case f.kind == kBytes && slices.Contains(names, f.Name):
				f.secret = true
			case configAPIs[d.APIKey] && (f.kind == kStruct || f.elem == kStruct) && isConfigEntry(f.Fields):
				f.config = true
			}
			walk(f.Fields)
		}
	}
	walk(d.Fields)
}

func isConfigEntry(fs []*Field) bool {
	var name, value bool
	for _, f := range fs {
		name = name || f.Name == "Name" && f.kind == kString
		value = value || f.Name == "Value" && f.kind == kString
	}
	return name && value
}

// SensitiveConfig says whether a config key names a secret: every config
// Kafka types as a password (ssl.key.password, sasl.jaas.config,
// sasl.oauthbearer.client.credentials.client.secret,
// delegation.token.secret.key and delegation.token.master.key, the name
// Kafka before 4.0 also took, ssl.truststore.certificates, ...) and the
// ones holding keys, private keys or credentials. It errs on the side of
// hiding. Every output, the audit's included, hides by this one rule.
func SensitiveConfig(key string) bool {
	k := strings.ToLower(key)
	if strings.HasSuffix(k, ".key") {
		return true
	}
	for _, s := range []string{"password", "secret", "jaas", "ssl.key", "private", "credential", "truststore.certificates"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// redactConfig hides the value of the config entry n when its key names a
// secret or the entry is marked IsSensitive; the values of its synonyms
// then go with it.
func (d *decoder) redactConfig(n *Node) {
	if d.opts.ShowSecrets {
		return
	}
	name := n.Child("Name")
	flag := n.Child("IsSensitive")
	sensitive := flag != nil && flag.HasValue() && flag.Int != 0 ||
		name != nil && name.HasValue() && !name.Null && SensitiveConfig(name.Str)
	if !sensitive {
		return
	}
	hideValue(n.Child("Value"))
	if syn := n.Child("Synonyms"); syn != nil {
		for _, e := range syn.Children {
			hideValue(e.Child("Value"))
		}
	}
}

func hideValue(v *Node) {
	if v != nil && v.HasValue() && !v.Null {
		v.redact = redactSecret
	}
}

// saslToken says whether n is a SASL token the SASL rules dissected
// (SaslAuthenticate's AuthBytes, a raw token): its parts are redacted by
// what they are, damaged or not.
func saslToken(m *Message, n *Node) bool {
	return n.Kind == KindBytes && len(n.Children) > 0 &&
		(m.APIKey == saslAuthenticateKey && n.Name == "AuthBytes" || m.APIKey == saslTokenKey && n.Name == "token")
}

// guardedAPIs are the APIs whose messages carry credentials or sensitive
// configs: SaslAuthenticate and raw SASL tokens, the delegation token
// APIs, AlterUserScramCredentials, the config APIs, and an Envelope, which
// forwards them.
var guardedAPIs = []int16{saslTokenKey, 32, 33, 36, 38, 39, 40, 41, 44, 51, envelopeKey}

// guards says whether a decoded message is hidden by guard: without
// ShowSecrets, a damaged one (it has problems) that may carry a credential
// where no rule looks for one, because its bytes did not read as its
// definition says (a lying length, a flipped version or API key).
func guards(m *Message, o Options) bool {
	if o.ShowSecrets || len(m.Problems) == 0 {
		return false
	}
	return slices.Contains(guardedAPIs, m.APIKey) ||
		m.Direction == Request && (o.Authenticating || o.SASL && headerDamaged(m))
}

// headerDamaged says whether a message's header did not read: a problem
// within it, or an API kdissect does not know.
func headerDamaged(m *Message) bool {
	for _, c := range m.Tree.Children {
		if c.Category != CatHeader {
			continue
		}
		// a problem in the header itself; a frame cut short is the size
		// prefix's, not the header's
		for _, p := range m.Problems {
			if p.Offset >= c.Offset && p.Offset < c.Offset+c.Size {
				return true
			}
		}
	}
	return m.APIKey < 0 || m.APIKey > MaxAPIKey
}

// guard hides what a damaged message that may carry a credential holds
// outside the fields its rules redact: every string and bytes value of its
// body (a PLAIN token whose NUL was flipped puts the password in its
// user's name), its trailing bytes, and, as one node, each run of bytes no
// node accounts for (what follows a failure). The header stays readable
// unless it is itself damaged.
func guard(m *Message) {
	root := m.Tree
	var covered []ByteRange
	damaged := headerDamaged(m)
	for _, c := range root.Children {
		header := (c.Category == CatFrame || c.Category == CatHeader) && !damaged
		var token *Node // a SASL token its rules dissected: they judged its parts
		c.Walk(func(n *Node, _ int) {
			if n.Source != 0 {
				return
			}
			if token != nil && n.Offset >= token.Offset && n.Offset+n.Size <= token.Offset+token.Size {
				covered = append(covered, ByteRange{n.Offset, n.Size})
				return
			}
			token = nil
			if saslToken(m, n) {
				token = n
				covered = append(covered, ByteRange{n.Offset, n.Size})
				return
			}
			// a node's bytes are accounted for (a struct ends where its
			// walk stopped)
			covered = append(covered, ByteRange{n.Offset, n.Size})
			if header || n.redact != redactNone || n.Kind != KindString && n.Kind != KindBytes || n.Null {
				return
			}
			if len(n.Children) == 0 {
				n.redact = redactSecret
			} else {
				n.redact = redactHolds
			}
		})
	}
	slices.SortFunc(covered, func(a, b ByteRange) int { return a.Offset - b.Offset })
	cat := CatRequestBody
	if m.Direction == Response {
		cat = CatResponseBody
	}
	var gaps []*Node
	at := 0
	gap := func(to int) {
		if to > at {
			gaps = append(gaps, &Node{Name: "unread", Type: "bytes", Kind: KindBytes, Category: cat,
				Offset: at, Size: to - at, redact: redactSecret,
				Doc: "bytes no field accounts for, hidden: the message is damaged and may hold a credential"})
		}
	}
	for _, r := range covered {
		gap(min(r.Offset, len(m.Raw)))
		at = max(at, r.Offset+r.Size)
	}
	gap(len(m.Raw))
	if len(gaps) == 0 {
		return
	}
	// in offset order among the root's children
	kids := make([]*Node, 0, len(root.Children)+len(gaps))
	i := 0
	for _, c := range root.Children {
		for i < len(gaps) && gaps[i].Offset < c.Offset {
			kids = append(kids, gaps[i])
			i++
		}
		kids = append(kids, c)
	}
	root.Children = append(kids, gaps[i:]...)
}
