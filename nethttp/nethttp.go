// Package nethttp lets code written for net/http send its requests through a
// guise Session: as an http.RoundTripper, or as a ready *http.Client. It is
// the one package (with cmd) that touches *http.Request.
//
// Redirects are handled by exactly one layer. Client returns a client whose
// Session follows them as a browser does (Referer, Sec-Fetch-Site,
// credentials dropped across origins, cookies from the Session's jar on each
// hop) and whose CheckRedirect never follows again. RoundTripper, like any
// http.RoundTripper, returns 3xx responses as they are; the http.Client
// around it follows them by net/http's rules.
//
// Header order: the Session's profile decides where every field goes; a
// field of the request replaces the profile's field of that name in place,
// and the request's other fields follow in the order WithHeaderOrder gave
// (then sorted by name), in the case given there. http.Header itself is a
// map and has no order; no magic keys are read from it.
package nethttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/guise-http/guise"
)

// Client returns an *http.Client that sends every request through s, with
// guise following redirects (see the package doc). The client has no Jar:
// cookies live in the Session.
func Client(s *guise.Session) *http.Client {
	return &http.Client{
		Transport: &roundTripper{s: s, follow: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// RoundTripper returns an http.RoundTripper that sends each request through
// s once, returning redirects to the caller.
func RoundTripper(s *guise.Session) http.RoundTripper {
	return &roundTripper{s: s}
}

var _ http.RoundTripper = (*roundTripper)(nil)

type roundTripper struct {
	s      *guise.Session
	follow bool
}

type orderKey struct{}

// WithHeaderOrder returns a copy of req whose header fields are sent in the
// order of names, each in the case given there, for the fields the profile
// has no place for. Names not in req.Header are ignored.
func WithHeaderOrder(req *http.Request, names ...string) *http.Request {
	return req.WithContext(context.WithValue(req.Context(), orderKey{}, names))
}

// RoundTrip implements http.RoundTripper.
func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("nethttp: request has no URL")
	}
	gr := &guise.Request{
		Method: req.Method,
		URL:    req.URL.String(),
		Header: header(req),
	}
	if !rt.follow {
		gr.Redirect = guise.RedirectManual
	}
	if req.Host != "" && req.Host != req.URL.Host {
		gr.Header = append(gr.Header, guise.Field{Name: "Host", Value: req.Host})
	}
	if req.Body != nil && req.Body != http.NoBody {
		gr.Body = body(req)
		if req.ContentLength > 0 {
			gr.ContentLength = req.ContentLength
		}
	}
	resp, err := rt.s.Do(req.Context(), gr)
	if err != nil {
		return nil, err
	}
	return response(req, resp), nil
}

// header converts req.Header into an ordered list.
func header(req *http.Request) guise.Header {
	order, _ := req.Context().Value(orderKey{}).([]string)
	h := make(guise.Header, 0, len(req.Header))
	done := make(map[string]bool, len(order))
	for _, name := range order {
		key := http.CanonicalHeaderKey(name)
		if done[key] {
			continue
		}
		done[key] = true
		for _, v := range req.Header[key] {
			h = append(h, guise.Field{Name: name, Value: v})
		}
	}
	keys := make([]string, 0, len(req.Header))
	for k := range req.Header {
		if !done[http.CanonicalHeaderKey(k)] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range req.Header[k] {
			h = append(h, guise.Field{Name: k, Value: v})
		}
	}
	return h
}

// body returns the request body; when GetBody is set it can be sent again
// (on a 307/308), through Seek.
func body(req *http.Request) io.Reader {
	if req.GetBody == nil {
		return req.Body
	}
	return &replayable{rc: req.Body, get: req.GetBody}
}

type replayable struct {
	rc  io.ReadCloser
	get func() (io.ReadCloser, error)
	n   int64
}

func (r *replayable) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.n += int64(n)
	return n, err
}

// Seek supports only rewinding to the start.
func (r *replayable) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekStart {
		return 0, errors.New("nethttp: body can only be rewound")
	}
	if r.n == 0 {
		return 0, nil
	}
	rc, err := r.get()
	if err != nil {
		return 0, err
	}
	r.rc.Close()
	r.rc, r.n = rc, 0
	return 0, nil
}

func (r *replayable) Close() error { return r.rc.Close() }

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// response converts a guise response for net/http.
func response(req *http.Request, r *guise.Response) *http.Response {
	h := make(http.Header, len(r.Header))
	for _, f := range r.Header {
		h.Add(f.Name, f.Value)
	}
	major, minor := 1, 1
	switch r.Proto {
	case "HTTP/2.0":
		major, minor = 2, 0
	case "HTTP/1.0":
		minor = 0
	}
	status := r.Status
	if status == "" {
		status = http.StatusText(r.StatusCode)
	}
	out := &http.Response{
		Status:        strings.TrimSpace(itoa(r.StatusCode) + " " + status),
		StatusCode:    r.StatusCode,
		Proto:         r.Proto,
		ProtoMajor:    major,
		ProtoMinor:    minor,
		Header:        h,
		Body:          r.Body,
		ContentLength: r.ContentLength,
		Request:       req,
	}
	if req.Method == "HEAD" {
		out.Body = http.NoBody
		r.Body.Close()
	}
	return out
}

func itoa(n int) string {
	if n < 0 || n > 999 {
		return "000"
	}
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}
