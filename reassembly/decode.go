package reassembly

import (
	"encoding/binary"
	"net/netip"

	"github.com/google/gopacket/layers"
)

// LinkTypeLinuxSLL2 stands for LINKTYPE_LINUX_SLL2 (276). gopacket v1.1.19
// has no SLL2 layer and its LinkType is a uint8, so pcapgo hands 276 over
// as 276&0xff = 20, a value no other link type uses; OpenFile does the same.
const LinkTypeLinuxSLL2 layers.LinkType = 276 & 0xff

// TCP flag bits in byte 13 of the header.
const (
	flagFIN = 0x01
	flagSYN = 0x02
	flagRST = 0x04
	flagACK = 0x10
)

// segment is what the pipeline needs from one TCP packet. payload aliases the
// packet; claimed is the payload length the IP header promises, which is
// larger than len(payload) when the capture was cut by the snaplen.
type segment struct {
	src, dst netip.AddrPort
	seq, ack uint32 // ack is meaningful only with flagACK
	flags    uint8
	payload  []byte
	claimed  int
}

type decodeResult uint8

const (
	decOK decodeResult = iota
	decUnknownLink
	decNonTCP
	decFragment
	decMalformed
	decTruncatedHeader
)

// decodePacket is a hand-written DecodingLayerParser: it never allocates,
// never reads past the captured bytes and reports why a packet is skipped.
// gopacket's own layers would need a custom SLL2 layer anyway and, for a
// packet cut inside its TCP header, still hand back zero ports.
func decodePacket(data []byte, link layers.LinkType, s *segment) decodeResult {
	var etherType uint16
	switch link {
	case layers.LinkTypeEthernet:
		if len(data) < 14 {
			return decTruncatedHeader
		}
		etherType = binary.BigEndian.Uint16(data[12:])
		data = data[14:]
		// 802.1Q, 802.1ad and the old QinQ type, stacked any number of times.
		for etherType == 0x8100 || etherType == 0x88a8 || etherType == 0x9100 {
			if len(data) < 4 {
				return decTruncatedHeader
			}
			etherType = binary.BigEndian.Uint16(data[2:])
			data = data[4:]
		}
	case layers.LinkTypeLinuxSLL:
		if len(data) < 16 {
			return decTruncatedHeader
		}
		etherType = binary.BigEndian.Uint16(data[14:])
		data = data[16:]
	case LinkTypeLinuxSLL2:
		if len(data) < 20 {
			return decTruncatedHeader
		}
		etherType = binary.BigEndian.Uint16(data[0:])
		data = data[20:]
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		if len(data) < 4 {
			return decTruncatedHeader
		}
		// DLT_NULL is in the capturing host's byte order, DLT_LOOP in network
		// order; the address family values are small, so try both.
		fam := binary.LittleEndian.Uint32(data)
		if fam > 0xffff {
			fam = binary.BigEndian.Uint32(data)
		}
		data = data[4:]
		switch fam {
		case 2:
			etherType = 0x0800
		case 10, 24, 28, 30:
			etherType = 0x86dd
		default:
			return decNonTCP
		}
	case layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6, 12, 14:
		if len(data) < 1 {
			return decTruncatedHeader
		}
		switch data[0] >> 4 {
		case 4:
			etherType = 0x0800
		case 6:
			etherType = 0x86dd
		default:
			return decNonTCP
		}
	default:
		return decUnknownLink
	}
	switch etherType {
	case 0x0800:
		return decodeIPv4(data, s)
	case 0x86dd:
		return decodeIPv6(data, s)
	}
	return decNonTCP
}

func decodeIPv4(b []byte, s *segment) decodeResult {
	if len(b) < 20 {
		return decTruncatedHeader
	}
	if b[0]>>4 != 4 {
		return decMalformed
	}
	ihl := int(b[0]&0x0f) * 4
	if ihl < 20 {
		return decMalformed
	}
	if len(b) < ihl {
		return decTruncatedHeader
	}
	if b[9] != 6 {
		return decNonTCP
	}
	if binary.BigEndian.Uint16(b[6:])&0x1fff != 0 {
		// A later fragment: its bytes show up as a gap in the TCP stream.
		return decFragment
	}
	total := int(binary.BigEndian.Uint16(b[2:]))
	if total == 0 {
		// TSO captures on the sending host carry 0; trust the capture.
		total = len(b)
	}
	if total < ihl {
		return decMalformed
	}
	s.src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[12:16])), 0)
	s.dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[16:20])), 0)
	if len(b) > total {
		b = b[:total] // Ethernet padding
	}
	return decodeTCP(b[ihl:], total-ihl, s)
}

func decodeIPv6(b []byte, s *segment) decodeResult {
	if len(b) < 40 {
		return decTruncatedHeader
	}
	if b[0]>>4 != 6 {
		return decMalformed
	}
	claimed := int(binary.BigEndian.Uint16(b[4:]))
	next := b[6]
	src := netip.AddrFrom16([16]byte(b[8:24]))
	dst := netip.AddrFrom16([16]byte(b[24:40]))
	b = b[40:]
	if claimed == 0 {
		claimed = len(b) // jumbogram: no length to trust but the capture
	}
	if len(b) > claimed {
		b = b[:claimed]
	}
	for {
		switch next {
		case 6:
			s.src = netip.AddrPortFrom(src, 0)
			s.dst = netip.AddrPortFrom(dst, 0)
			return decodeTCP(b, claimed, s)
		case 0, 43, 60: // hop-by-hop, routing, destination options
			if len(b) < 2 {
				return decTruncatedHeader
			}
			n := (int(b[1]) + 1) * 8
			if len(b) < n {
				return decTruncatedHeader
			}
			next, b, claimed = b[0], b[n:], claimed-n
		case 44: // fragment
			if len(b) < 8 {
				return decTruncatedHeader
			}
			if binary.BigEndian.Uint16(b[2:])>>3 != 0 {
				return decFragment
			}
			next, b, claimed = b[0], b[8:], claimed-8
		case 51: // authentication header
			if len(b) < 2 {
				return decTruncatedHeader
			}
			n := (int(b[1]) + 2) * 4
			if len(b) < n {
				return decTruncatedHeader
			}
			next, b, claimed = b[0], b[n:], claimed-n
		default:
			return decNonTCP
		}
		if claimed < 0 {
			return decMalformed
		}
	}
}

// decodeTCP reads the TCP header from b, the captured part of an IP payload
// that claims ipLen bytes.
func decodeTCP(b []byte, ipLen int, s *segment) decodeResult {
	if len(b) < 20 {
		return decTruncatedHeader
	}
	off := int(b[12]>>4) * 4
	if off < 20 || off > ipLen {
		return decMalformed
	}
	if len(b) < off {
		return decTruncatedHeader
	}
	s.src = netip.AddrPortFrom(s.src.Addr(), binary.BigEndian.Uint16(b[0:]))
	s.dst = netip.AddrPortFrom(s.dst.Addr(), binary.BigEndian.Uint16(b[2:]))
	s.seq = binary.BigEndian.Uint32(b[4:])
	s.ack = binary.BigEndian.Uint32(b[8:])
	s.flags = b[13]
	s.payload = b[off:]
	s.claimed = ipLen - off
	return decOK
}
