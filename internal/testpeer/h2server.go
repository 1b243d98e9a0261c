package testpeer

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
)

// H2Setting is one SETTINGS parameter of an H2Server's preface.
type H2Setting struct {
	ID  uint16
	Val uint32
}

// HTTP/2 SETTINGS identifiers an H2Server understands (RFC 9113 6.5.2).
const (
	H2HeaderTableSize      uint16 = 0x1
	H2MaxConcurrentStreams uint16 = 0x3
	H2InitialWindowSize    uint16 = 0x4
)

// H2Server is a minimal HTTP/2 server for benchmarks and allocation
// budgets: it answers every request, once the request's END_STREAM has
// arrived, with :status 200, content-length, the fields of Head and Body. It
// honours the client's flow-control windows, gives back the credit of
// request bodies at once, answers PING and SETTINGS, and allocates nothing
// per request. The first response on a connection adds its fields to the
// HPACK dynamic table and later ones refer to them, as real servers do.
//
// The zero value serves an empty body and announces
// SETTINGS_MAX_CONCURRENT_STREAMS 100. Set the fields before the first
// ServeConn and leave them; an H2Server may serve many connections at
// once.
type H2Server struct {
	// Settings are the server preface's SETTINGS, in order; nil means
	// MAX_CONCURRENT_STREAMS 100.
	Settings []H2Setting
	// ConnWindow, if not zero, is a WINDOW_UPDATE on the connection sent
	// after the preface's SETTINGS.
	ConnWindow uint32
	// Head are the response fields after :status and content-length,
	// lower-case names.
	Head [][2]string
	// Body is every response's body.
	Body []byte
}

const (
	h2Preface     = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	h2MaxFrame    = 16384
	h2InitWindow  = 65535
	h2FlushAt     = 256 << 10
	h2MaxInbound  = 1 << 24
	h2FrameData   = 0x0
	h2FrameHdrs   = 0x1
	h2FrameRST    = 0x3
	h2FrameSet    = 0x4
	h2FramePing   = 0x6
	h2FrameWinUpd = 0x8
	h2FlagEnd     = 0x1 // END_STREAM, ACK
	h2FlagEndHdrs = 0x4
)

// ListenTLS serves s over TLS (Localhost, ALPN h2) on 127.0.0.1 until the
// test ends, closing the connections the client left open. The URL is
// "https://" + Addr + "/"; trust Localhost(tb).Roots.
func (s *H2Server) ListenTLS(tb testing.TB) *Server {
	tb.Helper()
	srv := ListenTLS(tb, s.script, "h2")
	tb.Cleanup(srv.CloseConns)
	return srv
}

// Listen serves s over plain TCP (prior knowledge) on 127.0.0.1 until the
// test ends, closing the connections the client left open.
func (s *H2Server) Listen(tb testing.TB) *Server {
	tb.Helper()
	srv := Listen(tb, s.script)
	tb.Cleanup(srv.CloseConns)
	return srv
}

func (s *H2Server) script(c net.Conn) error { s.ServeConn(c); return nil }

// h2Pending is a response body still being sent.
type h2Pending struct {
	id     uint32
	off    int
	window int64
}

