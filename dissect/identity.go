package dissect

import "strconv"

// Identity is who stands behind a connection, named as Kafka's default
// principal builder names it.
type Identity struct {
	Principal string // "User:alice"; "" when the wire does not say (GSSAPI, not yet known)
	Mechanism string // the SASL mechanism; "" without SASL
	Source    string // "sasl", "tls" or "none"; "" while unknown
	// Authenticated: the broker accepted the authentication (its final
	// SaslAuthenticate response said error 0, or it went on to serve
	// requests). Failed: it refused it.
	Authenticated, Failed bool
	// NoCert: a TLS client that sent no certificate, which the broker
	// refused (Failed); Principal is "" then.
	NoCert bool
	// Detail says what the principal cannot: a SCRAM user name that is a
	// delegation token id, whose principal is the token's owner.
	Detail string
}

// Known reports whether anything is known about the identity.
func (i Identity) Known() bool { return i.Source != "" }

// identityFromTLS is the identity of a TLS client certificate whose
// subject is dn, in RFC 2253 form, without SASL.
func identityFromTLS(dn string) Identity {
	return Identity{Principal: TLSPrincipal(dn), Source: "tls", Authenticated: true}
}

// TLSPrincipal is the principal Kafka's default principal builder names a
// client certificate by, from its subject DN (RFC 2253).
func TLSPrincipal(dn string) string { return "User:" + dn }

// unknownTLSIdentity is the identity of a TLS client that presented a
// certificate whose subject could not be read: it authenticated, but the
// wire does not say as whom. Its principal is unknown, never anonymous.
func unknownTLSIdentity() Identity {
	return Identity{Source: "tls", Authenticated: true}
}

// anonymousIdentity is the identity of a connection that did not
// authenticate.
func anonymousIdentity() Identity {
	return Identity{Principal: "User:ANONYMOUS", Source: "none", Authenticated: true}
}

// identityTracker follows one connection's authentication. Feed it the
// connection's decoded messages in order (requests and responses,
// including raw SASL tokens); decode SaslAuthenticate and raw tokens with
// Options{Mechanism: t.Mechanism()} so that their tokens can be read. It
// does no I/O.
type identityTracker struct {
	sawStart bool // the connection was captured from its first byte
	tls      *Identity

	cur     Identity // the established identity
	pending Identity // the exchange under way
	active  bool     // an exchange is under way
	hsVer   int16
	raw     bool // tokens travel raw: SaslHandshake v0 was accepted
	anySASL bool
	// clientSent: the exchange under way has sent a token, which the
	// broker may refuse by closing the connection.
	clientSent bool
}

// newIdentityTracker starts tracking a connection. sawStart says that its
// first bytes were captured: a connection that then sends requests
// without authenticating is anonymous (or its TLS identity); one picked
// up midway is unknown until it authenticates again.
func newIdentityTracker(sawStart bool) *identityTracker {
	return &identityTracker{sawStart: sawStart}
}

// SetTLS records the subject DN of the client certificate the TLS
// handshake showed. SASL, when it follows, names the principal instead, as
// on a SASL_SSL listener.
func (t *identityTracker) SetTLS(dn string) { t.setTLS(identityFromTLS(dn)) }

// SetTLSUnknown records that the TLS handshake showed a client
// certificate whose subject could not be read (UnknownTLSIdentity): the
// connection is not anonymous, whatever it sends.
func (t *identityTracker) SetTLSUnknown() { t.setTLS(unknownTLSIdentity()) }

func (t *identityTracker) setTLS(id Identity) {
	t.tls = &id
	if !t.cur.Known() || t.cur.Source == "none" {
		t.cur = id
	}
}

// SetTLSIdentityUnknown records that a connection's TLS handshake showed a
// client certificate whose subject could not be read: its messages carry
// an unknown principal (UnknownTLSIdentity) unless SASL names one.
func (s *Session[M]) SetTLSIdentityUnknown(connID uint64) {
	c := s.conn(connID)
	if c.id == nil {
		c.id = newIdentityTracker(true) // the handshake is the connection's start
	}
	c.id.SetTLSUnknown()
}

