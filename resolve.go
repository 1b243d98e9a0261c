package guise

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// readResolve checks Transport.Resolve and returns it with each key's host
// in lower case and IPv6 hosts in brackets, as the pool's addresses are;
// nil for none.
func readResolve(m map[string]netip.Addr) (map[string]netip.Addr, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]netip.Addr, len(m))
	for k, ip := range m {
		host, port, err := net.SplitHostPort(k)
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("%w: Transport.Resolve key %q: want host:port", ErrRefusedToSend, k)
		}
		if !ip.IsValid() {
			return nil, fmt.Errorf("%w: Transport.Resolve[%q]: no address", ErrRefusedToSend, k)
		}
		out[net.JoinHostPort(strings.ToLower(host), port)] = ip.Unmap()
	}
	return out, nil
}

// override returns the address Transport.Resolve gives for addr
// (host:port), as ip:port.
func (st *transportState) override(addr string) (string, bool) {
	if st.resolve == nil {
		return "", false
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false
	}
	ip, ok := st.resolve[net.JoinHostPort(strings.ToLower(host), port)]
	if !ok {
		return "", false
	}
	return net.JoinHostPort(ip.String(), port), true
}

// overrideH3 returns the address of an HTTP/3 dial to port of the
// origin at originAddr: Resolve's for host:port, or else, for an
// alternative on another port of the origin's host, the origin's own
// address on that port.
func (st *transportState) overrideH3(originAddr, port string) (string, bool) {
	host, oport, err := net.SplitHostPort(originAddr)
	if err != nil {
		return "", false
	}
	if to, ok := st.override(net.JoinHostPort(host, port)); ok {
		return to, true
	}
	if port == oport {
		return "", false
	}
	to, ok := st.override(originAddr)
	if !ok {
		return "", false
	}
	ip, _, _ := net.SplitHostPort(to)
	return net.JoinHostPort(ip, port), true
}
