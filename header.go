package guise

import "github.com/guise-http/guise/fields"

// Field is one header field: a name in the case it goes on the wire, and a
// value. It is fields.Field, whose documentation lists its methods.
type Field = fields.Field

// Header is an ordered list of header fields; see fields.Header for its
// methods. Order and case are part of a browser's fingerprint, so guise
// keeps both exactly as given; lookups by name (Get, Values, Has) ignore
// ASCII case. The zero value is an empty header.
type Header = fields.Header
