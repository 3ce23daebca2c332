package capture

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
)

// defaultUser is who a live capture started as root parses packets as,
// like tcpdump -Z's default.
const defaultUser = "nobody"

// dropTarget is the user a live capture becomes once its socket, filter and
// -w file are open: the dissectors then parse hostile packets without root
// and without any capability (setuid from root to another uid clears them).
type dropTarget struct {
	name     string
	uid, gid int
	groups   []int // supplementary groups, as initgroups would set them
}

// resolveUser looks --user up before anything is opened, so that a typo
// costs nothing. With no --user, root drops to nobody and anyone else has
// nothing to drop: nil.
func resolveUser(name string) (*dropTarget, error) {
	if name == "" {
		if os.Geteuid() != 0 {
			return nil, nil
		}
		name = defaultUser
	}
	u, err := user.Lookup(name)
	if err != nil {
		var unknown user.UnknownUserError
		switch {
		case errors.As(err, &unknown) && name == defaultUser:
			return nil, fmt.Errorf("no user %q to drop root privileges to while parsing: give --user NAME", name)
		case errors.As(err, &unknown):
			return nil, fmt.Errorf("--user %s: no such user", name)
		}
		return nil, fmt.Errorf("--user %s: %v", name, err)
	}
	d := &dropTarget{name: name}
	if d.uid, err = strconv.Atoi(u.Uid); err != nil {
		return nil, fmt.Errorf("--user %s: uid %q is not a number", name, u.Uid)
	}
	if d.gid, err = strconv.Atoi(u.Gid); err != nil {
		return nil, fmt.Errorf("--user %s: gid %q is not a number", name, u.Gid)
	}
	d.groups = []int{d.gid}
	if ids, err := u.GroupIds(); err == nil {
		d.groups = d.groups[:0]
		for _, id := range ids {
			if g, err := strconv.Atoi(id); err == nil {
				d.groups = append(d.groups, g)
			}
		}
	}
	return d, nil
}
