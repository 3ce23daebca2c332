package hugepages

import (
	"syscall"
	"unsafe"
)

// anchor is a variable of .bss: the mapping holding it is the one advised.
var anchor [8]uintptr

const hugePage = 2 << 20

func init() {
	var buf [32 << 10]byte // /proc/self/maps of a Go binary at start-up: a few kB
	lo, hi, ok := mappingOf(uintptr(unsafe.Pointer(&anchor)), readMaps(buf[:]))
	if !ok {
		return
	}
	// Only whole huge pages inside the mapping can be huge.
	lo = (lo + hugePage - 1) &^ (hugePage - 1)
	hi &^= hugePage - 1
	if lo < hi {
		// Raw addresses: the range is no Go object.
		syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_HUGEPAGE)
	}
}

// readMaps reads /proc/self/maps into buf; a failure leaves it empty.
func readMaps(buf []byte) []byte {
	fd, err := syscall.Open("/proc/self/maps", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		k, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || k <= 0 {
			break
		}
		n += k
	}
	return buf[:n]
}
