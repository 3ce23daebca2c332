//go:build !linux

package capture

// drop has nothing to do where live capture is not built (see
// reassembly.OpenLive): no socket is ever opened with privileges.
func (d *dropTarget) drop() error { return nil }
