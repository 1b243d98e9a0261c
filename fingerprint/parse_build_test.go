package fingerprint

// helloSpec describes a ClientHello for tests; buildHello serializes it.
type helloSpec struct {
	version    uint16 // legacy_version; 0 means 0x0303
	ciphers    []uint16
	extensions []Extension
	noExts     bool // omit the extensions block entirely
}

func u16be(v uint16) []byte { return []byte{byte(v >> 8), byte(v)} }

// vec16 prefixes b with its two-byte length.
func vec16(b []byte) []byte { return append(u16be(uint16(len(b))), b...) }

// vec8 prefixes b with its one-byte length.
func vec8(b []byte) []byte { return append([]byte{byte(len(b))}, b...) }

func u16list(vs ...uint16) []byte {
	var b []byte
	for _, v := range vs {
		b = append(b, u16be(v)...)
	}
	return b
}

// Extension data builders for the extensions JA3/JA4 read.
func extSNI(host string) Extension {
	return Extension{Type: extServerName, Data: vec16(append([]byte{0}, vec16([]byte(host))...))}
}

func extALPNOf(protos ...string) Extension {
	var l []byte
	for _, p := range protos {
		l = append(l, vec8([]byte(p))...)
	}
	return Extension{Type: extALPN, Data: vec16(l)}
}

func extSigAlgs(vs ...uint16) Extension {
	return Extension{Type: extSignatureAlgorithms, Data: vec16(u16list(vs...))}
}

func extVersions(vs ...uint16) Extension {
	return Extension{Type: extSupportedVersions, Data: vec8(u16list(vs...))}
}

func extGroups(vs ...uint16) Extension {
	return Extension{Type: extSupportedGroups, Data: vec16(u16list(vs...))}
}

// handshake returns the ClientHello handshake message.
func (s helloSpec) handshake() []byte {
	v := s.version
	if v == 0 {
		v = 0x0303
	}
	body := u16be(v)
	body = append(body, make([]byte, 32)...) // random
	body = append(body, vec8(make([]byte, 32))...)
	body = append(body, vec16(u16list(s.ciphers...))...)
	body = append(body, vec8([]byte{0})...)
	if !s.noExts {
		var exts []byte
		for _, e := range s.extensions {
			exts = append(exts, u16be(e.Type)...)
			exts = append(exts, vec16(e.Data)...)
		}
		body = append(body, vec16(exts)...)
	}
	n := len(body)
	return append([]byte{handshakeClientHello, byte(n >> 16), byte(n >> 8), byte(n)}, body...)
}

// records splits the handshake message into TLS records of at most max
// payload bytes each.
func records(msg []byte, max int) []byte {
	var out []byte
	for len(msg) > 0 {
		n := min(max, len(msg))
		out = append(out, recordTypeHandshake, 0x03, 0x01, byte(n>>8), byte(n))
		out = append(out, msg[:n]...)
		msg = msg[n:]
	}
	return out
}

func (s helloSpec) record() []byte { return records(s.handshake(), 1<<14) }
