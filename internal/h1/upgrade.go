package h1

import "net"

// Detach hands the connection over after a 101 to a Request with Upgrade:
// it returns the net.Conn and a copy of the bytes read past the 101's head
// (the new protocol's first bytes). The Conn is done: it does not close nc,
// and further RoundTrips fail.
func (c *Conn) Detach() (net.Conn, []byte) {
	c.unwatch()
	c.closed.Store(true)
	c.broken = true
	rest := append([]byte(nil), c.rbuf[c.r:c.w]...)
	c.r, c.w = 0, 0
	return c.nc, rest
}
