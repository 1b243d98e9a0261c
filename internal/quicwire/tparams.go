package quicwire

import "strconv"

// TransportParameterID identifies a QUIC transport parameter (RFC 9000
// §18.2 and the registry's later entries).
type TransportParameterID uint64

// Transport parameter ids with names.
const (
	ParamOriginalDestinationConnectionID TransportParameterID = 0x00
	ParamMaxIdleTimeout                  TransportParameterID = 0x01
	ParamStatelessResetToken             TransportParameterID = 0x02
	ParamMaxUDPPayloadSize               TransportParameterID = 0x03
	ParamInitialMaxData                  TransportParameterID = 0x04
	ParamInitialMaxStreamDataBidiLocal   TransportParameterID = 0x05
	ParamInitialMaxStreamDataBidiRemote  TransportParameterID = 0x06
	ParamInitialMaxStreamDataUni         TransportParameterID = 0x07
	ParamInitialMaxStreamsBidi           TransportParameterID = 0x08
	ParamInitialMaxStreamsUni            TransportParameterID = 0x09
	ParamAckDelayExponent                TransportParameterID = 0x0a
	ParamMaxAckDelay                     TransportParameterID = 0x0b
	ParamDisableActiveMigration          TransportParameterID = 0x0c
	ParamPreferredAddress                TransportParameterID = 0x0d
	ParamActiveConnectionIDLimit         TransportParameterID = 0x0e
	ParamInitialSourceConnectionID       TransportParameterID = 0x0f
	ParamRetrySourceConnectionID         TransportParameterID = 0x10
	ParamVersionInformation              TransportParameterID = 0x11   // RFC 9368
	ParamMaxDatagramFrameSize            TransportParameterID = 0x20   // RFC 9221
	ParamGREASEQUICBit                   TransportParameterID = 0x2ab2 // RFC 9287
	ParamInitialRTT                      TransportParameterID = 0x3127 // Google QUIC
	ParamGoogleConnectionOptions         TransportParameterID = 0x3128 // Google QUIC
	ParamGoogleVersion                   TransportParameterID = 0x4752 // Google QUIC
	ParamMinAckDelay                     TransportParameterID = 0xff04de1b
)

var paramNames = map[TransportParameterID]string{
	ParamOriginalDestinationConnectionID: "original_destination_connection_id",
	ParamMaxIdleTimeout:                  "max_idle_timeout",
	ParamStatelessResetToken:             "stateless_reset_token",
	ParamMaxUDPPayloadSize:               "max_udp_payload_size",
	ParamInitialMaxData:                  "initial_max_data",
	ParamInitialMaxStreamDataBidiLocal:   "initial_max_stream_data_bidi_local",
	ParamInitialMaxStreamDataBidiRemote:  "initial_max_stream_data_bidi_remote",
	ParamInitialMaxStreamDataUni:         "initial_max_stream_data_uni",
	ParamInitialMaxStreamsBidi:           "initial_max_streams_bidi",
	ParamInitialMaxStreamsUni:            "initial_max_streams_uni",
	ParamAckDelayExponent:                "ack_delay_exponent",
	ParamMaxAckDelay:                     "max_ack_delay",
	ParamDisableActiveMigration:          "disable_active_migration",
	ParamPreferredAddress:                "preferred_address",
	ParamActiveConnectionIDLimit:         "active_connection_id_limit",
	ParamInitialSourceConnectionID:       "initial_source_connection_id",
	ParamRetrySourceConnectionID:         "retry_source_connection_id",
	ParamVersionInformation:              "version_information",
	ParamMaxDatagramFrameSize:            "max_datagram_frame_size",
	ParamGREASEQUICBit:                   "grease_quic_bit",
	ParamInitialRTT:                      "initial_rtt",
	ParamGoogleConnectionOptions:         "google_connection_options",
	ParamGoogleVersion:                   "google_version",
	ParamMinAckDelay:                     "min_ack_delay",
}

