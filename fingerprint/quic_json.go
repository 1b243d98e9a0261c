package fingerprint

import (
	"encoding/hex"
	"errors"
	"time"

	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
)

// quicJSON is the "quic" object of a record: the raw datagrams and
// streams (what DecodeRecord reads back) and what is derived from them.
type quicJSON struct {
	DatagramsTotal int                `json:"datagrams_total"`
	Datagrams      []quicDatagramJSON `json:"datagrams"`
	Streams        []quicStreamJSON   `json:"streams"`
	// The QPACK settings the server advertised, when it allowed a
	// dynamic table.
	QPACKMaxTableCapacity uint64 `json:"server_qpack_max_table_capacity,omitempty"`
	QPACKBlockedStreams   uint64 `json:"server_qpack_blocked_streams,omitempty"`
	Used0RTT              bool   `json:"used_0rtt,omitempty"`
	// FirstResponseUS is QUICRecord.FirstResponse in microseconds.
	FirstResponseUS int64 `json:"first_response_at_us,omitempty"`
	// Negotiated is what the QUIC handshake's TLS negotiated (for a TLS
	// connection it is tls.negotiated).
	Negotiated  *Negotiated `json:"negotiated,omitempty"`
	Flight      *flightJSON `json:"initial,omitempty"`
	FlightError string      `json:"initial_error,omitempty"`
	HTTP3       *http3JSON  `json:"http3,omitempty"`
	HTTP3Error  string      `json:"http3_error,omitempty"`
}

type quicDatagramJSON struct {
	Size   int    `json:"size"`
	RawHex string `json:"raw_hex,omitempty"`
}

type quicStreamJSON struct {
	ID     uint64 `json:"id"`
	Total  int64  `json:"bytes_total"`
	Fin    bool   `json:"fin"`
	Early  bool   `json:"early,omitempty"`
	AtUS   int64  `json:"first_byte_at_us,omitempty"` // QUICStream.At in microseconds
	RawHex string `json:"raw_hex"`
}

type flightJSON struct {
	Version             uint32            `json:"version"`
	DCIDLen             int               `json:"dcid_len"`
	SCIDLen             int               `json:"scid_len"`
	DCIDHex             string            `json:"dcid_hex"`
	SCIDHex             string            `json:"scid_hex"`
	TokenHex            string            `json:"token_hex"`
	Datagrams           []flightDgramJSON `json:"datagrams"`
	CryptoBytes         int               `json:"crypto_bytes"`
	ClientHelloHex      string            `json:"client_hello_hex,omitempty"`
	ClientHello         *clientHelloJSON  `json:"client_hello,omitempty"`
	JA4                 string            `json:"ja4,omitempty"`
	JA4O                string            `json:"ja4_o,omitempty"`
	TransportParameters []tparamJSON      `json:"transport_parameters,omitempty"`
	Error               string            `json:"error,omitempty"`
}

type flightDgramJSON struct {
	Index    int          `json:"index"`
	Size     int          `json:"size"`
	Trailing int          `json:"trailing_padding"`
	Packets  []packetJSON `json:"packets"`
}

type packetJSON struct {
	Type         string       `json:"type"`
	Size         int          `json:"size"`
	DCIDLen      int          `json:"dcid_len"`
	SCIDLen      int          `json:"scid_len"`
	TokenLen     int          `json:"token_len"`
	LengthSize   int          `json:"length_field_size"`
	PacketNumber uint64       `json:"packet_number"`
	PNLen        int          `json:"packet_number_len"`
	Frames       []frameQJSON `json:"frames,omitempty"`
	Error        string       `json:"error,omitempty"`
}

type frameQJSON struct {
	Type   string `json:"type"`
	Offset uint64 `json:"offset,omitempty"`
	Length int    `json:"length,omitempty"` // CRYPTO data or PADDING run
}

type tparamJSON struct {
	ID       uint64  `json:"id"`
	Name     string  `json:"name"`
	ValueHex string  `json:"value_hex"`
	Value    *uint64 `json:"value,omitempty"`
	GREASE   bool    `json:"grease,omitempty"`
}

type http3JSON struct {
	UniStreams      []uniJSON       `json:"uni_streams"`
	Settings        []h3SettingJSON `json:"settings"`
	ControlFrames   []h3FrameJSON   `json:"control_frames"`
	PriorityUpdates []h3PUJSON      `json:"priority_updates,omitempty"`
	Requests        []h3ReqJSON     `json:"requests"`
	// With a dynamic table allowed: the client's encoder stream.
	QPACKEncoder    []qpackInstrJSON `json:"qpack_encoder_stream,omitempty"`
	QPACKEncoderErr string           `json:"qpack_encoder_stream_error,omitempty"`
}

type qpackInstrJSON struct {
	Kind         string `json:"kind"`
	Static       bool   `json:"static,omitempty"`
	Index        uint64 `json:"index"`
	Name         string `json:"name,omitempty"`
	Value        string `json:"value,omitempty"`
	NameHuffman  bool   `json:"name_huffman,omitempty"`
	ValueHuffman bool   `json:"value_huffman,omitempty"`
	InsertCount  uint64 `json:"insert_count"`
}

