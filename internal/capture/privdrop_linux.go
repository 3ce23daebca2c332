//go:build linux

package capture

import (
	"fmt"
	"os"
	"syscall"
)

// drop makes the process d: supplementary groups, then gid, then uid (in
// that order: after setuid there is no right left to change the others).
// Go applies each to every thread of the process on Linux. A process that
// already is d has nothing to do; one that is neither d nor root cannot
// become d.
func (d *dropTarget) drop() error {
	if d == nil || os.Geteuid() == d.uid && os.Getuid() == d.uid && os.Getgid() == d.gid && os.Getegid() == d.gid {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("--user %s: only root can switch to another user", d.name)
	}
	if err := syscall.Setgroups(d.groups); err != nil {
		return fmt.Errorf("dropping privileges to %s: setgroups: %v", d.name, err)
	}
	if err := syscall.Setgid(d.gid); err != nil {
		return fmt.Errorf("dropping privileges to %s: setgid: %v", d.name, err)
	}
	if err := syscall.Setuid(d.uid); err != nil {
		return fmt.Errorf("dropping privileges to %s: setuid: %v", d.name, err)
	}
	// Parsing as root by mistake is worse than not capturing.
	if d.uid != 0 && (os.Geteuid() == 0 || syscall.Setuid(0) == nil) {
		return fmt.Errorf("dropping privileges to %s: still able to become root", d.name)
	}
	return nil
}
