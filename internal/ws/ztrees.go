package ws

// ztrees is the block writer of zdeflater: zlib's trees.c as documented
// (RFC 1951 blocks, with zlib's own Huffman construction: a heap whose ties
// go to the shallower subtree, lengths capped by moving leaves, codes in
// canonical order) and its choice of block type by exact bit cost.

const (
	zLiterals    = 256
	zLengthCode  = 29
	zLCodes      = zLiterals + 1 + zLengthCode // 286
	zDCodes      = 30
	zBLCodes     = 19
	zHeapSize    = 2*zLCodes + 1
	zMaxBits     = 15
	zMaxBLBits   = 7
	zEndBlock    = 256
	zRep3to6     = 16
	zRepZ3to10   = 17
	zRepZ11to138 = 18
)

var (
	zExtraLBits  = [zLengthCode]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	zExtraDBits  = [zDCodes]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	zExtraBLBits = [zBLCodes]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7}
	zBLOrder     = [zBLCodes]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// zTables are the length and distance code maps and the fixed trees,
// built once in their declaration.
var zTables = func() (t struct {
	lengthCode [256]uint8 // match length - 3 -> length code
	baseLength [zLengthCode]uint16
	distCode   [512]uint8 // see dCode
	baseDist   [zDCodes]uint16
	fixedL     [zLCodes + 2]znode
	fixedD     [zDCodes]znode
}) {
	length := 0
	code := 0
	for ; code < zLengthCode-1; code++ {
		t.baseLength[code] = uint16(length)
		for range 1 << zExtraLBits[code] {
			t.lengthCode[length] = uint8(code)
			length++
		}
	}
	// Length 258 has two codes; the one without extra bits wins.
	t.lengthCode[length-1] = uint8(code)
	dist := 0
	for code = 0; code < 16; code++ {
		t.baseDist[code] = uint16(dist)
		for range 1 << zExtraDBits[code] {
			t.distCode[dist] = uint8(code)
			dist++
		}
	}
	dist >>= 7
	for ; code < zDCodes; code++ {
		t.baseDist[code] = uint16(dist << 7)
		for range 1 << (zExtraDBits[code] - 7) {
			t.distCode[256+dist] = uint8(code)
			dist++
		}
	}
	var count [zMaxBits + 1]uint16
	for n := range t.fixedL {
		l := uint16(8)
		switch {
		case n >= 144 && n < 256:
			l = 9
		case n >= 256 && n < 280:
			l = 7
		}
		t.fixedL[n].len = l
		count[l]++
	}
	genCodes(t.fixedL[:], len(t.fixedL)-1, &count)
	for n := range t.fixedD {
		t.fixedD[n] = znode{len: 5, code: reverseBits(uint16(n), 5)}
	}
	return t
}()

// dCode is the distance code of dist-1.
func dCode(dist int) int {
	if dist < 256 {
		return int(zTables.distCode[dist])
	}
	return int(zTables.distCode[256+dist>>7])
}

// znode is a Huffman tree node: a symbol's frequency and code, or an
// inner node's; its parent while the tree is built, then its bit length.
type znode struct {
	freq, code, dad, len uint16
}

// ztree is one of a block's three trees with what describes it.
type ztree struct {
	nodes   []znode
	fixed   []znode // the fixed tree's lengths, for the fixed cost; nil for the bit-length tree
	extra   []uint8
	base    int // first symbol with extra bits
	elems   int
	maxLen  int
	maxCode int // largest symbol with a non-zero frequency
}

type ztrees struct {
	l, d, bl ztree
	lnodes   [zHeapSize]znode
	dnodes   [2*zDCodes + 1]znode
	blnodes  [2*zBLCodes + 1]znode

	heap             [zHeapSize]int
	heapLen, heapMax int
	depth            [zHeapSize]uint8
	blCount          [zMaxBits + 1]uint16

	symDist []uint16 // 0 for a literal
	symLC   []uint8  // the literal, or the match length - 3
	syms    int

	optLen, staticLen int // the block's bits with its own and with the fixed trees

	out  []byte
	bits uint64
	nb   uint
}

func (t *ztrees) reset() {
	if t.symDist == nil {
		t.symDist = make([]uint16, zSymEnd)
		t.symLC = make([]uint8, zSymEnd)
		t.l = ztree{nodes: t.lnodes[:], fixed: zTables.fixedL[:], extra: zExtraLBits[:], base: zLiterals + 1, elems: zLCodes, maxLen: zMaxBits}
		t.d = ztree{nodes: t.dnodes[:], fixed: zTables.fixedD[:], extra: zExtraDBits[:], elems: zDCodes, maxLen: zMaxBits}
		t.bl = ztree{nodes: t.blnodes[:], extra: zExtraBLBits[:], elems: zBLCodes, maxLen: zMaxBLBits}
	}
	t.bits, t.nb = 0, 0
	t.initBlock()
}

