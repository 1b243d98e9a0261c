//go:build linux && (amd64 || arm64)

package quic

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux batching: recvmmsg reads the datagrams queued on the socket in
// one call, and UDP generic segmentation offload (a sendmsg with a
// UDP_SEGMENT control message) sends a run of equal-sized datagrams in
// one call. Both go through the socket's RawConn, so the read deadline
// the timers use still applies.

// mmsghdr is struct mmsghdr on 64-bit Linux: a msghdr, the length
// received, padding to 8 bytes.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
	_   [4]byte
}

// rxBatch is the state of batched reads: slots datagram buffers, their
// headers, and what the last read returned.
type rxBatch struct {
	rc    syscall.RawConn
	hdrs  []mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrAny
	bufs  [][]byte
	n     int   // datagrams the last read returned
	err   error // its error
	fn    func(fd uintptr) bool
}

// maxBatch is how many datagrams one recvmmsg returns at most.
const maxBatch = 16

// newRxBatch prepares batched reads of udp with datagrams up to size
// bytes, or returns nil when the socket offers no RawConn.
func newRxBatch(udp *net.UDPConn, size int) *rxBatch {
	rc, err := udp.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rxBatch{rc: rc, hdrs: make([]mmsghdr, maxBatch), iovs: make([]unix.Iovec, maxBatch),
		names: make([]unix.RawSockaddrAny, maxBatch), bufs: make([][]byte, maxBatch)}
	mem := make([]byte, maxBatch*size)
	for i := range r.hdrs {
		r.bufs[i] = mem[i*size : (i+1)*size : (i+1)*size]
		r.iovs[i].Base = &r.bufs[i][0]
		r.iovs[i].SetLen(size)
		h := &r.hdrs[i].hdr
		h.Iov = &r.iovs[i]
		h.SetIovlen(1)
		h.Name = (*byte)(unsafe.Pointer(&r.names[i]))
	}
	r.fn = r.recv
	return r
}

// recv is the RawConn.Read callback: false asks to wait for the socket
// to be readable.
func (r *rxBatch) recv(fd uintptr) bool {
	for i := range r.hdrs {
		r.hdrs[i].hdr.Namelen = unix.SizeofSockaddrAny
		r.hdrs[i].hdr.Flags = 0
		r.hdrs[i].n = 0
	}
	for {
		n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.hdrs[0])), uintptr(len(r.hdrs)), 0, 0, 0)
		switch e {
		case 0:
			r.n, r.err = int(n), nil
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		r.n, r.err = 0, e
		return true
	}
}

// read reads the datagrams queued, waiting for one until the read
// deadline.
func (r *rxBatch) read() (int, error) {
	if err := r.rc.Read(r.fn); err != nil {
		return 0, err
	}
	return r.n, r.err
}

// datagram returns the i-th datagram of the last read, with its source;
// ok is false for one cut short (larger than the buffers).
func (r *rxBatch) datagram(i int) (b []byte, from netip.AddrPort, ok bool) {
	h := &r.hdrs[i]
	if h.hdr.Flags&unix.MSG_TRUNC != 0 {
		return nil, from, false
	}
	sa := &r.names[i]
	switch sa.Addr.Family {
	case unix.AF_INET:
		p := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		from = netip.AddrPortFrom(netip.AddrFrom4(p.Addr), binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&p.Port))[:]))
	case unix.AF_INET6:
		p := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
		from = netip.AddrPortFrom(netip.AddrFrom16(p.Addr).Unmap(), binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&p.Port))[:]))
	}
	return r.bufs[i][:h.n], from, true
}

// gsoMaxSegments is the kernel's UDP_MAX_SEGMENTS.
const gsoMaxSegments = 64

// txBatch sends runs of datagrams with UDP_SEGMENT.
type txBatch struct {
	rc   syscall.RawConn
	to   unix.Sockaddr // nil on a connected socket
	oob  []byte        // the UDP_SEGMENT control message; its size set per call
	buf  []byte        // the datagrams to send in one call
	seg  int
	err  error
	fn   func(fd uintptr) bool
	sent int // calls made, for tests
}

// newTxBatch returns GSO sending on udp to raddr (nil when udp is
// connected), or nil when the kernel does not offer UDP_SEGMENT.
func newTxBatch(udp *net.UDPConn, raddr netip.AddrPort, connected bool) *txBatch {
	rc, err := udp.SyscallConn()
	if err != nil {
		return nil
	}
	supported := false
	rc.Control(func(fd uintptr) {
		_, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT)
		supported = err == nil
	})
	if !supported {
		return nil
	}
	t := &txBatch{rc: rc, oob: make([]byte, unix.CmsgSpace(2))}
	if !connected {
		if raddr.Addr().Is4() {
			t.to = &unix.SockaddrInet4{Port: int(raddr.Port()), Addr: raddr.Addr().As4()}
		} else {
			t.to = &unix.SockaddrInet6{Port: int(raddr.Port()), Addr: raddr.Addr().As16()}
		}
	}
	h := (*unix.Cmsghdr)(unsafe.Pointer(&t.oob[0]))
	h.Level, h.Type = unix.IPPROTO_UDP, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	t.fn = t.send
	return t
}

func (t *txBatch) send(fd uintptr) bool {
	binary.NativeEndian.PutUint16(t.oob[unix.CmsgLen(0):], uint16(t.seg))
	for {
		_, err := unix.SendmsgN(int(fd), t.buf, t.oob, t.to, 0)
		switch err {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		t.err = err
		return true
	}
}

// write sends buf as datagrams of seg bytes (the last may be shorter).
func (t *txBatch) write(buf []byte, seg int) error {
	t.buf, t.seg = buf, seg
	t.sent++
	if err := t.rc.Write(t.fn); err != nil {
		return err
	}
	return t.err
}

// gsoRefused reports whether err is the kernel refusing segmentation
// offload on this socket or route (EIO: no checksum offload on the
// device; EINVAL: a socket without UDP checksums, or a segment too large
// for the path), after which datagrams go one by one.
func gsoRefused(err error) bool {
	return errors.Is(err, unix.EIO) || errors.Is(err, unix.EINVAL)
}