type qpackLineJSON struct {
	Kind         string `json:"kind"`
	Static       bool   `json:"static,omitempty"`
	Index        uint64 `json:"index"`
	NeverIndexed bool   `json:"never_indexed,omitempty"`
	NameHuffman  bool   `json:"name_huffman,omitempty"`
	ValueHuffman bool   `json:"value_huffman,omitempty"`
	Name         string `json:"name"`
	Value        string `json:"value"`
}

type uniJSON struct {
	ID     uint64 `json:"id"`
	Type   string `json:"type"`
	TypeID uint64 `json:"type_id"`
	Bytes  int64  `json:"bytes"`
}

type h3SettingJSON struct {
	ID     uint64 `json:"id"`
	Name   string `json:"name"`
	Value  uint64 `json:"value"`
	GREASE bool   `json:"grease,omitempty"`
}

type h3FrameJSON struct {
	Type   string `json:"type"`
	TypeID uint64 `json:"type_id"`
	Length int    `json:"length"`
}

type h3PUJSON struct {
	Element uint64 `json:"element_id"`
	Field   string `json:"priority"`
}

type h3ReqJSON struct {
	StreamID            uint64          `json:"stream_id"`
	RequiredInsertCount uint64          `json:"required_insert_count"`
	DeltaBase           uint64          `json:"delta_base"`
	Base                uint64          `json:"base,omitempty"`
	Lines               []qpackLineJSON `json:"qpack_lines,omitempty"`
	Headers             []fieldJSON     `json:"headers"`
	HeaderOrder         []string        `json:"header_order"`
	Priority            string          `json:"priority,omitempty"`
	Frames              []h3FrameJSON   `json:"frames"`
	JA4H                string          `json:"ja4h,omitempty"`
	Error               string          `json:"error,omitempty"`
}

// quicReport derives the "quic" object of a record.
func quicReport(r *ConnRecord) *quicJSON {
	if r.QUIC == nil {
		return nil
	}
	j := &quicJSON{DatagramsTotal: r.QUIC.DatagramsTotal, Used0RTT: r.QUIC.Used0RTT, FirstResponseUS: r.QUIC.FirstResponse.Microseconds(), Negotiated: r.Negotiated, Datagrams: []quicDatagramJSON{}, Streams: []quicStreamJSON{},
		QPACKMaxTableCapacity: r.QUIC.QPACKMaxTableCapacity, QPACKBlockedStreams: r.QUIC.QPACKBlockedStreams}
	for _, d := range r.QUIC.Datagrams {
		j.Datagrams = append(j.Datagrams, quicDatagramJSON{Size: d.Size, RawHex: hex.EncodeToString(d.Data)})
	}
	for _, s := range r.QUIC.Streams {
		j.Streams = append(j.Streams, quicStreamJSON{ID: s.ID, Total: s.Total, Fin: s.Fin, Early: s.Early, AtUS: s.At.Microseconds(), RawHex: hex.EncodeToString(s.Data)})
	}
	if fl, err := r.QUICFlight(); fl != nil {
		j.Flight = flightReport(fl, err)
	} else {
		j.FlightError = err.Error()
	}
	h, err := r.HTTP3()
	if err != nil {
		j.HTTP3Error = err.Error()
	}
	if h != nil {
		j.HTTP3 = http3Report(h)
	}
	return j
}

func flightReport(fl *QUICFlight, err error) *flightJSON {
	j := &flightJSON{
		Version: fl.Version, DCIDLen: len(fl.DCID), SCIDLen: len(fl.SCID),
		DCIDHex: hex.EncodeToString(fl.DCID), SCIDHex: hex.EncodeToString(fl.SCID), TokenHex: hex.EncodeToString(fl.Token),
		CryptoBytes: fl.CryptoBytes, ClientHelloHex: hex.EncodeToString(fl.ClientHelloMessage),
	}
	if err != nil {
		j.Error = err.Error()
	}
	for _, d := range fl.Datagrams {
		dj := flightDgramJSON{Index: d.Index, Size: d.Size, Trailing: d.Trailing, Packets: []packetJSON{}}
		for _, p := range d.Packets {
			pj := packetJSON{Type: p.Type.String(), Size: p.Size, DCIDLen: p.DCIDLen, SCIDLen: p.SCIDLen, TokenLen: p.TokenLen,
				LengthSize: p.LengthSize, PacketNumber: p.PacketNumber, PNLen: p.PNLen}
			if p.Err != nil {
				pj.Error = p.Err.Error()
			}
			for _, f := range p.Frames {
				fj := frameQJSON{Type: f.Type.String()}
				switch f.Type {
				case quicwire.FrameCrypto:
					fj.Offset, fj.Length = f.Offset, len(f.Data)
				case quicwire.FramePadding:
					fj.Length = f.Size
				}
				pj.Frames = append(pj.Frames, fj)
			}
			dj.Packets = append(dj.Packets, pj)
		}
		j.Datagrams = append(j.Datagrams, dj)
	}
	if ch := fl.ClientHello; ch != nil {
		j.ClientHello = helloJSON(ch)
		j.JA4, j.JA4O = fl.JA4(), ch.ja4('q', true, true)
	}
	for _, p := range fl.TransportParameters {
		tj := tparamJSON{ID: uint64(p.ID), Name: p.ID.String(), ValueHex: hex.EncodeToString(p.Value), GREASE: p.ID.IsGREASE()}
		if v, ok := p.Uint(); ok {
			tj.Value = &v
		}
		j.TransportParameters = append(j.TransportParameters, tj)
	}
	return j
}

