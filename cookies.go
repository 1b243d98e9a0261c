package guise

import (
	"net/url"

	"github.com/guise-http/guise/cookie"
	"github.com/guise-http/guise/profile"
)

// cookieJar lets a redirect chain use a *cookie.Jar.
type cookieJar struct{ j *cookie.Jar }

func (c cookieJar) cookieHeader(u *url.URL, site cookie.SiteContext) string {
	var buf [512]byte
	b := c.j.AppendCookieHeader(buf[:0], u, site)
	if len(b) == 0 {
		return ""
	}
	return string(b)
}

func (c cookieJar) setCookies(u *url.URL, values []string) { c.j.SetCookies(u, values) }

// siteContext is how a browser classifies a request for SameSite cookies:
// same-site unless the request comes, or a redirect went, from another
// site.
func (ch *chain) siteContext(hop *Request, u *url.URL) cookie.SiteContext {
	from := ch.referrer
	if from == nil {
		from = ch.first
	}
	if !ch.cross && (from == nil || sameSite(from, u)) {
		return cookie.SameSiteRequest
	}
	if hop.Kind == 0 || hop.Kind == profile.Navigate {
		switch hop.method() {
		case "GET", "HEAD", "OPTIONS", "TRACE":
			return cookie.CrossSiteNavigation
		}
		return cookie.CrossSiteUnsafeNavigation
	}
	return cookie.CrossSite
}
