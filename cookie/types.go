package cookie

import (
	"errors"
	"fmt"
	"time"
)

// Cookie is one stored cookie, as returned by [Jar.All] and [Jar.Cookies].
// The values are copies: changing them does not change the jar.
type Cookie struct {
	Name  string // may be empty for a nameless cookie ("Set-Cookie: v")
	Value string

	// Domain is the canonical (lower-case, A-label, no trailing dot)
	// domain the cookie is bound to. With HostOnly it is the exact host.
	Domain string
	Path   string

	HostOnly bool // sent only to Domain itself, not to its subdomains
	Secure   bool // sent only to secure contexts
	HttpOnly bool // informational: this jar is always used by an HTTP client
	SameSite SameSite

	// Expires is when the cookie expires; the zero time marks a session
	// cookie, which lives as long as the jar.
	Expires time.Time

	Created    time.Time
	LastAccess time.Time

	// Partitioned records the CHIPS attribute. A jar is one top-level
	// context, so the partition key is not modelled.
	Partitioned bool
}

// SameSite is the value of a cookie's SameSite attribute.
type SameSite uint8

// SameSite values. The zero value, SameSiteUnspecified, is a cookie without
// (or with an unrecognised) SameSite attribute; it is enforced as Lax, as
// Chrome does ("Lax by default").
const (
	SameSiteUnspecified SameSite = iota
	SameSiteNone
	SameSiteLax
	SameSiteStrict
)

var sameSiteNames = [...]string{"", "None", "Lax", "Strict"}

// String returns the attribute value ("None", "Lax", "Strict"), or "" for
// SameSiteUnspecified.
func (s SameSite) String() string {
	if int(s) < len(sameSiteNames) {
		return sameSiteNames[s]
	}
	return fmt.Sprintf("SameSite(%d)", uint8(s))
}

// SiteContext says how a request relates to the site that caused it; it
// decides which SameSite cookies are sent.
type SiteContext uint8

// Site contexts. The zero value, SameSiteRequest, sends every matching
// cookie (a direct visit typed into the address bar, or a same-site
// subresource). Unknown values are treated as CrossSite.
const (
	// SameSiteRequest is a request whose initiator is the same site as the
	// target (or that has no initiator).
	SameSiteRequest SiteContext = iota
	// CrossSiteNavigation is a top-level navigation with a safe method
	// (GET, HEAD) from another site: Lax and unspecified cookies are sent,
	// Strict ones are not.
	CrossSiteNavigation
	// CrossSite is any other cross-site request (subresources, fetches):
	// only SameSite=None cookies are sent.
	CrossSite
	// CrossSiteUnsafeNavigation is a top-level cross-site navigation with
	// an unsafe method (a form POST): like CrossSite, plus Chrome's
	// "Lax+POST" allowance for cookies without a SameSite attribute that
	// are at most 2 minutes old.
	CrossSiteUnsafeNavigation
)

var siteContextNames = [...]string{"same-site", "cross-site-navigation", "cross-site", "cross-site-unsafe-navigation"}

// String returns a lower-case name for the context.
func (s SiteContext) String() string {
	if int(s) < len(siteContextNames) {
		return siteContextNames[s]
	}
	return fmt.Sprintf("SiteContext(%d)", uint8(s))
}

// Reasons a cookie is rejected. [Jar.SetCookie] returns them (possibly
// wrapped); test with errors.Is.
var (
	ErrURL            = errors.New("cookie: url is not http(s) or has no usable host")
	ErrSyntax         = errors.New("cookie: empty cookie name and value")
	ErrControlChar    = errors.New("cookie: control character in set-cookie")
	ErrTooLarge       = errors.New("cookie: name and value too large")
	ErrDomain         = errors.New("cookie: malformed domain attribute")
	ErrDomainMismatch = errors.New("cookie: domain attribute does not match the host")
	ErrPublicSuffix   = errors.New("cookie: domain attribute is a public suffix")
	ErrInsecure       = errors.New("cookie: secure cookie from an insecure origin")
	ErrSecureOverlap  = errors.New("cookie: insecure origin may not overwrite a secure cookie")
	ErrPrefix         = errors.New("cookie: __Secure- or __Host- prefix requirements not met")
	ErrSameSiteNone   = errors.New("cookie: SameSite=None requires Secure")
	ErrPartitioned    = errors.New("cookie: Partitioned requires Secure")
)

// ImportError reports cookies that an import skipped because they were
// malformed or invalid. The valid cookies of the same input were imported.
type ImportError struct {
	Skipped int   // how many entries were skipped
	Entry   int   // 1-based line (Netscape) or array index + 1 (JSON) of the first
	Err     error // why the first one was skipped
}

// Error describes the skipped entries.
func (e *ImportError) Error() string {
	return fmt.Sprintf("cookie: import skipped %d invalid cookie(s), first at entry %d: %v", e.Skipped, e.Entry, e.Err)
}

// Unwrap returns the reason the first entry was skipped.
func (e *ImportError) Unwrap() error { return e.Err }