func (t *ztrees) initBlock() {
	for i := range zLCodes {
		t.lnodes[i].freq = 0
	}
	for i := range zDCodes {
		t.dnodes[i].freq = 0
	}
	for i := range zBLCodes {
		t.blnodes[i].freq = 0
	}
	t.lnodes[zEndBlock].freq = 1
	t.optLen, t.staticLen, t.syms = 0, 0, 0
}

// tallyLit records a literal; it reports whether the block is full.
func (t *ztrees) tallyLit(c byte) bool {
	t.symDist[t.syms], t.symLC[t.syms] = 0, c
	t.syms++
	t.lnodes[c].freq++
	return t.syms == zSymEnd
}

// tallyDist records a match of length lc+3 at distance dist; it reports
// whether the block is full.
func (t *ztrees) tallyDist(dist, lc int) bool {
	t.symDist[t.syms], t.symLC[t.syms] = uint16(dist), uint8(lc)
	t.syms++
	t.lnodes[int(zTables.lengthCode[lc])+zLiterals+1].freq++
	t.dnodes[dCode(dist-1)].freq++
	return t.syms == zSymEnd
}

func (t *ztrees) sendBits(v uint16, n int) {
	t.bits |= uint64(v) << t.nb
	t.nb += uint(n)
	for t.nb >= 8 {
		t.out = append(t.out, byte(t.bits))
		t.bits >>= 8
		t.nb -= 8
	}
}

func (t *ztrees) windup() {
	if t.nb > 0 {
		t.out = append(t.out, byte(t.bits))
	}
	t.bits, t.nb = 0, 0
}

// storedBlock writes buf as a stored block.
func (t *ztrees) storedBlock(buf []byte, last bool) {
	t.sendBits(b2u(last), 3)
	t.windup()
	n := uint16(len(buf))
	t.out = append(t.out, byte(n), byte(n>>8), byte(^n), byte(^n>>8))
	t.out = append(t.out, buf...)
}

func b2u(b bool) uint16 {
	if b {
		return 1
	}
	return 0
}

// flushBlock writes the block of storedLen input bytes (stored holds
// them, or is nil when they are no longer in the window) as the cheapest
// of a stored, fixed or dynamic block, as zlib's _tr_flush_block.
func (t *ztrees) flushBlock(stored []byte, storedLen int, last bool) {
	t.buildTree(&t.l)
	t.buildTree(&t.d)
	maxBLIndex := t.buildBLTree()
	optLenb := (t.optLen + 3 + 7) >> 3
	staticLenb := (t.staticLen + 3 + 7) >> 3
	if staticLenb <= optLenb {
		optLenb = staticLenb
	}
	switch {
	case storedLen+4 <= optLenb && stored != nil:
		t.storedBlock(stored, last)
	case staticLenb == optLenb:
		t.sendBits(2+b2u(last), 3)
		t.compressBlock(zTables.fixedL[:], zTables.fixedD[:])
	default:
		t.sendBits(4+b2u(last), 3)
		t.sendAllTrees(t.l.maxCode+1, t.d.maxCode+1, maxBLIndex+1)
		t.compressBlock(t.lnodes[:], t.dnodes[:])
	}
	t.initBlock()
	if last {
		t.windup()
	}
}

func (t *ztrees) compressBlock(ltree, dtree []znode) {
	for i := range t.syms {
		dist, lc := int(t.symDist[i]), int(t.symLC[i])
		if dist == 0 {
			t.sendBits(ltree[lc].code, int(ltree[lc].len))
			continue
		}
		code := int(zTables.lengthCode[lc])
		t.sendBits(ltree[code+zLiterals+1].code, int(ltree[code+zLiterals+1].len))
		if extra := int(zExtraLBits[code]); extra != 0 {
			t.sendBits(uint16(lc-int(zTables.baseLength[code])), extra)
		}
		dist--
		code = dCode(dist)
		t.sendBits(dtree[code].code, int(dtree[code].len))
		if extra := int(zExtraDBits[code]); extra != 0 {
			t.sendBits(uint16(dist-int(zTables.baseDist[code])), extra)
		}
	}
	t.sendBits(ltree[zEndBlock].code, int(ltree[zEndBlock].len))
}

