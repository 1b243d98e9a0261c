//go:build !linux

package tlsfp

import "net"

// hostRead is the Linux read on the calling thread (hostread_linux.go);
// elsewhere the runtime's poller always waits.
func hostRead(net.Conn, []byte) (int, error, bool) { return 0, nil, false }
