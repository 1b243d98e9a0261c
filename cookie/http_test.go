package cookie

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestHTTPJarRedirect covers R-11: a cookie set on a 302 goes to the next
// hop when the domain matches, through the net/http adapter.
func TestHTTPJarRedirect(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Cookie"))
		mu.Unlock()
		switch r.URL.Path {
		case "/start":
			http.SetCookie(w, &http.Cookie{Name: "hop", Value: "1", Path: "/"})
			w.Header().Add("Set-Cookie", "gone=1; Path=/; Max-Age=0")
			w.Header().Add("Set-Cookie", "q=\"quoted\"; Path=/")
			http.Redirect(w, r, "/next", http.StatusFound)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	j := New(nil)
	client := &http.Client{Jar: j.HTTP()}
	defer client.CloseIdleConnections()
	resp, err := client.Get(srv.URL + "/start")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "/start " || seen[1] != `/next hop=1; q="quoted"` {
		t.Fatalf("requests: %q", seen)
	}
	// The adapter's Cookies for http.Request.AddCookie keeps quoting.
	cs := j.HTTP().Cookies(mustURL(t, srv.URL+"/"))
	if len(cs) != 2 || cs[1].Value != "quoted" || !cs[1].Quoted {
		t.Fatalf("adapter cookies: %+v", cs)
	}
	// Set via parsed cookies without Raw.
	j.HTTP().SetCookies(mustURL(t, srv.URL+"/"), []*http.Cookie{{Name: "x", Value: "y", Path: "/"}, nil, {Name: "bad name"}})
	if got := header(t, j, srv.URL+"/", SameSiteRequest); got != `hop=1; q="quoted"; x=y` {
		t.Fatalf("after SetCookies: %q", got)
	}
}

// TestConcurrent exercises the jar from several goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	j := New(&Options{MaxPerDomain: 20, MaxTotal: 50})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := mustURL(t, fmt.Sprintf("https://h%d.example.com/p", g))
			var buf []byte
			for i := 0; i < 300; i++ {
				j.SetCookies(u, []string{fmt.Sprintf("c%d=%d; Domain=example.com", i%40, i)})
				buf = j.AppendCookieHeader(buf[:0], u, CrossSiteNavigation)
				if i%50 == 0 {
					j.All()
					j.Cookies(u)
					var sb strings.Builder
					j.WriteNetscape(&sb)
				}
			}
		}()
	}
	wg.Wait()
	if n := j.Len(); n > 20 {
		t.Fatalf("Len %d over per-domain cap", n)
	}
}
