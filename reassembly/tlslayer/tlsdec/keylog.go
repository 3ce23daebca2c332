package tlsdec

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"io"
	"os"
	"sync"
)

// secrets are what a key log holds for one client random.
type secrets struct {
	master      []byte // CLIENT_RANDOM: TLS 1.2 master secret
	clientEarly []byte // CLIENT_EARLY_TRAFFIC_SECRET
	clientHS    []byte // CLIENT_HANDSHAKE_TRAFFIC_SECRET
	serverHS    []byte // SERVER_HANDSHAKE_TRAFFIC_SECRET
	clientApp   []byte // CLIENT_TRAFFIC_SECRET_0
	serverApp   []byte // SERVER_TRAFFIC_SECRET_0
	exporter    []byte // EXPORTER_SECRET (kept only to know the line was understood)
}

// maxKeyLogLine bounds one line; real lines are under 250 bytes.
const maxKeyLogLine = 4096

// KeyLog holds NSS key log secrets, by client random (and TLS 1.2 master secrets also by session id,
// for the old "RSA Session-ID:… Master-Key:…" lines some Java agents write). It is safe for concurrent
// use: lookups may run while Add or Reload read more lines.
type KeyLog struct {
	mu         sync.RWMutex
	byRandom   map[[32]byte]*secrets
	bySession  map[string][]byte // TLS 1.2 master secrets by session id
	byTicket   map[string][]byte // TLS 1.2 master secrets by session ticket
	learned    int
	skipped    int
	files      []*keyLogFile
	autoReload bool
	fileMu     sync.Mutex // one reader of the files at a time
}

type keyLogFile struct {
	path string
	off  int64    // bytes parsed so far (up to the last complete line)
	fh   *os.File // the file as last opened, kept for when path can no longer be opened
}

// NewKeyLog returns an empty key log.
func NewKeyLog() *KeyLog {
	return &KeyLog{byRandom: map[[32]byte]*secrets{}, bySession: map[string][]byte{}, byTicket: map[string][]byte{}}
}

// ParseKeyLog reads a key log in the NSS format. Lines it does not understand are skipped and
// counted (Skipped); only a read error is an error.
func ParseKeyLog(r io.Reader) (*KeyLog, error) {
	k := NewKeyLog()
	if err := k.Add(r); err != nil {
		return nil, err
	}
	return k, nil
}

