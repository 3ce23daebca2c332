package tlsdec

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
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

// maxKeyLogLine bounds one line; real lines are under 250 bytes. A longer one is skipped as it is
// read, never held whole.
const maxKeyLogLine = 4096

// keyLogBuffer is the read buffer of a key log: lines are cut from it, so no line longer than it
// is ever held.
const keyLogBuffer = 64 << 10

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

// keyLogFile is a regular key log file, read again by Reload. A stream (a FIFO, the pipe of a
// process substitution, a terminal) is not kept: it is read once, to its end, as what was read from
// it cannot be read again, and opening a FIFO anew would wait for another writer.
type keyLogFile struct {
	path   string
	off    int64    // bytes parsed so far (up to the last complete line)
	inLong bool     // off is inside a line too long to keep, counted as skipped: its rest is skipped
	fh     *os.File // the file as last opened, kept for when path can no longer be opened
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

// KeyLogOptions say how LoadKeyLogs reads its files.
type KeyLogOptions struct {
	// Follow: the files are still being written (a live capture). A last line without its newline
	// waits for it, and a connection whose client random has no secrets reads what was appended to
	// the regular files since (SetAutoReload).
	Follow bool
}

// LoadKeyLogs reads key log files and remembers the regular ones for Reload. Each is read as a
// stream, a buffer at a time: memory follows the secrets kept, not the size of the file, and a line
// longer than any key log line is skipped, never held. A path that is not a regular file (a FIFO,
// the pipe of `--tls-keylog <(cmd)`, /dev/stdin) is read to its end, once, and gives exactly what a
// file of the same bytes gives; opening a FIFO waits for its writer.
//
// When ctx is done, waiting for a writer or reading stops at once: the error is an *os.PathError
// whose Err is context.Cause(ctx) (errors.Is(err, context.Canceled) holds).
func LoadKeyLogs(ctx context.Context, opts KeyLogOptions, paths ...string) (*KeyLog, error) {
	k, err := loadKeyLogs(ctx, !opts.Follow, paths)
	if err != nil {
		return nil, err
	}
	k.autoReload = opts.Follow
	return k, nil
}

// LoadKeyLogFiles parses the files and remembers them for Reload, as LoadKeyLogs does without a
// context. A regular file's last line without its newline is left for Reload, as if it were being
// written: call SetAutoReload to follow the files.
func LoadKeyLogFiles(paths ...string) (*KeyLog, error) {
	return loadKeyLogs(context.Background(), false, paths)
}

func loadKeyLogs(ctx context.Context, complete bool, paths []string) (*KeyLog, error) {
	k := NewKeyLog()
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.Mode().IsRegular() {
			if err := k.readStream(ctx, p); err != nil {
				return nil, err
			}
			continue
		}
		f := &keyLogFile{path: p}
		k.files = append(k.files, f)
		if _, err := k.readFile(ctx, f, complete); err != nil {
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

// Reload reads what was appended to the regular key log files since the last read (all of a file
// that shrank, since it was replaced). It reports whether any new line was read. A stream was read
// to its end when it was loaded: it is not read again.
func (k *KeyLog) Reload() (bool, error) {
	k.mu.RLock()
	files := k.files
	k.mu.RUnlock()
	grew := false
	for _, f := range files {
		g, err := k.readFile(context.Background(), f, false)
		if err != nil {
			return grew, err
		}
		grew = grew || g
	}
	return grew, nil
}

// readFile reads a regular file from where the last read ended. complete says that the file is
// whole: its last line counts without its newline.
func (k *KeyLog) readFile(ctx context.Context, f *keyLogFile, complete bool) (bool, error) {
	// The path is opened anew each time, so that a replaced file is read;
	// when it can no longer be opened (a live capture parses as nobody once
	// it has started), the file opened before goes on being read. It is
	// opened without blocking: a FIFO put in the file's place must not
	// stop the capture until a writer comes.
	k.fileMu.Lock()
	defer k.fileMu.Unlock()
	fh, err := os.OpenFile(f.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		if st, serr := fh.Stat(); serr != nil || !st.Mode().IsRegular() {
			fh.Close()
			fh, err = nil, errors.New("no longer a regular file")
		}
	}
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
	off, inLong := f.off, f.inLong
	if st.Size() < off {
		off, inLong = 0, false
	}
	k.mu.Unlock()
	if st.Size() == off {
		return false, nil
	}
	n, err := k.scan(ctx, io.NewSectionReader(fh, off, st.Size()-off), &inLong, complete)
	if err != nil {
		return false, pathError(ctx, "read", f.path, err)
	}
	k.mu.Lock()
	f.off, f.inLong = off+n, inLong
	k.mu.Unlock()
	return n > 0, nil
}

// readStream reads a FIFO or pipe to its end. Its open waits for a writer, and its reads for data:
// both give up when ctx is done.
func (k *KeyLog) readStream(ctx context.Context, path string) error {
	fh, err := openWaiting(ctx, path)
	if err != nil {
		return pathError(ctx, "open", path, err)
	}
	defer fh.Close()
	// Linux polls FIFOs and pipes: a deadline in the past ends a read
	// that waits. Files that are not polled (a device; a FIFO on
	// Darwin) are checked between reads.
	stop := context.AfterFunc(ctx, func() { fh.SetReadDeadline(time.Now()) })
	defer stop()
	var inLong bool
	if _, err := k.scan(ctx, fh, &inLong, true); err != nil {
		return pathError(ctx, "read", path, err)
	}
	return nil
}

// openWaiting opens path for reading, which for a FIFO waits until a writer opens it, and returns
// when ctx is done even while it waits.
func openWaiting(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
	}
	// The open waits for a writer: be one for a moment, so that it
	// returns (rather than leave a thread blocked), and close what it
	// opened.
	if st, err := os.Stat(path); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
	go func() {
		if o := <-done; o.f != nil {
			o.f.Close()
		}
	}()
	return nil, context.Cause(ctx)
}

// pathError names the file of a read error, and says why when ctx ended it.
func pathError(ctx context.Context, op, path string, err error) error {
	if ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// Add reads more key log lines into k, to the end of r (the last line also without its newline).
func (k *KeyLog) Add(r io.Reader) error {
	var inLong bool
	_, err := k.scan(context.Background(), r, &inLong, true)
	return err
}

// scan parses the lines of r until its end and returns the bytes it consumed: every complete line,
// and the last one without a newline when complete; otherwise that line is left to be read again
// once its newline has come (unless it is already too long to keep). A line longer than
// maxKeyLogLine is counted as skipped once and its bytes passed over as they are read; *inLong says
// that the bytes before r ended inside such a line, and says so of r's end on return.
func (k *KeyLog) scan(ctx context.Context, r io.Reader, inLong *bool, complete bool) (int64, error) {
	br := bufio.NewReaderSize(r, keyLogBuffer)
	done := ctx.Done() // nil for context.Background: the check below costs nothing then
	var n int64
	for {
		select {
		case <-done:
			return n, ctx.Err()
		default:
		}
		line, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			n += int64(len(line))
			if *inLong {
				*inLong = false // the end of a long line
			} else if len(line) > maxKeyLogLine+1 {
				k.skip()
			} else {
				k.addLine(line[:len(line)-1])
			}
		case errors.Is(err, bufio.ErrBufferFull):
			n += int64(len(line))
			if !*inLong {
				*inLong = true
				k.skip()
			}
		case errors.Is(err, io.EOF):
			switch {
			case len(line) == 0:
			case *inLong:
				n += int64(len(line))
			case len(line) > maxKeyLogLine:
				n += int64(len(line))
				*inLong = !complete
				k.skip()
			case complete:
				n += int64(len(line))
				k.addLine(line)
			}
			return n, nil
		default:
			return n, err
		}
	}
}

func (k *KeyLog) skip() {
	k.mu.Lock()
	k.skipped++
	k.mu.Unlock()
}

func (k *KeyLog) addLine(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] == '#' {
		return
	}
	var buf [4][]byte
	if !k.addFields(fields(line, buf[:0])) {
		k.skip()
	}
}

// fields splits a line at spaces and tabs into at most cap(dst) fields (a key log line has three),
// without allocating: a key log of junk costs no garbage per line.
func fields(line []byte, dst [][]byte) [][]byte {
	for len(line) > 0 && len(dst) < cap(dst) {
		i := bytes.IndexFunc(line, unicode.IsSpace)
		if i < 0 {
			return append(dst, line)
		}
		if i > 0 {
			dst = append(dst, line[:i])
		}
		_, n := utf8.DecodeRune(line[i:])
		line = line[i+n:]
	}
	if len(line) > 0 {
		dst = dst[:cap(dst)] // more fields than asked for: not a key log line
	}
	return dst
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
