// Command droppkt copies a pcap file without the packets it is told to
// drop, as a capture that lost them would be: the measurements of lossy
// captures in the README are made with it.
//
//	droppkt -drop 120,121 in.pcap out.pcap
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/google/gopacket/pcapgo"
)

func main() {
	drop := flag.String("drop", "", "comma-separated 1-based packet numbers to leave out")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: droppkt -drop N[,N...] in.pcap out.pcap")
		os.Exit(1)
	}
	if err := run(*drop, flag.Arg(0), flag.Arg(1)); err != nil {
		fmt.Fprintln(os.Stderr, "droppkt:", err)
		os.Exit(1)
	}
}

func run(drop, in, out string) error {
	skip := map[int]bool{}
	for _, s := range strings.Split(drop, ",") {
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("bad packet number %q", s)
		}
		skip[n] = true
	}
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		return err
	}
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	w := pcapgo.NewWriter(o)
	if err := w.WriteFileHeader(r.Snaplen(), r.LinkType()); err != nil {
		return err
	}
	for n := 1; ; n++ {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if !skip[n] {
			if err := w.WritePacket(ci, data); err != nil {
				return err
			}
		}
	}
	return o.Close()
}
