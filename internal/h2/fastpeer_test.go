package h2

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"strconv"
)

// fastPeer is a minimal in-process HTTP/2 server for benchmarks: it answers
// every request, once the request's END_STREAM arrived, with :status 200
// and body bytes of 'x', honouring the client's flow-control windows; it
// gives back the credit of request bodies at once and allocates nothing per
// request.
type fastPeer struct {
	body  int
	block []byte // response header block
}

func newFastPeer(body int) *fastPeer {
	blk := []byte{0x88}           // :status 200
	blk = append(blk, 0x0f, 0x0d) // content-length, literal without indexing
	blk = appendVarInt(blk, 7, 0, uint64(len(strconv.Itoa(body))))
	blk = append(blk, strconv.Itoa(body)...)
	return &fastPeer{body: body, block: blk}
}

type pending struct {
	id     uint32
	left   int
	window int64
}

// serve runs the server side of nc until it fails.
func (fp *fastPeer) serve(nc net.Conn) {
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 64<<10)
	pre := make([]byte, len(preface))
	if _, err := io.ReadFull(br, pre); err != nil {
		return
	}
	fr := frameReader{r: br, max: 1 << 24}
	out := make([]byte, 0, 64<<10)
	out = appendSettings(out, []Setting{{ID: SettingMaxConcurrentStreams, Val: 1000}, {ID: SettingInitialWindowSize, Val: 1 << 20}})
	out = appendWindowUpdate(out, 0, 1<<30)
	zeros := make([]byte, 16384)
	for i := range zeros {
		zeros[i] = 'x'
	}
	var conn int64 = initialWindow
	streamInit := int64(initialWindow)
	var ps []pending
	var uploads []uint32 // streams whose request body is still coming
	respond := func(id uint32) {
		out = appendHeaders(out, id, fp.body == 0, nil, fp.block, 16384)
		if fp.body > 0 {
			ps = append(ps, pending{id, fp.body, streamInit})
		}
	}
	for {
		// Send what the windows allow.
		for i := 0; i < len(ps); i++ {
			p := &ps[i]
			for p.left > 0 && p.window > 0 && conn > 0 && len(out) < 256<<10 {
				n := min(int64(p.left), p.window, conn, 16384)
				p.left -= int(n)
				p.window -= n
				conn -= n
				out = appendData(out, p.id, p.left == 0, zeros[:n])
			}
			if p.left == 0 {
				ps = append(ps[:i], ps[i+1:]...)
				i--
			}
		}
		if len(out) > 0 && (br.Buffered() == 0 || len(out) >= 256<<10) {
			if _, err := nc.Write(out); err != nil {
				return
			}
			out = out[:0]
		}
		if br.Buffered() == 0 && fp.sendable(ps, conn) {
			continue
		}
		h, p, err := fr.next()
		if err != nil {
			return
		}
		switch h.Type {
		case FrameSettings:
			if h.Flags&FlagAck == 0 {
				for i := 0; i+6 <= len(p); i += 6 {
					if SettingID(binary.BigEndian.Uint16(p[i:])) == SettingInitialWindowSize {
						streamInit = int64(binary.BigEndian.Uint32(p[i+2:]))
					}
				}
				out = appendSettingsAck(out)
			}
		case FrameHeaders:
			if h.Flags&FlagEndStream != 0 {
				respond(h.StreamID)
			} else {
				uploads = append(uploads, h.StreamID)
			}
		case FrameData:
			if len(p) > 0 {
				out = appendWindowUpdate(out, 0, uint32(len(p)))
				out = appendWindowUpdate(out, h.StreamID, uint32(len(p)))
			}
			if h.Flags&FlagEndStream != 0 {
				for i, id := range uploads {
					if id == h.StreamID {
						uploads = append(uploads[:i], uploads[i+1:]...)
						respond(id)
						break
					}
				}
			}
		case FrameWindowUpdate:
			inc := int64(binary.BigEndian.Uint32(p) & maxWindow)
			if h.StreamID == 0 {
				conn += inc
			}
			for i := range ps {
				if ps[i].id == h.StreamID {
					ps[i].window += inc
				}
			}
		case FrameRSTStream:
			for i := range ps {
				if ps[i].id == h.StreamID {
					ps = append(ps[:i], ps[i+1:]...)
					break
				}
			}
		case FramePing:
			if h.Flags&FlagAck == 0 {
				out = appendPing(out, true, [8]byte(p))
			}
		}
	}
}

// sendable reports whether some pending body may send now.
func (fp *fastPeer) sendable(ps []pending, conn int64) bool {
	if conn <= 0 {
		return false
	}
	for _, p := range ps {
		if p.left > 0 && p.window > 0 {
			return true
		}
	}
	return false
}
