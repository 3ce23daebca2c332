package main

import (
	"crypto/tls"
	"encoding/binary"
	"net"
	"sync"
)

// kfake answers a SaslHandshake v1 that it accepts with an empty mechanism
// list (it names them only when it refuses one), where Kafka lists every
// mechanism the listener enables. kafkajs checks the list and gives up, so
// with -sasl each connection's accepted handshake answers are rewritten to
// name kfake's three mechanisms; every other byte passes as it is.
var mechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// listener makes the broker's listener: TCP, then TLS when tls is set,
// then mechConn's rewriting when mechanisms is.
type listener struct {
	tls        *tls.Config
	mechanisms bool
}

func (c listener) listen(network, address string) (net.Listener, error) {
	l, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	if c.tls != nil {
		l = tls.NewListener(l, c.tls)
	}
	if c.mechanisms {
		l = mechListener{l}
	}
	return l, nil
}

type mechListener struct{ net.Listener }

func (l mechListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &mechConn{Conn: c, handshakes: map[uint32]bool{}}, nil
}

// mechConn notes the correlation ids of the SaslHandshake v1 requests it
// reads, and rewrites their answers when it writes them (kfake writes one
// whole response a Write).
type mechConn struct {
	net.Conn
	mu         sync.Mutex
	handshakes map[uint32]bool
	hdr        []byte // the frame being read: its size, api key, version and correlation id so far
	rest       int    // bytes of that frame's body still to come after hdr
}

func (c *mechConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	for b := p[:n]; len(b) > 0; {
		if c.rest > 0 {
			k := min(c.rest, len(b))
			c.rest -= k
			b = b[k:]
			continue
		}
		k := min(12-len(c.hdr), len(b))
		c.hdr = append(c.hdr, b[:k]...)
		b = b[k:]
		if len(c.hdr) < 12 {
			continue
		}
		size := int(binary.BigEndian.Uint32(c.hdr))
		key, ver := binary.BigEndian.Uint16(c.hdr[4:]), binary.BigEndian.Uint16(c.hdr[6:])
		if key == 17 && ver == 1 {
			c.handshakes[binary.BigEndian.Uint32(c.hdr[8:])] = true
		}
		c.rest, c.hdr = max(size-8, 0), c.hdr[:0]
	}
	return n, err
}

func (c *mechConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	corr := uint32(0)
	ok := len(p) == 14
	if ok {
		corr = binary.BigEndian.Uint32(p[4:])
		// error code 0 and an empty array: an accepted handshake
		ok = c.handshakes[corr] && binary.BigEndian.Uint16(p[8:]) == 0 && binary.BigEndian.Uint32(p[10:]) == 0
		delete(c.handshakes, corr)
	}
	c.mu.Unlock()
	if !ok {
		return c.Conn.Write(p)
	}
	out := binary.BigEndian.AppendUint32(nil, 0)
	out = binary.BigEndian.AppendUint32(out, corr)
	out = append(out, 0, 0)
	out = binary.BigEndian.AppendUint32(out, uint32(len(mechanisms)))
	for _, m := range mechanisms {
		out = binary.BigEndian.AppendUint16(out, uint16(len(m)))
		out = append(out, m...)
	}
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
