// Package tlslayer puts tlsdec between reassembly's TCP ordering and its
// framer: a reassembly.Layer that hands the framer the decrypted
// application data of a TLS connection and reports the session, the
// client certificate and every record it could not decode as layer events.
package tlslayer

import (
	"time"

	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlslayer/tlsdec"
)

// Session is the layer event of a TLS connection once its version and
// suite are known and whether it has keys; sent once per connection.
type Session struct {
	Version, Cipher, SNI, ClientRandom string
	Decrypted                          bool
	Reason                             string // why not decrypted
	// Refused: the handshake was refused before a ServerHello and nothing
	// followed (tlsdec.Info.Refused): no Kafka bytes went unread.
	Refused bool
	// Midstream: the capture began after the handshake; Reason says so.
	Midstream bool
}

// Alert is the layer event of a fatal TLS alert (one that ends the
// connection): its sender is the direction of the event. Warning alerts,
// close_notify among them, are not reported.
type Alert struct {
	StreamOffset int64 // TCP stream offset of the record that carried it
	Code         uint8
	Name         string // RFC 8446's name, e.g. "certificate_required"
	// Offered is set when the server refused the client's certificate, or
	// its lack of one (it asked for one and sent the alert before serving
	// anything): what the client offered, "none", "sent" or "unreadable".
	// DN is a sent certificate's subject in RFC 2253 form (text from the
	// wire).
	Offered string
	DN      string
}

// RefusedCert reports whether the alert refused the client's certificate.
func (a *Alert) RefusedCert() bool { return a.Offered != "" }

// ClientCert is the layer event of a client certificate (mTLS), seen in the
// (decrypted) handshake: DN is its subject in RFC 2253 form, text from the
// wire (escape it to show it).
//
// Unreadable: the client sent a certificate whose subject could not be
// read, or a Certificate message that could not be (a Problem says why);
// DN is "" then. Such a client authenticated as someone the wire does not
// name: its principal is unknown (dissect.Session.SetTLSIdentityUnknown),
// neither anonymous nor "User:".
type ClientCert struct {
	DN         string
	Unreadable bool
}

// ProblemUnreadableCert is the Problem Kind of a client certificate whose
// subject could not be read. Unlike the record problems, decoding goes on.
const ProblemUnreadableCert = "unreadable_certificate"

// Problem is the layer event of a record that could not be decoded:
// nothing more comes from that direction until it resynchronises (except
// after ProblemUnreadableCert).
type Problem struct {
	StreamOffset int64  // TCP stream offset of the record
	Kind         string // "oversize", "auth", "truncated", ... (tlsdec.Problem)
	Message      string
}

// NewFactory returns a reassembly.Config.NewLayer that decrypts every
// connection whose client starts with a ClientHello, with the secrets of
// keys (nil: none; the connections are still reported). What they buffer
// is held against the Pipeline's buffer caps (LayerOutput.Hold), and they
// share their decryption buffers: a factory serves one Pipeline.
func NewFactory(keys *tlsdec.KeyLog) func(reassembly.Flow, []byte) reassembly.Layer {
	sh := tlsdec.NewShared()
	return func(_ reassembly.Flow, first []byte) reassembly.Layer {
		hello := tlsdec.LooksLikeTLS(first)
		if !hello && !tlsdec.LooksLikeRecord(first) {
			return nil
		}
		l := &layer{hello: hello, midstream: tlsdec.LooksLikeMidstream(first)}
		l.c = tlsdec.NewConnWith(keys, sh, l)
		if !decryptAll {
			l.c.SetReader(l)
		}
		return l
	}
}

// Proven is reassembly.Prover's: only a ClientHello shows that a connection on a port not given
// is TLS; records alone may be any TLS service's, picked up midway.
func (l *layer) Proven() bool { return l.hello }

// decryptAll turns selective decryption off: every record is opened whole,
// which the tests compare against.
var decryptAll bool

// Unread is tlsdec.Reader's, answered by the framer when the Pipeline's
// output says (reassembly.Skipper); without it every byte is read.
func (l *layer) Unread(fromClient bool) (skip, head int64) {
	if s, ok := l.out.(reassembly.Skipper); ok {
		return s.Unread(fromClient)
	}
	return 0, 0
}

// Settled is tlsdec.Reader's; see Unread.
func (l *layer) Settled(fromClient bool) bool {
	if s, ok := l.out.(reassembly.Skipper); ok {
		return s.Settled(fromClient)
	}
	return false
}

