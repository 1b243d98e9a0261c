package altsvc

import (
	"sync"
	"time"
)

// Broken-alternative backoff, as Chromium's: 5 minutes after the first
// failure, doubling with each further one, at most 2 days.
const (
	BrokenDelay    = 5 * time.Minute
	MaxBrokenDelay = 48 * time.Hour
	// MaxOrigins bounds the origins a Cache remembers; past it the entry
	// that expires first is dropped.
	MaxOrigins = 1024
)

// Cache remembers origins' HTTP/3 alternatives and the broken ones. The
// zero value is ready; it is safe for concurrent use. Origins are keys
// such as "https://example.com:443", compared as given.
type Cache struct {
	mu      sync.Mutex
	origins map[string]entry
	broken  map[brokenKey]*brokenState
}

type entry struct {
	alts    []Alternative
	expires []time.Time
}

type brokenKey struct {
	origin string
	host   string
	port   int
}

type brokenState struct {
	count int       // failures since the last success
	until time.Time // not tried before this
}

// Update records origin's Alt-Svc field values received at now: the last
// value wins, "clear" forgets the origin, and only h3 alternatives on
// the origin's own host are kept (guise does not follow alternatives to
// other hosts). A value that does not parse changes nothing and is
// returned as the error.
func (c *Cache) Update(origin string, values []string, now time.Time) error {
	if len(values) == 0 {
		return nil
	}
	var keep []Alternative
	var exp []time.Time
	var firstErr error
	cleared := false
	for _, v := range values {
		alts, clear, err := Parse(v)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if clear {
			keep, exp, cleared = nil, nil, true
			continue
		}
		keep, exp, cleared = keep[:0], exp[:0], false
		for _, a := range alts {
			if a.Protocol == "h3" && a.Host == "" {
				keep = append(keep, a)
				exp = append(exp, now.Add(a.MaxAge))
			}
		}
	}
	if firstErr != nil && keep == nil && !cleared {
		return firstErr
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cleared || len(keep) == 0 {
		delete(c.origins, origin)
		return firstErr
	}
	if c.origins == nil {
		c.origins = make(map[string]entry)
	}
	if _, ok := c.origins[origin]; !ok && len(c.origins) >= MaxOrigins {
		c.evictLocked(now)
	}
	c.origins[origin] = entry{alts: keep, expires: exp}
	return firstErr
}

// evictLocked drops expired origins, or else the one expiring first.
func (c *Cache) evictLocked(now time.Time) {
	var first string
	var firstAt time.Time
	for o, e := range c.origins {
		last := latest(e.expires)
		if !last.After(now) {
			delete(c.origins, o)
			continue
		}
		if first == "" || last.Before(firstAt) {
			first, firstAt = o, last
		}
	}
	if len(c.origins) >= MaxOrigins {
		delete(c.origins, first)
	}
}

func latest(ts []time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}

// Lookup returns origin's first fresh h3 alternative that is not broken
// at now.
func (c *Cache) Lookup(origin string, now time.Time) (Alternative, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.origins[origin]
	if !ok {
		return Alternative{}, false
	}
	for i, a := range e.alts {
		if !e.expires[i].After(now) {
			continue
		}
		if b := c.broken[brokenKey{origin, a.Host, a.Port}]; b != nil && now.Before(b.until) {
			continue
		}
		return a, true
	}
	return Alternative{}, false
}

// MarkBroken records that a failed at now (UDP blocked, a handshake that
// timed out): it is not offered by Lookup for BrokenDelay, doubled for
// each failure since it last worked. It returns that delay.
func (c *Cache) MarkBroken(origin string, a Alternative, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == nil {
		c.broken = make(map[brokenKey]*brokenState)
	}
	k := brokenKey{origin, a.Host, a.Port}
	b := c.broken[k]
	if b == nil {
		if len(c.broken) >= MaxOrigins {
			for k2, b2 := range c.broken {
				if !now.Before(b2.until) {
					delete(c.broken, k2)
				}
			}
		}
		b = &brokenState{}
		c.broken[k] = b
	}
	d := BrokenDelay
	for i := 0; i < b.count && d < MaxBrokenDelay; i++ {
		d *= 2
	}
	d = min(d, MaxBrokenDelay)
	b.count++
	b.until = now.Add(d)
	return d
}

// MarkWorking records that a worked: its failures are forgotten.
func (c *Cache) MarkWorking(origin string, a Alternative) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.broken, brokenKey{origin, a.Host, a.Port})
}

// Len is the number of origins remembered.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.origins)
}