// LoadKeyLogFiles parses the files and remembers them for Reload.
func LoadKeyLogFiles(paths ...string) (*KeyLog, error) {
	k := NewKeyLog()
	for _, p := range paths {
		f := &keyLogFile{path: p}
		k.files = append(k.files, f)
		if _, err := k.readFile(f); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// SetAutoReload makes a connection whose client random has no secrets read the key log files again
// (only what was appended since the last read) before it gives up: for live capture, where the
// application writes its key log while kdissect already watches the wire.
func (k *KeyLog) SetAutoReload(on bool) {
	k.mu.Lock()
	k.autoReload = on
	k.mu.Unlock()
}

// Reload reads what was appended to the key log files since the last read (all of a file that
// shrank, since it was replaced). It reports whether any new line was read.
func (k *KeyLog) Reload() (bool, error) {
	k.mu.RLock()
	files := k.files
	k.mu.RUnlock()
	grew := false
	for _, f := range files {
		g, err := k.readFile(f)
		if err != nil {
			return grew, err
		}
		grew = grew || g
	}
	return grew, nil
}

func (k *KeyLog) readFile(f *keyLogFile) (bool, error) {
	// The path is opened anew each time, so that a replaced file is read;
	// when it can no longer be opened (a live capture parses as nobody once
	// it has started), the file opened before goes on being read.
	k.fileMu.Lock()
	defer k.fileMu.Unlock()
	fh, err := os.Open(f.path)
	switch {
	case err == nil:
		if f.fh != nil {
			f.fh.Close()
		}
		f.fh = fh
	case f.fh != nil:
		fh = f.fh
	default:
		return false, err
	}
	st, err := fh.Stat()
	if err != nil {
		return false, err
	}
	k.mu.Lock()
	off := f.off
	if st.Size() < off {
		off = 0
	}
	k.mu.Unlock()
	if st.Size() == off {
		return false, nil
	}
	data, err := io.ReadAll(io.NewSectionReader(fh, off, st.Size()-off))
	if err != nil {
		return false, err
	}
	// A writer may be in the middle of a line: parse up to the last newline only.
	end := bytes.LastIndexByte(data, '\n') + 1
	if end == 0 {
		return false, nil
	}
	if err := k.Add(bytes.NewReader(data[:end])); err != nil {
		return false, err
	}
	k.mu.Lock()
	f.off = off + int64(end)
	k.mu.Unlock()
	return true, nil
}

// Add reads more key log lines into k.
func (k *KeyLog) Add(r io.Reader) error {
	br := bufio.NewReaderSize(r, maxKeyLogLine)
	for {
		line, isPrefix, err := br.ReadLine()
		if isPrefix {
			// Far longer than any key log line: skip the rest of it.
			for isPrefix && err == nil {
				_, isPrefix, err = br.ReadLine()
			}
			k.mu.Lock()
			k.skipped++
			k.mu.Unlock()
		} else if len(line) > 0 || err == nil {
			k.addLine(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (k *KeyLog) addLine(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] == '#' {
		return
	}
	fields := bytes.Fields(line)
	if !k.addFields(fields) {
		k.mu.Lock()
		k.skipped++
		k.mu.Unlock()
	}
}

func (k *KeyLog) addFields(f [][]byte) bool {
	if len(f) == 3 && string(f[0]) == "RSA" &&
		bytes.HasPrefix(f[1], []byte("Session-ID:")) && bytes.HasPrefix(f[2], []byte("Master-Key:")) {
		id, err1 := hex.DecodeString(string(f[1][len("Session-ID:"):]))
		ms, err2 := hex.DecodeString(string(f[2][len("Master-Key:"):]))
		if err1 != nil || err2 != nil || len(id) == 0 || len(id) > 32 || len(ms) != 48 {
			return false
		}
		k.mu.Lock()
		k.bySession[string(id)] = ms
		k.mu.Unlock()
		return true
	}
	if len(f) != 3 {
		return false
	}
	var cr [32]byte
	if hex.DecodedLen(len(f[1])) != 32 {
		return false
	}
	if _, err := hex.Decode(cr[:], f[1]); err != nil {
		return false
	}
	secret, err := hex.DecodeString(string(f[2]))
	if err != nil {
		return false
	}
	label := string(f[0])
	if label == "CLIENT_RANDOM" {
		if len(secret) != 48 {
			return false
		}
	} else if len(secret) != 32 && len(secret) != 48 {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.byRandom[cr]
	if s == nil {
		s = &secrets{}
	}
	switch label {
	case "CLIENT_RANDOM":
		s.master = secret
	case "CLIENT_EARLY_TRAFFIC_SECRET":
		s.clientEarly = secret
	case "CLIENT_HANDSHAKE_TRAFFIC_SECRET":
		s.clientHS = secret
	case "SERVER_HANDSHAKE_TRAFFIC_SECRET":
		s.serverHS = secret
	case "CLIENT_TRAFFIC_SECRET_0":
		s.clientApp = secret
	case "SERVER_TRAFFIC_SECRET_0":
		s.serverApp = secret
	case "EXPORTER_SECRET", "EARLY_EXPORTER_SECRET":
		s.exporter = secret
	default:
		return false
	}
	k.byRandom[cr] = s
	return true
}

// Skipped is the number of lines that were not understood (comments and blank lines not counted).
func (k *KeyLog) Skipped() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.skipped
}

// Len is the number of client randoms with at least one secret.
func (k *KeyLog) Len() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.byRandom)
}

// Merge adds the secrets of others to k (a later secret of the same kind wins), with their files for
// Reload and their skipped-line counts.
func (k *KeyLog) Merge(others ...*KeyLog) {
	for _, o := range others {
		if o == nil || o == k {
			continue
		}
		o.mu.RLock()
		k.mu.Lock()
		for cr, s := range o.byRandom {
			d := k.byRandom[cr]
			if d == nil {
				d = &secrets{}
				k.byRandom[cr] = d
			}
			mergeSecret(&d.master, s.master)
			mergeSecret(&d.clientEarly, s.clientEarly)
			mergeSecret(&d.clientHS, s.clientHS)
			mergeSecret(&d.serverHS, s.serverHS)
			mergeSecret(&d.clientApp, s.clientApp)
			mergeSecret(&d.serverApp, s.serverApp)
			mergeSecret(&d.exporter, s.exporter)
		}
		for id, ms := range o.bySession {
			k.bySession[id] = ms
		}
		for t, ms := range o.byTicket {
			k.byTicket[t] = ms
		}
		k.skipped += o.skipped
		k.files = append(k.files, o.files...)
		k.autoReload = k.autoReload || o.autoReload
		k.mu.Unlock()
		o.mu.RUnlock()
	}
}

func mergeSecret(dst *[]byte, src []byte) {
	if src != nil {
		*dst = src
	}
}

// lookup returns a copy of the secrets for a client random, reading the files again first when
// auto-reload is on and nothing is known yet.
func (k *KeyLog) lookup(cr [32]byte, sessionID, ticket []byte) (secrets, bool) {
	if k == nil {
		return secrets{}, false
	}
	s, ok := k.get(cr, sessionID, ticket)
	if ok {
		return s, true
	}
	k.mu.RLock()
	auto := k.autoReload && len(k.files) > 0
	k.mu.RUnlock()
	if auto {
		if grew, _ := k.Reload(); grew {
			return k.get(cr, sessionID, ticket)
		}
	}
	return s, false
}

func (k *KeyLog) get(cr [32]byte, sessionID, ticket []byte) (secrets, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	var out secrets
	if s := k.byRandom[cr]; s != nil {
		out = *s
	}
	if out.master == nil && len(sessionID) > 0 {
		out.master = k.bySession[string(sessionID)]
	}
	if out.master == nil && len(ticket) > 0 {
		out.master = k.byTicket[string(ticket)]
	}
	ok := out.master != nil || out.clientHS != nil || out.serverHS != nil ||
		out.clientApp != nil || out.serverApp != nil || out.clientEarly != nil
	return out, ok
}

// maxLearned bounds the session ids and tickets remembered from decrypted connections.
const maxLearned = 1 << 16

// learn remembers the master secret of a decrypted TLS 1.2 session under its session id or ticket:
// a later connection resuming it has a new client random, for which stacks such as Go's write no key
// log line.
func (k *KeyLog) learn(sessionID, ticket, master []byte) {
	if k == nil || master == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.learned >= maxLearned {
		return
	}
	if len(sessionID) > 0 && k.bySession[string(sessionID)] == nil {
		k.bySession[string(sessionID)] = master
		k.learned++
	}
	if len(ticket) > 0 && k.byTicket[string(ticket)] == nil {
		k.byTicket[string(ticket)] = master
		k.learned++
	}
}
