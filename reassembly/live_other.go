//go:build !linux

package reassembly

import (
	"fmt"
	"io"
	"runtime"
)

// LiveOptions tunes OpenLive.
type LiveOptions struct {
	Snaplen int
	WriteTo io.Writer
}

// OpenLive needs Linux's AF_PACKET; cgo-free capture elsewhere is not built.
func OpenLive(iface string, opt LiveOptions) (Source, error) {
	return nil, fmt.Errorf("live capture on %s is only supported on Linux (this is %s); capture with tcpdump -w and open the file", iface, runtime.GOOS)
}
