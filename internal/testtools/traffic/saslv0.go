package traffic

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
)

// v0Proxy stands in front of kfake for what kfake cannot do itself.
//
// SaslHandshake v0: after it, Kafka takes the SASL tokens bare (a 4-byte
// length and the bytes, no Kafka header) and answers them the same way.
// kfake speaks only v1, so the proxy passes the handshake on as v1 (the two
// versions' bodies are the same), wraps each bare token in a
// SaslAuthenticate v0 request to kfake and hands the answer back bare. A
// refused login closes the connection, as Kafka does.
//
// OAUTHBEARER: kfake has no such mechanism. The proxy answers the
// handshake and the SaslAuthenticate itself as Kafka would (error 0, no
// bytes) once the token is a bearer token, and logs in to kfake as
// AdminUser with PLAIN on its own connection.
//
// With tlsCfg the proxy also terminates TLS. Afterwards it only copies
// bytes. The client's side of the proxy is what the capture shows; what
// the proxy says to kfake is not recorded.
type v0Proxy struct {
	ln      net.Listener
	backend string
	tlsCfg  *tls.Config

	mu     sync.Mutex
	conns  []net.Conn
	closed bool
	wg     sync.WaitGroup
}

func startV0Proxy(backend string, tlsCfg *tls.Config) (*v0Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &v0Proxy{ln: ln, backend: backend, tlsCfg: tlsCfg}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.serve(c)
			}()
		}
	}()
	return p, nil
}

func (p *v0Proxy) Addr() string { return p.ln.Addr().String() }

// track remembers a connection so Close can end it; false if closing.
func (p *v0Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns = append(p.conns, c)
	return true
}

// Close stops the proxy and waits for its connections to end.
func (p *v0Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns, p.closed = nil, true
	p.mu.Unlock()
	p.wg.Wait()
}

// readFrame reads a length-prefixed frame (a Kafka message or a bare SASL
// token), prefix included.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 1<<20 {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	b := make([]byte, 4+n)
	copy(b, size[:])
	_, err := io.ReadFull(r, b[4:])
	return b, err
}

// handshakeMechanism reads the mechanism of a SaslHandshake request frame
// (header v1: api, version, correlation ID, client ID; body: a string).
func handshakeMechanism(frame []byte) (string, bool) {
	b := frame[4:]
	if len(b) < 10 {
		return "", false
	}
	if n := int(int16(binary.BigEndian.Uint16(b[8:]))); n > 0 {
		if 10+n > len(b) {
			return "", false
		}
		b = b[10+n:]
	} else {
		b = b[10:]
	}
	if len(b) < 2 {
		return "", false
	}
	n := int(binary.BigEndian.Uint16(b))
	if 2+n > len(b) {
		return "", false
	}
	return string(b[2 : 2+n]), true
}

func (p *v0Proxy) serve(client net.Conn) {
	defer client.Close()
	if !p.track(client) {
		return
	}
	if p.tlsCfg != nil {
		client = tls.Server(client, p.tlsCfg)
		defer client.Close()
	}
	back, err := net.DialTimeout("tcp", p.backend, 5*time.Second)
	if err != nil {
		return
	}
	defer back.Close()
	if !p.track(back) {
		return
	}
	fmtr := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kdissect-v0-proxy"))
	for {
		req, err := readFrame(client)
		if err != nil || len(req) < 12 {
			return
		}
		v0 := binary.BigEndian.Uint16(req[4:]) == 17 && binary.BigEndian.Uint16(req[6:]) == 0
		mech, _ := handshakeMechanism(req)
		if binary.BigEndian.Uint16(req[4:]) == 17 && mech == MechOAuth {
			if !p.oauth(client, back, fmtr, req) {
				return
			}
			break
		}
		fwd := req
		if v0 {
			fwd = append([]byte(nil), req...)
			binary.BigEndian.PutUint16(fwd[6:], 1)
		}
		if _, err := back.Write(fwd); err != nil {
			return
		}
		resp, err := readFrame(back)
		if err != nil {
			return
		}
		if _, err := client.Write(resp); err != nil {
			return
		}
		// Handshake response: correlation ID, then ErrorCode.
		if !v0 || len(resp) < 10 || binary.BigEndian.Uint16(resp[8:]) != 0 {
			continue
		}
		if !p.bare(client, back, fmtr, mech) {
			return
		}
		break
	}
	// Authenticated: from here on plain Kafka both ways.
	done := make(chan struct{})
	go func() {
		io.Copy(back, client)
		back.Close()
		close(done)
	}()
	io.Copy(client, back)
	client.Close()
	<-done
}

