package hugepages

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// big makes this test binary's .bss hold whole huge pages, as kdissect's
// does (about 40 MB).
var big [8 << 20]byte

// TestBSSAdvised checks, in this process whose init advised it, that the
// kernel marked the mapping of .bss for huge pages ("hg" in smaps'
// VmFlags), wherever transparent huge pages can be asked for.
func TestBSSAdvised(t *testing.T) {
	big[0] = 1
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		// Nothing to ask for: the advice must then be harmless, which
		// reaching this line shows.
		t.Logf("transparent huge pages off here (%q, %v)", mode, err)
		return
	}
	// The advice splits the mapping: the whole huge pages of it are the
	// advised part, beginning at the first one after anchor.
	at := (uintptr(unsafe.Pointer(&anchor)) + hugePage - 1) &^ (hugePage - 1)
	flags, err := vmFlags(at)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the mapping of .bss at %#x has VmFlags %q, without hg", at, flags)
	}
}

// vmFlags reads the VmFlags of the mapping holding addr from
// /proc/self/smaps.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := mappingOf(addr, []byte(line)); ok && lo <= addr && addr < hi {
			in = true
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	return "", fmt.Errorf("no mapping of %#x in /proc/self/smaps (%v)", addr, sc.Err())
}
