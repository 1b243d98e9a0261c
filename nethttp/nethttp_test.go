package nethttp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mccutchen/go-httpbin/v2/httpbin"
	"go.uber.org/goleak"

	"github.com/guise-http/guise"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ http.RoundTripper = RoundTripper(&guise.Session{})

func TestClientGetAndRedirects(t *testing.T) {
	hb := httptest.NewServer(httpbin.New())
	defer hb.Close()
	s := &guise.Session{}
	defer s.Close()
	c := Client(s)

	resp, err := c.Get(hb.URL + "/redirect/2")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 1 || !bytes.Contains(b, []byte(`"url"`)) {
		t.Fatalf("status %d proto %s body %q", resp.StatusCode, resp.Proto, b)
	}
	if resp.Header.Get("Content-Type") == "" {
		t.Fatal("response header lost")
	}

	// 307 replays a body net/http can rebuild (GetBody).
	u := hb.URL + "/redirect-to?status_code=307&url=" + url.QueryEscape("/anything")
	resp, err = c.Post(u, "text/plain", strings.NewReader("payload"))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Method, Data string
	}
	json.NewDecoder(resp.Body).Decode(&a)
	resp.Body.Close()
	if a.Method != "POST" || a.Data != "payload" {
		t.Fatalf("307 through Client: %+v", a)
	}
}

func TestRoundTripperLeavesRedirectsToTheClient(t *testing.T) {
	hb := httptest.NewServer(httpbin.New())
	defer hb.Close()
	s := &guise.Session{}
	defer s.Close()
	rt := RoundTripper(s)
	req, _ := http.NewRequest("GET", hb.URL+"/redirect/1", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 {
		t.Fatalf("RoundTripper followed a redirect: %d", resp.StatusCode)
	}
	hc := &http.Client{Transport: rt}
	resp, err = hc.Get(hb.URL + "/redirect/2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("http.Client over RoundTripper: %d", resp.StatusCode)
	}
}

func TestErrorsAreGuiseErrors(t *testing.T) {
	s := &guise.Session{}
	defer s.Close()
	req, _ := http.NewRequest("GET", "http://127.0.0.1:1/", nil)
	req.Header.Set("X-Bad", "a\r\nb")
	_, err := Client(s).Do(req)
	var ge *guise.Error
	if !errors.As(err, &ge) || !errors.Is(err, guise.ErrRefusedToSend) {
		t.Fatalf("err = %v", err)
	}
}

// TestHeaderOrder checks that the profile orders the fields it knows and
// WithHeaderOrder orders (and cases) the rest.
func TestHeaderOrder(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	head := make(chan string, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		var sb strings.Builder
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			sb.WriteString(line)
			if line == "\r\n" {
				break
			}
		}
		head <- sb.String()
		io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
	}()
	defer func() { ln.Close(); wg.Wait() }()

	s := &guise.Session{}
	defer s.Close()
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/", nil)
	req.Header.Set("X-Second", "2")
	req.Header.Set("X-First", "1")
	req.Header.Set("User-Agent", "custom/1")
	req = WithHeaderOrder(req, "x-first", "X-SECOND")
	resp, err := Client(s).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := <-head
	iUA, i1, i2, iAccept := strings.Index(h, "User-Agent: custom/1"), strings.Index(h, "\r\nx-first: 1"), strings.Index(h, "\r\nX-SECOND: 2"), strings.Index(h, "\r\nAccept:")
	if iUA < 0 || i1 < 0 || i2 < 0 || iAccept < 0 || !(iUA < iAccept && iAccept < i1 && i1 < i2) {
		t.Fatalf("unexpected head order or case:\n%s", h)
	}
}
