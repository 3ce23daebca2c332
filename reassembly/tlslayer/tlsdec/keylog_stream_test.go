//go:build linux

// FIFOs, pipes and /dev/fd: Linux polls them, so a read waiting on one ends with its context.

package tlsdec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileKeyLog is a key log as an attacker or a broken tool writes one: junk, a line far longer
// than any key log line in the middle, CRLF, a NUL, and a last line without its newline.
func hostileKeyLog() string {
	return strings.Join([]string{
		"# junk first",
		"CLIENT_RANDOM " + cr1 + " " + s48 + "\r",
		strings.Repeat("J", 300_000), // longer than the read buffer: skipped as it is read
		"\x00\x00 garbage \xff",
		"CLIENT_RANDOM " + cr1 + " " + s48 + " extra", // four fields
		"CLIENT_HANDSHAKE_TRAFFIC_SECRET " + cr2 + " " + s32,
		"RSA Session-ID:0a0b0c Master-Key:" + s48,
		"SERVER_TRAFFIC_SECRET_0 " + cr2 + " " + s32, // the last line, no newline
	}, "\n")
}

func checkHostileKeyLog(t *testing.T, what string, k *KeyLog) {
	t.Helper()
	var r1, r2 [32]byte
	copy(r1[:], unhex(t, cr1))
	copy(r2[:], unhex(t, cr2))
	s1, ok1 := k.get(r1, nil, nil)
	s2, ok2 := k.get(r2, nil, nil)
	_, ok3 := k.get([32]byte{}, []byte{0x0a, 0x0b, 0x0c}, nil)
	if k.Len() != 2 || k.Skipped() != 3 || !ok1 || !ok2 || !ok3 || s1.master == nil || s2.clientHS == nil || s2.serverApp == nil {
		t.Errorf("%s: Len %d, Skipped %d; secrets %v %v %v, last line read %v", what, k.Len(), k.Skipped(), ok1, ok2, ok3, s2.serverApp != nil)
	}
}

// A FIFO and the pipe of a process substitution (/dev/fd/N) give exactly what a file of the same
// bytes gives, written in small pieces or all at once.
func TestKeyLogStreamsReadAsTheFile(t *testing.T) {
	content := hostileKeyLog()
	dir := t.TempDir()
	file := filepath.Join(dir, "keys.log")
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := LoadKeyLogs(context.Background(), KeyLogOptions{}, file)
	if err != nil {
		t.Fatal(err)
	}
	checkHostileKeyLog(t, "file", k)

	write := func(w io.WriteCloser) {
		defer w.Close()
		for p := content; len(p) > 0; {
			n := min(len(p), 777)
			if _, err := io.WriteString(w, p[:n]); err != nil {
				return
			}
			p = p[n:]
		}
	}
	fifo := filepath.Join(dir, "keys.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			write(w)
		}
	}()
	k, err = LoadKeyLogs(context.Background(), KeyLogOptions{Follow: true}, fifo)
	if err != nil {
		t.Fatal(err)
	}
	checkHostileKeyLog(t, "FIFO", k)
	// In a live capture a miss reads the files again: a FIFO is not opened again (that would wait
	// for another writer, holding up the capture).
	reloaded := make(chan bool)
	go func() { g, _ := k.Reload(); reloaded <- g }()
	select {
	case g := <-reloaded:
		if g {
			t.Error("Reload read more from a FIFO read to its end")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Reload waits on the FIFO")
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go write(w)
	k, err = LoadKeyLogs(context.Background(), KeyLogOptions{}, fmt.Sprintf("/dev/fd/%d", r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	checkHostileKeyLog(t, "pipe", k)
}

// Ctrl-C must end a run blocked on a key log: a FIFO nobody writes (the open waits), and a pipe
// whose writer says nothing (the read waits).
func TestKeyLogWaitEndsWithContext(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "keys.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	w.WriteString("CLIENT_RANDOM " + cr1 + " " + s48 + "\n") // then silence
	for name, path := range map[string]string{"FIFO without a writer": fifo, "silent pipe": fmt.Sprintf("/dev/fd/%d", r.Fd())} {
		before := runtime.NumGoroutine()
		cause := errors.New("interrupt signal received")
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(200*time.Millisecond, func() { cancel(cause) })
		start := time.Now()
		k, err := LoadKeyLogs(ctx, KeyLogOptions{}, path)
		var pe *os.PathError
		if k != nil || !errors.As(err, &pe) || pe.Path != path || !errors.Is(err, cause) {
			t.Errorf("%s: %v, %v; want a PathError for %s saying %v", name, k, err, path, cause)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: returned after %v", name, d)
		}
		// The waiting open was released, not left blocked on a thread.
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			t.Errorf("%s: %d goroutines left, %d before", name, n, before)
		}
	}
}

// A live capture reads a file again on a miss: a FIFO put in its place must not hold the capture
// up, and a line longer than any key log line, still being written, is not held either.
func TestKeyLogReloadNeverWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.log")
	long := strings.Repeat("x", 3*keyLogBuffer)
	os.WriteFile(path, []byte("CLIENT_RANDOM "+cr1+" "+s48+"\n"+long), 0o600)
	k, err := LoadKeyLogs(context.Background(), KeyLogOptions{Follow: true}, path)
	if err != nil || k.Len() != 1 || k.Skipped() != 1 {
		t.Fatalf("Len %d, Skipped %d, %v", k.Len(), k.Skipped(), err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(long + "\nCLIENT_RANDOM " + cr2 + " " + s48 + "\n") // the long line ends, a good one follows
	f.Close()
	if grew, err := k.Reload(); !grew || err != nil || k.Len() != 2 || k.Skipped() != 1 {
		t.Errorf("after the long line: grew %v, %v, Len %d, Skipped %d", grew, err, k.Len(), k.Skipped())
	}
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { k.Reload(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Reload waits for a writer of the FIFO now at the path")
	}
}

// A file is read as a stream too: a first line of 200 MB (a sparse file: nothing on disk) costs no
// more than the read buffer, and the secret after it is read, in a live capture (Follow) as well.
func TestKeyLogFileIsReadAsAStream(t *testing.T) {
	for _, follow := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "sparse.keylog")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(200 << 20)
		f.WriteAt([]byte("\nCLIENT_RANDOM "+cr1+" "+s48+"\n"), 200<<20)
		f.Close()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		k, err := LoadKeyLogs(context.Background(), KeyLogOptions{Follow: follow}, path)
		runtime.ReadMemStats(&after)
		if err != nil || k.Len() != 1 || k.Skipped() != 1 {
			t.Errorf("follow %v: Len %d, Skipped %d, %v", follow, k.Len(), k.Skipped(), err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
			t.Errorf("follow %v: reading 200 MB allocated %d bytes", follow, got)
		}
	}
}
