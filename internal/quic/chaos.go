package quic

import "github.com/guise-http/guise/profile"

// chaosLayout is quiche's multi-packet chaos protection as Chromium runs
// it (quic_packet_creator.cc MultiPacketChaosProtect, then
// QuicChaosProtector on every Initial packet): the first packet carries
// the hello's first 55 to 86 bytes and as much of its end as makes the
// packets about equal, the following packets the middle; then each packet
// is padded to the datagram and chaos-protected. The draws are in
// quiche's order.
func (f *Flight) chaosLayout(q *profile.QUIC, hello []byte, g *rng) [][]frame {
	maxPlain := q.DatagramSize - tagLen
	n := len(hello)
	hdr1 := f.headerLen(f.pnLen(q, 0))
	free1 := maxPlain - hdr1
	minCF := cryptoOverhead(n-1, n)
	var pkts [][]frame
	start, end := 0, n
	if free1 >= 2*minCF {
		maxFirst := free1 - 2*minCF
		maxOther := maxPlain - hdr1 - minCF
		if n > maxFirst && maxOther >= maxFirst {
			occupied := maxOther - maxFirst
			num := (n + occupied + maxOther - 1) / maxOther
			dataOther := (n + occupied + num - 1) / num
			if dataOther >= occupied {
				dataFirst := dataOther - occupied
				firstLen := 55 + int(g.uint64()%32)
				if n > firstLen && dataFirst > firstLen {
					last := dataFirst - firstLen
					pkts = append(pkts, []frame{{kind: kindCrypto, off: 0, n: firstLen}, {kind: kindCrypto, off: n - last, n: last}})
					start, end = firstLen, n-last
				}
			}
		}
	}
	for off := start; off < end && len(pkts) <= maxFlightPackets; {
		free := maxPlain - f.headerLen(f.pnLen(q, len(pkts)))
		k := min(end-off, free)
		for k > 0 && cryptoFrameSize(off, k) > free {
			k--
		}
		if k <= 0 {
			return nil
		}
		pkts = append(pkts, []frame{{kind: kindCrypto, off: off, n: k}})
		off += k
	}
	for i, p := range pkts {
		used := 0
		for _, x := range p {
			used += x.size()
		}
		free := maxPlain - f.headerLen(f.pnLen(q, i))
		pkts[i] = chaosProtect(p, free-used, g)
	}
	return pkts
}

// Chaos protection's draws, as quiche's current QuicChaosProtector makes
// them: 2 to 10 splits of the CRYPTO frames and 2 to 10 PINGs per packet
// (its first versions drew 0 to 10 splits and 0 to 9 PINGs; Chromium 156
// sends the current ones: every recorded Initial of its first flight has
// at least two CRYPTO frames more than the hello ranges it carries, and at
// least two PINGs).
const (
	chaosMinSplits = 2
	chaosMaxSplits = 10
	chaosMinPings  = 2
	chaosMaxPings  = 10
)

// chaosProtect is QuicChaosProtector's BuildDataPacket on one packet's
// CRYPTO frames with pad bytes of padding to spend: split CRYPTO frames
// (2 to 10 times, while the padding lasts), add 2 to 10 PINGs (no more
// than the padding left), spread the padding before the frames in random
// runs, and shuffle everything.
func chaosProtect(frames []frame, pad int, g *rng) []frame {
	lo, hi := frames[0].off, frames[0].off+frames[0].n
	for _, x := range frames[1:] {
		lo, hi = min(lo, x.off), max(hi, x.off+x.n)
	}
	maxOverhead := cryptoOverhead(hi, hi-lo)
	remaining := pad
	added := chaosMinSplits + g.uint64()%(chaosMaxSplits+1-chaosMinSplits)
	for range added {
		if remaining < maxOverhead {
			break
		}
		i := int(g.uint64() % uint64(len(frames)))
		if frames[i].kind != kindCrypto || frames[i].n <= 1 {
			continue
		}
		old := cryptoOverhead(frames[i].off, frames[i].n)
		keep := 1 + int(g.uint64()%uint64(frames[i].n-1))
		nf := frame{kind: kindCrypto, off: frames[i].off + keep, n: frames[i].n - keep}
		frames[i].n = keep
		remaining -= cryptoOverhead(nf.off, nf.n) + cryptoOverhead(frames[i].off, frames[i].n) - old
		frames = append(frames, nf)
	}
	if remaining != 0 {
		pings := min(chaosMinPings+g.uint64()%(chaosMaxPings+1-chaosMinPings), uint64(remaining))
		for range pings {
			frames = append(frames, frame{kind: kindPing})
		}
		remaining -= int(pings)
	}
	out := make([]frame, 0, 2*len(frames)+1)
	for _, x := range frames {
		if p := int(g.uint64() % uint64(remaining+1)); p > 0 {
			out = append(out, frame{kind: kindPadding, n: p})
			remaining -= p
		}
		out = append(out, x)
	}
	if remaining > 0 {
		out = append(out, frame{kind: kindPadding, n: remaining})
	}
	for i := len(out) - 1; i > 0; i-- {
		j := int(g.uint64() % uint64(i+1))
		out[i], out[j] = out[j], out[i]
	}
	return out
}
