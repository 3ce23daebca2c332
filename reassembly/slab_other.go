//go:build !unix

package reassembly

// Without mmap the slabs live on the heap; they are still reused.
func mapSlab(n int) []byte { return make([]byte, n) }

func unmapSlab([]byte) {}
