package cookie

import (
	"net/netip"
	"strings"
	"unicode/utf8"
)

const maxHostLen = 253

// canonicalHost returns the canonical form of a host name or domain
// attribute: ASCII lower case, one trailing dot removed, non-ASCII labels
// converted to A-labels, brackets removed from IPv6 literals. It reports
// false for names that cannot be a host: empty labels, over-long names or
// labels, bytes that never appear in a host, or "xn--" labels that do not
// decode to a non-ASCII label (x/net/idna issue 78760). The common case
// (already canonical) does not allocate.
func canonicalHost(h string) (string, bool) {
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	if strings.HasSuffix(h, ".") {
		h = h[:len(h)-1]
	}
	if h == "" || len(h) > 4*maxHostLen || strings.IndexByte(h, '%') >= 0 {
		// '%' would only be an IPv6 zone, which no cookie host carries.
		return "", false
	}
	if _, ok := parseIP(h); ok {
		return h, true
	}
	simple := true
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c >= 0x80 || ('A' <= c && c <= 'Z') {
			simple = false
			continue
		}
		if c <= ' ' || c == 0x7f || badHostByte(c) {
			return "", false
		}
	}
	if simple && !strings.Contains(h, "xn--") {
		if !checkLabels(h) {
			return "", false
		}
		return h, true
	}
	if !utf8.ValidString(h) {
		return "", false
	}
	h = strings.ToLower(h)
	var b strings.Builder
	for i, label := range strings.Split(h, ".") {
		if i > 0 {
			b.WriteByte('.')
		}
		if isASCII(label) {
			if strings.HasPrefix(label, "xn--") && !validALabel(label[4:]) {
				return "", false
			}
			b.WriteString(label)
			continue
		}
		enc, err := punyEncode(label)
		if err != nil {
			return "", false
		}
		b.WriteString("xn--")
		b.WriteString(enc)
	}
	h = b.String()
	if !checkLabels(h) {
		return "", false
	}
	return h, true
}

// validALabel reports whether the Punycode part of an "xn--" label decodes
// to a non-ASCII, lower-case label that encodes back to the same text, so
// that one name has one A-label.
func validALabel(p string) bool {
	u, err := punyDecode(p)
	if err != nil || isASCII(u) || strings.ToLower(u) != u {
		return false
	}
	enc, err := punyEncode(u)
	return err == nil && enc == p
}

// badHostByte reports separators that never occur in a host name (the
// URL standard's forbidden host code points among them). A domain that
// began with '#' would also turn its line of a cookies.txt into a comment
// (FuzzReadNetscape found one).
func badHostByte(c byte) bool {
	switch c {
	case '"', '#', '(', ')', ',', '/', ';', '<', '=', '>', '?', '@', '[', '\\', ']', '^', '{', '|', '}':
		return true
	}
	return false
}

func checkLabels(h string) bool {
	if len(h) > maxHostLen {
		return false
	}
	for len(h) > 0 {
		i := strings.IndexByte(h, '.')
		if i < 0 {
			return len(h) <= maxLabelLen
		}
		if i == 0 || i > maxLabelLen {
			return false
		}
		h = h[i+1:]
		if h == "" {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// isIPLike reports whether a canonical host is an IP address, or looks like
// one that a browser would parse as IPv4 (a numeric last label, as in
// "1.2.3" or "0x7f.1"). Such hosts only ever get host-only cookies.
func isIPLike(h string) bool {
	if strings.IndexByte(h, ':') >= 0 {
		return true // IPv6; also anything else with a colon is not a domain
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if len(last) > 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		return true
	}
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			return false
		}
	}
	return true
}

// hasDotSuffix reports whether s ends in "."+suffix.
func hasDotSuffix(s, suffix string) bool {
	return len(s) > len(suffix) && s[len(s)-len(suffix)-1] == '.' && s[len(s)-len(suffix):] == suffix
}

// domainMatch is RFC 6265 section 5.1.3 for canonical strings.
func domainMatch(host, domain string) bool {
	return host == domain || (hasDotSuffix(host, domain) && !isIPLike(host))
}

// pathMatch is RFC 6265 section 5.1.4.
func pathMatch(reqPath, cookiePath string) bool {
	if !strings.HasPrefix(reqPath, cookiePath) {
		return false
	}
	return len(reqPath) == len(cookiePath) || cookiePath[len(cookiePath)-1] == '/' || reqPath[len(cookiePath)] == '/'
}

// defaultPath is RFC 6265 section 5.1.4's default-path of a request path.
func defaultPath(p string) string {
	if p == "" || p[0] != '/' {
		return "/"
	}
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/"
	}
	return p[:i]
}

// isSecureContext reports whether a request to scheme://host is a secure
// context: https and wss, and like browsers, loopback hosts over http.
func isSecureContext(scheme, host string) bool {
	if scheme == "https" || scheme == "wss" {
		return true
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if a, ok := parseIP(host); ok {
		return a.Unmap().IsLoopback()
	}
	return false
}

// parseIP parses an IP literal. Unlike a bare netip.ParseAddr it does not
// allocate for names that cannot be one (ParseAddr allocates its error).
func parseIP(h string) (netip.Addr, bool) {
	if h == "" {
		return netip.Addr{}, false
	}
	if strings.IndexByte(h, ':') < 0 {
		for i := 0; i < len(h); i++ {
			if c := h[i]; c != '.' && (c < '0' || c > '9') {
				return netip.Addr{}, false
			}
		}
	}
	a, err := netip.ParseAddr(h)
	return a, err == nil
}

// normScheme returns the lower-case scheme if the jar handles it (http,
// https, ws, wss), else "".
func normScheme(scheme string) string {
	for _, s := range [...]string{"https", "http", "wss", "ws"} {
		if strings.EqualFold(scheme, s) {
			return s
		}
	}
	return ""
}
