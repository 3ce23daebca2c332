package dissect

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// API keys whose trees this file knows.
const (
	saslHandshakeKey    = 17
	saslAuthenticateKey = 36
	// saslTokenKey is Message.APIKey of a raw SASL token (Options.RawToken):
	// it is not a Kafka API.
	saslTokenKey = -1
)

// Mechanisms, as SaslHandshake names them.
const (
	mechPlain       = "PLAIN"
	mechScram256    = "SCRAM-SHA-256"
	mechScram512    = "SCRAM-SHA-512"
	mechOAuthBearer = "OAUTHBEARER"
	mechGSSAPI      = "GSSAPI"
)

// Notes on an AuthBytes or token node: what the token was read as. The
// summary and the identity tracker read them back.
const (
	notePlain        = "PLAIN"
	noteClientFirst  = "SCRAM client-first"
	noteServerFirst  = "SCRAM server-first"
	noteClientFinal  = "SCRAM client-final"
	noteServerFinal  = "SCRAM server-final"
	noteOAuthInitial = "OAUTHBEARER initial response"
	noteOAuthAck     = "OAUTHBEARER error acknowledgement"
	noteOAuthError   = "OAUTHBEARER error"
	noteGSSAPI       = "GSSAPI token, opaque"
	noteUnknownMech  = "SASL mechanism unknown"
)

