//go:build linux

package reassembly

import (
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"golang.org/x/sys/unix"
)

// LiveOptions tunes OpenLive.
type LiveOptions struct {
	// Snaplen is the most bytes kept per packet; 0 means 262144. Kept large
	// by default because offloads hand the socket packets bigger than the MTU.
	Snaplen int
	// WriteTo, when set, also receives every packet as a pcap file.
	WriteTo io.Writer
}

// pollInterval bounds how long Next keeps running after Close.
const pollInterval = 200 * time.Millisecond

type liveSource struct {
	iface  string
	h      *pcapgo.EthernetHandle
	w      *pcapgo.Writer
	mu     sync.Mutex // held by Next while reading; Close waits for it
	closed atomic.Bool
}

// OpenLive captures on a network interface with a pure-Go AF_PACKET socket.
func OpenLive(iface string, opt LiveOptions) (Source, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("no such interface %q", iface)
	}
	h, err := pcapgo.NewEthernetHandle(iface)
	if err != nil {
		if strings.Contains(err.Error(), "operation not permitted") || strings.Contains(err.Error(), "permission denied") {
			return nil, fmt.Errorf("capturing on %s needs root or CAP_NET_RAW", iface)
		}
		return nil, fmt.Errorf("capturing on %s: %v", iface, err)
	}
	snap := opt.Snaplen
	if snap <= 0 {
		snap = 262144
	}
	if err := h.SetCaptureLength(snap); err != nil {
		h.Close()
		return nil, fmt.Errorf("capturing on %s: %v", iface, err)
	}
	// EthernetHandle blocks in recvmsg forever and keeps its descriptor
	// private; a receive timeout lets Next notice Close.
	fd := int(reflect.ValueOf(h).Elem().FieldByName("fd").Int())
	tv := unix.NsecToTimeval(pollInterval.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		h.Close()
		return nil, fmt.Errorf("capturing on %s: %v", iface, err)
	}
	if ifi.Flags&net.FlagLoopback != 0 {
		if err := skipOutgoing(fd); err != nil {
			h.Close()
			return nil, fmt.Errorf("capturing on %s: %v", iface, err)
		}
	}
	s := &liveSource{iface: iface, h: h}
	if opt.WriteTo != nil {
		s.w = pcapgo.NewWriter(opt.WriteTo)
		if err := s.w.WriteFileHeader(uint32(snap), layers.LinkTypeEthernet); err != nil {
			h.Close()
			return nil, fmt.Errorf("writing capture file: %v", err)
		}
	}
	return s, nil
}

// skipOutgoing makes a packet socket on a loopback device see each packet
// once. AF_PACKET hands every packet sent over lo to the socket twice: as
// PACKET_OUTGOING when it is transmitted and as PACKET_HOST when lo
// receives it, so each TCP segment would otherwise come twice and the second
// copy would be reported as a retransmission. libpcap drops the outgoing copy
// on lo too. EthernetHandle does not return the packet type, so a classic
// BPF filter drops PACKET_OUTGOING in the kernel:
//
//	ld  [SKF_AD_OFF+SKF_AD_PKTTYPE]
//	jeq #PACKET_OUTGOING, drop, keep
//	drop: ret #0
//	keep: ret #-1
//
// Packets queued between bind and the filter are discarded (a bounded number,
// so that a busy device cannot keep OpenLive draining).
func skipOutgoing(fd int) error {
	const skfAdPkttype = 0xfffff000 + 4 // SKF_AD_OFF + SKF_AD_PKTTYPE
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: skfAdPkttype},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.PACKET_OUTGOING},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0xffffffff},
	}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
		&unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}); err != nil {
		return fmt.Errorf("attaching loopback filter: %v", err)
	}
	var b [1]byte
	for i := 0; i < 4096; i++ {
		if _, _, err := unix.Recvfrom(fd, b[:], unix.MSG_DONTWAIT|unix.MSG_TRUNC); err != nil {
			break
		}
	}
	return nil
}

func (s *liveSource) Next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closed.Load() {
			return nil, gopacket.CaptureInfo{}, 0, io.EOF
		}
		data, ci, err := s.h.ZeroCopyReadPacketData()
		if err != nil {
			// pcapgo flattens errno into text.
			msg := err.Error()
			if strings.Contains(msg, unix.EAGAIN.Error()) || strings.Contains(msg, unix.EINTR.Error()) {
				continue
			}
			if s.closed.Load() {
				return nil, gopacket.CaptureInfo{}, 0, io.EOF
			}
			return nil, gopacket.CaptureInfo{}, 0, fmt.Errorf("capturing on %s: %v", s.iface, err)
		}
		if s.w != nil {
			if err := s.w.WritePacket(ci, data); err != nil {
				return nil, gopacket.CaptureInfo{}, 0, fmt.Errorf("writing capture file: %v", err)
			}
		}
		return data, ci, layers.LinkTypeEthernet, nil
	}
}

// Close may be called from another goroutine while Next waits: Next then
// returns io.EOF within pollInterval.
func (s *liveSource) Close() error {
	if s.closed.Swap(true) {
		return errors.New("already closed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h.Close()
	return nil
}