// RefuseTLS records that the broker refused the client's certificate (or
// its lack of one) in the TLS handshake: the connection's identity is the
// certificate's, failed.
func (t *identityTracker) RefuseTLS() {
	id := Identity{Source: "tls", Failed: true, NoCert: t.tls == nil}
	if t.tls != nil {
		id.Principal = t.tls.Principal
	}
	t.tls, t.cur = &id, id
}

// SetTLSRefused records that the broker refused a connection's client
// certificate, or its lack of one, in the TLS handshake: the requests the
// client sent before it learnt so, and any after, carry the refused
// identity.
func (s *Session[M]) SetTLSRefused(connID uint64) {
	c := s.conn(connID)
	if c.id == nil {
		c.id = newIdentityTracker(true)
	}
	c.id.RefuseTLS()
	for _, p := range c.pending {
		if p.held != nil {
			p.held.x.Identity = c.id.Identity()
		}
	}
}

// Identity is the established identity; Known is false until one is.
func (t *identityTracker) Identity() Identity { return t.cur }

// Pending is the identity the exchange under way claims, not yet
// accepted by the broker; Known is false when none is under way.
func (t *identityTracker) Pending() Identity {
	if !t.active {
		return Identity{}
	}
	return t.pending
}

// Mechanism is the SASL mechanism the connection's last SaslHandshake
// asked for, to decode its tokens with.
func (t *identityTracker) Mechanism() string { return t.pending.Mechanism }

// SASL reports whether the connection has shown any SASL message.
func (t *identityTracker) SASL() bool { return t.anySASL }

// RawTokens reports whether the connection's next frames are raw SASL
// tokens (Decode them with Options.RawToken): SaslHandshake v0 was
// accepted and the exchange has not ended. A GSSAPI exchange has no end
// the tokens show: it ends with the first frame that is a plausible Kafka
// request (PlausibleRequest), which the caller then decodes and observes
// as one.
func (t *identityTracker) RawTokens() bool { return t.active && t.raw }

// Observe feeds the next message of the connection.
func (t *identityTracker) Observe(m *Message) {
	if m == nil || m.Tree == nil {
		return
	}
	body := m.Tree.Child(bodyName(m))
	switch {
	case m.APIKey == saslHandshakeKey && m.Direction == Request:
		mech := ""
		if c := body.Child("Mechanism"); c != nil {
			mech = canonicalMechanism(c.Str)
		}
		t.anySASL, t.active, t.raw, t.hsVer, t.clientSent = true, true, false, m.APIVersion, false
		t.pending = Identity{Mechanism: mech, Source: "sasl"}
	case m.APIKey == saslHandshakeKey:
		if !t.active {
			return
		}
		if ec := body.Child("ErrorCode"); ec == nil || !ec.HasValue() || ec.Int != 0 {
			t.fail()
			return
		}
		t.raw = t.hsVer == 0
	case m.APIKey == saslAuthenticateKey || (m.APIKey == saslTokenKey && body != nil && body.Name == "token"):
		t.anySASL = true
		if !t.active {
			// The handshake was not captured: the mechanism is what the
			// token was read as, if anything.
			t.active, t.pending = true, Identity{Source: "sasl"}
		}
		tok := body
		if m.APIKey == saslAuthenticateKey {
			tok = body.Child("AuthBytes")
			if ec := body.Child("ErrorCode"); m.Direction == Response && (ec == nil || !ec.HasValue() || ec.Int != 0) {
				t.fail()
				return
			}
		}
		if m.Direction == Request {
			t.clientSent = true
			t.readClient(tok)
		} else {
			t.readServer(tok)
		}
	case m.APIKey == 18:
		// ApiVersions may come before authentication: it says nothing.
	case m.Direction == Request:
		// The broker serves nothing else before authentication succeeds.
		switch {
		case t.active && !t.pending.Failed:
			t.succeed()
		case !t.cur.Known() && !t.anySASL && t.sawStart:
			t.cur = anonymousIdentity()
		}
	}
}

// Close records that the connection ended (a FIN or RST, not the end of
// a capture). An exchange still under way failed: a broker may close the
// connection on refused credentials without answering.
func (t *identityTracker) Close() {
	if t.active && t.clientSent {
		t.fail()
	}
}

