package hugepages

// mappingOf finds the line of /proc/<pid>/maps text whose address range
// ("lo-hi perms ...", in hex) holds addr.
func mappingOf(addr uintptr, maps []byte) (lo, hi uintptr, ok bool) {
	for len(maps) > 0 {
		i := 0
		for i < len(maps) && maps[i] != '\n' {
			i++
		}
		line := maps[:i]
		maps = maps[min(i+1, len(maps)):]
		l, rest, ok1 := hexPrefix(line)
		if !ok1 || len(rest) == 0 || rest[0] != '-' {
			continue
		}
		h, _, ok2 := hexPrefix(rest[1:])
		if ok2 && l <= addr && addr < h {
			return l, h, true
		}
	}
	return 0, 0, false
}

// hexPrefix reads the lower-case hex number b starts with.
func hexPrefix(b []byte) (v uintptr, rest []byte, ok bool) {
	i := 0
	for ; i < len(b) && i < 16; i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		default:
			return v, b[i:], i > 0
		}
	}
	return v, b[i:], i > 0
}