// bare relays the bare tokens after a SaslHandshake v0; false if the login
// failed or a connection broke.
func (p *v0Proxy) bare(client, back net.Conn, fmtr *kmsg.RequestFormatter, mech string) bool {
	for i := range saslRounds(mech) {
		tok, err := readFrame(client)
		if err != nil {
			return false
		}
		au := kmsg.NewPtrSASLAuthenticateRequest()
		au.SetVersion(0)
		au.SASLAuthBytes = tok[4:]
		corr := int32(1<<30 + i)
		if _, err := back.Write(fmtr.AppendRequest(nil, au, corr)); err != nil {
			return false
		}
		ar, err := readFrame(back)
		if err != nil || len(ar) < 8 || int32(binary.BigEndian.Uint32(ar[4:])) != corr {
			return false // kfake closes the connection on a refused login
		}
		r := kmsg.NewPtrSASLAuthenticateResponse()
		r.SetVersion(0)
		if err := r.ReadFrom(ar[8:]); err != nil || r.ErrorCode != 0 {
			return false
		}
		out := binary.BigEndian.AppendUint32(nil, uint32(len(r.SASLAuthBytes)))
		if _, err := client.Write(append(out, r.SASLAuthBytes...)); err != nil {
			return false
		}
	}
	return true
}

// respond writes resp to w as the answer to correlation ID corr.
func respond(w io.Writer, corr int32, resp kmsg.Response) error {
	b := []byte{0, 0, 0, 0}
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if resp.IsFlexible() {
		b = append(b, 0) // response header v1: no tagged fields
	}
	b = resp.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	_, err := w.Write(b)
	return err
}

// oauth answers an OAUTHBEARER login itself (hs is the client's
// SaslHandshake request) and logs in to kfake as AdminUser; false if
// anything failed.
func (p *v0Proxy) oauth(client, back net.Conn, fmtr *kmsg.RequestFormatter, hs []byte) bool {
	hsVersion := int16(binary.BigEndian.Uint16(hs[6:]))
	hsCorr := int32(binary.BigEndian.Uint32(hs[8:]))
	hr := kmsg.NewPtrSASLHandshakeResponse()
	hr.SetVersion(hsVersion)
	hr.SupportedMechanisms = []string{MechPlain, MechScram256, MechScram512, MechOAuth}
	if hsVersion != 1 || respond(client, hsCorr, hr) != nil {
		return false
	}
	// The proxy's own login to kfake.
	bh := kmsg.NewPtrSASLHandshakeRequest()
	bh.SetVersion(1)
	bh.Mechanism = MechPlain
	ba := kmsg.NewPtrSASLAuthenticateRequest()
	ba.SetVersion(1)
	ba.SASLAuthBytes = []byte("\x00" + AdminUser + "\x00" + AdminPass)
	for i, req := range []kmsg.Request{bh, ba} {
		if _, err := back.Write(fmtr.AppendRequest(nil, req, int32(1<<30+i))); err != nil {
			return false
		}
		r, err := readFrame(back)
		if err != nil || len(r) < 10 || binary.BigEndian.Uint16(r[8:]) != 0 {
			return false
		}
	}
	// The client's SaslAuthenticate.
	f, err := readFrame(client)
	if err != nil {
		return false
	}
	got, err := parseRequest(f[4:])
	if err != nil || got.RequestErr != nil {
		return false
	}
	au, ok := got.Request.(*kmsg.SASLAuthenticateRequest)
	if !ok || !bytes.HasPrefix(au.SASLAuthBytes, []byte("n,")) || !bytes.Contains(au.SASLAuthBytes, []byte("\x01auth=Bearer ")) {
		return false
	}
	ar := kmsg.NewPtrSASLAuthenticateResponse()
	ar.SetVersion(au.Version)
	return respond(client, got.CorrelationID, ar) == nil
}

// bareSASL runs the token exchange after a SaslHandshake v0 on a raw
// connection: each token goes out bare and comes back bare.
func bareSASL(ctx context.Context, conn net.Conn, sess sasl.Session, msg []byte) error {
	for {
		out := binary.BigEndian.AppendUint32(nil, uint32(len(msg)))
		if _, err := conn.Write(append(out, msg...)); err != nil {
			return err
		}
		in, err := readFrame(conn)
		if err != nil {
			return fmt.Errorf("%w: %v", errAuthFailed, err)
		}
		done, next, err := sess.Challenge(in[4:])
		if err != nil {
			return fmt.Errorf("%w: %v", errAuthFailed, err)
		}
		if done {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		msg = next
	}
}

// scramForSarama lets sarama use franz-go's SCRAM client (sarama brings
// none of its own): sarama.SCRAMClient over a sasl.Session.
type scramForSarama struct {
	ctx     context.Context
	mech    string
	sess    sasl.Session
	first   []byte
	started bool
	done    bool
}

func (a *scramForSarama) Begin(user, pass, _ string) error {
	m := clientSpec{user: user, pass: pass, mech: a.mech}.mechanism()
	if m == nil {
		return errors.New("not a SCRAM mechanism: " + a.mech)
	}
	var err error
	a.sess, a.first, err = m.Authenticate(a.ctx, "")
	return err
}

func (a *scramForSarama) Step(challenge string) (string, error) {
	if !a.started {
		a.started = true
		return string(a.first), nil
	}
	done, next, err := a.sess.Challenge([]byte(challenge))
	a.done = done
	return string(next), err
}

func (a *scramForSarama) Done() bool { return a.done }
