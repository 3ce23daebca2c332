//go:build !linux

package main

import "errors"

func startPcapgo(iface string, port int, path string) (capturer, error) {
	return nil, errors.New("-capture=pcapgo works on Linux only")
}
