package ws

// zdeflater compresses as C zlib (1.2.x and 1.3.x) does with the settings
// both browsers give it for permessage-deflate: deflateInit2 at
// Z_DEFAULT_COMPRESSION (level 6), raw deflate, memLevel 8, the default
// strategy, each message ended by Z_SYNC_FLUSH (Chromium's
// WebSocketDeflater, Firefox's PMCECompression). The output is zlib's byte
// for byte: the same lazy matcher with its hash chains and limits, the
// same block boundaries (a block per flush, or per 16383 symbols), and the
// same choice between stored, fixed and dynamic blocks with the same
// Huffman trees (ztrees.go). It is written from zlib's documented
// algorithm, not from its source, and checked against it through
// Python's zlib module (zdeflate_test.go).
//
// A zdeflater is not safe for concurrent use; the zero value is not
// usable: make one with newZDeflater.
type zdeflater struct {
	wbits, wsize, wmask int
	maxDist             int
	// window holds 2*wsize bytes: the data the matcher looks back into,
	// and the input not yet compressed. Bytes past the data keep what an
	// earlier message or slide left there, as zlib's do: the matcher
	// compares up to 258 bytes ahead before it cuts a match to the data.
	window []byte
	head   []uint16 // hash bucket -> latest position + 0, 0 for none
	prev   []uint16 // position & wmask -> the previous one in its chain
	insH   uint32   // the rolling hash of the last bytes inserted

	strstart, lookahead, insert int
	blockStart                  int // may go negative after a slide
	matchLength, matchStart     int
	prevLength, prevMatch       int
	matchAvailable              bool

	in []byte // input not yet in the window
	t  ztrees
}

// zlib's fixed settings for level 6 and memLevel 8.
const (
	zMinMatch     = 3
	zMaxMatch     = 258
	zMinLookahead = zMaxMatch + zMinMatch + 1
	zHashBits     = 8 + 7 // memLevel + 7
	zHashSize     = 1 << zHashBits
	zHashMask     = zHashSize - 1
	zHashShift    = (zHashBits + zMinMatch - 1) / zMinMatch
	zGoodLength   = 8
	zMaxLazy      = 16
	zNiceLength   = 128
	zMaxChain     = 128
	zTooFar       = 4096
	zLitBufSize   = 1 << (8 + 6) // memLevel + 6
	zSymEnd       = zLitBufSize - 1
)

// newZDeflater returns a compressor with a window of 1<<wbits bytes (9 to
// 15; zlib refuses 8 for raw deflate, and Chromium asks for 9 then).
func newZDeflater(wbits int) *zdeflater {
	z := &zdeflater{wbits: wbits, wsize: 1 << wbits}
	z.wmask = z.wsize - 1
	z.maxDist = z.wsize - zMinLookahead
	z.window = make([]byte, 2*z.wsize)
	z.head = make([]uint16, zHashSize)
	z.prev = make([]uint16, z.wsize)
	z.reset()
	return z
}

// reset is deflateReset: a new stream with no history. The window's bytes
// and prev stay as they are, as zlib's do.
func (z *zdeflater) reset() {
	clear(z.head)
	z.strstart, z.blockStart, z.lookahead, z.insert = 0, 0, 0, 0
	z.matchLength, z.prevLength = zMinMatch-1, zMinMatch-1
	z.matchAvailable = false
	z.insH = 0
	z.t.reset()
}

// message appends p compressed and sync-flushed to dst, without the final
// 00 00 ff ff: a permessage-deflate payload. p must not be empty (both
// browsers handle an empty message without zlib).
func (z *zdeflater) message(dst, p []byte) []byte {
	z.t.out = dst
	z.in = p
	z.slow()
	z.t.storedBlock(nil, false) // Z_SYNC_FLUSH's empty stored block
	out := z.t.out
	z.t.out = nil
	return out[:len(out)-4]
}

func (z *zdeflater) updateHash(h uint32, c byte) uint32 {
	return (h<<zHashShift ^ uint32(c)) & zHashMask
}

// insertString inserts position s into its hash chain and returns the
// chain's previous head.
func (z *zdeflater) insertString(s int) int {
	z.insH = z.updateHash(z.insH, z.window[s+zMinMatch-1])
	h := z.head[z.insH]
	z.prev[s&z.wmask] = h
	z.head[z.insH] = uint16(s)
	return int(h)
}

