//go:build unix

package reassembly

import "syscall"

// mapSlab maps n bytes of anonymous memory outside the Go heap, or
// returns nil (the caller then uses the heap).
func mapSlab(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return b
}

func unmapSlab(b []byte) { syscall.Munmap(b) }