// String returns the registry name, "GREASE" for a reserved id, or the id
// in hex.
func (id TransportParameterID) String() string {
	if n, ok := paramNames[id]; ok {
		return n
	}
	if id.IsGREASE() {
		return "GREASE"
	}
	return "0x" + strconv.FormatUint(uint64(id), 16)
}

// IsGREASE reports whether id is reserved for greasing (31*N + 27, RFC
// 9000 §18.1).
func (id TransportParameterID) IsGREASE() bool { return id%31 == 27 }

// IsInteger reports whether the parameter's value is one varint.
func (id TransportParameterID) IsInteger() bool {
	switch id {
	case ParamMaxIdleTimeout, ParamMaxUDPPayloadSize, ParamInitialMaxData,
		ParamInitialMaxStreamDataBidiLocal, ParamInitialMaxStreamDataBidiRemote,
		ParamInitialMaxStreamDataUni, ParamInitialMaxStreamsBidi, ParamInitialMaxStreamsUni,
		ParamAckDelayExponent, ParamMaxAckDelay, ParamActiveConnectionIDLimit,
		ParamMaxDatagramFrameSize, ParamInitialRTT, ParamMinAckDelay:
		return true
	}
	return false
}

// TransportParameter is one parameter as sent. Value aliases the input.
type TransportParameter struct {
	ID    TransportParameterID
	Value []byte
}

// Uint returns an integer parameter's value; ok is false when the id is
// not an integer one or the value is not exactly one varint.
func (p TransportParameter) Uint() (v uint64, ok bool) {
	if !p.ID.IsInteger() {
		return 0, false
	}
	v, n := Varint(p.Value)
	return v, n != 0 && n == len(p.Value)
}

// ParseTransportParameters reads the body of a quic_transport_parameters
// extension (TLS extension 57) and returns its parameters in wire order.
// It rejects (as TRANSPORT_PARAMETER_ERROR, RFC 9000 §7.4) a parameter
// sent twice, an integer parameter whose value is not exactly one varint,
// and the out-of-range values of §18.2: max_udp_payload_size below 1200,
// ack_delay_exponent above 20, max_ack_delay of 2^14 or more,
// active_connection_id_limit below 2. Which side may send which parameter
// is the caller's to check.
func ParseTransportParameters(b []byte) ([]TransportParameter, error) {
	var out []TransportParameter
	seen := map[TransportParameterID]bool{}
	off := 0
	for off < len(b) {
		id, n := Varint(b[off:])
		if n == 0 {
			return out, truncated("transport parameter id", off)
		}
		start := off
		off += n
		l, n := Varint(b[off:])
		if n == 0 {
			return out, truncated("transport parameter length", off)
		}
		off += n
		if l > uint64(len(b)-off) {
			return out, truncated("transport parameter value", off)
		}
		p := TransportParameter{ID: TransportParameterID(id), Value: b[off : off+int(l)]}
		off += int(l)
		if seen[p.ID] {
			return out, malformed("duplicate transport parameter "+p.ID.String(), start)
		}
		seen[p.ID] = true
		v, ok := p.Uint()
		if p.ID.IsInteger() && !ok {
			return out, malformed("transport parameter "+p.ID.String()+" value", start)
		}
		switch {
		case p.ID == ParamMaxUDPPayloadSize && v < 1200,
			p.ID == ParamAckDelayExponent && v > 20,
			p.ID == ParamMaxAckDelay && v >= 1<<14,
			p.ID == ParamActiveConnectionIDLimit && v < 2:
			return out, malformed("transport parameter "+p.ID.String()+" out of range", start)
		}
		out = append(out, p)
	}
	return out, nil
}

// AppendTransportParameters appends the encoding of params, in order, with
// minimal-length id and length fields.
func AppendTransportParameters(b []byte, params []TransportParameter) []byte {
	for _, p := range params {
		b = AppendVarint(b, uint64(p.ID))
		b = AppendVarint(b, uint64(len(p.Value)))
		b = append(b, p.Value...)
	}
	return b
}
