package fingerprint

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/guise-http/guise/fields"
)

// ErrIncomplete is returned (wrapped in a *CaptureError) by WaitCapture
// when the context ends before the visits it waits for are complete.
var ErrIncomplete = errors.New("fingerprint: capture incomplete")

// CaptureError reports what a capture still lacked when it gave up.
type CaptureError struct {
	Missing []string // as Want.Missing lists them
	Err     error    // ErrIncomplete
}

// Error lists what is missing.
func (e *CaptureError) Error() string {
	return "fingerprint: capture incomplete, missing " + strings.Join(e.Missing, ", ")
}

// Unwrap returns ErrIncomplete.
func (e *CaptureError) Unwrap() error { return e.Err }

// Want says which visits a capture waits for. The zero value waits for
// nothing beyond an HTTP/2 visit's four request kinds, which a profile
// cannot do without.
type Want struct {
	// HTTP1 also waits for the same page visited over HTTP/1.1 with TLS
	// (the browser with HTTP/2 disabled).
	HTTP1 bool
	// Resumed also waits for a connection that resumed a TLS session,
	// from a hello offering h2, and answered a request (the page's last
	// fetch() makes one).
	Resumed bool
	// Body also waits, per protocol waited for, for the flow page's
	// requests with a body (BodyPaths: a fetch() POST and a form
	// submission; the browser visits FlowStart for them).
	Body bool
}

// Request kinds as capture classifies them from the fetch metadata headers
// (the same names as package profile's RequestKind).
const (
	kindNavigate    = "navigate"
	kindFetch       = "fetch"
	kindSubresource = "subresource"
	kindImage       = "image"
)

// requestKind classifies a browser request by sec-fetch-mode and
// sec-fetch-dest; "" if it is none of the kinds a profile keeps.
func requestKind(h []fields.Field) string {
	hdr := fields.Header(h)
	mode, dest := hdr.Get("sec-fetch-mode"), hdr.Get("sec-fetch-dest")
	switch {
	case mode == "navigate":
		return kindNavigate
	case mode == "cors":
		return kindFetch
	case dest == "script":
		return kindSubresource
	case dest == "image":
		return kindImage
	}
	return ""
}

// Missing lists what recs still lack for w, in a fixed order: "h2
// navigate", "h2 fetch", "h2 subresource", "h2 image", "h2 fetch with a
// body", "h2 navigate with a body", the same with "http/1.1", and "resumed
// connection". Only TLS connections count.
func (w Want) Missing(recs []*ConnRecord) []string {
	have := map[string]bool{}
	resumed := false
	for _, r := range recs {
		if r.Transport != TransportTLS || r.Negotiated == nil {
			continue
		}
		for _, q := range r.HTTPRequests() {
			k := requestKind(q.Header)
			if k == "" {
				continue
			}
			have[r.Protocol+" "+k] = true
			if q.Method == "POST" && slices.ContainsFunc(BodyPaths, func(b BodyPath) bool {
				return b.Path == q.Target && kindOf(k) == b.Kind
			}) {
				have[r.Protocol+" "+k+" with a body"] = true
			}
		}
		if r.Negotiated.Resumed && r.Requests > 0 {
			// Only the visit that may use HTTP/2 counts: that is the
			// resumed hello a profile keeps.
			if ch, err := r.ClientHello(); err == nil && slices.Contains(ch.ALPN, ProtoH2) {
				resumed = true
			}
		}
	}
	var missing []string
	protos := []string{ProtoH2}
	if w.HTTP1 {
		protos = append(protos, ProtoHTTP1)
	}
	for _, p := range protos {
		for _, k := range []string{kindNavigate, kindFetch, kindSubresource, kindImage} {
			if !have[p+" "+k] {
				missing = append(missing, p+" "+k)
			}
		}
		if w.Body {
			for _, b := range BodyPaths {
				if k := b.Kind.String() + " with a body"; !have[p+" "+k] {
					missing = append(missing, p+" "+k)
				}
			}
		}
	}
	if w.Resumed && !resumed {
		missing = append(missing, "resumed connection")
	}
	return missing
}

// WaitCapture waits until the started server s has recorded the visits w
// wants, and returns every record. If ctx ends first it returns the
// records so far and a *CaptureError (wrapping ErrIncomplete) naming what
// is missing.
func (s *Server) WaitCapture(ctx context.Context, w Want) ([]*ConnRecord, error) {
	for {
		ch := s.Changed()
		recs := s.Records()
		missing := w.Missing(recs)
		if len(missing) == 0 {
			return recs, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return recs, &CaptureError{Missing: missing, Err: ErrIncomplete}
		}
	}
}
