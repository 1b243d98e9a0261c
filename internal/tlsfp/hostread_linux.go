package tlsfp

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// hostWait is how long hostRead waits in the kernel before it leaves the
// wait to the runtime's poller (which sees deadlines and closes).
const hostWait = 2 // ms

// hostRead reads from nc as a blocking client does: the read, and if
// nothing is there yet, one poll(2) of at most hostWait on the calling
// thread, so that the kernel wakes this thread when the bytes arrive. A
// goroutine locked to a C thread (a call from the C ABI) that parked in
// the runtime's poller instead would sleep while another thread polls,
// and be woken by it: two thread handoffs per read. After hostWait, or on
// a connection that is not a plain socket, it is nc.Read; ok is false when
// hostRead did not apply.
func hostRead(nc net.Conn, p []byte) (n int, err error, ok bool) {
	sc, isSys := nc.(syscall.Conn)
	if !isSys || len(p) == 0 {
		return 0, nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, nil, false
	}
	var rerr error
	waited := false
	err = rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Read(int(fd), p)
			switch {
			case rerr == syscall.EINTR:
				continue
			case rerr != syscall.EAGAIN:
				return true
			case waited:
				return false // the runtime's poller waits from here
			}
			waited = true
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if _, perr := unix.Poll(fds, hostWait); perr != nil && !errors.Is(perr, unix.EINTR) {
				return false
			}
		}
	})
	if n < 0 {
		n = 0
	}
	switch {
	case err != nil: // the poller's: a deadline, a close
	case rerr != nil:
		err = &net.OpError{Op: "read", Net: nc.LocalAddr().Network(), Source: nc.LocalAddr(), Addr: nc.RemoteAddr(),
			Err: os.NewSyscallError("read", rerr)}
	case n == 0:
		err = io.EOF
	}
	return n, err, true
}
