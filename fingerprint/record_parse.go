package fingerprint

import "github.com/guise-http/guise/fields"

// ClientHello parses the record's ClientHelloRecord. It returns a
// *ParseError for a plain TCP connection or a malformed hello.
func (r *ConnRecord) ClientHello() (*ClientHello, error) {
	return ParseClientHello(r.ClientHelloRecord)
}

// HTTP2 parses the record's client bytes as an HTTP/2 stream; nil and no
// error for an HTTP/1 connection. See ParseHTTP2 for partial results.
func (r *ConnRecord) HTTP2() (*HTTP2, error) {
	if r.Protocol != ProtoH2 {
		return nil, nil
	}
	return ParseHTTP2(r.ClientBytes)
}

// HTTPRequests returns the requests the client sent on the connection, in
// order, as JA4H sees them (fields in wire order and case, HTTP/2
// pseudo-headers left out). Requests that do not parse, or are cut off by
// MaxClientBytes, are left out.
func (r *ConnRecord) HTTPRequests() []*HTTPRequest {
	var out []*HTTPRequest
	switch r.Protocol {
	case ProtoH2:
		h, _ := ParseHTTP2(r.ClientBytes)
		if h == nil {
			return nil
		}
		for i := range h.Requests {
			if !h.Requests[i].Trailer {
				out = append(out, h.Requests[i].HTTPRequest())
			}
		}
	case ProtoH3:
		h, _ := r.HTTP3()
		if h == nil {
			return nil
		}
		for i := range h.Requests {
			if h.Requests[i].Fields != nil {
				out = append(out, h.Requests[i].HTTPRequest())
			}
		}
	case ProtoHTTP1:
		for _, head := range r.HTTP1Heads() {
			if q, err := ParseHTTP1Request(head); err == nil {
				out = append(out, q)
			}
		}
	}
	return out
}

// UserAgent returns the User-Agent of the connection's first request that
// has one, or "".
func (r *ConnRecord) UserAgent() string {
	for _, q := range r.HTTPRequests() {
		for _, f := range q.Header {
			if fields.EqualFold(f.Name, "user-agent") {
				return f.Value
			}
		}
	}
	return ""
}