// marks is how many (offset, packet) pairs a direction remembers to name
// the packet that completed a record. Records complete in the packet being
// fed, except those of bytes tlsdec holds (waiting for the other
// direction's hello, or scanned after a gap): only while it holds some are
// earlier packets remembered.
const marks = 32

type mark struct {
	off int64
	pkt int
	ts  int64 // capture nanoseconds: there may be a million of them
}

type dir struct {
	last    mark   // the packet fed last
	held    []mark // earlier packets with bytes tlsdec holds, oldest first
	plain   int64  // end of the plaintext handed out
	lost    bool   // the framer was told of a gap since the last plaintext
	started bool
}

// layer is one connection's: its size counts, there may be a million.
type layer struct {
	c        *tlsdec.Conn
	d        [2]dir
	out      reassembly.LayerOutput // of the call under way
	now      int64                  // capture nanoseconds of the call under way
	loc      *time.Location         // of the capture's times, to rebuild them from nanoseconds
	certSent bool
	fatal    bool // a fatal alert was reported: only the first is
	// hello: the client began with a ClientHello; midstream: with a record that comes after a
	// handshake, which the capture did not hold.
	hello, midstream bool
	emitFn           func(tlsdec.Output)
}

// at is the call under way's time.
func (l *layer) at() time.Time { return time.Unix(0, l.now).In(l.loc) }

// enter records the output and time of a call.
func (l *layer) enter(out reassembly.LayerOutput, ts time.Time) {
	l.out, l.now, l.loc = out, ts.UnixNano(), ts.Location()
}

func (l *layer) dir(fromClient bool) *dir {
	if fromClient {
		return &l.d[0]
	}
	return &l.d[1]
}

// packetAt names the packet that carried TCP offset off of a direction, and
// when it was captured: an offset older than what is remembered is named by
// the oldest packet kept.
func (d *dir) packetAt(off int64) (int, int64) {
	m := d.last
	for i := len(d.held) - 1; i >= 0 && m.off > off; i-- {
		m = d.held[i]
	}
	return m.pkt, m.ts
}

// packetAt is dir.packetAt with the time as the capture gave it.
func (l *layer) packetAt(fromClient bool, off int64) (int, time.Time) {
	pkt, ns := l.dir(fromClient).packetAt(off)
	return pkt, time.Unix(0, ns).In(l.loc)
}

// fed records the packet of the next bytes of a direction; held is what
// tlsdec held of it before them.
func (d *dir) fed(m mark, held bool) {
	if held && d.last.pkt != 0 {
		if len(d.held) == marks {
			d.held = append(d.held[:0], d.held[1:]...)
		}
		d.held = append(d.held, d.last)
	}
	d.last = m
}

// settle forgets the packets whose bytes tlsdec no longer holds: it holds
// at most the held bytes before end.
func (d *dir) settle(end int64, held int) {
	if held == 0 {
		// A bulk transfer holds a record between most packets: its few
		// marks are reused, not allocated again for every record.
		if cap(d.held) > marks/2 {
			d.held = nil
		} else {
			d.held = d.held[:0]
		}
		return
	}
	// A packet is needed while the next one starts after the first byte held.
	start := end - int64(held)
	k := 0
	for ; k < len(d.held); k++ {
		next := d.last.off
		if k+1 < len(d.held) {
			next = d.held[k+1].off
		}
		if next > start {
			break
		}
	}
	d.held = d.held[:copy(d.held, d.held[k:])]
}

func (l *layer) Feed(fromClient bool, off int64, data []byte, pkt int, ts time.Time, out reassembly.LayerOutput) {
	d := l.dir(fromClient)
	d.fed(mark{off, pkt, ts.UnixNano()}, l.c.Held(fromClient) > 0)
	l.enter(out, ts)
	if l.midstream {
		l.midstream = false
		l.c.Midstream(l.emit())
	}
	l.c.Feed(fromClient, data, l.emit())
	d.settle(off+int64(len(data)), l.c.Held(fromClient))
	l.checkCert(ts)
}

// Hold puts what tlsdec buffers under the Pipeline's buffer caps.
func (l *layer) Hold(fromClient bool, pos int64, n int) bool {
	return l.out.Hold(fromClient, pos, n, l.at())
}

func (l *layer) Gap(fromClient bool, off, n int64, ts time.Time, out reassembly.LayerOutput) {
	l.enter(out, ts)
	l.c.Gap(fromClient, n, l.emit())
	l.lose(fromClient, ts)
}

