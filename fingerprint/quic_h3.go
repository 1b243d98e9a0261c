package fingerprint

import (
	"errors"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/qpackref"
	"github.com/guise-http/guise/internal/quicwire"
)

// maxH3FieldSection bounds a decoded request field section.
const maxH3FieldSection = 64 << 10

// HTTP3 is what a client sent over HTTP/3 on one connection, parsed from
// the recorded stream data.
type HTTP3 struct {
	// UniStreams are the unidirectional streams the client opened, in the
	// order the server accepted them.
	UniStreams []H3UniStream
	// Settings are the control stream's SETTINGS in wire order, GREASE
	// included.
	Settings []h3wire.Setting
	// ControlFrames are the control stream's frames in order (SETTINGS
	// first), GREASE frames included.
	ControlFrames []H3Frame
	// PriorityUpdates are the control stream's PRIORITY_UPDATE frames.
	PriorityUpdates []H3PriorityUpdate
	// Requests are the request streams, by stream id.
	Requests []H3Request
	// QPACKEncoder are the client's QPACK encoder stream instructions in
	// order, decoded when the server allowed a dynamic table
	// (QUICRecord.QPACKMaxTableCapacity); QPACKEncoderErr says why they
	// stopped decoding ("" if they did not).
	QPACKEncoder    []QPACKInstruction
	QPACKEncoderErr string
}

// H3UniStream is one unidirectional stream: its id, type and length.
type H3UniStream struct {
	ID    uint64
	Type  h3wire.StreamType
	Bytes int64
}

// H3Frame is a frame as sent.
type H3Frame struct {
	Type   h3wire.FrameType
	Length int
}

// H3PriorityUpdate is one PRIORITY_UPDATE (RFC 9218 §7.2).
type H3PriorityUpdate struct {
	Element uint64 // the request stream id
	Field   string // the Priority field value, e.g. "u=0, i"
}

// H3Request is one request stream.
type H3Request struct {
	StreamID uint64
	// Prefix is the QPACK field section prefix (Required Insert Count,
	// Delta Base): zero when no dynamic table is used.
	RequiredInsertCount, DeltaBase uint64
	// Base is the section's Base (RFC 9204 §4.5.1), decoded when the
	// server allowed a dynamic table.
	Base uint64
	// Fields are the HEADERS fields in wire order, pseudo-headers first.
	Fields []fields.Field
	// Lines are the HEADERS field lines as sent, decoded when the server
	// allowed a dynamic table.
	Lines []QPACKLine
	// Frames are the stream's frames in order.
	Frames []H3Frame
	// Err says why the stream stopped parsing ("" if it did not).
	Err string

	headers []byte // the HEADERS payload, decoded later with a dynamic table
}

// HTTPRequest returns the request as JA4H sees it: Proto "HTTP/3", the
// method and path from the pseudo-headers, the regular fields in order.
func (q *H3Request) HTTPRequest() *HTTPRequest {
	hr := &HTTPRequest{Proto: "HTTP/3"}
	for _, f := range q.Fields {
		switch f.Name {
		case ":method":
			hr.Method = f.Value
		case ":path":
			hr.Target = f.Value
		default:
			if len(f.Name) > 0 && f.Name[0] != ':' {
				hr.Header = append(hr.Header, f)
			}
		}
	}
	return hr
}

// Priority returns the request's priority header value, or "".
func (q *H3Request) Priority() string {
	return fields.Header(q.Fields).Get("priority")
}

// HTTP3 parses the record's stream data. It returns an error for a
// record without QUIC streams; a stream that does not parse keeps what
// parsed and its error (Err for a request, the returned error for the
// control stream).
func (r *ConnRecord) HTTP3() (*HTTP3, error) {
	if r.QUIC == nil {
		return nil, errors.New("fingerprint: not a quic connection")
	}
	h := &HTTP3{}
	var ctrlErr error
	for _, s := range r.QUIC.Streams {
		switch s.ID % 4 {
		case 0: // client-initiated bidirectional: a request
			h.Requests = append(h.Requests, parseH3Request(s, r.QUIC.QPACKMaxTableCapacity > 0))
		case 2: // client-initiated unidirectional
			t, n := quicwire.Varint(s.Data)
			if n == 0 {
				continue
			}
			u := H3UniStream{ID: s.ID, Type: h3wire.StreamType(t), Bytes: s.Total}
			h.UniStreams = append(h.UniStreams, u)
			if u.Type == h3wire.StreamControl {
				ctrlErr = h.parseControl(s.Data[n:])
			}
		}
	}
	if r.QUIC.QPACKMaxTableCapacity > 0 {
		h.decodeQPACK(r.QUIC)
	}
	return h, ctrlErr
}

func (h *HTTP3) parseControl(b []byte) error {
	for len(b) > 0 {
		f, err := h3wire.ParseFrame(b)
		if errors.Is(err, h3wire.ErrTruncated) {
			return nil // the stream stays open; the rest did not arrive
		}
		if err != nil {
			return err
		}
		h.ControlFrames = append(h.ControlFrames, H3Frame{Type: f.Type, Length: len(f.Payload)})
		switch f.Type {
		case h3wire.FrameSettings:
			if h.Settings, err = h3wire.ParseSettings(f.Payload); err != nil {
				return err
			}
		case h3wire.FramePriorityUpdate:
			id, field, err := h3wire.ParsePriorityUpdate(f.Payload)
			if err != nil {
				return err
			}
			h.PriorityUpdates = append(h.PriorityUpdates, H3PriorityUpdate{Element: id, Field: field})
		}
		b = b[f.Size:]
	}
	return nil
}

// parseH3Request parses a request stream; with dyn its HEADERS are kept
// for decodeQPACK instead of decoded with the static table alone.
func parseH3Request(s QUICStream, dyn bool) H3Request {
	q := H3Request{StreamID: s.ID}
	b := s.Data
	for len(b) > 0 {
		f, err := h3wire.ParseFrame(b)
		if errors.Is(err, h3wire.ErrTruncated) && s.Total > int64(len(s.Data)) {
			break // cut off by the recording bound
		}
		if err != nil {
			q.Err = err.Error()
			break
		}
		q.Frames = append(q.Frames, H3Frame{Type: f.Type, Length: len(f.Payload)})
		if f.Type == h3wire.FrameHeaders && dyn && q.headers == nil {
			q.headers = f.Payload
		} else if f.Type == h3wire.FrameHeaders && !dyn && q.Fields == nil {
			fs, err := qpackref.DecodeFieldSection(f.Payload, maxH3FieldSection)
			if fs != nil {
				q.RequiredInsertCount, q.DeltaBase = fs.RequiredInsertCount, fs.DeltaBase
				for _, hf := range fs.Fields {
					q.Fields = append(q.Fields, fields.Field{Name: hf.Name, Value: hf.Value})
				}
			}
			if err != nil {
				q.Err = err.Error()
				break
			}
		}
		b = b[f.Size:]
	}
	return q
}

// H3SettingName names an HTTP/3 setting id as [HTTP3.Settings] print
// theirs ("SETTINGS_QPACK_MAX_TABLE_CAPACITY", or the id in hex), for
// code that holds a profile's ids.
func H3SettingName(id uint64) string { return h3wire.SettingID(id).String() }

// QUICParamName names a transport parameter id as
// [QUICFlight.TransportParameters] print theirs ("initial_max_data", or
// the id in hex).
func QUICParamName(id uint64) string { return quicwire.TransportParameterID(id).String() }
