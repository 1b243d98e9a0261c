package fingerprint

import "strconv"

// extensionNames holds the IANA names of the extensions browsers send.
var extensionNames = map[uint16]string{
	0:     "server_name",
	5:     "status_request",
	10:    "supported_groups",
	11:    "ec_point_formats",
	13:    "signature_algorithms",
	16:    "application_layer_protocol_negotiation",
	18:    "signed_certificate_timestamp",
	21:    "padding",
	23:    "extended_master_secret",
	27:    "compress_certificate",
	28:    "record_size_limit",
	34:    "delegated_credentials",
	35:    "session_ticket",
	41:    "pre_shared_key",
	42:    "early_data",
	43:    "supported_versions",
	44:    "cookie",
	45:    "psk_key_exchange_modes",
	49:    "post_handshake_auth",
	50:    "signature_algorithms_cert",
	51:    "key_share",
	57:    "quic_transport_parameters",
	17513: "application_settings_old",
	17613: "application_settings",
	51764: "trust_anchors",
	65037: "encrypted_client_hello",
	65281: "renegotiation_info",
}

// ExtensionName returns the IANA name of a TLS extension type, "GREASE" for
// a GREASE value, or the decimal number for a type it does not know.
func ExtensionName(typ uint16) string {
	if n, ok := extensionNames[typ]; ok {
		return n
	}
	if IsGREASE(typ) {
		return "GREASE"
	}
	return strconv.Itoa(int(typ))
}

// extensionLabel names an extension in an error message: "16 (application_layer_protocol_negotiation)".
func extensionLabel(typ uint16) string {
	return strconv.Itoa(int(typ)) + " (" + ExtensionName(typ) + ")"
}
