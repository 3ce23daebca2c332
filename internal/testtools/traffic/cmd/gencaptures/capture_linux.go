package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"golang.org/x/sys/unix"
)

// pcapgoCapture captures on an interface with an AF_PACKET socket of its
// own and writes the packets to or from one TCP port as pcap. Unlike a
// plain pcapgo.EthernetHandle it skips PACKET_OUTGOING copies, which on
// loopback would duplicate every packet (libpcap does the same).
type pcapgoCapture struct {
	fd   int
	f    *os.File
	stop chan struct{}
	wg   sync.WaitGroup
	err  error
}

const snaplen = 65535

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func startPcapgo(iface string, port int, path string) (capturer, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return nil, fmt.Errorf("AF_PACKET socket (needs root or CAP_NET_RAW): %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	tv := unix.NsecToTimeval((100 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(snaplen, layers.LinkTypeEthernet); err != nil {
		unix.Close(fd)
		f.Close()
		return nil, err
	}
	c := &pcapgoCapture{fd: fd, f: f, stop: make(chan struct{})}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		buf := make([]byte, 1<<18)
		for {
			select {
			case <-c.stop:
				return
			default:
			}
			n, from, err := unix.Recvfrom(fd, buf, unix.MSG_TRUNC)
			if err != nil {
				if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
					continue
				}
				c.err = err
				return
			}
			if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
				continue
			}
			capLen := n
			if capLen > len(buf) {
				capLen = len(buf)
			}
			if capLen > snaplen {
				capLen = snaplen
			}
			if !onPort(buf[:capLen], port) {
				continue
			}
			ci := gopacket.CaptureInfo{Timestamp: time.Now(), CaptureLength: capLen, Length: n}
			if err := w.WritePacket(ci, buf[:capLen]); err != nil {
				c.err = err
				return
			}
		}
	}()
	return c, nil
}

func (c *pcapgoCapture) Stop() error {
	close(c.stop)
	c.wg.Wait()
	unix.Close(c.fd)
	if err := c.f.Close(); err != nil && c.err == nil {
		c.err = err
	}
	return c.err
}
