package fingerprint

import (
	"slices"
	"strings"

	"github.com/guise-http/guise/fields"
)

// HTTPRequest is an HTTP request head as JA4H sees it. Header holds the
// regular fields in wire order and case, without HTTP/2 pseudo-headers.
// Target is the request target (":path" for HTTP/2); JA4H does not use it.
type HTTPRequest struct {
	Method string
	Target string
	Proto  string // "HTTP/1.0", "HTTP/1.1", "HTTP/2" or "HTTP/3"
	Header []fields.Field
}

// JA4H returns the FoxIO JA4H fingerprint of the request, e.g.
// "ge11cr13enus_88d2d584d47f_0f2659b474bf_161698816dab":
//
//   - a: first two letters of the method, lowercased; version ("10", "11",
//     "20", "30"); 'c' if a Cookie field is present else 'n'; 'r' if a
//     Referer field is present else 'n'; the number of fields other than
//     Cookie and Referer (two digits, capped at 99); the first
//     Accept-Language tag lowercased without '-', cut or padded with '0' to
//     four characters ("0000" without the field);
//   - b: truncated SHA-256 of the names of those fields in wire order and
//     case, joined by ',';
//   - c: that of the cookie names, sorted, joined by ',';
//   - d: that of the cookies ("name=value"), in the same order.
//
// Cookie and Referer are matched case-insensitively; every Cookie field is
// split on ';'. An empty list hashes to "000000000000".
func (r *HTTPRequest) JA4H() string { return r.ja4h(true, false) }

// JA4HR returns JA4H_r: JA4H with the lists in clear instead of hashed.
func (r *HTTPRequest) JA4HR() string { return r.ja4h(false, false) }

// JA4HO returns JA4H_o: JA4H with the cookies in wire order.
func (r *HTTPRequest) JA4HO() string { return r.ja4h(true, true) }

// JA4HRO returns JA4H_ro: JA4H_r with the cookies in wire order.
func (r *HTTPRequest) JA4HRO() string { return r.ja4h(false, true) }

type ja4hCookie struct{ name, item string }

func (r *HTTPRequest) ja4h(hashed, original bool) string {
	var b []byte
	b = appendMethod2(b, r.Method)
	b = append(b, ja4hVersion(r.Proto)...)

	hasCookie, hasReferer := false, false
	n := 0
	var lang string
	langSeen := false
	var cookies []ja4hCookie
	for _, f := range r.Header {
		switch {
		case fields.EqualFold(f.Name, "cookie"):
			hasCookie = true
			for crumb := range strings.SplitSeq(f.Value, ";") {
				crumb = strings.TrimSpace(crumb)
				if crumb == "" {
					continue
				}
				name, _, _ := strings.Cut(crumb, "=")
				cookies = append(cookies, ja4hCookie{strings.TrimSpace(name), crumb})
			}
		case fields.EqualFold(f.Name, "referer"):
			hasReferer = true
		default:
			n++
			if !langSeen && fields.EqualFold(f.Name, "accept-language") {
				lang, langSeen = f.Value, true
			}
		}
	}
	b = append(b, marker(hasCookie, 'c'), marker(hasReferer, 'r'))
	b = appendCount2(b, n)
	b = appendLang4(b, lang)

	b = append(b, '_')
	mark := len(b)
	first := true
	for _, f := range r.Header {
		if fields.EqualFold(f.Name, "cookie") || fields.EqualFold(f.Name, "referer") {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, f.Name...)
	}
	if hashed {
		b = hashSection(b, mark)
	}

	if !original {
		slices.SortStableFunc(cookies, func(x, y ja4hCookie) int { return strings.Compare(x.name, y.name) })
	}
	b = append(b, '_')
	mark = len(b)
	for i, c := range cookies {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c.name...)
	}
	if hashed {
		b = hashSection(b, mark)
	}
	b = append(b, '_')
	mark = len(b)
	for i, c := range cookies {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c.item...)
	}
	if hashed {
		b = hashSection(b, mark)
	}
	return string(b)
}

func marker(present bool, c byte) byte {
	if present {
		return c
	}
	return 'n'
}

// appendMethod2 appends the first two bytes of the method, ASCII
// lowercased, padded with '0' for a shorter method.
func appendMethod2(b []byte, m string) []byte {
	for i := range 2 {
		c := byte('0')
		if i < len(m) {
			c = lowerASCII(m[i])
		}
		b = append(b, c)
	}
	return b
}

// ja4hVersion maps a protocol name to its two JA4H digits.
func ja4hVersion(proto string) string {
	switch proto {
	case "HTTP/1.0":
		return "10"
	case "HTTP/1.1":
		return "11"
	case "HTTP/2", "HTTP/2.0":
		return "20"
	case "HTTP/3", "HTTP/3.0":
		return "30"
	}
	return "00"
}

// appendLang4 appends the JA4H language: the first tag of an
// Accept-Language value (up to ',' or ';'), lowercased, '-' removed, cut or
// padded with '0' to four bytes.
func appendLang4(b []byte, v string) []byte {
	n := 0
	for i := 0; i < len(v) && n < 4; i++ {
		c := v[i]
		if c == ',' || c == ';' {
			break
		}
		if c == '-' || c == ' ' || c == '\t' {
			continue
		}
		b = append(b, lowerASCII(c))
		n++
	}
	for ; n < 4; n++ {
		b = append(b, '0')
	}
	return b
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
