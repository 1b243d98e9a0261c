package h2

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"
)

// TestRSTNoErrorAfterCompleteResponse: a server that answers a request in
// full before reading its body, then sends RST_STREAM(NO_ERROR), asks the
// client to stop sending (RFC 9113 §8.1). The response stands and its body
// reads to EOF, the body writer stops without sending more DATA, and the
// connection carries the next request.
//
// RELIABILITY H2-23.
func TestRSTNoErrorAfterCompleteResponse(t *testing.T) {
	cc, p := ready(t, plainConfig())
	body := bytes.Repeat([]byte("x"), 1<<20) // more than the 65535-byte window
	req := &Request{Method: "POST", Scheme: "https", Authority: "peer.test", Path: "/up",
		Body: bytes.NewReader(body), ContentLength: int64(len(body))}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch := goRoundTrip(ctx, cc, req)
	h := p.nextOf(FrameHeaders)
	p.writeHeaders(h.StreamID, false, ":status", "413")
	p.writeData(h.StreamID, true, []byte("too large"))
	p.write(appendRSTStream(nil, h.StreamID, ErrCodeNo))
	r := <-ch
	if r.err != nil {
		t.Fatalf("round trip: %v", r.err)
	}
	b, err := io.ReadAll(r.resp.Body)
	r.resp.Body.Close()
	if err != nil || string(b) != "too large" || r.resp.StatusCode != 413 {
		t.Fatalf("%d %q %v, want 413 %q", r.resp.StatusCode, b, err, "too large")
	}
	// The next request on the connection works; the DATA the writer had
	// sent before it saw the reset stays within the initial window.
	sent := 0
	ch = goRoundTrip(ctx, cc, get("/next"))
	for {
		f := p.next()
		if f.Type == FrameData && f.StreamID == h.StreamID {
			sent += len(f.payload)
			continue
		}
		if f.Type == FrameRSTStream && f.StreamID == h.StreamID {
			t.Fatalf("the client reset stream %d, which had ended", h.StreamID)
		}
		if f.Type == FrameHeaders {
			p.writeHeaders(f.StreamID, true, ":status", "204")
			break
		}
	}
	if r := <-ch; r.err != nil {
		t.Fatalf("next request: %v", r.err)
	}
	if sent > 65535 {
		t.Fatalf("the client sent %d body bytes on the reset stream, more than the window", sent)
	}
}

// TestRSTNoErrorBeforeEnd: RST_STREAM(NO_ERROR) before the response ended
// truncates it: the exchange fails with the stream error.
//
// RELIABILITY H2-23.
func TestRSTNoErrorBeforeEnd(t *testing.T) {
	cc, p := ready(t, plainConfig())
	ch := goRoundTrip(context.Background(), cc, get("/cut"))
	h := p.nextOf(FrameHeaders)
	p.writeHeaders(h.StreamID, false, ":status", "200")
	p.writeData(h.StreamID, false, []byte("part"))
	p.write(appendRSTStream(nil, h.StreamID, ErrCodeNo))
	// The reset may reach the stream before or after RoundTrip returned
	// the head: the error then comes from RoundTrip or from the body.
	r := <-ch
	err := r.err
	if err == nil {
		_, err = io.ReadAll(r.resp.Body)
		r.resp.Body.Close()
	}
	wantStreamError(t, err, ErrCodeNo)
	roundTripOK(t, cc, p)
}

// TestRSTNoErrorAfterContentLength: a response whose body has every byte
// its Content-Length declared, then RST_STREAM(NO_ERROR) in place of
// END_STREAM (Node's http2 compatibility layer, when a handler never reads
// the request), is delivered whole; the request body stops and the
// connection carries the next request. A body short of its length, or one
// with no declared length, fails with the stream error instead: a
// truncated body is never delivered as whole.
//
// RELIABILITY H2-23.
func TestRSTNoErrorAfterContentLength(t *testing.T) {
	cases := []struct {
		name    string
		method  string
		head    []string
		data    string
		wantErr bool
	}{
		{"complete", "POST", []string{":status", "413", "content-length", "9"}, "too large", false},
		{"complete-empty", "POST", []string{":status", "200", "content-length", "0"}, "", false},
		{"no-body-304", "GET", []string{":status", "304", "content-length", "100"}, "", false},
		{"no-body-head", "HEAD", []string{":status", "200", "content-length", "100"}, "", false},
		{"short", "POST", []string{":status", "413", "content-length", "20"}, "too large", true},
		{"no-length", "POST", []string{":status", "413"}, "too large", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			body := bytes.Repeat([]byte("x"), 1<<20)
			req := &Request{Method: c.method, Scheme: "https", Authority: "peer.test", Path: "/up"}
			if c.method == "POST" {
				req.Body, req.ContentLength = bytes.NewReader(body), int64(len(body))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ch := goRoundTrip(ctx, cc, req)
			h := p.nextOf(FrameHeaders)
			p.writeHeaders(h.StreamID, false, c.head...)
			if c.data != "" {
				p.writeData(h.StreamID, false, []byte(c.data))
			}
			p.write(appendRSTStream(nil, h.StreamID, ErrCodeNo))
			r := <-ch
			err := r.err
			var got []byte
			if err == nil {
				got, err = io.ReadAll(r.resp.Body)
				r.resp.Body.Close()
			}
			if c.wantErr {
				wantStreamError(t, err, ErrCodeNo)
			} else if err != nil || string(got) != c.data {
				t.Fatalf("body %q, %v; want %q whole", got, err, c.data)
			}
			// The client sends nothing more on the reset stream beyond
			// the window, never resets it back, and the connection works.
			sent := 0
			ch = goRoundTrip(ctx, cc, get("/next"))
			for {
				f := p.next()
				if f.StreamID == h.StreamID {
					if f.Type == FrameRSTStream {
						t.Fatalf("the client reset stream %d, which the server had reset", h.StreamID)
					}
					if f.Type == FrameData {
						sent += len(f.payload)
					}
					continue
				}
				if f.Type == FrameHeaders {
					p.writeHeaders(f.StreamID, true, ":status", "204")
					break
				}
			}
			if r := <-ch; r.err != nil {
				t.Fatalf("next request: %v", r.err)
			}
			if sent > 65535 {
				t.Fatalf("the client sent %d body bytes on the reset stream, more than the window", sent)
			}
		})
	}
}
