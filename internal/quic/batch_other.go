//go:build !(linux && (amd64 || arm64))

package quic

import (
	"net"
	"net/netip"
)

// Without Linux's recvmmsg and UDP_SEGMENT (or off 64-bit), datagrams are
// read and sent one by one.

type rxBatch struct{}

func newRxBatch(*net.UDPConn, int) *rxBatch { return nil }

func (*rxBatch) read() (int, error) { return 0, nil }

func (*rxBatch) datagram(int) ([]byte, netip.AddrPort, bool) { return nil, netip.AddrPort{}, false }

const gsoMaxSegments = 64

type txBatch struct{ sent int }

func newTxBatch(*net.UDPConn, netip.AddrPort, bool) *txBatch { return nil }

func (*txBatch) write([]byte, int) error { return nil }

func gsoRefused(error) bool { return false }