// smaller orders heap entries: by frequency, then the shallower first.
func (t *ztrees) smaller(tree []znode, n, m int) bool {
	return tree[n].freq < tree[m].freq || tree[n].freq == tree[m].freq && t.depth[n] <= t.depth[m]
}

func (t *ztrees) downHeap(tree []znode, k int) {
	v := t.heap[k]
	for j := k << 1; j <= t.heapLen; j <<= 1 {
		if j < t.heapLen && t.smaller(tree, t.heap[j+1], t.heap[j]) {
			j++
		}
		if t.smaller(tree, v, t.heap[j]) {
			break
		}
		t.heap[k] = t.heap[j]
		k = j
	}
	t.heap[k] = v
}

// buildTree builds d's Huffman tree from its frequencies and sets each
// symbol's length and code, adding the block's cost to optLen and
// staticLen.
func (t *ztrees) buildTree(d *ztree) {
	tree := d.nodes
	t.heapLen, t.heapMax = 0, zHeapSize
	maxCode := -1
	for n := range d.elems {
		if tree[n].freq != 0 {
			t.heapLen++
			t.heap[t.heapLen] = n
			maxCode = n
			t.depth[n] = 0
		} else {
			tree[n].len = 0
		}
	}
	// At least two codes, even of unused symbols, as zlib has it.
	for t.heapLen < 2 {
		node := 0
		if maxCode < 2 {
			maxCode++
			node = maxCode
		}
		t.heapLen++
		t.heap[t.heapLen] = node
		tree[node].freq = 1
		t.depth[node] = 0
		t.optLen--
		if d.fixed != nil {
			t.staticLen -= int(d.fixed[node].len)
		}
	}
	d.maxCode = maxCode
	for n := t.heapLen / 2; n >= 1; n-- {
		t.downHeap(tree, n)
	}
	node := d.elems
	for {
		n := t.heap[1]
		t.heap[1] = t.heap[t.heapLen]
		t.heapLen--
		t.downHeap(tree, 1)
		m := t.heap[1]
		t.heapMax--
		t.heap[t.heapMax] = n
		t.heapMax--
		t.heap[t.heapMax] = m
		tree[node].freq = tree[n].freq + tree[m].freq
		t.depth[node] = max(t.depth[n], t.depth[m]) + 1
		tree[n].dad, tree[m].dad = uint16(node), uint16(node)
		t.heap[1] = node
		node++
		t.downHeap(tree, 1)
		if t.heapLen < 2 {
			break
		}
	}
	t.heapMax--
	t.heap[t.heapMax] = t.heap[1]
	t.genBitLen(d)
	genCodes(tree, maxCode, &t.blCount)
}

// genBitLen sets the bit lengths from the tree's shape, no longer than
// d.maxLen: zlib's gen_bitlen, overflow moved down the way it does.
func (t *ztrees) genBitLen(d *ztree) {
	tree := d.nodes
	clear(t.blCount[:])
	tree[t.heap[t.heapMax]].len = 0 // the root
	overflow := 0
	h := t.heapMax + 1
	for ; h < zHeapSize; h++ {
		n := t.heap[h]
		bits := int(tree[tree[n].dad].len) + 1
		if bits > d.maxLen {
			bits = d.maxLen
			overflow++
		}
		tree[n].len = uint16(bits)
		if n > d.maxCode {
			continue // an inner node
		}
		t.blCount[bits]++
		xbits := 0
		if n >= d.base && d.extra != nil && n-d.base < len(d.extra) {
			xbits = int(d.extra[n-d.base])
		}
		f := int(tree[n].freq)
		t.optLen += f * (bits + xbits)
		if d.fixed != nil {
			t.staticLen += f * (int(d.fixed[n].len) + xbits)
		}
	}
	if overflow == 0 {
		return
	}
	for overflow > 0 {
		bits := d.maxLen - 1
		for t.blCount[bits] == 0 {
			bits--
		}
		t.blCount[bits]--
		t.blCount[bits+1] += 2
		t.blCount[d.maxLen]--
		overflow -= 2
	}
	for bits := d.maxLen; bits != 0; bits-- {
		for n := int(t.blCount[bits]); n != 0; {
			h--
			m := t.heap[h]
			if m > d.maxCode {
				continue
			}
			if int(tree[m].len) != bits {
				t.optLen += (bits - int(tree[m].len)) * int(tree[m].freq)
				tree[m].len = uint16(bits)
			}
			n--
		}
	}
}

