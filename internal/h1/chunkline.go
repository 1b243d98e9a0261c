package h1

import "errors"

// chunkLineSlack is how far past the extension budget a chunk-size line
// may run (hex digits, CRLF) before the reader calls it too long.
const chunkLineSlack = 25

// errNeedMore reports that a parse needs more bytes than the buffer holds.
var errNeedMore = errors.New("h1: need more bytes")

func chunkErr(detail string, b []byte) error {
	return &ProtocolError{Kind: "chunked", Detail: detail + ": " + quote(b)}
}

// parseChunkLine parses the chunk-size line at the start of b:
//
//	chunk-size [ chunk-ext ] CRLF
//	chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )
//
// It returns the chunk size, the line length (CRLF included) and the count
// of extension bytes. At most 16 hex digits are accepted and the size must
// fit in an int64. extBudget caps the extension bytes: exceeding it is an
// error even before the line ends. errNeedMore means b holds no complete
// line and nothing invalid so far.
func parseChunkLine(b []byte, extBudget int) (size int64, n, ext int, err error) {
	// Look no further than the longest line the budget allows (16 digits,
	// the extensions, CRLF, slack): what lies beyond is "too long" for the
	// caller, however the bytes arrived, so the verdict does not depend on
	// how the input was split.
	if lim := extBudget + chunkLineSlack; len(b) > lim {
		b = b[:lim]
	}
	i := 0
	for ; i < len(b); i++ {
		v, ok := hexVal(b[i])
		if !ok {
			break
		}
		if i == 16 {
			return 0, 0, 0, chunkErr("chunk size has more than 16 hex digits", b[:i+1])
		}
		size = size<<4 | int64(v)
	}
	if i == len(b) {
		return 0, 0, 0, errNeedMore
	}
	if i == 0 {
		return 0, 0, 0, chunkErr("invalid chunk size", b[:1])
	}
	if size < 0 {
		return 0, 0, 0, chunkErr("chunk size overflows int64", b[:i])
	}
	start := i
	for {
		if i-start > extBudget {
			return 0, 0, 0, chunkErr("chunk extensions too long", b[:min(len(b), 32)])
		}
		ws := i
		i = skipBWS(b, i)
		if i == len(b) {
			return 0, 0, 0, errNeedMore
		}
		switch b[i] {
		case '\r':
			if i != ws {
				return 0, 0, 0, chunkErr("whitespace before CRLF in chunk-size line", b[:i])
			}
			if i+1 == len(b) {
				return 0, 0, 0, errNeedMore
			}
			if b[i+1] != '\n' {
				return 0, 0, 0, chunkErr("bare CR in chunk-size line", b[:i+2])
			}
			if i-start > extBudget {
				return 0, 0, 0, chunkErr("chunk extensions too long", b[:min(len(b), 32)])
			}
			return size, i + 2, i - start, nil
		case ';':
		default:
			return 0, 0, 0, chunkErr("invalid byte in chunk-size line", b[:i+1])
		}
		i = skipBWS(b, i+1)
		j := i
		for j < len(b) && tokenByte[b[j]] {
			j++
		}
		if j == len(b) {
			return 0, 0, 0, errNeedMore
		}
		if j == i {
			return 0, 0, 0, chunkErr("empty chunk extension name", b[:j+1])
		}
		i = skipBWS(b, j)
		if i == len(b) {
			return 0, 0, 0, errNeedMore
		}
		if b[i] != '=' {
			if i != j && b[i] != ';' {
				return 0, 0, 0, chunkErr("whitespace in chunk extension", b[:i+1])
			}
			continue
		}
		i = skipBWS(b, i+1)
		if i == len(b) {
			return 0, 0, 0, errNeedMore
		}
		if b[i] == '"' {
			i, err = skipQuoted(b, i)
			if err != nil {
				return 0, 0, 0, err
			}
			continue
		}
		j = i
		for j < len(b) && tokenByte[b[j]] {
			j++
		}
		if j == len(b) {
			return 0, 0, 0, errNeedMore
		}
		if j == i {
			return 0, 0, 0, chunkErr("empty chunk extension value", b[:j+1])
		}
		i = j
	}
}

// skipQuoted returns the offset after the quoted-string starting at b[i].
func skipQuoted(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			i++
			if i == len(b) {
				return 0, errNeedMore
			}
			if !valueByte[b[i]] {
				return 0, chunkErr("invalid quoted-pair in chunk extension", b[:i+1])
			}
		case !valueByte[c]:
			return 0, chunkErr("invalid byte in quoted chunk extension", b[:i+1])
		}
	}
	return 0, errNeedMore
}

func skipBWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
