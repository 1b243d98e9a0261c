package cookie

import (
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

var epoch = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is a settable clock for Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestJar(t testing.TB, o *Options) (*Jar, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: epoch}
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.Now = clk.Now
	return New(&opts), clk
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", s, err)
	}
	return u
}

// header returns the Cookie header for rawURL in context site.
func header(t testing.TB, j *Jar, rawURL string, site SiteContext) string {
	t.Helper()
	return string(j.AppendCookieHeader(nil, mustURL(t, rawURL), site))
}

// set sets each line from rawURL and fails on an unexpected error.
func set(t testing.TB, j *Jar, rawURL string, lines ...string) {
	t.Helper()
	u := mustURL(t, rawURL)
	for _, l := range lines {
		if err := j.SetCookie(u, l); err != nil {
			t.Fatalf("SetCookie(%q, %q) = %v", rawURL, l, err)
		}
	}
}

func names(cs []*Cookie) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.Name)
	}
	return b.String()
}
