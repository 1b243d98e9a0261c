package guise

import (
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/guise-http/guise/fields"
)

// HTTP Strict Transport Security (RFC 6797), kept per Session as the
// browsers keep it per profile: an https response that carries a valid
// Strict-Transport-Security field makes later http:// requests to its host
// (and, with includeSubDomains, to the hosts below it) go to https://
// before anything is sent, as Fetch's main fetch rewrites the URL: the
// method, body and fields stay, and the upgrade is no redirect hop (Chrome
// shows it as an internal 307). Isolated calls keep what they learn only
// along their own redirect chain, as they keep cookies. There is no preload
// list: a host the browsers know from theirs is upgraded only once it has
// said so itself.

// maxHSTSAge caps max-age, as Chromium does (kMaxHSTSAgeSecs, a year):
// larger values, and values too long to parse, mean a year.
const maxHSTSAge = 365 * 24 * 60 * 60

// maxHSTSHosts bounds a store. A host can only name itself, so reaching it
// takes that many https hosts answering with the field; past it, expired
// entries go first, then arbitrary ones.
const maxHSTSHosts = 10000

// parseHSTS parses a Strict-Transport-Security field value (RFC 6797 6.1):
// directives separated by ';', each a token name with an optional '=' and a
// token or quoted-string value, with optional whitespace around. max-age
// must appear exactly once with a value of digits (quoted or not);
// includeSubDomains at most once and without a value. Names are
// case-insensitive; unknown directives are ignored; a repeated directive or
// any syntax error makes the whole field invalid (ok false), as in Chromium.
func parseHSTS(v string) (maxAge int64, sub, ok bool) {
	seenAge := false
	i := 0
	for {
		i = skipOWS(v, i)
		if i == len(v) {
			break
		}
		if v[i] == ';' {
			i++
			continue
		}
		start := i
		for i < len(v) && fields.IsTokenByte(v[i]) {
			i++
		}
		if i == start {
			return 0, false, false
		}
		name := v[start:i]
		i = skipOWS(v, i)
		var val string
		hasVal := false
		if i < len(v) && v[i] == '=' {
			hasVal = true
			i = skipOWS(v, i+1)
			if i < len(v) && v[i] == '"' {
				var good bool
				val, i, good = quotedString(v, i)
				if !good {
					return 0, false, false
				}
			} else {
				s := i
				for i < len(v) && fields.IsTokenByte(v[i]) {
					i++
				}
				if i == s {
					return 0, false, false
				}
				val = v[s:i]
			}
			i = skipOWS(v, i)
		}
		if i < len(v) && v[i] != ';' {
			return 0, false, false
		}
		switch {
		case strings.EqualFold(name, "max-age"):
			if seenAge || !hasVal {
				return 0, false, false
			}
			age, good := parseAge(val)
			if !good {
				return 0, false, false
			}
			maxAge, seenAge = age, true
		case strings.EqualFold(name, "includesubdomains"):
			if sub || hasVal {
				return 0, false, false
			}
			sub = true
		}
	}
	if !seenAge {
		return 0, false, false
	}
	return maxAge, sub, true
}

// parseAge reads one or more digits, capped at maxHSTSAge.
func parseAge(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n <= maxHSTSAge {
			n = n*10 + int64(c-'0')
		}
	}
	return min(n, maxHSTSAge), true
}

// quotedString reads the quoted-string starting at v[i] == '"' and returns
// its unescaped content and the index past the closing quote.
func quotedString(v string, i int) (string, int, bool) {
	var b strings.Builder
	for i++; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			return b.String(), i + 1, true
		case c == '\\':
			i++
			if i == len(v) || !isQuotedPair(v[i]) {
				return "", 0, false
			}
			b.WriteByte(v[i])
		case c == '\t' || c >= 0x20 && c != 0x7f:
			b.WriteByte(c)
		default:
			return "", 0, false
		}
	}
	return "", 0, false // no closing quote
}

func isQuotedPair(c byte) bool { return c == '\t' || c >= 0x20 && c != 0x7f }

func skipOWS(v string, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	return i
}

// hstsLookup is the IDNA profile host names are keyed by: UTS 46
// non-transitional mapping, as the URL Standard (and so Chromium and
// Firefox) applies to hosts, without STD3's ban on '_' (which hosts carry).
var hstsLookup = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false))