// lose tells the framer that the plaintext of a direction is not contiguous
// any more (a gap or a problem), once.
func (l *layer) lose(fromClient bool, ts time.Time) {
	if d := l.dir(fromClient); d.started && !d.lost {
		d.lost = true
		l.out.Gap(fromClient, d.plain, -1, ts)
	}
}

func (l *layer) End(reason string, ts time.Time, out reassembly.LayerOutput) {
	l.enter(out, ts)
	l.c.End(l.emit())

}

func (l *layer) emit() func(tlsdec.Output) {
	if l.emitFn == nil {
		l.emitFn = l.output
	}
	return l.emitFn
}

func (l *layer) output(o tlsdec.Output) {
	d := l.dir(o.FromClient)
	switch o.Kind {
	case tlsdec.KindData:
		pkt, ts := l.packetAt(o.FromClient, o.Pos+int64(o.RecordLen)-1)
		l.checkCert(ts) // the identity must be known before the first frame
		d.lost, d.started = false, true
		d.plain = o.Offset + int64(len(o.Data))
		l.out.Data(o.FromClient, o.Offset, o.Data, pkt, ts)
	case tlsdec.KindSkip:
		pkt, ts := l.packetAt(o.FromClient, o.Pos+int64(o.RecordLen)-1)
		d.lost, d.started = false, true
		d.plain = o.Offset + int64(o.Len)
		if s, ok := l.out.(reassembly.Skipper); ok {
			s.Skip(o.FromClient, o.Offset, int64(o.Len), pkt, ts)
		}
	case tlsdec.KindSession:
		in := l.c.Info()
		l.out.Event(true, l.at(), &Session{Version: in.Version, Cipher: in.Cipher, SNI: in.SNI,
			ClientRandom: in.ClientRandom, Decrypted: in.Decrypted, Reason: in.Reason, Refused: in.Refused,
			Midstream: in.Midstream})
	case tlsdec.KindProblem:
		_, ts := l.packetAt(o.FromClient, o.Pos)
		l.out.Event(o.FromClient, ts, &Problem{StreamOffset: o.Pos, Kind: o.Problem.String(), Message: o.Message})
		l.lose(o.FromClient, ts)
	case tlsdec.KindAlert:
		l.alert(o)
	case tlsdec.KindLimit:
		// The Pipeline reported the BufferLimit when it refused.
		_, ts := l.packetAt(o.FromClient, o.Pos)
		l.lose(o.FromClient, ts)
	}
}

// alert reports the first fatal alert (tlsdec.AlertFatal).
func (l *layer) alert(o tlsdec.Output) {
	in := l.c.Info()
	if !tlsdec.AlertFatal(in.Version == "1.3", o.AlertLevel, o.AlertDesc) || l.fatal {
		return
	}
	l.fatal = true
	_, ts := l.packetAt(o.FromClient, o.Pos)
	a := &Alert{StreamOffset: o.Pos, Code: o.AlertDesc, Name: tlsdec.AlertName(o.AlertDesc)}
	if !o.FromClient && in.CertRequested && !l.d[1].started {
		a.Offered = "unreadable"
		switch {
		case len(in.ClientCertDER) == 0 && !in.ClientCertUnread:
			a.Offered = "none"
		case len(in.ClientCertDER) > 0:
			if dn, err := tlsdec.SubjectDN(in.ClientCertDER[0]); err == nil {
				a.Offered, a.DN = "sent", dn
			}
		}
	}
	l.out.Event(o.FromClient, ts, a)
}

// checkCert reports the client certificate once the handshake carried it
// (it may come out while the other direction is fed: records wait for the
// other direction's hello).
func (l *layer) checkCert(ts time.Time) {
	if l.certSent || !l.c.ClientCertSeen() {
		return
	}
	in := l.c.Info()
	l.certSent = true
	if len(in.ClientCertDER) > 0 {
		dn, err := tlsdec.SubjectDN(in.ClientCertDER[0])
		if err == nil {
			l.out.Event(true, ts, &ClientCert{DN: dn})
			return
		}
		_, at := l.packetAt(true, in.ClientCertPos)
		l.out.Event(true, at, &Problem{StreamOffset: in.ClientCertPos, Kind: ProblemUnreadableCert,
			Message: "the client certificate's subject cannot be read (" + err.Error() + "): who the client is, is unknown"})
	}
	// A Certificate message that did not parse was reported by tlsdec.
	l.out.Event(true, ts, &ClientCert{Unreadable: true})
}