// canonicalMechanism is the mechanism name as kdissect compares it: upper
// case, without surrounding space.
func canonicalMechanism(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

func isScram(mech string) bool { return mech == mechScram256 || mech == mechScram512 }

// token is a SASL token being dissected: its bytes and the frame offset of
// its first byte.
type token struct {
	b    []byte
	base int
}

// saslToken dissects the token n holds (its Bytes, which end at d.off) by
// the mechanism of the decode options, adding children to n, and redacts
// what is secret. A token that cannot be dissected is hidden whole, since
// it may be a PLAIN token with its password.
func (d *decoder) saslToken(n *Node, dir Direction) {
	data := n.Bytes
	if len(data) == 0 {
		return
	}
	mark, probs := len(d.stack), len(d.probs)
	t := token{b: data, base: d.off - len(data)}
	mech := canonicalMechanism(d.opts.Mechanism)
	var note, bad string
	badAt := 0
	switch {
	case mech == mechPlain && dir == Request:
		note, badAt, bad = d.plain(t)
	case mech == mechPlain:
		note = "PLAIN: the broker sends no token"
	case isScram(mech):
		note, badAt, bad = d.scram(t, dir)
	case mech == mechOAuthBearer:
		note, badAt, bad = d.oauth(t, dir)
	case mech == mechGSSAPI:
		// Kerberos tokens carry service tickets, which can be attacked
		// offline: they stay hidden like the other credentials.
		note = noteGSSAPI
		d.hide(n, redactSecret)
	default:
		if note, badAt, bad = d.sniff(t, dir); note != "" {
			n.Doc += " " + docGuessed
			break
		}
		note = noteUnknownMech
		d.hide(n, redactSecret)
	}
	if bad != "" {
		// What was read is dropped, with its problems: the token is one
		// hidden value with one problem.
		d.stack, d.probs = d.stack[:mark], d.probs[:probs]
		d.problem(n, t.base+badAt, bad)
		note = "not a valid " + mech + " token"
		d.hide(n, redactSecret)
	}
	n.note = note
	if n.redact == redactNone && !d.opts.ShowSecrets {
		for _, c := range d.stack[mark:] {
			if hasSecret(c) {
				n.redact = redactHolds
				break
			}
		}
	}
	d.close(n, mark)
}

func hasSecret(n *Node) bool {
	found := false
	n.Walk(func(c *Node, _ int) { found = found || c.redact != redactNone })
	return found
}

// hide redacts n unless the options show secrets.
func (d *decoder) hide(n *Node, r redaction) {
	if !d.opts.ShowSecrets {
		n.redact = r
	}
}

// part adds a string node over t.b[lo:hi].
func (d *decoder) part(t token, name, typ string, lo, hi int, doc string) *Node {
	n := d.node(name, typ, KindString)
	n.Offset, n.Size, n.Doc = t.base+lo, hi-lo, doc
	n.Str = string(t.b[lo:hi])
	if !utf8.Valid(t.b[lo:hi]) {
		d.problem(n, n.Offset, name+" is not valid UTF-8")
	}
	return n
}

// plain reads RFC 4616's authzid NUL authcid NUL password.
func (d *decoder) plain(t token) (note string, badAt int, bad string) {
	if k := bytes.Count(t.b, []byte{0}); k != 2 {
		return "", 0, "PLAIN token has " + plural(int64(k), "NUL separator") + ", not 2"
	}
	i := bytes.IndexByte(t.b, 0)
	j := i + 1 + bytes.IndexByte(t.b[i+1:], 0)
	d.part(t, "authzid", "string", 0, i, "identity to act as; empty: the authenticated one")
	d.part(t, "authcid", "string", i+1, j, "user name whose password is checked")
	pw := d.part(t, "password", "string", j+1, len(t.b), "the user's password")
	d.hide(pw, redactSecret)
	return notePlain, 0, ""
}

// scramAttrs names SCRAM attributes (RFC 5802 section 5.1).
var scramAttrs = map[string][2]string{
	"a":         {"authzid", "identity to act as"},
	"n":         {"username", "user name, with , and = escaped as =2C and =3D on the wire (shown unescaped)"},
	"m":         {"mandatory_extension", "reserved for a mandatory extension"},
	"r":         {"nonce", "nonce: the client's, then the client's followed by the server's"},
	"s":         {"salt", "salt for the password hash, base64"},
	"i":         {"iterations", "iteration count of the password hash"},
	"c":         {"channel_binding", "GS2 header and channel binding data, base64"},
	"p":         {"proof", "the client's proof that it knows the password, base64"},
	"v":         {"verifier", "the server's signature, proving it knows the password too, base64"},
	"e":         {"error", "the server's reason for refusing the authentication"},
	"tokenauth": {"tokenauth", "true when the user name is a Kafka delegation token id"},
}

// scram reads the four SCRAM messages; which one it is follows from the
// direction and the first attribute.
func (d *decoder) scram(t token, dir Direction) (note string, badAt int, bad string) {
	start := 0
	if dir == Request && !bytes.HasPrefix(t.b, []byte("c=")) {
		note = noteClientFirst
		// The GS2 header: a channel binding flag, an optional authzid, two commas.
		c1 := bytes.IndexByte(t.b, ',')
		if c1 < 0 || (t.b[0] != 'n' && t.b[0] != 'y' && t.b[0] != 'p') {
			return "", 0, "SCRAM client-first message does not start with a GS2 header"
		}
		c2 := bytes.IndexByte(t.b[c1+1:], ',')
		if c2 < 0 {
			return "", 0, "SCRAM client-first message does not start with a GS2 header"
		}
		c2 += c1 + 1
		d.part(t, "gs2_header", "gs2 header", 0, c2+1, "channel binding flag (n: none, y: supported, p=: used) and optional authzid")
		start = c2 + 1
	}
	seen := map[string]bool{}
	for lo := start; lo <= len(t.b); {
		hi := bytes.IndexByte(t.b[lo:], ',')
		if hi < 0 {
			hi = len(t.b)
		} else {
			hi += lo
		}
		eq := bytes.IndexByte(t.b[lo:hi], '=')
		if eq <= 0 {
			return "", lo, "SCRAM attribute at token byte " + strconv.Itoa(lo) + " is not key=value"
		}
		key := string(t.b[lo : lo+eq])
		if note == "" {
			switch {
			case dir == Request && key == "c":
				note = noteClientFinal
			case dir == Response && key == "r":
				note = noteServerFirst
			case dir == Response && (key == "v" || key == "e"):
				note = noteServerFinal
			default:
				return "", lo, "SCRAM message starts with an attribute it cannot start with"
			}
		}
		seen[key] = true
		name, doc := key, "SCRAM extension attribute"
		if a, ok := scramAttrs[key]; ok {
			name, doc = a[0], a[1]
		}
		vn := d.part(t, name, "scram "+key+"=", lo+eq+1, hi, doc)
		switch key {
		case "n":
			u, ok := unescapeSaslName(vn.Str)
			if !ok {
				d.problem(vn, vn.Offset, "user name has an = not followed by 2C or 3D")
			}
			vn.Str = u
		case "i":
			if it, err := strconv.ParseInt(vn.Str, 10, 32); err == nil {
				vn.Kind, vn.Int, vn.Str = KindInt, it, ""
			} else {
				d.problem(vn, vn.Offset, "iteration count is not a number")
			}
		case "p":
			d.hide(vn, redactSecret)
		}
		lo = hi + 1
	}
	for _, k := range map[string][]string{
		noteClientFirst: {"n", "r"}, noteServerFirst: {"r", "s", "i"}, noteClientFinal: {"c", "r", "p"},
	}[note] {
		if !seen[k] {
			return "", 0, note + " message lacks its " + k + "= attribute"
		}
	}
	return note, 0, ""
}

// unescapeSaslName undoes RFC 5802's escaping of user names.
func unescapeSaslName(s string) (string, bool) {
	if !strings.Contains(s, "=") {
		return s, true
	}
	var b strings.Builder
	ok := true
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] != '=':
			b.WriteByte(s[i])
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
			i += 2
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
			i += 2
		default:
			b.WriteByte('=')
			ok = false
		}
	}
	return b.String(), ok
}

