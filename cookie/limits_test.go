package cookie

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/publicsuffix"
)

// TestEvictionPerDomain: over the per-domain cap, expired cookies go first,
// then the least recently accessed, down to MaxPerDomain - MaxPerDomain/6.
func TestEvictionPerDomain(t *testing.T) {
	j, clk := newTestJar(t, &Options{MaxPerDomain: 6}) // evicts down to 5
	const u = "https://example.com/"
	set(t, j, u, "a=1; Path=/a", "b=1; Path=/b", "c=1; Path=/c", "d=1; Path=/d", "e=1; Path=/e; Max-Age=5")
	clk.Advance(time.Second)
	if got := header(t, j, "https://example.com/a", SameSiteRequest); got != "a=1" {
		t.Fatalf("header %q", got) // a is now the most recently used of a-d
	}
	clk.Advance(10 * time.Second) // e expires
	set(t, j, u, "f=1")           // 6 cookies: at the cap
	if j.Len() != 6 {
		t.Fatalf("Len %d, want 6", j.Len())
	}
	set(t, j, u, "g=1") // 7 > 6: drop expired e, then b (least recently used, oldest) down to 5
	if got, want := names(j.All()), "a c d f g"; got != want {
		t.Fatalf("kept %q, want %q", got, want)
	}
}

// TestEvictionSecureLast: per domain, non-Secure cookies go before Secure
// ones, so an http flood cannot evict them.
func TestEvictionSecureLast(t *testing.T) {
	j, clk := newTestJar(t, &Options{MaxPerDomain: 6})
	set(t, j, "https://example.com/", "s1=1; Secure", "s2=1; Secure")
	for i := 0; i < 50; i++ {
		clk.Advance(time.Second)
		set(t, j, "http://example.com/", fmt.Sprintf("n%d=1", i))
	}
	if got := header(t, j, "https://example.com/", SameSiteRequest); !strings.HasPrefix(got, "s1=1; s2=1; ") || j.Len() > 6 {
		t.Fatalf("secure cookies evicted by an http flood: %q (Len %d)", got, j.Len())
	}
	if got := header(t, j, "https://example.com/", SameSiteRequest); !strings.HasSuffix(got, "n49=1") {
		t.Fatalf("newest cookie evicted: %q", got)
	}
}

// TestEvictionTotal: the total cap holds across domains and evicts the
// least recently used first.
func TestEvictionTotal(t *testing.T) {
	j, clk := newTestJar(t, &Options{MaxTotal: 20})
	for i := 0; i < 20; i++ {
		set(t, j, fmt.Sprintf("https://d%d.example/", i), "c=1")
		clk.Advance(time.Second)
	}
	header(t, j, "https://d0.example/", SameSiteRequest) // d0 is now the most recent
	set(t, j, "https://new.example/", "c=1")
	if j.Len() > 20 {
		t.Fatalf("Len %d over MaxTotal", j.Len())
	}
	if header(t, j, "https://d0.example/", SameSiteRequest) != "c=1" {
		t.Error("recently used cookie evicted")
	}
	if header(t, j, "https://new.example/", SameSiteRequest) != "c=1" {
		t.Error("new cookie evicted")
	}
	if header(t, j, "https://d1.example/", SameSiteRequest) != "" {
		t.Error("least recently used cookie kept")
	}
}

// TestManySetCookies covers R-14 (curl CVE-2022-32205, GO-2025-4012):
// 5,000 Set-Cookie headers, or 100 cookies of 4 KB, keep the jar and the
// Cookie header bounded.
func TestManySetCookies(t *testing.T) {
	t.Run("5000 headers", func(t *testing.T) {
		j, _ := newTestJar(t, nil)
		lines := make([]string, 5000)
		for i := range lines {
			lines[i] = fmt.Sprintf("c%d=%d", i, i)
		}
		j.SetCookies(mustURL(t, "https://example.com/"), lines)
		if j.Len() > 180 {
			t.Fatalf("Len %d > 180", j.Len())
		}
		h := header(t, j, "https://example.com/", SameSiteRequest)
		if n := strings.Count(h, "; ") + 1; n > 180 || len(h) > 180*(4096+2) {
			t.Fatalf("Cookie header: %d cookies, %d bytes", n, len(h))
		}
		if !strings.Contains(h, "c4999=4999") {
			t.Fatal("newest cookie evicted")
		}
	})
	t.Run("5000 domains", func(t *testing.T) {
		j, _ := newTestJar(t, nil)
		for i := 0; i < 5000; i++ {
			j.SetCookies(mustURL(t, fmt.Sprintf("https://d%d.example.com/", i)), []string{"a=1", "b=2; Domain=example.com"})
		}
		if j.Len() > 3000 {
			t.Fatalf("Len %d > 3000", j.Len())
		}
		if h := header(t, j, "https://d1.example.com/", SameSiteRequest); len(h) > 180*(4096+2) {
			t.Fatalf("header %d bytes", len(h))
		}
	})
	t.Run("100 x 4KB", func(t *testing.T) {
		j, _ := newTestJar(t, &Options{MaxHeaderBytes: 16 << 10})
		v := strings.Repeat("v", 4090)
		for i := 0; i < 100; i++ {
			set(t, j, "https://example.com/", fmt.Sprintf("c%02d=%s", i, v))
		}
		if j.Len() != 100 {
			t.Fatalf("Len %d", j.Len())
		}
		h := header(t, j, "https://example.com/", SameSiteRequest)
		if len(h) > 16<<10 || strings.Count(h, "; ")+1 != 4 {
			t.Fatalf("capped header: %d bytes, %d cookies", len(h), strings.Count(h, "; ")+1)
		}
		// Without a header cap the other limits bound it.
		j2, _ := newTestJar(t, nil)
		for i := 0; i < 300; i++ {
			set(t, j2, "https://example.com/", fmt.Sprintf("c%03d=%s", i, v))
		}
		if h := header(t, j2, "https://example.com/", SameSiteRequest); len(h) > 180*(4096+2) {
			t.Fatalf("uncapped header %d bytes", len(h))
		}
	})
}

