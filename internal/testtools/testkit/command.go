package testkit

import (
	"os"
	"os/exec"
	"testing"
)

// NeedCommand finds the program name that a test runs. Without it the test
// skips on a developer's machine, but fails in CI (CI=true), which
// installs it (.ci/run): a CI that silently skipped the test would prove
// nothing.
func NeedCommand(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found in CI: .ci/run must install it (%v)", name, err)
		}
		t.Skipf("%s not installed: %v", name, err)
	}
	return p
}
