// Package altsvc parses Alt-Svc header fields (RFC 7838) and remembers the
// HTTP/3 alternatives of origins, with the broken-alternative memory of
// Chromium: an alternative that failed is not tried for 5 minutes, twice
// as long after each further failure, until it works again.
//
// It knows nothing of HTTP beyond the field's syntax; the transport owns
// a Cache per scope (see docs/DESIGN.md).
package altsvc

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Limits of the parser.
const (
	// MaxFieldLen bounds an Alt-Svc value; a longer one is refused whole.
	MaxFieldLen = 8 << 10
	// MaxAlternatives bounds the alternatives kept from one value.
	MaxAlternatives = 16
	// DefaultMaxAge is the freshness of an alternative without ma (RFC
	// 7838 §3.1: 24 hours).
	DefaultMaxAge = 24 * time.Hour
	// maxMaxAge bounds ma: a larger one is this.
	maxMaxAge = 365 * 24 * time.Hour
)

// ErrSyntax is matched by every parse error.
var ErrSyntax = errors.New("altsvc: invalid alt-svc value")

// SyntaxError says where a value failed to parse.
type SyntaxError struct {
	Offset int
	Reason string
}

func (e *SyntaxError) Error() string {
	return "altsvc: invalid alt-svc value at offset " + strconv.Itoa(e.Offset) + ": " + e.Reason
}

// Is matches ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// Alternative is one alt-value: a protocol at an authority.
type Alternative struct {
	// Protocol is the ALPN protocol id, percent-decoded ("h3").
	Protocol string
	// Host is the alternative's host, "" for the origin's own.
	Host string
	Port int
	// MaxAge is how long the alternative stays fresh (ma).
	MaxAge time.Duration
	// Persist is persist=1: keep it across network changes. It has no
	// effect: guise sees no network changes, and Chromium, whose parser
	// skips the parameter, clears no alternative on one either (see
	// docs/DESIGN.md).
	Persist bool
}

// Parse reads an Alt-Svc field value. clear reports the value "clear",
// which drops every alternative of the origin. Alternatives beyond
// MaxAlternatives are dropped; unknown parameters are ignored.
func Parse(v string) (alts []Alternative, clear bool, err error) {
	if len(v) > MaxFieldLen {
		return nil, false, &SyntaxError{Offset: MaxFieldLen, Reason: "value too long"}
	}
	p := parser{s: v}
	p.ows()
	if strings.TrimRight(p.s[p.i:], " \t") == "clear" {
		return nil, true, nil
	}
	for {
		p.ows()
		if p.i == len(p.s) {
			break
		}
		if p.s[p.i] == ',' { // empty list elements are allowed (RFC 9110 §5.6.1)
			p.i++
			continue
		}
		a, err := p.alternative()
		if err != nil {
			return nil, false, err
		}
		if len(alts) < MaxAlternatives {
			alts = append(alts, a)
		}
		p.ows()
		if p.i == len(p.s) {
			break
		}
		if p.s[p.i] != ',' {
			return nil, false, p.fail("expected ','")
		}
		p.i++
	}
	if len(alts) == 0 {
		return nil, false, p.fail("no alternative")
	}
	return alts, false, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) fail(reason string) error { return &SyntaxError{Offset: p.i, Reason: reason} }

func (p *parser) ows() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *parser) token() string {
	start := p.i
	for p.i < len(p.s) && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *parser) quoted() (string, error) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", p.fail("expected '\"'")
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.s) || !isQdtextOrVchar(p.s[p.i+1]) {
				return "", p.fail("bad quoted-pair")
			}
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case isQdtextOrVchar(c):
			b.WriteByte(c)
			p.i++
		default:
			return "", p.fail("control character in quoted-string")
		}
	}
	return "", p.fail("unterminated quoted-string")
}

func (p *parser) alternative() (Alternative, error) {
	a := Alternative{MaxAge: DefaultMaxAge}
	id := p.token()
	if id == "" {
		return a, p.fail("expected a protocol-id")
	}
	proto, ok := percentDecode(id)
	if !ok {
		return a, p.fail("bad percent-encoding in protocol-id")
	}
	a.Protocol = proto
	if p.i >= len(p.s) || p.s[p.i] != '=' {
		return a, p.fail("expected '='")
	}
	p.i++
	auth, err := p.quoted()
	if err != nil {
		return a, err
	}
	colon := strings.LastIndexByte(auth, ':')
	if colon < 0 {
		return a, p.fail("alt-authority without a port")
	}
	host, port := auth[:colon], auth[colon+1:]
	if strings.HasPrefix(host, "[") != strings.HasSuffix(host, "]") || strings.ContainsAny(host, " \t/?#@") {
		return a, p.fail("bad alt-authority host")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port[0] == '+' || port[0] == '-' {
		return a, p.fail("bad alt-authority port")
	}
	a.Host, a.Port = strings.ToLower(host), n
	for {
		save := p.i
		p.ows()
		if p.i >= len(p.s) || p.s[p.i] != ';' {
			p.i = save
			return a, nil
		}
		p.i++
		p.ows()
		name := strings.ToLower(p.token())
		if name == "" {
			return a, p.fail("expected a parameter name")
		}
		if p.i >= len(p.s) || p.s[p.i] != '=' {
			return a, p.fail("expected '=' after parameter " + name)
		}
		p.i++
		var val string
		if p.i < len(p.s) && p.s[p.i] == '"' {
			if val, err = p.quoted(); err != nil {
				return a, err
			}
		} else if val = p.token(); val == "" {
			return a, p.fail("empty parameter value")
		}
		switch name {
		case "ma":
			secs, err := strconv.ParseUint(val, 10, 64)
			if err != nil {
				if !allDigits(val) {
					return a, p.fail("bad ma")
				}
				secs = uint64(maxMaxAge / time.Second) // overflowed: as large as allowed
			}
			a.MaxAge = min(time.Duration(min(secs, uint64(maxMaxAge/time.Second)))*time.Second, maxMaxAge)
		case "persist":
			a.Persist = val == "1"
		}
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func percentDecode(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), true
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isQdtextOrVchar(c byte) bool { return c == '\t' || c == ' ' || (c >= 0x21 && c != 0x7f) }