func (t *identityTracker) fail() {
	t.pending.Failed, t.pending.Authenticated = true, false
	t.cur, t.active, t.raw = t.pending, false, false
}

func (t *identityTracker) succeed() {
	t.pending.Authenticated, t.pending.Failed = true, false
	t.cur, t.active, t.raw = t.pending, false, false
}

// readClient names the principal from a client token.
func (t *identityTracker) readClient(tok *Node) {
	if tok == nil {
		return
	}
	switch tok.note {
	case notePlain:
		t.setMech(mechPlain)
		if c := tok.Child("authcid"); c != nil {
			t.pending.Principal = "User:" + c.Str
		}
	case noteClientFirst:
		if !isScram(t.pending.Mechanism) {
			t.setMech("SCRAM")
		}
		if c := tok.Child("username"); c != nil {
			t.pending.Principal = "User:" + c.Str
			if ta := tok.Child("tokenauth"); ta != nil && ta.Str == "true" {
				t.pending.Principal = ""
				t.pending.Detail = "delegation token " + c.Str + ": the principal is its owner, which the wire does not show"
			}
		}
	case noteOAuthInitial:
		t.setMech(mechOAuthBearer)
		if tk := tok.Child("token"); tk != nil {
			if c := tk.Child("sub"); c != nil {
				t.pending.Principal = "User:" + c.Str
			}
		}
	case noteGSSAPI:
		t.setMech(mechGSSAPI)
	}
}

func (t *identityTracker) setMech(m string) {
	if t.pending.Mechanism == "" {
		t.pending.Mechanism = m
	}
}

// readServer ends the exchange when the server's token is its last.
func (t *identityTracker) readServer(tok *Node) {
	note := ""
	if tok != nil {
		note = tok.note
	}
	switch {
	case note == noteServerFinal && tok.Child("error") != nil:
		t.fail()
	case note == noteServerFinal:
		t.succeed()
	case note == noteOAuthError || note == noteServerFirst:
		// More to come: the client answers.
	case t.pending.Mechanism == mechPlain, t.pending.Mechanism == mechOAuthBearer:
		t.succeed() // one round: the answer to the client's only token
	}
}

// String is the identity as a summary line ends with it ("by " + String):
// the principal, or the mechanism when the wire does not name one, and
// "(failed)" or "(not yet accepted)" when the broker has not accepted it;
// "" when nothing is known.
func (i Identity) String() string {
	if !i.Known() {
		return ""
	}
	s := i.Principal
	switch {
	case s == "" && i.Mechanism != "":
		s = "a " + i.Mechanism + " user"
	case s == "" && i.NoCert:
		s = "a client without a certificate"
	case s == "" && i.Source == "tls":
		s = "an unreadable client certificate"
	case s == "":
		s = "an unnamed user"
	}
	return Escape(s + i.Qualifier())
}

// Qualifier is what String adds after the principal: " (failed)" when the
// broker refused the authentication, " (not yet accepted)" while it has
// not accepted it, else "".
func (i Identity) Qualifier() string {
	switch {
	case i.Failed:
		return " (failed)"
	case !i.Authenticated:
		return " (not yet accepted)"
	}
	return ""
}

// AppendIdentityJSON writes the NDJSON members of an identity, without
// braces: "principal" (null when unknown) and "auth" (null when nothing
// is known, else mechanism, source, authenticated and failed).
func AppendIdentityJSON(dst []byte, i Identity) []byte {
	dst = append(dst, `"principal":`...)
	if i.Principal == "" {
		dst = append(dst, "null"...)
	} else {
		dst = AppendJSONString(dst, i.Principal)
	}
	dst = append(dst, `,"auth":`...)
	if !i.Known() {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"mechanism":`...)
	if i.Mechanism == "" {
		dst = append(dst, "null"...)
	} else {
		dst = AppendJSONString(dst, i.Mechanism)
	}
	dst = append(dst, `,"source":`...)
	dst = AppendJSONString(dst, i.Source)
	dst = append(dst, `,"authenticated":`...)
	dst = strconv.AppendBool(dst, i.Authenticated)
	dst = append(dst, `,"failed":`...)
	dst = strconv.AppendBool(dst, i.Failed)
	return append(dst, '}')
}
