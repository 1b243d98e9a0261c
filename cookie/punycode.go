package cookie

import (
	"errors"
	"math"
	"strings"
	"unicode/utf8"
)

// Punycode (RFC 3492) for IDNA A-labels. golang.org/x/net/idna cannot be
// used: it needs golang.org/x/text, which go.mod does not list. The jar
// therefore applies a reduced IDNA: Unicode lower-casing, then Punycode per
// label, and a check that every "xn--" label decodes to a non-ASCII label.
// NFC normalisation and the UTS 46 mapping table are not applied.

const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
	maxLabelLen   = 63
)

var errPunycode = errors.New("cookie: invalid punycode")

func pcAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}

func pcThreshold(k, bias int) int {
	switch {
	case k <= bias:
		return pcTMin
	case k >= bias+pcTMax:
		return pcTMax
	}
	return k - bias
}

func pcDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

// punyEncode returns the Punycode encoding of label (without "xn--").
func punyEncode(label string) (string, error) {
	runes := []rune(label)
	var out strings.Builder
	for _, r := range runes {
		if r < 0x80 {
			out.WriteByte(byte(r))
		}
	}
	b := out.Len()
	h := b
	if b > 0 {
		out.WriteByte('-')
	}
	n, delta, bias := pcInitialN, 0, pcInitialBias
	for h < len(runes) {
		m := math.MaxInt32
		for _, r := range runes {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		if (m - n) > (math.MaxInt32-delta)/(h+1) {
			return "", errPunycode
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range runes {
			if int(r) < n {
				delta++
				if delta == math.MaxInt32 {
					return "", errPunycode
				}
			}
			if int(r) != n {
				continue
			}
			q := delta
			for k := pcBase; ; k += pcBase {
				t := pcThreshold(k, bias)
				if q < t {
					break
				}
				out.WriteByte(pcDigit(t + (q-t)%(pcBase-t)))
				q = (q - t) / (pcBase - t)
			}
			out.WriteByte(pcDigit(q))
			bias = pcAdapt(delta, h+1, h == b)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return out.String(), nil
}

// punyDecode decodes a Punycode label (without "xn--").
func punyDecode(s string) (string, error) {
	if len(s) > maxLabelLen {
		return "", errPunycode
	}
	var output []rune
	rest := s
	if pos := strings.LastIndexByte(s, '-'); pos >= 0 {
		for i := 0; i < pos; i++ {
			if s[i] >= 0x80 {
				return "", errPunycode
			}
			output = append(output, rune(s[i]))
		}
		rest = s[pos+1:]
	}
	n, i, bias := pcInitialN, 0, pcInitialBias
	for len(rest) > 0 {
		oldi, w := i, 1
		for k := pcBase; ; k += pcBase {
			if len(rest) == 0 {
				return "", errPunycode
			}
			c := rest[0]
			rest = rest[1:]
			var d int
			switch {
			case 'a' <= c && c <= 'z':
				d = int(c - 'a')
			case 'A' <= c && c <= 'Z':
				d = int(c - 'A')
			case '0' <= c && c <= '9':
				d = int(c-'0') + 26
			default:
				return "", errPunycode
			}
			if d > (math.MaxInt32-i)/w {
				return "", errPunycode
			}
			i += d * w
			t := pcThreshold(k, bias)
			if d < t {
				break
			}
			if w > math.MaxInt32/(pcBase-t) {
				return "", errPunycode
			}
			w *= pcBase - t
		}
		l := len(output) + 1
		bias = pcAdapt(i-oldi, l, oldi == 0)
		if i/l > math.MaxInt32-n {
			return "", errPunycode
		}
		n += i / l
		i %= l
		if n > utf8.MaxRune || (n >= 0xD800 && n <= 0xDFFF) {
			return "", errPunycode
		}
		output = append(output, 0)
		copy(output[i+1:], output[i:])
		output[i] = rune(n)
		i++
	}
	return string(output), nil
}
