package fingerprint

import (
	"net/http"
	"sort"
)

// reportJSON is the answer of /api/all: what the calling request and its
// connection sent. Names follow the first recordings (testdata/recordings/*/) where they overlap
// (and tls.peet.ws's /api/all for the top-level ones).
type reportJSON struct {
	ConnID      uint64     `json:"conn_id"`
	IP          string     `json:"ip"`
	Transport   string     `json:"transport"`
	HTTPVersion string     `json:"http_version"`
	Method      string     `json:"method"`
	Path        string     `json:"path"`
	UserAgent   string     `json:"user_agent"`
	TLS         *tlsJSON   `json:"tls,omitempty"`
	HTTP2       *http2JSON `json:"http2,omitempty"`

	// This request's head, in wire order and case.
	StreamID    uint32        `json:"stream_id,omitempty"`
	PseudoOrder []string      `json:"pseudo_header_order,omitempty"`
	Priority    *priorityJSON `json:"headers_priority,omitempty"`
	Headers     []fieldJSON   `json:"headers"`
	HeaderOrder []string      `json:"header_order"`
	JA4H        string        `json:"ja4h"`
	RawHead     string        `json:"raw_head,omitempty"`
	// HeadersSource is "wire" when the head was found in the recorded
	// bytes, "net/http" when not (beyond MaxClientBytes): order and case
	// are then lost.
	HeadersSource string `json:"headers_source"`
}

// h1IndexKey is the request context key of an HTTP/1 request's index on
// its connection.
type h1IndexKey struct{}

// report builds the /api/all answer for r, served on lc.
func (s *Server) report(lc *liveConn, r *http.Request) *reportJSON {
	rec := lc.snapshot()
	rep := &reportJSON{
		ConnID: rec.ID, IP: rec.RemoteAddr, Transport: rec.Transport, HTTPVersion: rec.Protocol,
		Method: r.Method, Path: r.RequestURI, UserAgent: r.UserAgent(),
		TLS: tlsReport(rec), HeadersSource: "wire",
	}
	found := false
	switch rec.Protocol {
	case ProtoH2:
		var h *HTTP2
		rep.HTTP2, h = http2Report(rec)
		if h != nil {
			rep.HTTP2.Requests = nil // this request is at the top level
			for i := range h.Requests {
				q := &h.Requests[i]
				if q.Trailer || q.Method() != r.Method || q.Path() != r.RequestURI || !lc.claimStream(q.StreamID) {
					continue
				}
				rep.StreamID, rep.PseudoOrder, rep.Priority = q.StreamID, q.PseudoOrder, priorityOf(q.Priority)
				hr := q.HTTPRequest()
				rep.Headers = fieldsJSON(hr.Header)
				rep.HeaderOrder = q.HeaderOrder()
				rep.JA4H = hr.JA4H()
				found = true
				break
			}
		}
	case ProtoHTTP1:
		if i, ok := r.Context().Value(h1IndexKey{}).(int); ok {
			if heads := rec.HTTP1Heads(); i < len(heads) {
				j := h1RequestJSONOf(heads[i])
				if j.ParseError == "" {
					rep.Headers, rep.HeaderOrder, rep.JA4H, rep.RawHead = j.Headers, j.HeaderOrder, j.JA4H, j.RawHead
					found = true
				}
			}
		}
	}
	if !found {
		// Order and case are lost; say so rather than guess.
		rep.HeadersSource = "net/http"
		names := make([]string, 0, len(r.Header))
		for k := range r.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		q := &HTTPRequest{Method: r.Method, Target: r.RequestURI, Proto: r.Proto}
		for _, k := range names {
			for _, v := range r.Header[k] {
				rep.Headers = append(rep.Headers, fieldJSON{k, v})
				q.Header = append(q.Header, fieldOf(k, v))
			}
			rep.HeaderOrder = append(rep.HeaderOrder, k)
		}
		rep.JA4H = q.JA4H()
	}
	return rep
}
