package cookie

import (
	"net/http"
	"net/url"
	"strings"
)

// HTTPJar adapts a Jar to net/http's CookieJar interface. Get one from
// Jar.HTTP. It is safe for concurrent use, as the Jar is.
type HTTPJar struct {
	j *Jar
}

var _ http.CookieJar = (*HTTPJar)(nil)

// HTTP returns an http.CookieJar backed by j. net/http does not say in which
// site context a request is made, so the adapter uses SameSiteRequest.
func (j *Jar) HTTP() *HTTPJar { return &HTTPJar{j: j} }

// SetCookies stores cookies received in a response to u. It uses each
// cookie's Raw Set-Cookie line when there is one (so that attributes
// net/http does not model are kept), and the cookie's serialisation
// otherwise.
func (h *HTTPJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	lines := make([]string, 0, len(cookies))
	for _, c := range cookies {
		if c == nil {
			continue
		}
		line := c.Raw
		if line == "" {
			line = c.String()
		}
		if line != "" {
			lines = append(lines, line)
		}
	}
	h.j.SetCookies(u, lines)
}

// Cookies returns the cookies to send in a request to u.
func (h *HTTPJar) Cookies(u *url.URL) []*http.Cookie {
	cs := h.j.Cookies(u)
	out := make([]*http.Cookie, 0, len(cs))
	for _, c := range cs {
		hc := &http.Cookie{Name: c.Name, Value: c.Value}
		if len(c.Value) >= 2 && strings.HasPrefix(c.Value, `"`) && strings.HasSuffix(c.Value, `"`) {
			hc.Value, hc.Quoted = c.Value[1:len(c.Value)-1], true
		}
		out = append(out, hc)
	}
	return out
}
