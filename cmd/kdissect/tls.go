package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kdissect/kdissect/dissect"
	"github.com/kdissect/kdissect/reassembly/tlslayer/tlsdec"
	"github.com/kdissect/kdissect/reassembly/tlslayer"
	"github.com/kdissect/kdissect/reassembly"
)

// fileList is a repeatable flag.
type fileList []string

func (l *fileList) String() string { return strings.Join(*l, ",") }
func (l *fileList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// loadKeyLog reads the --tls-keylog files. A live capture reads them
// again when a client random has no secrets yet: the clients write their
// key log while kdissect watches.
func (o *captureOpts) loadKeyLog() error {
	if len(o.tlsKeylogs) == 0 {
		return nil
	}
	k, err := tlsdec.LoadKeyLogFiles(o.tlsKeylogs...)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fmt.Errorf("--tls-keylog %s: %v", pe.Path, pe.Err)
		}
		return fmt.Errorf("--tls-keylog: %v", err)
	}
	k.SetAutoReload(o.iface != "")
	o.keys = k
	return nil
}

// warnKeyLog says once how many key log lines were not understood.
func (o *captureOpts) warnKeyLog(w io.Writer) {
	if o.keys != nil {
		if n := o.keys.Skipped(); n > 0 {
			fmt.Fprintf(w, "kdissect: --tls-keylog: skipped %s kdissect does not understand\n", plural(int64(n), "line"))
		}
	}
}

// tlsMeta is what a message's NDJSON "tls" object says of its connection.
type tlsMeta struct {
	version, cipher, sni string
}

func appendTLSJSON(b []byte, t *tlsMeta) []byte {
	b = append(b, `"tls":`...)
	if t == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"version":`...)
	b = dissect.AppendJSONString(b, t.version)
	b = append(b, `,"cipher":`...)
	b = dissect.AppendJSONString(b, t.cipher)
	b = append(b, `,"sni":`...)
	b = dissect.AppendJSONString(b, t.sni)
	return append(b, '}')
}

// layerEvent takes what the TLS layer reports.
func (s *session) layerEvent(e *reassembly.LayerEvent) {
	switch v := e.Value.(type) {
	case *tlslayer.Session:
		if v.Decrypted {
			if s.tls == nil {
				s.tls = map[uint64]*tlsMeta{}
			}
			s.tls[e.ConnID] = &tlsMeta{version: v.Version, cipher: v.Cipher, sni: v.SNI}
		}
		// A person reading text needs to hear of the sessions it cannot read.
		if !v.Decrypted || !s.text {
			s.lib.Pass(origin{event: e}, e.Time)
		}
	case *tlslayer.ClientCert:
		s.lib.SetTLSIdentity(e.ConnID, v.DN)
	case *tlslayer.Problem:
		s.malformed = true
		s.lib.Pass(origin{event: e}, e.Time)
	}
}

// appendLayerJSON writes a TLS layer event's NDJSON object from its name on.
func appendLayerJSON(b []byte, e *reassembly.LayerEvent) []byte {
	switch v := e.Value.(type) {
	case *tlslayer.Session:
		b = append(b, `tls_session","time":"`...)
		b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","src":`...)
		b = appendAddrJSON(b, e.Conn.Client)
		b = append(b, `,"dst":`...)
		b = appendAddrJSON(b, e.Conn.Server)
		for _, kv := range [][2]string{{"version", v.Version}, {"cipher", v.Cipher}, {"sni", v.SNI}, {"client_random", v.ClientRandom}} {
			b = append(b, `,"`+kv[0]+`":`...)
			b = dissect.AppendJSONString(b, kv[1])
		}
		b = append(b, `,"decrypted":`...)
		b = strconv.AppendBool(b, v.Decrypted)
		b = append(b, `,"reason":`...)
		if v.Decrypted {
			b = append(b, "null"...)
		} else {
			b = dissect.AppendJSONString(b, v.Reason)
		}
	case *tlslayer.Problem:
		b = append(b, `tls_problem"`...)
		b = appendCommonJSON(b, e.Time, e.Flow, v.StreamOffset)
		b = append(b, `,"problem":`...)
		b = dissect.AppendJSONString(b, v.Kind)
		b = append(b, `,"message":`...)
		b = dissect.AppendJSONString(b, v.Message)
	}
	return b
}

// appendLayerText writes a TLS layer event after the "!! TIME " lead.
func appendLayerText(b []byte, e *reassembly.LayerEvent) []byte {
	switch v := e.Value.(type) {
	case *tlslayer.Session:
		b = appendFlow(b, e.Flow)
		b = append(b, " TLS "...)
		b = append(b, dissect.Escape(v.Version)...)
		if v.Cipher != "" {
			b = append(b, ' ')
			b = append(b, dissect.Escape(v.Cipher)...)
		}
		if v.SNI != "" {
			b = append(b, " sni="...)
			b = append(b, dissect.Escape(v.SNI)...)
		}
		if v.Decrypted {
			b = append(b, ": decrypted"...)
		} else {
			b = append(b, ": not decrypted, "...)
			b = append(b, dissect.Escape(v.Reason)...)
		}
	case *tlslayer.Problem:
		b = appendFlowAt(b, e.Flow, v.StreamOffset)
		b = append(b, "TLS "...)
		b = append(b, v.Kind...)
		b = append(b, ": "...)
		b = append(b, dissect.Escape(v.Message)...)
	}
	return b
}
