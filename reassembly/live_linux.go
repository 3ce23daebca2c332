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
	if _, err := net.InterfaceByName(iface); err != nil {
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
