package reassembly

import (
	"fmt"
	"strconv"
	"strings"
)

// PortSet is a set of TCP ports. The zero value is empty.
type PortSet struct {
	bits *[65536 / 64]uint64
}

// Add puts port in the set.
func (s *PortSet) Add(port uint16) {
	if s.bits == nil {
		s.bits = new([65536 / 64]uint64)
	}
	s.bits[port/64] |= 1 << (port % 64)
}

// Has reports whether port is in the set.
func (s PortSet) Has(port uint16) bool {
	return s.bits != nil && s.bits[port/64]&(1<<(port%64)) != 0
}

// Empty reports whether no port is in the set.
func (s PortSet) Empty() bool {
	if s.bits == nil {
		return true
	}
	for _, w := range s.bits {
		if w != 0 {
			return false
		}
	}
	return true
}

// ParsePorts parses a comma-separated list of ports and inclusive ranges,
// e.g. "9092", "9092,9093" or "9090-9099,19092".
func ParsePorts(s string) (PortSet, error) {
	var set PortSet
	if strings.TrimSpace(s) == "" {
		return set, fmt.Errorf("empty port list")
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parsePort(lo)
		if err != nil {
			return PortSet{}, err
		}
		b := a
		if isRange {
			if b, err = parsePort(hi); err != nil {
				return PortSet{}, err
			}
			if b < a {
				return PortSet{}, fmt.Errorf("port range %q runs backwards", part)
			}
		}
		for p := a; ; p++ {
			set.Add(uint16(p))
			if p == b {
				break
			}
		}
	}
	return set, nil
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("%q is not a port (1-65535)", s)
	}
	return n, nil
}
