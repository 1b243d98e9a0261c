package fingerprint

import "net/http"

func (s *Server) report(lc *liveConn, r *http.Request) any {
	rec := lc.snapshot()
	return rec
}

type tlsJSON struct {
	ClientHelloRecordHex string      `json:"client_hello_record_hex"`
	Negotiated           *Negotiated `json:"negotiated,omitempty"`
}
type http2JSON struct{}
type http1JSON struct{}

func (r *ConnRecord) derive(j *recordJSON) {}
