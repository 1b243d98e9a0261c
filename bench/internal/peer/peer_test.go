package peer

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// start serves a new Server on 127.0.0.1 (over TLS when cfg is set) until
// the test ends.
func start(t *testing.T, cfg *tls.Config) (*Server, string) {
	t.Helper()
	s := New()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln, cfg) }()
	t.Cleanup(func() {
		if err := s.Shutdown(5 * time.Second); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		<-done
	})
	return s, ln.Addr().String()
}

// rawGet sends one request on a new connection and returns the raw
// response, read until the server closes (Connection: close).
func rawGet(t *testing.T, addr, target string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEndpointsFraming(t *testing.T) {
	_, addr := start(t, nil)
	for _, tc := range []struct {
		path    string
		size    int
		chunked bool
	}{
		{"/small", SmallSize, false},
		{"/chunked4k", Chunked4KSize, true},
		{"/1m", OneMiBSize, false},
		{"/chunked8m", Chunked8MSize, true},
		{"/smallchunked", SmallChunkedSize, true},
	} {
		raw := rawGet(t, addr, tc.path)
		head, _, ok := strings.Cut(raw, "\r\n\r\n")
		if !ok {
			t.Fatalf("%s: no end of head in %q", tc.path, raw[:min(len(raw), 200)])
		}
		lower := strings.ToLower(head)
		if got := strings.Contains(lower, "transfer-encoding: chunked"); got != tc.chunked {
			t.Errorf("%s: chunked = %v, want %v; head %q", tc.path, got, tc.chunked, head)
		}
		if !tc.chunked && !strings.Contains(lower, "content-length: "+strconv.Itoa(tc.size)+"\r") &&
			!strings.HasSuffix(lower, "content-length: "+strconv.Itoa(tc.size)) {
			t.Errorf("%s: no Content-Length %d in %q", tc.path, tc.size, head)
		}
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(raw)), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s: body: %v", tc.path, err)
		}
		if resp.StatusCode != 200 || len(body) != tc.size {
			t.Errorf("%s: status %d, %d body bytes; want 200, %d", tc.path, resp.StatusCode, len(body), tc.size)
		}
	}
	if raw := rawGet(t, addr, "/nope"); !strings.HasPrefix(raw, "HTTP/1.1 404") {
		t.Errorf("/nope answered %q", raw[:min(len(raw), 40)])
	}
}

func TestChunked8MIsStreamedInPieces(t *testing.T) {
	_, addr := start(t, nil)
	raw := rawGet(t, addr, "/chunked8m")
	_, body, _ := strings.Cut(raw, "\r\n\r\n")
	// Count chunk-size lines: 8 MiB in 32 KiB pieces is 256 chunks.
	br := bufio.NewReader(strings.NewReader(body))
	chunks := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d chunks: %v", chunks, err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			t.Fatalf("chunk size line %q: %v", line, err)
		}
		if n == 0 {
			break
		}
		if n > streamPiece {
			t.Fatalf("chunk of %d bytes, want <= %d", n, streamPiece)
		}
		chunks++
		if _, err := br.Discard(int(n) + 2); err != nil {
			t.Fatal(err)
		}
	}
	if chunks != Chunked8MSize/streamPiece {
		t.Errorf("%d chunks, want %d", chunks, Chunked8MSize/streamPiece)
	}
}

func TestUploadAndStats(t *testing.T) {
	s, addr := start(t, nil)
	tr := &http.Transport{MaxConnsPerHost: 1, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	get := func(path string) string {
		t.Helper()
		resp, err := c.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Uploads bigger than fasthttp's default 4 MiB body limit, with a
	// length and chunked.
	for _, n := range []int{0, 1, 5 << 20} {
		body := bytes.Repeat([]byte{'z'}, n)
		resp, err := c.Post("http://"+addr+"/upload", "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != strconv.Itoa(n) {
			t.Errorf("upload of %d bytes: server answered %q", n, b)
		}
		resp, err = c.Post("http://"+addr+"/upload", "application/octet-stream", io.MultiReader(bytes.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != strconv.Itoa(n) {
			t.Errorf("chunked upload of %d bytes: server answered %q", n, b)
		}
	}
	// One kept-alive connection so far.
	if got := get("/stats"); got != "1" {
		t.Errorf("/stats = %q, want 1", got)
	}
	for range 3 {
		rawGet(t, addr, "/small")
	}
	if got := get("/stats?reset=1"); got != "4" {
		t.Errorf("/stats?reset=1 = %q, want 4", got)
	}
	if got := get("/stats"); got != "0" {
		t.Errorf("/stats after reset = %q, want 0", got)
	}
	if s.Accepted() != 0 {
		t.Errorf("Accepted() = %d, want 0", s.Accepted())
	}
}

func TestTLSListener(t *testing.T) {
	cfg, pool, err := SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	_, addr := start(t, cfg)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://" + addr + "/small")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(b) != SmallSize {
		t.Errorf("%d bytes over TLS, want %d", len(b), SmallSize)
	}
}

func TestRunServesUntilStdinCloses(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run([]string{"-tls"}, inR, outW)
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	var urls []string
	for range 2 {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, strings.TrimSpace(l))
	}
	go io.Copy(io.Discard, br)
	if !strings.HasPrefix(urls[0], "http://127.0.0.1:") || !strings.HasPrefix(urls[1], "https://127.0.0.1:") {
		t.Fatalf("printed %q", urls)
	}
	raw := rawGet(t, strings.TrimPrefix(urls[0], "http://"), "/small")
	if !strings.HasPrefix(raw, "HTTP/1.1 200") {
		t.Errorf("GET /small: %q", raw[:min(len(raw), 40)])
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after stdin closed")
	}
}
