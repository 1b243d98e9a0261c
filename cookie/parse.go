package cookie

import (
	"strings"
	"time"
)

// maxAttrValue is RFC 6265bis's limit on an attribute value: a longer
// value makes the attribute ignored (not the cookie).
const maxAttrValue = 1024

// maxAge caps every expiry at 400 days from now (RFC 6265bis 5.5,
// as Chrome does).
const maxAge = 400 * 24 * time.Hour

// setCookie is a parsed Set-Cookie string (RFC 6265bis section 5.6).
type setCookie struct {
	name, value string
	domain      string // raw attribute value, leading dot removed; "" = none
	hasDomain   bool
	path        string // "" = none or not starting with '/'
	secure      bool
	httpOnly    bool
	partitioned bool
	sameSite    SameSite

	hasMaxAge bool
	maxAge    int64 // seconds, saturated; <= 0 deletes
	hasExpiry bool
	expires   time.Time
}

// isWSP reports SP or HTAB.
func isWSP(c byte) bool { return c == ' ' || c == '\t' }

func trimWSP(s string) string {
	for len(s) > 0 && isWSP(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isWSP(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// parseSetCookie parses one Set-Cookie field value. maxBytes limits
// len(name)+len(value).
func parseSetCookie(line string, maxBytes int) (setCookie, error) {
	var c setCookie
	for i := 0; i < len(line); i++ {
		if b := line[i]; (b < 0x20 && b != '\t') || b == 0x7f {
			return c, ErrControlChar
		}
	}
	nv, attrs, _ := strings.Cut(line, ";")
	if name, value, ok := strings.Cut(nv, "="); ok {
		c.name, c.value = trimWSP(name), trimWSP(value)
	} else {
		c.value = trimWSP(nv)
	}
	if c.name == "" && c.value == "" {
		return c, ErrSyntax
	}
	if len(c.name)+len(c.value) > maxBytes {
		return c, ErrTooLarge
	}
	for attrs != "" {
		var av string
		av, attrs, _ = strings.Cut(attrs, ";")
		key, val, _ := strings.Cut(av, "=")
		key, val = trimWSP(key), trimWSP(val)
		if len(val) > maxAttrValue {
			continue
		}
		switch {
		case strings.EqualFold(key, "expires"):
			if t, ok := parseCookieDate(val); ok {
				c.hasExpiry, c.expires = true, t
			}
		case strings.EqualFold(key, "max-age"):
			if n, ok := parseMaxAge(val); ok {
				c.hasMaxAge, c.maxAge = true, n
			}
		case strings.EqualFold(key, "domain"):
			// RFC 6265bis: an empty value SHOULD make the attribute ignored.
			if val == "" {
				continue
			}
			c.hasDomain, c.domain = true, strings.TrimPrefix(val, ".")
		case strings.EqualFold(key, "path"):
			if val == "" || val[0] != '/' {
				c.path = ""
			} else {
				c.path = val
			}
		case strings.EqualFold(key, "secure"):
			c.secure = true
		case strings.EqualFold(key, "httponly"):
			c.httpOnly = true
		case strings.EqualFold(key, "partitioned"):
			c.partitioned = true
		case strings.EqualFold(key, "samesite"):
			switch {
			case strings.EqualFold(val, "strict"):
				c.sameSite = SameSiteStrict
			case strings.EqualFold(val, "lax"):
				c.sameSite = SameSiteLax
			case strings.EqualFold(val, "none"):
				c.sameSite = SameSiteNone
			default:
				c.sameSite = SameSiteUnspecified
			}
		}
	}
	return c, nil
}

// parseMaxAge parses a Max-Age value (RFC 6265bis 5.6.2): an optional '-'
// and digits. Large values saturate.
func parseMaxAge(v string) (int64, bool) {
	neg := false
	if strings.HasPrefix(v, "-") {
		neg, v = true, v[1:]
	}
	if v == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < 1<<40 {
			n = n*10 + int64(c-'0')
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// expiry returns the cookie's expiry time (zero for a session cookie) and
// whether the cookie is already expired (and so deletes).
func (c *setCookie) expiry(now time.Time) (time.Time, bool) {
	var t time.Time
	switch {
	case c.hasMaxAge:
		if c.maxAge <= 0 {
			return time.Time{}, true
		}
		if c.maxAge > int64(maxAge/time.Second) {
			t = now.Add(maxAge)
		} else {
			t = now.Add(time.Duration(c.maxAge) * time.Second)
		}
	case c.hasExpiry:
		if !c.expires.After(now) {
			return time.Time{}, true
		}
		t = c.expires
		if t.Sub(now) > maxAge {
			t = now.Add(maxAge)
		}
	default:
		return time.Time{}, false
	}
	return t, false
}

// hasPrefixFold reports whether s begins with prefix, ASCII case-insensitively.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