// ServeConn runs the server side of nc until nc fails or the client breaks
// the protocol, then closes nc.
func (s *H2Server) ServeConn(nc net.Conn) {
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 64<<10)
	pre := make([]byte, len(h2Preface))
	if _, err := io.ReadFull(br, pre); err != nil || string(pre) != h2Preface {
		return
	}
	fields := append([][2]string{{"content-length", strconv.Itoa(len(s.Body))}}, s.Head...)
	first, again := h2Blocks(fields)
	literal := h2LiteralBlock(fields)

	out := make([]byte, 0, 64<<10)
	settings := s.Settings
	if settings == nil {
		settings = []H2Setting{{H2MaxConcurrentStreams, 100}}
	}
	out = h2AppendFrame(out, 6*len(settings), h2FrameSet, 0, 0)
	for _, st := range settings {
		out = binary.BigEndian.AppendUint16(out, st.ID)
		out = binary.BigEndian.AppendUint32(out, st.Val)
	}
	if s.ConnWindow != 0 {
		out = h2AppendFrame(out, 4, h2FrameWinUpd, 0, 0)
		out = binary.BigEndian.AppendUint32(out, s.ConnWindow)
	}

	var conn int64 = h2InitWindow
	streamInit := int64(h2InitWindow)
	tableSize := uint32(4096) // the client's decoder table, until it says otherwise
	indexed := false          // the dynamic table holds fields
	var ps []h2Pending
	var uploads []uint32 // streams whose request body is still coming
	respond := func(id uint32) {
		blk := literal
		switch {
		case indexed:
			blk = again
		case h2TableNeed(fields) <= tableSize:
			blk, indexed = first, true
		}
		flags := byte(h2FlagEndHdrs)
		if len(s.Body) == 0 {
			flags |= h2FlagEnd
		}
		out = h2AppendFrame(out, len(blk), h2FrameHdrs, flags, id)
		out = append(out, blk...)
		if len(s.Body) > 0 {
			ps = append(ps, h2Pending{id: id, window: streamInit})
		}
	}
	head := make([]byte, 9)
	payload := make([]byte, 0, h2MaxFrame)
	for {
		// Send what the windows allow.
		for i := 0; i < len(ps); i++ {
			p := &ps[i]
			for p.off < len(s.Body) && p.window > 0 && conn > 0 && len(out) < h2FlushAt {
				n := int(min(int64(len(s.Body)-p.off), p.window, conn, h2MaxFrame))
				p.window -= int64(n)
				conn -= int64(n)
				var flags byte
				if p.off+n == len(s.Body) {
					flags = h2FlagEnd
				}
				out = h2AppendFrame(out, n, h2FrameData, flags, p.id)
				out = append(out, s.Body[p.off:p.off+n]...)
				p.off += n
			}
			if p.off == len(s.Body) {
				ps = append(ps[:i], ps[i+1:]...)
				i--
			}
		}
		if len(out) > 0 && (br.Buffered() == 0 || len(out) >= h2FlushAt) {
			if _, err := nc.Write(out); err != nil {
				return
			}
			out = out[:0]
		}
		if br.Buffered() == 0 && h2Sendable(ps, conn, len(s.Body)) {
			continue
		}
		if _, err := io.ReadFull(br, head); err != nil {
			return
		}
		n := int(head[0])<<16 | int(head[1])<<8 | int(head[2])
		if n > h2MaxInbound {
			return
		}
		if n > cap(payload) {
			payload = make([]byte, n)
		}
		p := payload[:n]
		if _, err := io.ReadFull(br, p); err != nil {
			return
		}
		typ, flags, id := head[3], head[4], binary.BigEndian.Uint32(head[5:])&(1<<31-1)
		switch typ {
		case h2FrameSet:
			if flags&h2FlagEnd == 0 {
				for i := 0; i+6 <= len(p); i += 6 {
					v := binary.BigEndian.Uint32(p[i+2:])
					switch binary.BigEndian.Uint16(p[i:]) {
					case H2InitialWindowSize:
						streamInit = int64(v)
					case H2HeaderTableSize:
						tableSize = v
					}
				}
				out = h2AppendFrame(out, 0, h2FrameSet, h2FlagEnd, 0)
			}
		case h2FrameHdrs:
			if flags&h2FlagEnd != 0 {
				respond(id)
			} else {
				uploads = append(uploads, id)
			}
		case h2FrameData:
			if len(p) > 0 {
				out = h2AppendWindowUpdate(out, 0, uint32(len(p)))
				out = h2AppendWindowUpdate(out, id, uint32(len(p)))
			}
			if flags&h2FlagEnd != 0 {
				for i, u := range uploads {
					if u == id {
						uploads = append(uploads[:i], uploads[i+1:]...)
						respond(id)
						break
					}
				}
			}
		case h2FrameWinUpd:
			if len(p) < 4 {
				return
			}
			inc := int64(binary.BigEndian.Uint32(p) & (1<<31 - 1))
			if id == 0 {
				conn += inc
			}
			for i := range ps {
				if ps[i].id == id {
					ps[i].window += inc
				}
			}
		case h2FrameRST:
			for i := range ps {
				if ps[i].id == id {
					ps = append(ps[:i], ps[i+1:]...)
					break
				}
			}
		case h2FramePing:
			if flags&h2FlagEnd == 0 && len(p) == 8 {
				out = h2AppendFrame(out, 8, h2FramePing, h2FlagEnd, 0)
				out = append(out, p...)
			}
		}
	}
}

// h2Sendable reports whether some pending body may send now.
func h2Sendable(ps []h2Pending, conn int64, size int) bool {
	if conn <= 0 {
		return false
	}
	for _, p := range ps {
		if p.off < size && p.window > 0 {
			return true
		}
	}
	return false
}

// h2Blocks encodes :status 200 and fields twice: first adding every field
// to the dynamic table (literal with incremental indexing, new name), and
// again referring to them (dynamic indexes 62 and up, newest first).
func h2Blocks(fields [][2]string) (first, again []byte) {
	first = append(first, 0x88) // :status 200, static index 8
	again = append(again, 0x88)
	for i, f := range fields {
		first = append(first, 0x40)
		first = h2AppendString(first, f[0])
		first = h2AppendString(first, f[1])
		again = h2AppendInt(again, 7, 0x80, uint64(62+len(fields)-1-i))
	}
	return first, again
}

// h2LiteralBlock encodes :status 200 and fields as literals without
// indexing, for clients whose table cannot hold them.
func h2LiteralBlock(fields [][2]string) []byte {
	blk := []byte{0x88}
	for _, f := range fields {
		blk = append(blk, 0x00)
		blk = h2AppendString(blk, f[0])
		blk = h2AppendString(blk, f[1])
	}
	return blk
}

// h2TableNeed is the dynamic table size fields take (RFC 7541 4.1).
func h2TableNeed(fields [][2]string) uint32 {
	var n uint32
	for _, f := range fields {
		n += uint32(32 + len(f[0]) + len(f[1]))
	}
	return n
}

// h2AppendString appends s as an HPACK string literal, not Huffman-coded.
func h2AppendString(dst []byte, s string) []byte {
	dst = h2AppendInt(dst, 7, 0, uint64(len(s)))
	return append(dst, s...)
}

// h2AppendInt appends v as an HPACK integer with an n-bit prefix, the first
// byte's other bits set from first (RFC 7541 5.1).
func h2AppendInt(dst []byte, n uint, first byte, v uint64) []byte {
	limit := uint64(1)<<n - 1
	if v < limit {
		return append(dst, first|byte(v))
	}
	dst = append(dst, first|byte(limit))
	for v -= limit; v >= 128; v >>= 7 {
		dst = append(dst, byte(v&0x7f|0x80))
	}
	return append(dst, byte(v))
}

func h2AppendFrame(dst []byte, length int, typ, flags byte, id uint32) []byte {
	dst = append(dst, byte(length>>16), byte(length>>8), byte(length), typ, flags)
	return binary.BigEndian.AppendUint32(dst, id)
}

func h2AppendWindowUpdate(dst []byte, id, inc uint32) []byte {
	dst = h2AppendFrame(dst, 4, h2FrameWinUpd, 0, id)
	return binary.BigEndian.AppendUint32(dst, inc)
}
