// Package cookie is guise's cookie jar: RFC 6265bis storage and retrieval
// with the rules Chrome applies (public suffixes, host-only cookies,
// Secure and the secure-context rules, SameSite with Lax by default, the
// __Host- and __Secure- prefixes, a 400-day expiry cap, and limits per
// domain, in total and per cookie), plus export and import as JSON and as
// Netscape cookies.txt.
//
// A Jar never resets or expires as a whole: cookies leave it only when they
// expire one by one, when a server deletes them, when limits evict them,
// or when the owner calls Delete or Clear.
package cookie

import (
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/publicsuffix"
)

// PublicSuffixList provides the public suffix of a domain, as
// net/http/cookiejar.PublicSuffixList does. golang.org/x/net/publicsuffix.List
// implements it. Implementations must be safe for concurrent use.
type PublicSuffixList interface {
	// PublicSuffix returns the public suffix of domain, e.g. "co.uk" for
	// "www.bbc.co.uk".
	PublicSuffix(domain string) string
	// String returns a description of the list's source.
	String() string
}

// Options configures a Jar. A nil *Options and zero fields mean defaults.
type Options struct {
	// PublicSuffixList decides which domains are public suffixes;
	// nil means golang.org/x/net/publicsuffix.List.
	PublicSuffixList PublicSuffixList
	// MaxPerDomain caps the cookies per registrable domain (eTLD+1);
	// 0 means 180, Chrome's limit. When it is exceeded the jar evicts
	// expired cookies, then the least recently used non-Secure ones, then
	// the least recently used Secure ones, down to
	// MaxPerDomain - MaxPerDomain/6 (150 for 180), as Chrome does.
	MaxPerDomain int
	// MaxTotal caps the cookies in the jar; 0 means 3000. When it is
	// exceeded the jar evicts expired cookies, then the least recently used
	// ones, down to MaxTotal - MaxTotal/10.
	MaxTotal int
	// MaxCookieBytes caps len(name)+len(value) of one cookie; 0 means
	// 4096. Larger cookies are rejected with ErrTooLarge.
	MaxCookieBytes int
	// MaxHeaderBytes, if positive, caps the Cookie header built by
	// AppendCookieHeader: cookies that would push it past the cap are left
	// out whole. 0 means no cap beyond the one the other limits imply
	// (MaxPerDomain * (MaxCookieBytes+3) bytes), which is what browsers do.
	MaxHeaderBytes int
	// Now returns the current time; nil means time.Now. For tests.
	Now func() time.Time
}

// entry is a stored cookie.
type entry struct {
	name, value, domain, path               string
	hostOnly, secure, httpOnly, partitioned bool
	sameSite                                SameSite
	expires                                 time.Time // zero: session cookie
	created, lastAccess                     time.Time
	seq                                     uint64 // creation order, breaks ties
}

func (e *entry) expired(now time.Time) bool {
	return !e.expires.IsZero() && !e.expires.After(now)
}

func (e *entry) cookie() *Cookie {
	return &Cookie{
		Name: e.name, Value: e.value, Domain: e.domain, Path: e.path,
		HostOnly: e.hostOnly, Secure: e.secure, HttpOnly: e.httpOnly, SameSite: e.sameSite,
		Expires: e.expires, Created: e.created, LastAccess: e.lastAccess, Partitioned: e.partitioned,
	}
}

// bucket holds the cookies of one registrable domain, ordered as the
// Cookie header wants them: longer paths first, then earlier creation.
type bucket struct {
	entries []*entry
}

// Jar holds the cookies of one browsing session. Create it with New; the
// zero value is also an empty jar with default options. A Jar is safe for
// concurrent use and must not be copied after first use.
type Jar struct {
	opts Options // read-only after New; zero fields mean defaults

	mu      sync.Mutex
	buckets map[string]*bucket // by registrable domain (see key)
	total   int
	seq     uint64
	// some is false while buckets is certainly empty: set (under mu) when
	// a bucket is added, cleared by Clear. A request of a client that
	// stores no cookies reads it without taking mu, which a Session's
	// concurrent requests would otherwise all contend for.
	some atomic.Bool
}

// New returns an empty Jar configured by opts (nil means defaults). The jar
// keeps a copy of *opts.
func New(opts *Options) *Jar {
	j := &Jar{buckets: make(map[string]*bucket)}
	if opts != nil {
		j.opts = *opts
	}
	return j
}

func (j *Jar) list() PublicSuffixList {
	if j.opts.PublicSuffixList == nil {
		return publicsuffix.List
	}
	return j.opts.PublicSuffixList
}

