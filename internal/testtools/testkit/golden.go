package testkit

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is the -update flag of every test binary that uses Golden. It is
// registered only in test binaries, so a program importing the builders
// gets no stray flag.
var update = func() *bool {
	if !testing.Testing() {
		return new(bool)
	}
	return flag.Bool("update", false, "rewrite the golden files from the current output")
}()

// Updating reports whether -update was given.
func Updating() bool { return *update }

// Golden compares got with the file at path, or with -update writes got
// there (creating its directory). A difference names the first line that
// differs; the files are compared as bytes, so they must not be converted
// by git (.gitattributes marks them -text).
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) == string(got) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			t.Errorf("%s differs at line %d (go test -update rewrites it; review the diff)\n got %q\nwant %q\n--- want\n%s\n--- got\n%s", path, i+1, gl, wl, want, got)
			return
		}
	}
}
