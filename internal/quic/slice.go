package quic

import "github.com/guise-http/guise/profile"

// sliceLayout is neqo's SNI slicing as Firefox runs it (crypto.rs
// write_frame): the hello is cut at the middle of the server name into
// left and right, both are trimmed to an even share of the packets the
// hello needs so that the name spans two packets, and the first packet
// carries right then left, each cut further to what fits;
// the packets after carry what is left, in order. No PING, no PADDING
// frame: Build pads the datagram after the packet.
func (f *Flight) sliceLayout(q *profile.QUIC, hello []byte) [][]frame {
	n := len(hello)
	room := func(i int) int { return q.DatagramSize - f.headerLen(f.pnLen(q, i)) - tagLen }
	sent := make([]bool, n)
	var first []frame
	if lo, hi, ok := serverName(hello); ok {
		mid := lo + (hi-lo)/2
		// neqo counts the packets the hello needs against the packet's
		// size limit (the datagram less the AEAD tag), headers included,
		// so a long token does not add one.
		lim := q.DatagramSize - tagLen
		limit := n / ((n + lim - 1) / lim)
		left, right := [2]int{0, mid}, [2]int{mid, n}
		ll, rl := left[1]-left[0], right[1]-right[0]
		switch {
		case ll+rl <= limit:
		case ll <= limit: // send the end of right
			right[0] += rl + ll - limit
		case rl <= limit: // send the start of left
			left[1] = limit - rl
		default:
			left[1], right[1] = limit/2, right[0]+limit/2
		}
		free := room(0)
		for _, c := range [][2]int{right, left} {
			if k := fit(c[0], c[1]-c[0], free); k > 0 {
				first = append(first, frame{kind: kindCrypto, off: c[0], n: k})
				free -= cryptoFrameSize(c[0], k)
				for i := c[0]; i < c[0]+k; i++ {
					sent[i] = true
				}
			}
		}
	}
	var pkts [][]frame
	if first != nil {
		pkts = append(pkts, first)
	}
	for len(pkts) <= maxFlightPackets {
		var p []frame
		free := room(len(pkts))
		for off := 0; off < n && free > 0; {
			if sent[off] {
				off++
				continue
			}
			e := off
			for e < n && !sent[e] {
				e++
			}
			k := fit(off, e-off, free)
			if k <= 0 {
				break
			}
			p = append(p, frame{kind: kindCrypto, off: off, n: k})
			free -= cryptoFrameSize(off, k)
			for i := off; i < off+k; i++ {
				sent[i] = true
			}
			off += k
		}
		if p == nil {
			break
		}
		pkts = append(pkts, p)
	}
	for _, s := range sent {
		if !s {
			return nil
		}
	}
	return pkts
}

// fit is how much of n bytes at off one CRYPTO frame carries in free
// bytes.
func fit(off, n, free int) int {
	k := min(n, free)
	for k > 0 && cryptoFrameSize(off, k) > free {
		k--
	}
	return k
}

// serverName returns the byte range of the first host name in the
// server_name extension of the ClientHello message hello.
func serverName(hello []byte) (lo, hi int, ok bool) {
	b := hello
	off := 4 + 2 + 32
	skip := func(lenBytes int) bool {
		if off+lenBytes > len(b) {
			return false
		}
		l := 0
		for i := range lenBytes {
			l = l<<8 | int(b[off+i])
		}
		off += lenBytes + l
		return off <= len(b)
	}
	if len(b) < off || b[0] != 1 || !skip(1) || !skip(2) || !skip(1) || off+2 > len(b) {
		return 0, 0, false
	}
	off += 2
	for off+4 <= len(b) {
		typ, l := int(b[off])<<8|int(b[off+1]), int(b[off+2])<<8|int(b[off+3])
		if typ == 0 && l >= 5 && off+4+l <= len(b) {
			// server_name_list length (2), name_type (1), host_name length (2).
			lo = off + 4 + 5
			hi = lo + (int(b[off+7])<<8 | int(b[off+8]))
			return lo, hi, hi <= off+4+l
		}
		off += 4 + l
	}
	return 0, 0, false
}
