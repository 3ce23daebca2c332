package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// printVersion writes "kdissect VERSION (revision REV[, modified], TIME)
// GOVERSION" from what the Go toolchain stamped into the binary: the
// module version (a pseudo-version from the VCS, or "(devel)") and the
// commit it was built from, so a bug report names the exact code.
func printVersion(w io.Writer) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(w, "kdissect (no build information)")
		return
	}
	var rev, when string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	vcs := "revision unknown"
	if rev != "" {
		vcs = "revision " + rev
		if modified {
			vcs += ", modified"
		}
		if when != "" {
			vcs += ", " + when
		}
	}
	fmt.Fprintf(w, "kdissect %s (%s) %s\n", version, vcs, bi.GoVersion)
}
