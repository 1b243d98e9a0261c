package cookie

import (
	"net/url"
	"slices"
	"strings"
	"time"
)

// AppendCookieHeader appends to dst the value of the Cookie header for a
// request to u made in the given site context, and returns the extended
// buffer; it appends nothing when no cookie applies. Cookies are in
// browser order: longer paths first, then earlier creation. It applies
// host-only, domain and path matching, expiry, Secure (https and wss, and
// http to loopback hosts, are secure contexts) and SameSite (Strict: only
// SameSiteRequest; Lax and unspecified: also CrossSiteNavigation, and
// unspecified ones at most 2 minutes old also CrossSiteUnsafeNavigation;
// None: always). Sent cookies get their LastAccess updated; expired ones
// met on the way are removed. It allocates only to grow dst (never when the
// jar holds no cookie for u's host, or dst has room), plus once inside
// url.URL.EscapedPath when u carries a RawPath.
func (j *Jar) AppendCookieHeader(dst []byte, u *url.URL, site SiteContext) []byte {
	start := len(dst)
	j.match(u, site, true, func(e *entry) bool {
		n := len(e.value)
		if e.name != "" {
			n += len(e.name) + 1
		}
		if len(dst) > start {
			n += 2
		}
		if j.opts.MaxHeaderBytes > 0 && len(dst)-start+n > j.opts.MaxHeaderBytes {
			return false
		}
		if len(dst) > start {
			dst = append(dst, "; "...)
		}
		if e.name != "" {
			dst = append(dst, e.name...)
			dst = append(dst, '=')
		}
		dst = append(dst, e.value...)
		return true
	})
	return dst
}

// Cookies returns copies of the cookies that a same-site request to u
// would send (SameSiteRequest), in header order. Unlike
// AppendCookieHeader it ignores MaxHeaderBytes and does not update
// LastAccess.
func (j *Jar) Cookies(u *url.URL) []*Cookie {
	var out []*Cookie
	j.match(u, SameSiteRequest, false, func(e *entry) bool {
		out = append(out, e.cookie())
		return true
	})
	return out
}

// match calls emit for each cookie to send to u in header order; emit
// reports whether the cookie was used.
//
// Every cookie that can match a host lives in a bucket whose key is a
// label-suffix of the host (the key is a suffix of the cookie's domain,
// which is the host or a parent of it), so match probes those keys instead
// of asking the public suffix list: x/net's list allocates on every call,
// and the no-cookie path must not. With a consistent list only one of the
// probed buckets holds matching cookies, so the order is the header order.
func (j *Jar) match(u *url.URL, site SiteContext, touch bool, emit func(*entry) bool) {
	if u == nil {
		return
	}
	if !j.some.Load() {
		return // the common case of a client that stores no cookies: no lock, no host parsing
	}
	scheme := normScheme(u.Scheme)
	host, ok := canonicalHost(u.Hostname())
	if scheme == "" || !ok {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var (
		now       time.Time
		secureCtx bool
		path      string
		ready     bool
	)
	for k := host; ; {
		if b := j.buckets[k]; b != nil {
			if !ready {
				ready, now, secureCtx = true, j.now(), isSecureContext(scheme, host)
				if path = u.EscapedPath(); path == "" {
					path = "/"
				}
			}
			expired := false
			for _, e := range b.entries {
				if e.expired(now) {
					expired = true
					continue
				}
				if e.hostOnly && host != e.domain || !e.hostOnly && !domainMatch(host, e.domain) {
					continue
				}
				if e.secure && !secureCtx || !pathMatch(path, e.path) || !sameSiteAllows(e, site, now) {
					continue
				}
				if emit(e) && touch {
					e.lastAccess = now
				}
			}
			if expired {
				j.dropExpired(k, b, now)
			}
		}
		i := strings.IndexByte(k, '.')
		if i < 0 {
			return
		}
		k = k[i+1:]
	}
}

// laxPostWindow is how long Chrome sends a new cookie without a SameSite
// attribute on cross-site top-level POST navigations ("Lax+POST").
const laxPostWindow = 2 * time.Minute

// sameSiteAllows is Chrome's SameSite enforcement with Lax by default.
func sameSiteAllows(e *entry, site SiteContext, now time.Time) bool {
	switch site {
	case SameSiteRequest:
		return true
	case CrossSiteNavigation:
		return e.sameSite != SameSiteStrict
	case CrossSiteUnsafeNavigation:
		if e.sameSite == SameSiteUnspecified && now.Sub(e.created) <= laxPostWindow {
			return true
		}
	}
	return e.sameSite == SameSiteNone
}

// All returns copies of every unexpired cookie in the jar, sorted by
// domain, then header order. It does not update LastAccess.
func (j *Jar) All() []*Cookie {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := j.now()
	keys := make([]string, 0, len(j.buckets))
	for k := range j.buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]*Cookie, 0, j.total)
	for _, k := range keys {
		start := len(out)
		for _, e := range j.buckets[k].entries {
			if !e.expired(now) {
				out = append(out, e.cookie())
			}
		}
		slices.SortStableFunc(out[start:], func(a, b *Cookie) int { return strings.Compare(a.Domain, b.Domain) })
	}
	return out
}

// Len returns the number of cookies stored, counting expired ones not yet
// removed.
func (j *Jar) Len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.total
}

// Delete removes the cookies named name whose Domain is domain (compared
// after canonicalisation, host-only or not) and, if path is not empty,
// whose Path is path. It returns how many it removed.
func (j *Jar) Delete(name, domain, path string) int {
	d, ok := canonicalHost(strings.TrimPrefix(domain, "."))
	if !ok {
		return 0
	}
	return j.DeleteFunc(func(c *Cookie) bool {
		return c.Name == name && c.Domain == d && (path == "" || c.Path == path)
	})
}

// DeleteFunc removes every cookie for which del returns true and returns
// how many it removed. del gets a copy and must not call the jar.
func (j *Jar) DeleteFunc(del func(*Cookie) bool) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for k, b := range j.buckets {
		before := len(b.entries)
		b.entries = slices.DeleteFunc(b.entries, func(e *entry) bool { return del(e.cookie()) })
		n += before - len(b.entries)
		if len(b.entries) == 0 {
			delete(j.buckets, k)
		}
	}
	j.total -= n
	return n
}

// Clear removes every cookie. The jar stays usable.
func (j *Jar) Clear() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.buckets = make(map[string]*bucket)
	j.total = 0
	j.some.Store(false)
}

// stamp is used by imports to give a cookie a creation time.
func stamp(t, fallback time.Time) time.Time {
	if t.IsZero() {
		return fallback
	}
	return t
}