func (j *Jar) now() time.Time {
	if j.opts.Now == nil {
		return time.Now()
	}
	return j.opts.Now()
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func (j *Jar) maxPerDomain() int   { return orDefault(j.opts.MaxPerDomain, 180) }
func (j *Jar) maxTotal() int       { return orDefault(j.opts.MaxTotal, 3000) }
func (j *Jar) maxCookieBytes() int { return orDefault(j.opts.MaxCookieBytes, 4096) }

// isPublicSuffix reports whether a canonical domain is a public suffix
// (or the list returned something that is not a proper suffix of it).
func (j *Jar) isPublicSuffix(domain string) bool {
	ps := j.list().PublicSuffix(domain)
	return ps != "" && !hasDotSuffix(domain, ps)
}

// key returns the bucket key of a canonical host or cookie domain: its
// registrable domain (eTLD+1), or the name itself for IP addresses and
// public suffixes. It is always a label-suffix of its argument, which is
// what lets match find buckets without the list (x/net's list allocates).
func (j *Jar) key(host string) string {
	if isIPLike(host) {
		return host
	}
	ps := j.list().PublicSuffix(host)
	if ps == "" || !hasDotSuffix(host, ps) {
		return host
	}
	rest := host[:len(host)-len(ps)-1]
	for i := len(rest) - 1; i >= 0; i-- {
		if rest[i] == '.' {
			return host[i+1:]
		}
	}
	return host
}

// SetCookies stores the cookies of a response to u. Each element of
// setCookieValues is the value of one Set-Cookie header field. Invalid
// cookies are ignored; SetCookie reports why. SetCookies never panics.
func (j *Jar) SetCookies(u *url.URL, setCookieValues []string) {
	if u == nil || len(setCookieValues) == 0 {
		return
	}
	scheme := normScheme(u.Scheme)
	host, ok := canonicalHost(u.Hostname())
	if scheme == "" || !ok {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	now := j.now()
	for _, v := range setCookieValues {
		_ = j.setLocked(scheme, host, u, v, now)
	}
}

// SetCookie stores the cookie of one Set-Cookie value received from u and
// returns why it was rejected, if it was: one of the Err* values of this
// package (test with errors.Is). A cookie that arrives already expired
// deletes its stored namesake and returns nil.
func (j *Jar) SetCookie(u *url.URL, setCookieValue string) error {
	if u == nil {
		return ErrURL
	}
	scheme := normScheme(u.Scheme)
	host, ok := canonicalHost(u.Hostname())
	if scheme == "" || !ok {
		return ErrURL
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.setLocked(scheme, host, u, setCookieValue, j.now())
}

func (j *Jar) setLocked(scheme, host string, u *url.URL, line string, now time.Time) error {
	// The cookie's strings are cut from line: a copy of its own, so that a
	// stored cookie does not keep alive what the caller's line was cut
	// from (guise's response heads are cut from one string in the
	// Response's allocation, which holds its connection).
	line = strings.Clone(line)
	c, err := parseSetCookie(line, j.maxCookieBytes())
	if err != nil {
		return err
	}
	e := &entry{
		name: c.name, value: c.value, secure: c.secure, httpOnly: c.httpOnly,
		partitioned: c.partitioned, sameSite: c.sameSite, created: now, lastAccess: now,
	}
	// Domain (RFC 6265bis 5.7 steps 5-7).
	if !c.hasDomain {
		e.domain, e.hostOnly = host, true
	} else {
		d, ok := canonicalHost(c.domain)
		switch {
		case !ok || d == "":
			return ErrDomain
		case isIPLike(host) || isIPLike(d):
			if d != host {
				return ErrDomainMismatch
			}
			e.domain, e.hostOnly = host, true
		case j.isPublicSuffix(d):
			if d != host {
				return ErrPublicSuffix
			}
			e.domain, e.hostOnly = host, true
		case d != host && !hasDotSuffix(host, d):
			return ErrDomainMismatch
		default:
			e.domain = d
		}
	}
	if c.path != "" {
		e.path = c.path
	} else {
		e.path = defaultPath(u.EscapedPath())
	}
	secureCtx := isSecureContext(scheme, host)
	if e.secure && !secureCtx {
		return ErrInsecure
	}
	if err := checkPrefix(e, c.hasDomain); err != nil {
		return err
	}
	if e.sameSite == SameSiteNone && !e.secure {
		return ErrSameSiteNone
	}
	if e.partitioned && !e.secure {
		return ErrPartitioned
	}
	var deleteOnly bool
	e.expires, deleteOnly = c.expiry(now)

	k := j.key(e.domain)
	b := j.buckets[k]
	// RFC 6265bis 5.7 step 16: an insecure origin may not set (or delete)
	// a cookie that would shadow a Secure one.
	if !secureCtx && b != nil {
		for _, o := range b.entries {
			if o.secure && o.name == e.name &&
				(domainMatch(o.domain, e.domain) || domainMatch(e.domain, o.domain)) &&
				pathMatch(e.path, o.path) {
				return ErrSecureOverlap
			}
		}
	}
	if b != nil {
		for i, o := range b.entries {
			if o.name == e.name && o.domain == e.domain && o.hostOnly == e.hostOnly && o.path == e.path {
				if deleteOnly {
					j.removeAt(k, b, i)
					return nil
				}
				e.created, e.seq = o.created, o.seq
				b.entries[i] = e
				return nil
			}
		}
	}
	if deleteOnly {
		return nil
	}
	j.seq++
	e.seq = j.seq
	j.insertLocked(k, e, now)
	return nil
}

// checkPrefix applies the cookie name prefixes (RFC 6265bis 4.1.3),
// case-insensitively, also to nameless cookies whose value carries one.
func checkPrefix(e *entry, hadDomain bool) error {
	n := e.name
	if n == "" {
		n = e.value
		if hasPrefixFold(n, "__Secure-") || hasPrefixFold(n, "__Host-") {
			return ErrPrefix
		}
	}
	if hasPrefixFold(n, "__Secure-") && !e.secure {
		return ErrPrefix
	}
	if hasPrefixFold(n, "__Host-") && (!e.secure || hadDomain || !e.hostOnly || e.path != "/") {
		return ErrPrefix
	}
	return nil
}

// insertLocked adds a new entry in header order and applies the limits.
func (j *Jar) insertLocked(k string, e *entry, now time.Time) {
	if j.buckets == nil {
		j.buckets = make(map[string]*bucket)
	}
	b := j.buckets[k]
	if b == nil {
		b = &bucket{}
		j.buckets[k] = b
		j.some.Store(true)
	}
	i, _ := slices.BinarySearchFunc(b.entries, e, headerOrder)
	b.entries = slices.Insert(b.entries, i, e)
	j.total++
	if m := j.maxPerDomain(); len(b.entries) > m {
		j.evictBucket(k, b, now, m-m/6)
	}
	if m := j.maxTotal(); j.total > m {
		j.evictAll(now, m-m/10)
	}
}

// headerOrder is the Cookie header order: longer paths first, then
// earlier creation.
func headerOrder(a, b *entry) int {
	if len(a.path) != len(b.path) {
		return len(b.path) - len(a.path)
	}
	if c := a.created.Compare(b.created); c != 0 {
		return c
	}
	switch {
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

// evictionOrder puts the least recently used first.
func evictionOrder(a, b *entry) int {
	if c := a.lastAccess.Compare(b.lastAccess); c != 0 {
		return c
	}
	switch {
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

func (j *Jar) removeAt(k string, b *bucket, i int) {
	b.entries[i] = nil
	b.entries = slices.Delete(b.entries, i, i+1)
	j.total--
	if len(b.entries) == 0 {
		delete(j.buckets, k)
	}
}

// evictBucket drops expired cookies of b, then, as Chrome does, the least
// recently used non-Secure cookies, then the least recently used Secure
// ones, until at most target remain. An insecure origin flooding a domain
// therefore cannot push out its Secure cookies.
func (j *Jar) evictBucket(k string, b *bucket, now time.Time, target int) {
	j.dropExpired(k, b, now)
	if len(b.entries) <= target {
		return
	}
	victims := slices.Clone(b.entries)
	slices.SortFunc(victims, func(x, y *entry) int {
		if x.secure != y.secure {
			if y.secure {
				return -1
			}
			return 1
		}
		return evictionOrder(x, y)
	})
	gone := make(map[*entry]bool, len(b.entries)-target)
	for _, e := range victims[:len(b.entries)-target] {
		gone[e] = true
	}
	b.entries = slices.DeleteFunc(b.entries, func(e *entry) bool { return gone[e] })
	j.total -= len(gone)
	if len(b.entries) == 0 {
		delete(j.buckets, k)
	}
}

func (j *Jar) dropExpired(k string, b *bucket, now time.Time) {
	n := len(b.entries)
	b.entries = slices.DeleteFunc(b.entries, func(e *entry) bool { return e.expired(now) })
	j.total -= n - len(b.entries)
	if len(b.entries) == 0 {
		delete(j.buckets, k)
	}
}

// evictAll drops every expired cookie, then the least recently used, until
// at most target remain in the jar.
func (j *Jar) evictAll(now time.Time, target int) {
	for k, b := range j.buckets {
		j.dropExpired(k, b, now)
	}
	if j.total <= target {
		return
	}
	all := make([]*entry, 0, j.total)
	for _, b := range j.buckets {
		all = append(all, b.entries...)
	}
	slices.SortFunc(all, evictionOrder)
	victims := all[:j.total-target] // sorted by evictionOrder
	j.total = 0
	for k, b := range j.buckets {
		b.entries = slices.DeleteFunc(b.entries, func(e *entry) bool {
			_, found := slices.BinarySearchFunc(victims, e, evictionOrder)
			return found
		})
		j.total += len(b.entries)
		if len(b.entries) == 0 {
			delete(j.buckets, k)
		}
	}
}
