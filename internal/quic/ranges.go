package quic

import "sort"

// span is the half-open range [lo, hi).
type span struct{ lo, hi uint64 }

// rangeSet is a set of uint64 as sorted, disjoint, non-adjacent spans.
// Adding one span costs a binary search and at most a shift of the
// slice: in-order additions extend the last span in O(1).
type rangeSet []span

// add inserts [lo, hi).
func (s *rangeSet) add(lo, hi uint64) {
	if lo >= hi {
		return
	}
	r := *s
	if n := len(r); n == 0 || r[n-1].hi < lo {
		*s = append(r, span{lo, hi})
		return
	} else if r[n-1].lo <= lo {
		r[n-1].hi = max(r[n-1].hi, hi)
		return
	}
	// first span whose hi >= lo: it or the ones after may merge.
	i := sort.Search(len(r), func(i int) bool { return r[i].hi >= lo })
	j := i
	for j < len(r) && r[j].lo <= hi {
		lo, hi = min(lo, r[j].lo), max(hi, r[j].hi)
		j++
	}
	if i == j {
		r = append(r, span{})
		copy(r[i+1:], r[i:])
		r[i] = span{lo, hi}
		*s = r
		return
	}
	r[i] = span{lo, hi}
	*s = append(r[:i+1], r[j:]...)
}

// contains reports whether v is in the set.
func (s rangeSet) contains(v uint64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].hi > v })
	return i < len(s) && s[i].lo <= v
}

// prefix is where the span starting at base ends: how far [base, x) is
// covered, or base.
func (s rangeSet) prefix(base uint64) uint64 {
	if len(s) > 0 && s[0].lo <= base && s[0].hi > base {
		return s[0].hi
	}
	return base
}

// removeBelow drops everything below v.
func (s *rangeSet) removeBelow(v uint64) {
	r := *s
	i := 0
	for i < len(r) && r[i].hi <= v {
		i++
	}
	if i > 0 {
		r = append(r[:0], r[i:]...)
	}
	if len(r) > 0 && r[0].lo < v {
		r[0].lo = v
	}
	*s = r
}

// popFront removes and returns up to n values from the first span.
func (s *rangeSet) popFront(n uint64) (lo, hi uint64, ok bool) {
	r := *s
	if len(r) == 0 {
		return 0, 0, false
	}
	lo, hi = r[0].lo, min(r[0].hi, r[0].lo+n)
	if hi == r[0].hi {
		*s = append(r[:0], r[1:]...)
	} else {
		r[0].lo = hi
	}
	return lo, hi, true
}

// reassembly orders a stream of bytes that arrives in pieces at any
// offset: the contiguous part waits in buf for the reader, the pieces
// beyond a gap in pending, sorted by offset. In-order data is one copy;
// a gap costs one copy per piece and a binary search per insertion.
type reassembly struct {
	buf     []byte // readable bytes: offsets [readOff, contig)
	r       int    // buf[r:] is unread
	readOff uint64 // offset of buf[r]
	contig  uint64 // end of the contiguous data
	pending []segment
	pendLen int // bytes held in pending
}

type segment struct {
	off  uint64
	data []byte
}

// push adds data at off. It returns whether readable data grew.
func (a *reassembly) push(off uint64, data []byte) bool {
	end := off + uint64(len(data))
	if end <= a.contig {
		return false
	}
	if off > a.contig {
		a.insert(off, data)
		return false
	}
	a.buf = append(a.buf, data[a.contig-off:]...)
	a.contig = end
	for len(a.pending) > 0 && a.pending[0].off <= a.contig {
		p := a.pending[0]
		if e := p.off + uint64(len(p.data)); e > a.contig {
			a.buf = append(a.buf, p.data[a.contig-p.off:]...)
			a.contig = e
		}
		a.pendLen -= len(p.data)
		a.pending[0] = segment{}
		a.pending = a.pending[1:]
	}
	return true
}

func (a *reassembly) insert(off uint64, data []byte) {
	p := a.pending
	i := sort.Search(len(p), func(i int) bool { return p[i].off > off })
	if i > 0 {
		prev := p[i-1]
		pe := prev.off + uint64(len(prev.data))
		if pe >= off+uint64(len(data)) {
			return // covered
		}
		if pe > off {
			data = data[pe-off:]
			off = pe
		}
	}
	end := off + uint64(len(data))
	// the pieces the new one covers go; one that starts inside it cuts it
	j := i
	for j < len(p) && p[j].off+uint64(len(p[j].data)) <= end {
		a.pendLen -= len(p[j].data)
		p[j] = segment{}
		j++
	}
	if j < len(p) && p[j].off < end {
		data = data[:p[j].off-off]
	}
	seg := segment{off, append([]byte(nil), data...)}
	a.pendLen += len(data)
	switch {
	case j > i:
		p[i] = seg
		p = append(p[:i+1], p[j:]...)
	default:
		p = append(p, segment{})
		copy(p[i+1:], p[i:])
		p[i] = seg
	}
	a.pending = p
}

// readable is how many bytes Read may take now.
func (a *reassembly) readable() int { return len(a.buf) - a.r }

// read copies readable bytes into p.
func (a *reassembly) read(p []byte) int {
	n := copy(p, a.buf[a.r:])
	a.r += n
	a.readOff += uint64(n)
	if a.r == len(a.buf) {
		a.buf, a.r = a.buf[:0], 0
	} else if a.r > 4096 && a.r > cap(a.buf)/2 {
		k := copy(a.buf, a.buf[a.r:])
		a.buf, a.r = a.buf[:k], 0
	}
	return n
}

// discard drops everything held.
func (a *reassembly) discard() {
	a.readOff += uint64(len(a.buf) - a.r)
	a.buf, a.r, a.pending, a.pendLen = nil, 0, nil, 0
}