// genCodes gives the symbols up to maxCode their canonical codes, bit
// reversed for sending, from the count of codes of each length.
func genCodes(tree []znode, maxCode int, count *[zMaxBits + 1]uint16) {
	var next [zMaxBits + 1]uint16
	code := uint16(0)
	for bits := 1; bits <= zMaxBits; bits++ {
		code = (code + count[bits-1]) << 1
		next[bits] = code
	}
	for n := 0; n <= maxCode; n++ {
		l := tree[n].len
		if l == 0 {
			continue
		}
		tree[n].code = reverseBits(next[l], int(l))
		next[l]++
	}
}

func reverseBits(code uint16, n int) uint16 {
	var r uint16
	for range n {
		r = r<<1 | code&1
		code >>= 1
	}
	return r
}

// scanTree counts the bit-length codes tree's lengths will be sent with.
func (t *ztrees) scanTree(tree []znode, maxCode int) {
	prevLen, nextLen := -1, int(tree[0].len)
	count, maxCount, minCount := 0, 7, 4
	if nextLen == 0 {
		maxCount, minCount = 138, 3
	}
	tree[maxCode+1].len = 0xffff // guard
	bl := t.blnodes[:]
	for n := 0; n <= maxCode; n++ {
		curLen := nextLen
		nextLen = int(tree[n+1].len)
		count++
		if count < maxCount && curLen == nextLen {
			continue
		}
		switch {
		case count < minCount:
			bl[curLen].freq += uint16(count)
		case curLen != 0:
			if curLen != prevLen {
				bl[curLen].freq++
			}
			bl[zRep3to6].freq++
		case count <= 10:
			bl[zRepZ3to10].freq++
		default:
			bl[zRepZ11to138].freq++
		}
		count, prevLen = 0, curLen
		switch {
		case nextLen == 0:
			maxCount, minCount = 138, 3
		case curLen == nextLen:
			maxCount, minCount = 6, 3
		default:
			maxCount, minCount = 7, 4
		}
	}
}

// sendTree sends tree's lengths with the bit-length codes.
func (t *ztrees) sendTree(tree []znode, maxCode int) {
	bl := t.blnodes[:]
	send := func(c int) { t.sendBits(bl[c].code, int(bl[c].len)) }
	prevLen, nextLen := -1, int(tree[0].len)
	count, maxCount, minCount := 0, 7, 4
	if nextLen == 0 {
		maxCount, minCount = 138, 3
	}
	for n := 0; n <= maxCode; n++ {
		curLen := nextLen
		nextLen = int(tree[n+1].len)
		count++
		if count < maxCount && curLen == nextLen {
			continue
		}
		switch {
		case count < minCount:
			for ; count > 0; count-- {
				send(curLen)
			}
		case curLen != 0:
			if curLen != prevLen {
				send(curLen)
				count--
			}
			send(zRep3to6)
			t.sendBits(uint16(count-3), 2)
		case count <= 10:
			send(zRepZ3to10)
			t.sendBits(uint16(count-3), 3)
		default:
			send(zRepZ11to138)
			t.sendBits(uint16(count-11), 7)
		}
		count, prevLen = 0, curLen
		switch {
		case nextLen == 0:
			maxCount, minCount = 138, 3
		case curLen == nextLen:
			maxCount, minCount = 6, 3
		default:
			maxCount, minCount = 7, 4
		}
	}
}

// buildBLTree builds the bit-length tree for the literal and distance
// trees' lengths and returns the index in zBLOrder of the last length
// to send.
func (t *ztrees) buildBLTree() int {
	t.scanTree(t.lnodes[:], t.l.maxCode)
	t.scanTree(t.dnodes[:], t.d.maxCode)
	t.buildTree(&t.bl)
	i := zBLCodes - 1
	for ; i >= 3; i-- {
		if t.blnodes[zBLOrder[i]].len != 0 {
			break
		}
	}
	t.optLen += 3*(i+1) + 5 + 5 + 4
	return i
}

func (t *ztrees) sendAllTrees(lcodes, dcodes, blcodes int) {
	t.sendBits(uint16(lcodes-257), 5)
	t.sendBits(uint16(dcodes-1), 5)
	t.sendBits(uint16(blcodes-4), 4)
	for r := range blcodes {
		t.sendBits(t.blnodes[zBLOrder[r]].len, 3)
	}
	t.sendTree(t.lnodes[:], lcodes-1)
	t.sendTree(t.dnodes[:], dcodes-1)
}