// oauth reads RFC 7628's client initial response (GS2 header, then
// key=value pairs each ended by 0x01, then 0x01) and the broker's error.
func (d *decoder) oauth(t token, dir Direction) (note string, badAt int, bad string) {
	if dir == Response {
		d.part(t, "error", "json", 0, len(t.b), "the broker's error status (RFC 7628), JSON")
		return noteOAuthError, 0, ""
	}
	if len(t.b) == 1 && t.b[0] == 1 {
		return noteOAuthAck, 0, ""
	}
	c1 := bytes.IndexByte(t.b, ',')
	c2 := -1
	if c1 >= 0 {
		if c2 = bytes.IndexByte(t.b[c1+1:], ','); c2 >= 0 {
			c2 += c1 + 1
		}
	}
	if c2 < 0 || c2+1 >= len(t.b) || t.b[c2+1] != 1 {
		return "", 0, "OAUTHBEARER token does not start with a GS2 header and 0x01"
	}
	d.part(t, "gs2_header", "gs2 header", 0, c2+1, "channel binding flag and optional authzid (a=)")
	sawAuth := false
	lo := c2 + 2
	for {
		hi := bytes.IndexByte(t.b[lo:], 1)
		if hi < 0 {
			return "", lo, "OAUTHBEARER key=value pair at token byte " + strconv.Itoa(lo) + " is not ended by 0x01"
		}
		hi += lo
		if hi == lo { // the empty pair: the end
			if hi+1 != len(t.b) {
				return "", hi + 1, strconv.Itoa(len(t.b)-hi-1) + " bytes after the end of the OAUTHBEARER token"
			}
			break
		}
		eq := bytes.IndexByte(t.b[lo:hi], '=')
		if eq <= 0 {
			return "", lo, "OAUTHBEARER pair at token byte " + strconv.Itoa(lo) + " is not key=value"
		}
		key := string(t.b[lo : lo+eq])
		vlo := lo + eq + 1
		if key == "auth" {
			sawAuth = true
			d.bearer(t, vlo, hi)
		} else {
			d.part(t, key, "oauth "+key+"=", vlo, hi, "SASL extension sent with the token")
		}
		lo = hi + 1
	}
	if !sawAuth {
		return "", 0, "OAUTHBEARER token has no auth= pair"
	}
	return noteOAuthInitial, 0, ""
}

// bearer reads "Bearer <token>" at t.b[lo:hi]; the token is secret, but
// the subject claim of a JWT is named, read from its payload and not
// verified.
func (d *decoder) bearer(t token, lo, hi int) {
	v := t.b[lo:hi]
	sp := bytes.IndexByte(v, ' ')
	if sp <= 0 || !strings.EqualFold(string(v[:sp]), "bearer") {
		n := d.part(t, "auth", "oauth auth=", lo, hi, "authorization value; not a bearer token")
		d.hide(n, redactSecret)
		return
	}
	d.part(t, "scheme", "oauth auth=", lo, lo+sp, "authorization scheme")
	tlo := lo + sp + 1
	tn := d.part(t, "token", "bearer token", tlo, hi, "the bearer token: whoever holds it is authenticated")
	d.hide(tn, redactSecret)
	mark := len(d.stack)
	parts := bytes.Split(t.b[tlo:hi], []byte{'.'})
	if len(parts) == 3 {
		payload := bytes.TrimRight(parts[1], "=")
		raw, err := base64.RawURLEncoding.DecodeString(string(payload))
		var claims struct {
			Sub *string `json:"sub"`
		}
		if err == nil && json.Unmarshal(raw, &claims) == nil && claims.Sub != nil {
			plo := tlo + len(parts[0]) + 1
			sn := d.part(t, "sub", "jwt claim", plo, plo+len(parts[1]), "subject claim of the token's payload: read, not verified")
			sn.Str = *claims.Sub
		}
	}
	d.adopt(tn, mark)
}

func (d *decoder) rawToken(dir Direction) *Message {
	m := &d.m
	m.Direction, m.APIKey, m.APIName = dir, saslTokenKey, "SaslToken"
	root, mark := d.open("", "", KindGroup)
	d.frame()
	suffix := "Request"
	if !d.failed {
		d.cat = CatRequestBody
		if dir == Response {
			d.cat, suffix = CatResponseBody, "Response"
		}
		n := d.node("token", "bytes", KindBytes)
		n.Doc = "raw SASL token (after SaslHandshake v0), in the format of the negotiated mechanism"
		n.Bytes = d.b[d.off:d.end:d.end]
		d.off = d.end
		d.saslToken(n, dir)
		n.Size = d.off - n.Offset
	}
	m = d.finish(m, root, mark, nil, suffix)
	root.Type = "raw token"
	return m
}

