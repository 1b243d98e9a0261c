package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// JA4 returns the FoxIO JA4 fingerprint of the hello for TLS over TCP
// (transport 't'), e.g. "t13d1517h2_8daaf6152771_cb7bf5808d99":
// version, SNI 'd'/'i', cipher and extension counts (GREASE left out, capped
// at 99), first and last character of the first ALPN value; then the
// truncated SHA-256 of the sorted cipher list; then that of the sorted
// extension list (SNI and ALPN left out) followed by the signature
// algorithms in wire order. An empty list hashes to "000000000000".
func (ch *ClientHello) JA4() string { return ch.ja4('t', true, false) }

// JA4WithTransport is JA4 with another transport marker: 'q' for a hello
// carried by QUIC, 'd' for DTLS.
func (ch *ClientHello) JA4WithTransport(t byte) string { return ch.ja4(t, true, false) }

// JA4R returns JA4_r: JA4 with the sorted lists in clear instead of hashed.
func (ch *ClientHello) JA4R() string { return ch.ja4('t', false, false) }

// JA4O returns JA4_o: JA4 computed over the ciphers and extensions in wire
// order, with SNI and ALPN kept in the extension list.
func (ch *ClientHello) JA4O() string { return ch.ja4('t', true, true) }

// JA4RO returns JA4_ro: JA4_o with the lists in clear.
func (ch *ClientHello) JA4RO() string { return ch.ja4('t', false, true) }

// ja4 builds every JA4 variant. hashed selects hashes over clear lists;
// original keeps wire order and SNI/ALPN in the extension list.
func (ch *ClientHello) ja4(transport byte, hashed, original bool) string {
	var stack [512]byte
	b := stack[:0]
	b = ch.appendJA4A(b, transport)

	var cstack, estack [64]uint16 // spill to the heap for unusually long lists
	ciphers := cstack[:0]
	for _, c := range ch.CipherSuites {
		if !IsGREASE(c) {
			ciphers = append(ciphers, c)
		}
	}
	if !original {
		slices.Sort(ciphers)
	}
	b = append(b, '_')
	mark := len(b)
	b = appendHexList(b, ciphers)
	if hashed {
		b = hashSection(b, mark)
	}

	exts := estack[:0]
	for _, e := range ch.Extensions {
		if IsGREASE(e.Type) || !original && (e.Type == extServerName || e.Type == extALPN) {
			continue
		}
		exts = append(exts, e.Type)
	}
	if !original {
		slices.Sort(exts)
	}
	b = append(b, '_')
	mark = len(b)
	b = appendHexList(b, exts)
	sigs := 0
	for _, s := range ch.SignatureAlgorithms {
		if !IsGREASE(s) {
			sigs++
		}
	}
	if sigs > 0 {
		b = append(b, '_')
		b = appendHexList(b, ch.SignatureAlgorithms)
	}
	if hashed {
		if len(exts) == 0 {
			b = append(b[:mark], "000000000000"...)
		} else {
			b = hashSection(b, mark)
		}
	}
	return string(b)
}

// appendJA4A appends the JA4_a section: transport, version, SNI marker,
// counts and ALPN characters.
func (ch *ClientHello) appendJA4A(b []byte, transport byte) []byte {
	b = append(b, transport)
	b = append(b, ja4Version(ch.ja4VersionValue())...)
	if ch.HasExtension(extServerName) {
		b = append(b, 'd')
	} else {
		b = append(b, 'i')
	}
	nc, ne := 0, 0
	for _, c := range ch.CipherSuites {
		if !IsGREASE(c) {
			nc++
		}
	}
	for _, e := range ch.Extensions {
		if !IsGREASE(e.Type) {
			ne++
		}
	}
	b = appendCount2(b, nc)
	b = appendCount2(b, ne)
	var alpn string
	if ch.HasExtension(extALPN) && len(ch.ALPN) > 0 {
		alpn = ch.ALPN[0]
	}
	return appendALPNChars(b, alpn)
}

// ja4VersionValue is the highest non-GREASE supported_versions entry if
// the extension is present, else the legacy version.
func (ch *ClientHello) ja4VersionValue() uint16 {
	var best uint16
	found := false
	for _, v := range ch.SupportedVersions {
		if !IsGREASE(v) && (!found || v > best) {
			best, found = v, true
		}
	}
	if found {
		return best
	}
	return ch.Version
}

// ja4Version maps a protocol version to its two JA4 characters.
func ja4Version(v uint16) string {
	switch v {
	case 0x0304:
		return "13"
	case 0x0303:
		return "12"
	case 0x0302:
		return "11"
	case 0x0301:
		return "10"
	case 0x0300:
		return "s3"
	case 0x0002, 0x0200:
		return "s2"
	case 0x0100:
		return "s1"
	case 0xfeff:
		return "d1"
	case 0xfefd:
		return "d2"
	case 0xfefc:
		return "d3"
	}
	return "00"
}

// appendALPNChars appends the two ALPN characters of JA4_a: "00" for no
// value; the first and last byte if both are ASCII alphanumeric (one byte
// counts as both); otherwise the first and last character of the value's
// hex encoding.
func appendALPNChars(b []byte, v string) []byte {
	if v == "" {
		return append(b, '0', '0')
	}
	first, last := v[0], v[len(v)-1]
	if isAlnum(first) && isAlnum(last) {
		return append(b, first, last)
	}
	const digits = "0123456789abcdef"
	return append(b, digits[first>>4], digits[last&0x0f])
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// appendCount2 appends n as two decimal digits, capped at 99.
func appendCount2(b []byte, n int) []byte {
	n = min(n, 99)
	return append(b, byte('0'+n/10), byte('0'+n%10))
}

// appendHexList appends the non-GREASE values as four lowercase hex digits,
// joined by ','.
func appendHexList(b []byte, vs []uint16) []byte {
	const digits = "0123456789abcdef"
	first := true
	for _, v := range vs {
		if IsGREASE(v) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, digits[v>>12], digits[v>>8&0xf], digits[v>>4&0xf], digits[v&0xf])
	}
	return b
}

// hashSection replaces b[mark:] with the first 12 hex digits of its
// SHA-256, or with "000000000000" when it is empty.
func hashSection(b []byte, mark int) []byte {
	if len(b) == mark {
		return append(b, "000000000000"...)
	}
	sum := sha256.Sum256(b[mark:])
	var h [64]byte
	hex.Encode(h[:], sum[:])
	return append(b[:mark], h[:12]...)
}

// hash12 returns the JA4-style truncated SHA-256 of s: its first 12 hex
// digits, or "000000000000" for an empty s.
func hash12(s []byte) string {
	if len(s) == 0 {
		return "000000000000"
	}
	sum := sha256.Sum256(s)
	return hex.EncodeToString(sum[:6])
}
