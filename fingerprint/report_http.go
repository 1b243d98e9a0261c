package fingerprint

import (
	"encoding/binary"
	"encoding/hex"

	"github.com/guise-http/guise/fields"
)

// fieldJSON is one header field.
type fieldJSON struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func fieldsJSON(h []fields.Field) []fieldJSON {
	out := make([]fieldJSON, len(h))
	for i, f := range h {
		out[i] = fieldJSON{f.Name, f.Value}
	}
	return out
}

type settingJSON struct {
	ID    uint16 `json:"id"`
	Name  string `json:"name"`
	Value uint32 `json:"value"`
}

type priorityJSON struct {
	Exclusive bool   `json:"exclusive"`
	StreamDep uint32 `json:"stream_dependency"`
	Weight    int    `json:"weight"`
}

type priorityFrameJSON struct {
	StreamID uint32       `json:"stream_id"`
	Priority priorityJSON `json:"priority"`
}

func priorityOf(p *Priority) *priorityJSON {
	if p == nil {
		return nil
	}
	return &priorityJSON{p.Exclusive, p.StreamDep, p.Weight}
}

// h2RequestJSON is one HTTP/2 header block, in the recordings' shape.
type h2RequestJSON struct {
	StreamID    uint32        `json:"stream_id"`
	PseudoOrder []string      `json:"pseudo_header_order"`
	HeaderOrder []string      `json:"header_order"`
	Headers     []fieldJSON   `json:"headers"`
	Priority    *priorityJSON `json:"headers_priority"`
	EndStream   bool          `json:"end_stream"`
	Method      string        `json:"method"`
	Path        string        `json:"path"`
	Authority   string        `json:"authority"`
	JA4H        string        `json:"ja4h"`
}

type frameJSON struct {
	Index           int    `json:"index"`
	Type            uint8  `json:"type"`
	TypeName        string `json:"type_name"`
	Flags           uint8  `json:"flags"`
	StreamID        uint32 `json:"stream_id"`
	Length          int    `json:"length"`
	WindowIncrement uint32 `json:"window_increment,omitempty"`
	RawHex          string `json:"raw_hex"`
}

// http2JSON is the "http2" object of a record or report.
type http2JSON struct {
	Akamai           string              `json:"akamai"`
	AkamaiHash       string              `json:"akamai_hash"`
	Settings         []settingJSON       `json:"settings"`
	ConnWindowUpdate uint32              `json:"connection_window_update"`
	Priorities       []priorityFrameJSON `json:"priority_frames"`
	Requests         []h2RequestJSON     `json:"requests"`
	Frames           []frameJSON         `json:"frames"`
	ParseError       string              `json:"parse_error,omitempty"`
}

// http2Report derives the "http2" object; nil for HTTP/1 connections.
func http2Report(r *ConnRecord) (*http2JSON, *HTTP2) {
	if r.Protocol != ProtoH2 {
		return nil, nil
	}
	h, err := ParseHTTP2(r.ClientBytes)
	j := &http2JSON{}
	if err != nil {
		j.ParseError = err.Error()
	}
	if h == nil {
		return j, nil
	}
	j.Akamai, j.AkamaiHash = h.Akamai(), h.AkamaiHash()
	j.ConnWindowUpdate = h.ConnWindowUpdate
	for _, s := range h.Settings {
		j.Settings = append(j.Settings, settingJSON{s.ID, SettingName(s.ID), s.Value})
	}
	for _, p := range h.Priorities {
		j.Priorities = append(j.Priorities, priorityFrameJSON{p.StreamID, *priorityOf(&p.Priority)})
	}
	for i := range h.Requests {
		j.Requests = append(j.Requests, h2RequestJSONOf(&h.Requests[i]))
	}
	for i, f := range h.Frames {
		fj := frameJSON{Index: i, Type: uint8(f.Type), TypeName: f.Type.String(), Flags: f.Flags,
			StreamID: f.StreamID, Length: f.Length, RawHex: hex.EncodeToString(f.Raw)}
		if f.Type == 8 && len(f.Raw) >= 13 {
			fj.WindowIncrement = binary.BigEndian.Uint32(f.Raw[9:13]) & 0x7fffffff
		}
		j.Frames = append(j.Frames, fj)
	}
	return j, h
}

func h2RequestJSONOf(q *HTTP2Request) h2RequestJSON {
	return h2RequestJSON{
		StreamID: q.StreamID, PseudoOrder: q.PseudoOrder, HeaderOrder: q.HeaderOrder(),
		Headers: fieldsJSON(q.Header), Priority: priorityOf(q.Priority), EndStream: q.EndStream,
		Method: q.Method(), Path: q.Path(), Authority: q.Authority(), JA4H: q.HTTPRequest().JA4H(),
	}
}

// h1RequestJSON is one HTTP/1.x request head.
type h1RequestJSON struct {
	Method      string      `json:"method"`
	Target      string      `json:"target"`
	Proto       string      `json:"proto"`
	HeaderOrder []string    `json:"header_order"`
	Headers     []fieldJSON `json:"headers"`
	JA4H        string      `json:"ja4h"`
	RawHead     string      `json:"raw_head"`
	ParseError  string      `json:"parse_error,omitempty"`
}

// http1JSON is the "http1" object of a record: every request head.
type http1JSON struct {
	Requests []h1RequestJSON `json:"requests"`
}

func h1RequestJSONOf(head []byte) h1RequestJSON {
	j := h1RequestJSON{RawHead: string(head)}
	q, err := ParseHTTP1Request(head)
	if err != nil {
		j.ParseError = err.Error()
		return j
	}
	j.Method, j.Target, j.Proto = q.Method, q.Target, q.Proto
	j.Headers = fieldsJSON(q.Header)
	j.HeaderOrder = make([]string, len(q.Header))
	for i, f := range q.Header {
		j.HeaderOrder[i] = f.Name
	}
	j.JA4H = q.JA4H()
	return j
}

func http1Report(r *ConnRecord) *http1JSON {
	if r.Protocol != ProtoHTTP1 {
		return nil
	}
	j := &http1JSON{Requests: []h1RequestJSON{}}
	for _, h := range r.HTTP1Heads() {
		j.Requests = append(j.Requests, h1RequestJSONOf(h))
	}
	return j
}

// derive fills in what a record's JSON derives from its raw bytes.
func (r *ConnRecord) derive(j *recordJSON) {
	j.TLS = tlsReport(r)
	j.HTTP2, _ = http2Report(r)
	j.HTTP1 = http1Report(r)
	j.QUIC = quicReport(r)
}

func fieldOf(name, value string) fields.Field { return fields.Field{Name: name, Value: value} }
