package cookie

import (
	"strings"
	"time"
)

// This file holds the import path shared by ReadJSON and ReadNetscape:
// an imported cookie passes the same checks a Set-Cookie would.

// validateImport checks an imported cookie and returns the entry to store,
// or skip=true for a cookie that is simply expired.
func (j *Jar) validateImport(c *Cookie, now time.Time) (e *entry, skip bool, err error) {
	for _, s := range [...]string{c.Name, c.Value} {
		for i := 0; i < len(s); i++ {
			if b := s[i]; (b < 0x20 && b != '\t') || b == 0x7f {
				return nil, false, ErrControlChar
			}
		}
	}
	if strings.IndexByte(c.Name, ';') >= 0 || strings.IndexByte(c.Name, '=') >= 0 ||
		strings.IndexByte(c.Value, ';') >= 0 || c.Name != trimWSP(c.Name) || c.Value != trimWSP(c.Value) {
		return nil, false, ErrSyntax
	}
	if c.Name == "" && c.Value == "" {
		return nil, false, ErrSyntax
	}
	if len(c.Name)+len(c.Value) > j.maxCookieBytes() {
		return nil, false, ErrTooLarge
	}
	d, ok := canonicalHost(strings.TrimPrefix(c.Domain, "."))
	if !ok {
		return nil, false, ErrDomain
	}
	e = &entry{
		name: c.Name, value: c.Value, domain: d, path: c.Path, hostOnly: c.HostOnly,
		secure: c.Secure, httpOnly: c.HttpOnly, sameSite: c.SameSite, partitioned: c.Partitioned,
		expires: c.Expires, created: stamp(c.Created, now),
	}
	e.lastAccess = stamp(c.LastAccess, e.created)
	if e.sameSite > SameSiteStrict {
		e.sameSite = SameSiteUnspecified
	}
	if isIPLike(d) {
		e.hostOnly = true
	}
	if !e.hostOnly && j.isPublicSuffix(d) {
		return nil, false, ErrPublicSuffix
	}
	if len(e.path) > maxAttrValue || e.path == "" || e.path[0] != '/' {
		e.path = "/"
	}
	if err := checkPrefix(e, !e.hostOnly); err != nil {
		return nil, false, err
	}
	if e.sameSite == SameSiteNone && !e.secure {
		return nil, false, ErrSameSiteNone
	}
	if e.partitioned && !e.secure {
		return nil, false, ErrPartitioned
	}
	if e.expired(now) {
		return nil, true, nil
	}
	if !e.expires.IsZero() && e.expires.Sub(now) > maxAge {
		e.expires = now.Add(maxAge)
	}
	return e, false, nil
}

// importLocked stores validated entries, replacing namesakes.
func (j *Jar) importLocked(e *entry, now time.Time) {
	k := j.key(e.domain)
	if b := j.buckets[k]; b != nil {
		for i, o := range b.entries {
			if o.name == e.name && o.domain == e.domain && o.hostOnly == e.hostOnly && o.path == e.path {
				j.removeAt(k, b, i)
				break
			}
		}
	}
	j.seq++
	e.seq = j.seq
	j.insertLocked(k, e, now)
}

// importer collects the outcome of an import.
type importer struct {
	j   *Jar
	now time.Time
	ie  ImportError
}

func (im *importer) add(entryNo int, c *Cookie) {
	e, skip, err := im.j.validateImport(c, im.now)
	if err != nil {
		im.fail(entryNo, err)
		return
	}
	if !skip {
		im.j.importLocked(e, im.now)
	}
}

func (im *importer) fail(entryNo int, err error) {
	if im.ie.Skipped == 0 {
		im.ie.Entry, im.ie.Err = entryNo, err
	}
	im.ie.Skipped++
}

func (im *importer) result() error {
	if im.ie.Skipped == 0 {
		return nil
	}
	ie := im.ie
	return &ie
}
