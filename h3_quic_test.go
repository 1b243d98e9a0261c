package guise

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer/quicgo"
)

// TestH3OverGuiseQUIC is the whole HTTP/3 path with guise's own QUIC
// client (internal/quic, the browser's first flight) under internal/h3,
// against quic-go's HTTP/3 server: downloads of several sizes
// hash-checked, uploads, 16 concurrent requests, HEAD and a 404 with a
// body, over one connection, for each recorded browser.
func TestH3OverGuiseQUIC(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/size/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Write(h3Pattern(n))
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		io.Copy(h, r.Body)
		fmt.Fprintf(w, "%x", h.Sum(nil))
	})
	mux.HandleFunc("/404", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		io.WriteString(w, "not here")
	})
	srv := quicgo.HTTP3Server(t, mux)
	base := "https://127.0.0.1:" + strconv.Itoa(srv.Addr.Port)
	for _, name := range []string{"chrome156-linux", "firefox153-linux"} {
		t.Run(name, func(t *testing.T) {
			tr := &Transport{quicDial: dialGuiseQUIC}
			defer tr.Close()
			s := &Session{Profile: name, RootCAs: srv.Cert.Roots, Transport: tr, Protocol: HTTP3}
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for _, n := range []int{0, 1, 1500, 64 << 10, 1 << 20} {
				resp, err := s.Get(ctx, base+"/size/"+strconv.Itoa(n))
				if err != nil {
					t.Fatalf("%d: %v", n, err)
				}
				b, err := resp.Bytes()
				if err != nil || resp.Proto != "HTTP/3.0" || sha256.Sum256(b) != sha256.Sum256(h3Pattern(n)) {
					t.Fatalf("%d: %v %s, %d bytes", n, err, resp.Proto, len(b))
				}
			}
			body := h3Pattern(200 << 10)
			resp, err := s.Do(ctx, &Request{Method: "POST", URL: base + "/echo", Body: bytes.NewReader(body)})
			if err != nil {
				t.Fatal(err)
			}
			if b, err := resp.Bytes(); err != nil || string(b) != fmt.Sprintf("%x", sha256.Sum256(body)) {
				t.Fatalf("upload: %v %q", err, b)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for i := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := 1000 * (i + 1)
					resp, err := s.Get(ctx, base+"/size/"+strconv.Itoa(n))
					if err == nil {
						var b []byte
						if b, err = resp.Bytes(); err == nil && !bytes.Equal(b, h3Pattern(n)) {
							err = fmt.Errorf("%d: body differs", n)
						}
					}
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			resp, err = s.Do(ctx, &Request{Method: "HEAD", URL: base + "/size/5000"})
			if err != nil {
				t.Fatal(err)
			}
			if b, err := resp.Bytes(); err != nil || len(b) != 0 || resp.StatusCode != 200 {
				t.Fatalf("HEAD: %v %d bytes %d", err, len(b), resp.StatusCode)
			}
			resp, err = s.Get(ctx, base+"/404")
			if err != nil {
				t.Fatal(err)
			}
			if b, err := resp.Bytes(); err != nil || string(b) != "not here" || resp.StatusCode != 404 {
				t.Fatalf("404: %v %q %d", err, b, resp.StatusCode)
			}
			if n := tr.init().pool.Keys(); n != 1 {
				t.Errorf("%d pool keys, want one connection's", n)
			}
		})
	}
}

func h3Pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13 + i>>9)
	}
	return b
}
