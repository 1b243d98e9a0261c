package h3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/testpeer/quicgo"
)

// chromeConfig is Chromium 156's HTTP/3 behaviour as profile/data records
// it (the root builds the same from the profile).
func chromeConfig() *h3.Config {
	return &h3.Config{
		Settings:          []h3.Setting{{ID: 1, Value: 65536}, {ID: 6, Value: 262144}, {ID: 7, Value: 100}, {ID: 0x33, Value: 1}, {ID: 0x21, Value: 1, GREASE: true}},
		GREASEFrameMaxLen: 4,
		PseudoOrder:       []string{":method", ":authority", ":scheme", ":path"},
		PriorityUpdate:    true,
		Huffman:           h3.HuffmanShorter,
		QPACKDynamic:      h3.DynamicInsertAll, // quic-go's server allows no table: static-only
	}
}

func firefoxConfig() *h3.Config {
	return &h3.Config{
		Settings:          []h3.Setting{{ID: 1, Value: 65536}, {ID: 7, Value: 20}, {ID: 0x2b603742, Value: 0}, {ID: 0xffd277, Value: 1}, {ID: 0x33, Value: 1}, {ID: 8, Value: 1}},
		GREASEFrameMaxLen: 8,
		QPACKStreams:      true,
		PseudoOrder:       []string{":method", ":scheme", ":authority", ":path"},
		Huffman:           h3.HuffmanNotLonger,
		QPACKDynamic:      h3.DynamicInsertNewNames,
	}
}

// testHandler serves /size/N (N deterministic bytes), /echo (the body
// back, with its sha256 in a trailer), /trailers, /404 and HEAD.
func testHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/size/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Write(pattern(n))
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			w.WriteHeader(500)
			return
		}
		w.Header().Set("X-Len", strconv.FormatInt(n, 10))
		fmt.Fprintf(w, "%x", h.Sum(nil))
	})
	mux.HandleFunc("/trailers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		w.Write([]byte("body"))
		w.Header().Set("X-Sum", "abc")
	})
	mux.HandleFunc("/404", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		w.Write([]byte("not here"))
	})
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		for _, k := range []string{"User-Agent", "Priority", "Accept"} {
			fmt.Fprintf(w, "%s=%s\n", k, r.Header.Get(k))
		}
	})
	return mux
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>10)
	}
	return b
}

func dialConn(t *testing.T, s *quicgo.Server, cfg *h3.Config) *h3.ClientConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	qc, err := quicgo.Dial(ctx, nil, s.Addr, s.Cert.Roots, "localhost")
	if err != nil {
		t.Fatal(err)
	}
	cc, err := h3.NewClientConn(qc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func get(path string) *h3.Request {
	return &h3.Request{Method: "GET", Scheme: "https", Authority: "localhost", Path: path,
		Header: fields.Header{{Name: "user-agent", Value: "guise-test"}, {Name: "accept", Value: "*/*"}, {Name: "priority", Value: "u=1, i"}}}
}

func TestInteropQuicGo(t *testing.T) {
	srv := quicgo.HTTP3Server(t, testHandler())
	for name, cfg := range map[string]*h3.Config{"chromium": chromeConfig(), "firefox": firefoxConfig()} {
		t.Run(name, func(t *testing.T) {
			cc := dialConn(t, srv, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			t.Run("sizes", func(t *testing.T) {
				for _, n := range []int{0, 1, 1000, 16 << 10, 100 << 10, 1 << 20, 5<<20 + 3} {
					resp, err := cc.RoundTrip(ctx, get("/size/"+strconv.Itoa(n)))
					if err != nil {
						t.Fatal(n, err)
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != 200 || resp.ContentLength != int64(n) {
						t.Fatalf("%d: %v %d %d", n, err, resp.StatusCode, resp.ContentLength)
					}
					if sha256.Sum256(b) != sha256.Sum256(pattern(n)) {
						t.Fatalf("%d: body differs (%d bytes)", n, len(b))
					}
				}
			})
			t.Run("upload", func(t *testing.T) {
				for _, n := range []int{1, 10 << 10, 300 << 10} {
					body := pattern(n)
					want := fmt.Sprintf("%x", sha256.Sum256(body))
					for _, streamed := range []bool{false, true} {
						req := get("/echo")
						req.Method = "POST"
						req.ContentLength = int64(n)
						if streamed {
							req.Body = bytes.NewReader(body)
						} else {
							req.BodyBytes = body
						}
						resp, err := cc.RoundTrip(ctx, req)
						if err != nil {
							t.Fatal(err)
						}
						b, err := io.ReadAll(resp.Body)
						if err != nil || string(b) != want || resp.Header.Get("x-len") != strconv.Itoa(n) {
							t.Fatalf("%d streamed=%v: %v %q %q", n, streamed, err, b, resp.Header.Get("x-len"))
						}
					}
				}
			})
			t.Run("concurrent", func(t *testing.T) {
				var wg sync.WaitGroup
				errs := make(chan error, 16)
				for i := range 16 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						n := 1000 * (i + 1)
						resp, err := cc.RoundTrip(ctx, get("/size/"+strconv.Itoa(n)))
						if err != nil {
							errs <- err
							return
						}
						b, err := io.ReadAll(resp.Body)
						if err != nil || !bytes.Equal(b, pattern(n)) {
							errs <- fmt.Errorf("%d: %v, %d bytes", n, err, len(b))
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Error(err)
				}
			})
			t.Run("head", func(t *testing.T) {
				req := get("/size/5000")
				req.Method = "HEAD"
				resp, err := cc.RoundTrip(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				if err != nil || len(b) != 0 || resp.StatusCode != 200 {
					t.Fatalf("%v %d bytes %d", err, len(b), resp.StatusCode)
				}
			})
			t.Run("trailers", func(t *testing.T) {
				resp, err := cc.RoundTrip(ctx, get("/trailers"))
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				if err != nil || string(b) != "body" || resp.Trailer.Get("x-sum") != "abc" {
					t.Fatalf("%v %q %v", err, b, resp.Trailer)
				}
			})
			t.Run("404", func(t *testing.T) {
				resp, err := cc.RoundTrip(ctx, get("/404"))
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				if err != nil || string(b) != "not here" || resp.StatusCode != 404 {
					t.Fatalf("%v %q %d", err, b, resp.StatusCode)
				}
			})
			t.Run("headers", func(t *testing.T) {
				resp, err := cc.RoundTrip(ctx, get("/headers"))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				if want := "User-Agent=guise-test\nPriority=u=1, i\nAccept=*/*\n"; string(b) != want {
					t.Fatalf("%q", b)
				}
			})
			t.Run("cancel", func(t *testing.T) {
				c2, cancel2 := context.WithCancel(ctx)
				resp, err := cc.RoundTrip(c2, get("/size/1000000"))
				if err != nil {
					t.Fatal(err)
				}
				cancel2()
				_, err = io.ReadAll(resp.Body)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("%v", err)
				}
				resp.Body.Close()
			})
			if n := cc.ActiveStreams(); n != 0 {
				t.Errorf("%d streams left", n)
			}
		})
	}
}
