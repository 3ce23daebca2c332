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
}

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
// keys (nil: none; the connections are still reported).
func NewFactory(keys *tlsdec.KeyLog) func(reassembly.Flow, []byte) reassembly.Layer {
	return func(_ reassembly.Flow, first []byte) reassembly.Layer {
		if !tlsdec.LooksLikeTLS(first) {
			return nil
		}
		return &layer{c: tlsdec.NewConn(keys)}
	}
}

// marks is how many (offset, packet) pairs a direction remembers to name
// the packet that completed a record: records complete in the packet being
// fed except when held for the other direction's hello.
const marks = 32

type mark struct {
	off int64
	pkt int
	ts  time.Time
}

type dir struct {
	ring    [marks]mark
	n       int   // marks written
	plain   int64 // end of the plaintext handed out
	lost    bool  // the framer was told of a gap since the last plaintext
	started bool
}

type layer struct {
	c        *tlsdec.Conn
	d        [2]dir
	out      reassembly.LayerOutput
	ts       time.Time
	certSent bool
	emitFn   func(tlsdec.Output)
}

func (l *layer) dir(fromClient bool) *dir {
	if fromClient {
		return &l.d[0]
	}
	return &l.d[1]
}

// packetAt names the packet that carried TCP offset off of a direction.
func (d *dir) packetAt(off int64) (int, time.Time) {
	lo := max(0, d.n-marks)
	for i := d.n - 1; i >= lo; i-- {
		if m := d.ring[i%marks]; m.off <= off {
			return m.pkt, m.ts
		}
	}
	m := d.ring[lo%marks]
	return m.pkt, m.ts
}

func (l *layer) Feed(fromClient bool, off int64, data []byte, pkt int, ts time.Time, out reassembly.LayerOutput) {
	d := l.dir(fromClient)
	d.ring[d.n%marks] = mark{off, pkt, ts}
	d.n++
	l.out, l.ts = out, ts
	l.c.Feed(fromClient, data, l.emit())
	l.checkCert(ts)
}

func (l *layer) Gap(fromClient bool, off, n int64, ts time.Time, out reassembly.LayerOutput) {
	l.out, l.ts = out, ts
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
	l.out, l.ts = out, ts
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
		pkt, ts := d.packetAt(o.Pos + int64(o.RecordLen) - 1)
		l.checkCert(ts) // the identity must be known before the first frame
		d.lost, d.started = false, true
		d.plain = o.Offset + int64(len(o.Data))
		l.out.Data(o.FromClient, o.Offset, o.Data, pkt, ts)
	case tlsdec.KindSession:
		in := l.c.Info()
		l.out.Event(true, l.ts, &Session{Version: in.Version, Cipher: in.Cipher, SNI: in.SNI,
			ClientRandom: in.ClientRandom, Decrypted: in.Decrypted, Reason: in.Reason})
	case tlsdec.KindProblem:
		_, ts := d.packetAt(o.Pos)
		l.out.Event(o.FromClient, ts, &Problem{StreamOffset: o.Pos, Kind: o.Problem.String(), Message: o.Message})
		l.lose(o.FromClient, ts)
	}
}

// checkCert reports the client certificate once the handshake carried it
// (it may come out while the other direction is fed: records wait for the
// other direction's hello).
func (l *layer) checkCert(ts time.Time) {
	if l.certSent {
		return
	}
	in := l.c.Info()
	if len(in.ClientCertDER) == 0 && !in.ClientCertUnread {
		return
	}
	l.certSent = true
	if len(in.ClientCertDER) > 0 {
		dn, err := tlsdec.SubjectDN(in.ClientCertDER[0])
		if err == nil {
			l.out.Event(true, ts, &ClientCert{DN: dn})
			return
		}
		_, at := l.d[0].packetAt(in.ClientCertPos)
		l.out.Event(true, at, &Problem{StreamOffset: in.ClientCertPos, Kind: ProblemUnreadableCert,
			Message: "the client certificate's subject cannot be read (" + err.Error() + "): who the client is, is unknown"})
	}
	// A Certificate message that did not parse was reported by tlsdec.
	l.out.Event(true, ts, &ClientCert{Unreadable: true})
}
