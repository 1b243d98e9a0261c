package ws

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/klauspost/compress/flate"
)

// Deflate is the permessage-deflate agreement of a handshake (RFC 7692).
// The zero value is no compression.
type Deflate struct {
	Enabled bool
	// ServerNoContextTakeover and ClientNoContextTakeover say that the
	// server's or this side's messages are each compressed on their own.
	ServerNoContextTakeover, ClientNoContextTakeover bool
	// ServerMaxWindowBits and ClientMaxWindowBits are the LZ77 window sizes
	// (8 to 15) each side compresses with; 0 means 15.
	ServerMaxWindowBits, ClientMaxWindowBits int
}

// Negotiate reads the server's Sec-WebSocket-Extensions answer against the
// offer this side sent. An answer that names an extension or parameter not
// offered, repeats one, or gives a bad value is a *HandshakeError: the
// client must fail the connection (RFC 6455 section 9.1, RFC 7692 section
// 5).
func Negotiate(offer, answer string) (Deflate, error) {
	var d Deflate
	offered, offeredBits := false, false
	for _, ext := range splitList(offer) {
		name, params := splitExt(ext)
		if strings.EqualFold(name, "permessage-deflate") {
			offered = true
			for _, p := range params {
				if k, _ := splitParam(p); strings.EqualFold(k, "client_max_window_bits") {
					offeredBits = true
				}
			}
		}
	}
	for _, ext := range splitList(answer) {
		name, params := splitExt(ext)
		if !strings.EqualFold(name, "permessage-deflate") || !offered {
			return Deflate{}, &HandshakeError{"extension " + strconv.Quote(name) + " was not offered"}
		}
		if d.Enabled {
			return Deflate{}, &HandshakeError{"permessage-deflate accepted twice"}
		}
		d.Enabled = true
		seen := map[string]bool{}
		for _, p := range params {
			k, v := splitParam(p)
			k = strings.ToLower(k)
			if seen[k] {
				return Deflate{}, &HandshakeError{"permessage-deflate parameter " + k + " repeated"}
			}
			seen[k] = true
			switch k {
			case "server_no_context_takeover", "client_no_context_takeover":
				if v != "" {
					return Deflate{}, &HandshakeError{"permessage-deflate parameter " + k + " has a value"}
				}
				if k[0] == 's' {
					d.ServerNoContextTakeover = true
				} else {
					d.ClientNoContextTakeover = true
				}
			case "server_max_window_bits", "client_max_window_bits":
				n, err := strconv.Atoi(v)
				if err != nil || n < 8 || n > 15 || v[0] == '0' {
					return Deflate{}, &HandshakeError{"permessage-deflate " + k + " " + strconv.Quote(v)}
				}
				if k[0] == 's' {
					d.ServerMaxWindowBits = n
				} else {
					if !offeredBits {
						return Deflate{}, &HandshakeError{"client_max_window_bits was not offered"}
					}
					d.ClientMaxWindowBits = n
				}
			default:
				return Deflate{}, &HandshakeError{"permessage-deflate parameter " + strconv.Quote(k) + " unknown"}
			}
		}
	}
	return d, nil
}

func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func splitExt(ext string) (string, []string) {
	parts := strings.Split(ext, ";")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts[0], parts[1:]
}

func splitParam(p string) (string, string) {
	k, v, _ := strings.Cut(p, "=")
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	return strings.TrimSpace(k), v
}

// tail ends every compressed message (RFC 7692 section 7.2.2), and then an
// empty final block so that the inflater stops cleanly at the message's end.
var tail = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

const maxWindow = 1 << 15

// inflater undoes the peer's compression, keeping the last 32 KiB of output
// as the next message's dictionary unless the peer takes no context over.
type inflater struct {
	r        io.ReadCloser
	src      bytes.Reader
	window   []byte
	takeover bool
}

// inflate appends the inflation of in (which it may change: the tail is
// appended) to dst, failing with 1009 past limit bytes and 1007 on data
// that does not inflate.
func (f *inflater) inflate(dst, in []byte, limit int64) ([]byte, []byte, error) {
	in = append(in, tail...)
	f.src.Reset(in)
	var dict []byte
	if f.takeover {
		dict = f.window[max(0, len(f.window)-maxWindow):]
	}
	if f.r == nil {
		f.r = flate.NewReaderDict(&f.src, dict)
	} else if err := f.r.(flate.Resetter).Reset(&f.src, dict); err != nil {
		return dst, in, fail(StatusInvalidData, "inflate: "+err.Error())
	}
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := f.r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if int64(len(dst)-start) > limit {
			return dst, in, fail(StatusTooBig, "inflated message over the limit")
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			var ce flate.CorruptInputError
			if errors.As(err, &ce) || errors.Is(err, io.ErrUnexpectedEOF) {
				return dst, in, fail(StatusInvalidData, "compressed data does not inflate")
			}
			return dst, in, fail(StatusInvalidData, "inflate: "+err.Error())
		}
	}
	if f.takeover {
		f.window = append(f.window, dst[start:]...)
		if len(f.window) > 2*maxWindow {
			n := copy(f.window, f.window[len(f.window)-maxWindow:])
			f.window = f.window[:n]
		}
	}
	return dst, in, nil
}

// deflater compresses this side's messages as both browsers' zlib does
// (zdeflate.go): level 6, memLevel 8, raw deflate with the negotiated
// window (9 bits at least, as Chromium asks for 9 when 8 is agreed),
// sync-flushed per message, the stream reset before each message without
// context takeover. An empty message is the single byte 00, as Chromium
// sends it.
type deflater struct {
	z        *zdeflater
	takeover bool
	bits     int
}

// compress appends p's compressed form, without the tail, to dst.
func (d *deflater) compress(dst, p []byte) ([]byte, error) {
	if d.z == nil {
		bits := d.bits
		if bits <= 0 || bits > 15 {
			bits = 15
		}
		d.z = newZDeflater(max(bits, 9))
	} else if !d.takeover {
		d.z.reset()
	}
	if len(p) == 0 {
		return append(dst, 0), nil // one empty fixed block, unterminated
	}
	return d.z.message(dst, p), nil
}