// fillWindow reads input into the window, sliding it down by wsize when
// the current position nears its end, as zlib's fill_window does.
func (z *zdeflater) fillWindow() {
	for {
		more := len(z.window) - z.lookahead - z.strstart
		if z.strstart >= z.wsize+z.maxDist {
			// Only the data moves down; what lies past it in the lower
			// half stays (zlib since 1.2.9).
			copy(z.window, z.window[z.wsize:z.wsize+z.wsize-more])
			z.matchStart -= z.wsize
			z.strstart -= z.wsize
			z.blockStart -= z.wsize
			z.insert = min(z.insert, z.strstart)
			z.slideHash()
			more += z.wsize
		}
		if len(z.in) == 0 {
			return
		}
		n := copy(z.window[z.strstart+z.lookahead:z.strstart+z.lookahead+more], z.in)
		z.in = z.in[n:]
		z.lookahead += n
		if z.lookahead+z.insert >= zMinMatch {
			str := z.strstart - z.insert
			z.insH = uint32(z.window[str])
			z.insH = z.updateHash(z.insH, z.window[str+1])
			for z.insert > 0 {
				z.insH = z.updateHash(z.insH, z.window[str+zMinMatch-1])
				z.prev[str&z.wmask] = z.head[z.insH]
				z.head[z.insH] = uint16(str)
				str++
				z.insert--
				if z.lookahead+z.insert < zMinMatch {
					break
				}
			}
		}
		if z.lookahead >= zMinLookahead || len(z.in) == 0 {
			return
		}
	}
}

func (z *zdeflater) slideHash() {
	w := uint16(z.wsize)
	for i, m := range z.head {
		if m >= w {
			z.head[i] = m - w
		} else {
			z.head[i] = 0
		}
	}
	for i, m := range z.prev {
		if m >= w {
			z.prev[i] = m - w
		} else {
			z.prev[i] = 0
		}
	}
}

// longestMatch is zlib's longest_match from the chain starting at cur:
// the length of the best match (at most the lookahead), its start in
// matchStart.
func (z *zdeflater) longestMatch(cur int) int {
	chain := zMaxChain
	win := z.window
	s := z.strstart
	best := z.prevLength
	nice := zNiceLength
	if z.prevLength >= zGoodLength {
		chain >>= 2
	}
	nice = min(nice, z.lookahead)
	limit := 0
	if s > z.maxDist {
		limit = s - z.maxDist
	}
	end1, end := win[s+best-1], win[s+best]
	for {
		m := cur
		if win[m+best] == end && win[m+best-1] == end1 && win[m] == win[s] && win[m+1] == win[s+1] {
			// The third bytes are equal: the hash says so.
			n := 3
			for n < zMaxMatch && win[s+n] == win[m+n] {
				n++
			}
			if n > best {
				z.matchStart = cur
				best = n
				if n >= nice {
					break
				}
				end1, end = win[s+best-1], win[s+best]
			}
		}
		cur = int(z.prev[cur&z.wmask])
		chain--
		if cur <= limit || chain == 0 {
			break
		}
	}
	return min(best, z.lookahead)
}

// slow is deflate_slow under Z_SYNC_FLUSH: the lazy matcher over all the
// input, then the block so far flushed.
func (z *zdeflater) slow() {
	for {
		if z.lookahead < zMinLookahead {
			z.fillWindow()
			if z.lookahead == 0 {
				break
			}
		}
		hashHead := 0
		if z.lookahead >= zMinMatch {
			hashHead = z.insertString(z.strstart)
		}
		z.prevLength, z.prevMatch = z.matchLength, z.matchStart
		z.matchLength = zMinMatch - 1
		if hashHead != 0 && z.prevLength < zMaxLazy && z.strstart-hashHead <= z.maxDist {
			z.matchLength = z.longestMatch(hashHead)
			if z.matchLength <= 5 && z.matchLength == zMinMatch && z.strstart-z.matchStart > zTooFar {
				z.matchLength = zMinMatch - 1
			}
		}
		switch {
		case z.prevLength >= zMinMatch && z.matchLength <= z.prevLength:
			maxInsert := z.strstart + z.lookahead - zMinMatch
			flush := z.t.tallyDist(z.strstart-1-z.prevMatch, z.prevLength-zMinMatch)
			z.lookahead -= z.prevLength - 1
			for n := z.prevLength - 2; n > 0; n-- {
				z.strstart++
				if z.strstart <= maxInsert {
					z.insertString(z.strstart)
				}
			}
			z.prevLength = 0
			z.matchAvailable = false
			z.matchLength = zMinMatch - 1
			z.strstart++
			if flush {
				z.flushBlock(false)
			}
		case z.matchAvailable:
			if z.t.tallyLit(z.window[z.strstart-1]) {
				z.flushBlock(false)
			}
			z.strstart++
			z.lookahead--
		default:
			z.matchAvailable = true
			z.strstart++
			z.lookahead--
		}
	}
	if z.matchAvailable {
		z.t.tallyLit(z.window[z.strstart-1])
		z.matchAvailable = false
	}
	z.insert = min(z.strstart, zMinMatch-1)
	if z.t.syms > 0 {
		z.flushBlock(false)
	}
}

// flushBlock ends the block from blockStart to strstart.
func (z *zdeflater) flushBlock(last bool) {
	var stored []byte
	if z.blockStart >= 0 {
		stored = z.window[z.blockStart:z.strstart]
	}
	z.t.flushBlock(stored, z.strstart-z.blockStart, last)
	z.blockStart = z.strstart
}