// appendSASL summarises SaslHandshake, SaslAuthenticate and raw tokens
// without ever showing a secret: the user a token names, not its password.
func appendSASL(b []byte, m *Message, body *Node) []byte {
	switch {
	case m.APIKey == saslHandshakeKey && m.Direction == Request:
		if mech := body.Child("Mechanism"); mech != nil && mech.HasValue() {
			b = append(b, "mechanism "...)
			b = appendText(b, mech)
		}
	case m.APIKey == saslHandshakeKey:
		b = appendSym(b, body.Child("ErrorCode"))
		sep := ", enabled: "
		if arr := body.Child("Mechanisms"); arr != nil {
			for _, c := range arr.Children {
				if c.Kind == KindString {
					b = append(b, sep...)
					b = appendText(b, c)
					sep = ", "
				}
			}
		}
	case m.Direction == Request:
		tok := body
		if m.APIKey == saslAuthenticateKey {
			tok = body.Child("AuthBytes")
		}
		b = appendToken(b, tok)
	default:
		b = appendError(b, body)
		if tok := body.Child("AuthBytes"); tok != nil && len(tok.Bytes) > 0 {
			b = append(b, ", "...)
			b = appendToken(b, tok)
		}
		if l := body.Child("SessionLifetimeMs"); l != nil && l.HasValue() && l.Int != 0 {
			b = append(b, ", session "...)
			b = strconv.AppendInt(b, l.Int, 10)
			b = append(b, "ms"...)
		}
	}
	return b
}

func appendToken(b []byte, tok *Node) []byte {
	switch {
	case tok == nil || !tok.HasValue():
		return b
	case len(tok.Bytes) == 0:
		return append(b, "empty token"...)
	}
	b = appendEscape(b, tok.note)
	for _, who := range [...]string{"authcid", "username", "sub"} {
		if c := tok.Child(who); c != nil {
			b = append(b, " user "...)
			return append(b, Escape(c.Str)...)
		}
		if t := tok.Child("token"); t != nil && who == "sub" {
			if c := t.Child("sub"); c != nil {
				b = append(b, " sub "...)
				return append(b, Escape(c.Str)...)
			}
		}
	}
	if tok.redact == redactSecret {
		b = append(b, ", "...)
		b = tok.appendRedacted(b)
	}
	return b
}

const docGuessed = "(Mechanism recognised from the token itself: the SaslHandshake was not seen.)"

// sniff reads a token of an unknown mechanism as the mechanism whose
// unmistakable shape it has, so that the parts that are not secret can be
// shown and the principal named. It recognises only shapes no binary
// token takes by chance: a PLAIN token of three printable parts, SCRAM
// attribute lists, an OAUTHBEARER initial response. Anything else stays
// hidden whole.
func (d *decoder) sniff(t token, dir Direction) (note string, badAt int, bad string) {
	mark, probs := len(d.stack), len(d.probs)
	switch {
	case dir == Request && looksPlain(t.b):
		note, badAt, bad = d.plain(t)
	case dir == Request && bytes.HasPrefix(t.b, []byte("n,,\x01auth=")):
		note, badAt, bad = d.oauth(t, dir)
	case looksScram(t.b, dir):
		note, badAt, bad = d.scram(t, dir)
	}
	if bad != "" || note == "" {
		d.stack, d.probs = d.stack[:mark], d.probs[:probs] // not that mechanism after all
		return "", 0, ""
	}
	return note, 0, ""
}

func looksPlain(b []byte) bool {
	if bytes.Count(b, []byte{0}) != 2 || !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c != 0 && (c < 0x20 || c == 0x7f) {
			return false
		}
	}
	return true
}

// looksScram: printable ASCII, comma-separated attributes that start the
// way one of the four SCRAM messages starts.
func looksScram(b []byte, dir Direction) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	s := string(b)
	if dir == Request {
		return strings.HasPrefix(s, "n,,n=") || strings.HasPrefix(s, "y,,n=") ||
			(strings.HasPrefix(s, "c=") && strings.Contains(s, ",r=") && strings.Contains(s, ",p="))
	}
	return (strings.HasPrefix(s, "r=") && strings.Contains(s, ",s=") && strings.Contains(s, ",i=")) ||
		strings.HasPrefix(s, "v=") || strings.HasPrefix(s, "e=")
}