// hstsHost is the key of a host name: ASCII lower case, one trailing dot
// dropped, U-labels as A-labels. It reports false for an IP literal (which
// RFC 6797 8.1.1 keeps out of HSTS) and for a name IDNA refuses.
func hstsHost(h string) (string, bool) {
	h = strings.TrimSuffix(h, ".")
	if h == "" || strings.IndexByte(h, ':') >= 0 || net.ParseIP(h) != nil {
		return "", false
	}
	simple := true
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c >= 0x80 || 'A' <= c && c <= 'Z' {
			simple = false
			break
		}
	}
	if !simple || strings.Contains(h, "xn--") {
		a, err := hstsLookup.ToASCII(h)
		if err != nil || a == "" || !utf8.ValidString(h) {
			return "", false
		}
		h = strings.TrimSuffix(a, ".")
		if net.ParseIP(h) != nil { // full-width digits map to an address
			return "", false
		}
	}
	return h, true
}

// hstsEntry is what a host told: until when, and whether for its
// subdomains too.
type hstsEntry struct {
	expires time.Time
	sub     bool
}

// hstsStore is the HSTS state of one Session (or of one isolated call's
// chain). It is safe for concurrent use. The zero value is empty and
// ready.
type hstsStore struct {
	mu    sync.Mutex
	hosts map[string]hstsEntry
	now   func() time.Time // time.Now unless a test sets it
}

func (s *hstsStore) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// observe records v, the (first) Strict-Transport-Security field of a
// response from host over a verified https connection: RFC 6797 8.1 has
// the others ignored. An invalid field is ignored; max-age=0 forgets the
// host.
func (s *hstsStore) observe(host, v string) {
	age, sub, ok := parseHSTS(v)
	if !ok {
		return
	}
	key, ok := hstsHost(host)
	if !ok {
		return
	}
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if age == 0 {
		delete(s.hosts, key)
		return
	}
	if s.hosts == nil {
		s.hosts = make(map[string]hstsEntry)
	}
	if _, known := s.hosts[key]; !known && len(s.hosts) >= maxHSTSHosts {
		s.evictLocked(now)
	}
	s.hosts[key] = hstsEntry{expires: now.Add(time.Duration(age) * time.Second), sub: sub}
}

// evictLocked makes room for one more host: expired entries go, and if
// none had expired, one arbitrary entry.
func (s *hstsStore) evictLocked(now time.Time) {
	for k, e := range s.hosts {
		if !now.Before(e.expires) {
			delete(s.hosts, k)
		}
	}
	for k := range s.hosts {
		if len(s.hosts) < maxHSTSHosts {
			break
		}
		delete(s.hosts, k)
	}
}

// known reports whether requests to host must go over https: the host
// itself is known, or a parent domain with includeSubDomains (RFC 6797
// 8.2). Expired entries are dropped on the way.
func (s *hstsStore) known(host string) bool {
	s.mu.Lock()
	empty := len(s.hosts) == 0
	s.mu.Unlock()
	if empty {
		return false
	}
	key, ok := hstsHost(host)
	if !ok {
		return false
	}
	now := s.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	for d, self := key, true; ; self = false {
		if e, ok := s.hosts[d]; ok {
			if !now.Before(e.expires) {
				delete(s.hosts, d)
			} else if self || e.sub {
				return true
			}
		}
		i := strings.IndexByte(d, '.')
		if i < 0 {
			return false
		}
		d = d[i+1:]
	}
}

// len is the number of hosts stored, expired ones included.
func (s *hstsStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.hosts)
}

// upgrade returns hop with its http:// URL rewritten to https:// (port 80
// becomes https's default; another explicit port stays, RFC 6797 8.3). The
// copy keeps the method, the body and the fields; it is not a redirect.
func upgrade(hop *Request, u *url.URL) *Request {
	nu := *u
	nu.Scheme = "https"
	if p := strings.TrimLeft(nu.Port(), "0"); p == "80" || p == "" {
		h := nu.Hostname()
		if strings.IndexByte(h, ':') >= 0 {
			h = "[" + h + "]"
		}
		nu.Host = h
	}
	up := *hop
	up.URL = nu.String()
	up.parsed = parsedURL{}
	return &up
}