func http3Report(h *HTTP3) *http3JSON {
	j := &http3JSON{UniStreams: []uniJSON{}, Settings: []h3SettingJSON{}, ControlFrames: []h3FrameJSON{}, Requests: []h3ReqJSON{}}
	for _, u := range h.UniStreams {
		j.UniStreams = append(j.UniStreams, uniJSON{ID: u.ID, Type: u.Type.String(), TypeID: uint64(u.Type), Bytes: u.Bytes})
	}
	for _, s := range h.Settings {
		j.Settings = append(j.Settings, h3SettingJSON{ID: uint64(s.ID), Name: s.ID.String(), Value: s.Value, GREASE: h3wire.IsGREASE(uint64(s.ID))})
	}
	j.ControlFrames = h3FramesJSON(h.ControlFrames)
	for _, p := range h.PriorityUpdates {
		j.PriorityUpdates = append(j.PriorityUpdates, h3PUJSON{Element: p.Element, Field: p.Field})
	}
	for i := range h.Requests {
		q := &h.Requests[i]
		rj := h3ReqJSON{StreamID: q.StreamID, RequiredInsertCount: q.RequiredInsertCount, DeltaBase: q.DeltaBase,
			Headers: fieldsJSON(q.Fields), HeaderOrder: []string{}, Priority: q.Priority(), Frames: h3FramesJSON(q.Frames), Error: q.Err}
		for _, f := range q.Fields {
			rj.HeaderOrder = append(rj.HeaderOrder, f.Name)
		}
		rj.Base = q.Base
		for _, l := range q.Lines {
			rj.Lines = append(rj.Lines, qpackLineJSON{Kind: l.Kind, Static: l.Static, Index: l.Index, NeverIndexed: l.NeverIndexed,
				NameHuffman: l.NameHuffman, ValueHuffman: l.ValueHuffman, Name: l.Name, Value: l.Value})
		}
		if hr := q.HTTPRequest(); hr.Method != "" {
			rj.JA4H = hr.JA4H()
		}
		j.Requests = append(j.Requests, rj)
	}
	for _, in := range h.QPACKEncoder {
		j.QPACKEncoder = append(j.QPACKEncoder, qpackInstrJSON{Kind: in.Kind, Static: in.Static, Index: in.Index, Name: in.Name,
			Value: in.Value, NameHuffman: in.NameHuffman, ValueHuffman: in.ValueHuffman, InsertCount: in.InsertCount})
	}
	j.QPACKEncoderErr = h.QPACKEncoderErr
	return j
}

func h3FramesJSON(fs []H3Frame) []h3FrameJSON {
	out := []h3FrameJSON{}
	for _, f := range fs {
		out = append(out, h3FrameJSON{Type: f.Type.String(), TypeID: uint64(f.Type), Length: f.Length})
	}
	return out
}

// decodeQUIC reads the raw part of a "quic" object back.
func decodeQUIC(j *quicJSON) (*QUICRecord, error) {
	q := &QUICRecord{DatagramsTotal: j.DatagramsTotal, Used0RTT: j.Used0RTT, FirstResponse: time.Duration(j.FirstResponseUS) * time.Microsecond,
		QPACKMaxTableCapacity: j.QPACKMaxTableCapacity, QPACKBlockedStreams: j.QPACKBlockedStreams}
	for _, d := range j.Datagrams {
		b, err := hex.DecodeString(d.RawHex)
		if err != nil {
			return nil, errors.New("fingerprint: decode record: quic datagram raw_hex: " + err.Error())
		}
		if len(b) == 0 {
			b = nil
		}
		q.Datagrams = append(q.Datagrams, QUICDatagram{Size: d.Size, Data: b})
	}
	for _, s := range j.Streams {
		b, err := hex.DecodeString(s.RawHex)
		if err != nil {
			return nil, errors.New("fingerprint: decode record: quic stream raw_hex: " + err.Error())
		}
		q.Streams = append(q.Streams, QUICStream{ID: s.ID, Data: b, Total: max(s.Total, int64(len(b))), Fin: s.Fin, Early: s.Early,
			At: time.Duration(s.AtUS) * time.Microsecond})
	}
	q.DatagramsTotal = max(q.DatagramsTotal, len(q.Datagrams))
	return q, nil
}
