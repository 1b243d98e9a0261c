package fingerprint

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"
)

// recordJSON is the JSON shape of a ConnRecord. Its field names follow the
// first recordings in testdata/recordings/*/ (made by another tool) where
// they overlap, so that a recording and a record can be compared and
// either can be read back by DecodeRecord.
type recordJSON struct {
	ID                  uint64     `json:"id"`
	Start               time.Time  `json:"start"`
	End                 *time.Time `json:"end,omitempty"`
	DurationMS          int64      `json:"duration_ms"`
	Transport           string     `json:"transport"`
	RemoteAddr          string     `json:"remote_addr"`
	LocalAddr           string     `json:"local_addr"`
	TLS                 *tlsJSON   `json:"tls,omitempty"`
	Protocol            string     `json:"protocol"`
	HTTP2               *http2JSON `json:"http2,omitempty"`
	HTTP1               *http1JSON `json:"http1,omitempty"`
	QUIC                *quicJSON  `json:"quic,omitempty"`
	Requests            int        `json:"requests_answered"`
	ClientBytesRecorded int        `json:"client_bytes_recorded"`
	ClientBytesTotal    int64      `json:"client_bytes_total"`
	RawClientBytesHex   string     `json:"raw_client_stream_head_hex"`
	Err                 string     `json:"error,omitempty"`
	ParseErrors         []string   `json:"parse_errors,omitempty"`
}

// MarshalJSON encodes the record with everything derived from its raw
// bytes: the parsed ClientHello and its JA3/JA4 hashes, the HTTP/2 frames
// and Akamai string, the HTTP/1.1 request heads with JA4H.
func (r *ConnRecord) MarshalJSON() ([]byte, error) {
	j := recordJSON{
		ID:                  r.ID,
		Start:               r.Start,
		Transport:           r.Transport,
		RemoteAddr:          r.RemoteAddr,
		LocalAddr:           r.LocalAddr,
		Protocol:            r.Protocol,
		Requests:            r.Requests,
		ClientBytesRecorded: len(r.ClientBytes),
		ClientBytesTotal:    r.ClientBytesTotal,
		RawClientBytesHex:   hex.EncodeToString(r.ClientBytes),
		Err:                 r.Err,
	}
	if !r.End.IsZero() {
		end := r.End
		j.End = &end
		j.DurationMS = r.End.Sub(r.Start).Milliseconds()
	}
	if r.Transport == TransportTLS {
		j.TLS = &tlsJSON{
			ClientHelloRecordHex: hex.EncodeToString(r.ClientHelloRecord),
			Negotiated:           r.Negotiated,
		}
	}
	r.derive(&j)
	return json.Marshal(&j)
}

// DecodeRecord reads a ConnRecord from its JSON form (MarshalJSON's, or a
// recording in testdata/recordings/*/): the raw bytes and the connection
// facts. Derived fields in the JSON are ignored; they are recomputed from
// the raw bytes when the record is encoded or reported.
func DecodeRecord(data []byte) (*ConnRecord, error) {
	var j struct {
		ID         uint64     `json:"id"`
		Start      time.Time  `json:"start"`
		End        *time.Time `json:"end"`
		DurationMS int64      `json:"duration_ms"`
		Transport  string     `json:"transport"`
		RemoteAddr string     `json:"remote_addr"`
		LocalAddr  string     `json:"local_addr"`
		TLS        *struct {
			ClientHelloRecordHex string      `json:"client_hello_record_hex"`
			Negotiated           *Negotiated `json:"negotiated"`
		} `json:"tls"`
		Protocol          string    `json:"protocol"`
		QUIC              *quicJSON `json:"quic"`
		Requests          int       `json:"requests_answered"`
		ClientBytesTotal  int64     `json:"client_bytes_total"`
		RawClientBytesHex string    `json:"raw_client_stream_head_hex"`
		Err               string    `json:"error"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, errors.New("fingerprint: decode record: " + err.Error())
	}
	r := &ConnRecord{
		ID:         j.ID,
		Start:      j.Start,
		Transport:  j.Transport,
		RemoteAddr: j.RemoteAddr,
		LocalAddr:  j.LocalAddr,
		Protocol:   j.Protocol,
		Requests:   j.Requests,
		Err:        j.Err,
	}
	switch {
	case j.End != nil:
		r.End = *j.End
	case j.DurationMS > 0 || !j.Start.IsZero():
		r.End = j.Start.Add(time.Duration(j.DurationMS) * time.Millisecond)
	}
	var err error
	if r.ClientBytes, err = hex.DecodeString(j.RawClientBytesHex); err != nil {
		return nil, errors.New("fingerprint: decode record: raw_client_stream_head_hex: " + err.Error())
	}
	r.ClientBytesTotal = max(j.ClientBytesTotal, int64(len(r.ClientBytes)))
	if j.TLS != nil {
		if r.ClientHelloRecord, err = hex.DecodeString(j.TLS.ClientHelloRecordHex); err != nil {
			return nil, errors.New("fingerprint: decode record: client_hello_record_hex: " + err.Error())
		}
		r.Negotiated = j.TLS.Negotiated
		if r.Transport == "" {
			r.Transport = TransportTLS
		}
	}
	if j.QUIC != nil {
		if r.QUIC, err = decodeQUIC(j.QUIC); err != nil {
			return nil, err
		}
		if r.Negotiated == nil {
			r.Negotiated = j.QUIC.Negotiated
		}
		if r.Transport == "" {
			r.Transport = TransportQUIC
		}
	}
	if r.Transport == "" {
		r.Transport = TransportTCP
	}
	if r.Protocol == "" && len(r.ClientBytes) > 0 {
		r.Protocol = sniffProtocol(r.ClientBytes)
	}
	return r, nil
}

// UnmarshalJSON decodes a record as DecodeRecord does, so that the JSON
// of /api/conns decodes straight into []*ConnRecord.
func (r *ConnRecord) UnmarshalJSON(data []byte) error {
	d, err := DecodeRecord(data)
	if err != nil {
		return err
	}
	*r = *d
	return nil
}