// TestManyEmptyCookiesDoNotGrowMemory: many "a=;" (one header or many)
// keep one cookie and bounded memory (GO-2025-4012).
func TestManyEmptyCookiesDoNotGrowMemory(t *testing.T) {
	j, _ := newTestJar(t, nil)
	u := mustURL(t, "https://example.com/")
	one := strings.Repeat("a=;", 100000)
	batch := make([]string, 1000)
	for i := range batch {
		batch[i] = "a=;"
	}
	j.SetCookies(u, []string{one})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < 100; i++ {
		j.SetCookies(u, batch)
		j.SetCookies(u, []string{one})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if j.Len() != 1 {
		t.Fatalf("Len %d, want 1", j.Len())
	}
	if grow := int64(after.HeapAlloc) - int64(before.HeapAlloc); grow > 256<<10 {
		t.Fatalf("heap grew by %d bytes", grow)
	}
	if got := header(t, j, "https://example.com/", SameSiteRequest); got != "a=" {
		t.Fatalf("header %q", got)
	}
}

// TestAppendCookieHeaderAllocs pins the hot path's allocation budget.
func TestAppendCookieHeaderAllocs(t *testing.T) {
	j, _ := newTestJar(t, nil)
	empty := mustURL(t, "https://nothing.example.org/path")
	if n := testing.AllocsPerRun(100, func() { j.AppendCookieHeader(nil, empty, SameSiteRequest) }); n != 0 {
		t.Errorf("empty jar: %v allocs", n)
	}
	for i := 0; i < 20; i++ {
		set(t, j, "https://www.example.com/", fmt.Sprintf("cookie%02d=value%02d; Path=/", i, i))
	}
	set(t, j, "https://other.example.net/", "x=1")
	if n := testing.AllocsPerRun(100, func() { j.AppendCookieHeader(nil, empty, CrossSite) }); n != 0 {
		t.Errorf("no cookie for host: %v allocs", n)
	}
	u := mustURL(t, "https://www.example.com/a/b")
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { buf = j.AppendCookieHeader(buf[:0], u, SameSiteRequest) }); n != 0 {
		t.Errorf("20 cookies into a sized buffer: %v allocs", n)
	}
	if strings.Count(string(buf), "; ") != 19 {
		t.Fatalf("header %q", buf)
	}
}

func BenchmarkAppendCookieHeader(b *testing.B) {
	for _, n := range []int{0, 20} {
		b.Run(fmt.Sprintf("cookies=%d", n), func(b *testing.B) {
			j := New(nil)
			for i := 0; i < n; i++ {
				set(b, j, "https://www.example.com/", fmt.Sprintf("cookie%02d=value-%02d-abcdefgh; Path=/", i, i))
			}
			u := mustURL(b, "https://www.example.com/a/b?q=1")
			buf := make([]byte, 0, 4096)
			b.ReportAllocs()
			for b.Loop() {
				buf = j.AppendCookieHeader(buf[:0], u, SameSiteRequest)
			}
		})
	}
}

func BenchmarkSetCookies(b *testing.B) {
	j := New(nil)
	u := mustURL(b, "https://www.example.com/")
	lines := []string{"sid=abcdef0123456789; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=3600", "pref=x; Domain=example.com"}
	b.ReportAllocs()
	for b.Loop() {
		j.SetCookies(u, lines)
	}
}

// BenchmarkNetHTTPCookiejar is the reference point: net/http/cookiejar
// building the same Cookie header for 0 and 20 cookies.
func BenchmarkNetHTTPCookiejar(b *testing.B) {
	for _, n := range []int{0, 20} {
		b.Run(fmt.Sprintf("cookies=%d", n), func(b *testing.B) {
			cj, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
			u := mustURL(b, "https://www.example.com/a/b?q=1")
			var cs []*http.Cookie
			for i := 0; i < n; i++ {
				cs = append(cs, &http.Cookie{Name: fmt.Sprintf("cookie%02d", i), Value: fmt.Sprintf("value-%02d-abcdefgh", i), Path: "/"})
			}
			cj.SetCookies(mustURL(b, "https://www.example.com/"), cs)
			buf := make([]byte, 0, 4096)
			b.ReportAllocs()
			for b.Loop() {
				buf = buf[:0]
				for i, c := range cj.Cookies(u) {
					if i > 0 {
						buf = append(buf, "; "...)
					}
					buf = append(buf, c.Name...)
					buf = append(buf, '=')
					buf = append(buf, c.Value...)
				}
			}
		})
	}
}
