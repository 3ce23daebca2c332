package hugepages

import "testing"

func TestMappingOf(t *testing.T) {
	maps := []byte(`00400000-00c37000 r-xp 00000000 fd:01 1234 /usr/bin/kdissect
00cb9000-00ccd000 rw-p 008b9000 fd:01 1234 /usr/bin/kdissect
00ccd000-0366f000 rw-p 00000000 00:00 0
c000000000-c000400000 rw-p 00000000 00:00 0
7ffd1a2b3000-7ffd1a2d4000 rw-p 00000000 00:00 0                          [stack]`)
	for _, c := range []struct {
		addr   uintptr
		lo, hi uintptr
		ok     bool
	}{
		{0x00ccd000, 0x00ccd000, 0x0366f000, true},
		{0x0366efff, 0x00ccd000, 0x0366f000, true},
		{0x0366f000, 0, 0, false}, // hi is past the end
		{0x00cb9100, 0x00cb9000, 0x00ccd000, true},
		{0xc000000010, 0xc000000000, 0xc000400000, true},
		{0x7ffd1a2b3000, 0x7ffd1a2b3000, 0x7ffd1a2d4000, true}, // the last line has no newline
		{0x1000, 0, 0, false},
	} {
		lo, hi, ok := mappingOf(c.addr, maps)
		if lo != c.lo || hi != c.hi || ok != c.ok {
			t.Errorf("mappingOf(%#x) = %#x, %#x, %v; want %#x, %#x, %v", c.addr, lo, hi, ok, c.lo, c.hi, c.ok)
		}
	}
	for _, bad := range []string{"", "\n\n", "zz-yy rw-p", "00400000 r-xp", "-00400000 r-xp"} {
		if _, _, ok := mappingOf(0x400000, []byte(bad)); ok {
			t.Errorf("mappingOf in %q found a mapping", bad)
		}
	}
}
