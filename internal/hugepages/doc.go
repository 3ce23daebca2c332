// Package hugepages asks Linux to back the binary's zero-initialised data
// (.bss) with transparent huge pages, before gopacket/layers fills it.
//
// gopacket/layers fills about 6 MB of enum tables in its init (65,536
// entries each for the Ethernet and PPP types, and their error decoders):
// some 1,500 page faults at 4 KiB a page, which cost 13-15 ms of every
// start on a virtual machine, a third of printing --version. In 2 MiB
// pages they are a handful. The process's memory grows by what the huge
// pages cover beyond the bytes touched, about 2 MiB.
//
// Importing the package for its side effect is all it takes. Its init runs
// before gopacket/layers' because Go initialises, at each step, the first
// package in import path order whose imports are all initialised: this one
// imports only syscall and unsafe, and "github.com/kdissect" sorts before
// "net", which gopacket/layers imports. cmd/kdissect's tests check the
// order in the built binary.
//
// Where huge pages are off ("never") or not built into the kernel, the
// request changes nothing; elsewhere than Linux the package is empty.
package hugepages
