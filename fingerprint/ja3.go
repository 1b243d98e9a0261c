package fingerprint

import (
	"crypto/md5"
	"encoding/hex"
	"slices"
	"strconv"
)

// JA3 returns the JA3 string: legacy version, cipher suites, extension
// types, supported groups and EC point formats, as decimal numbers joined by
// '-', the five fields joined by ','. GREASE values are left out of every
// list. Extensions keep wire order, so a client that shuffles them (Chrome)
// has a different JA3 on every connection.
func (ch *ClientHello) JA3() string {
	var buf [512]byte
	return string(ch.appendJA3(buf[:0], false))
}

// JA3Hash returns the lowercase hex MD5 of JA3.
func (ch *ClientHello) JA3Hash() string {
	var buf [512]byte
	return md5Hex(ch.appendJA3(buf[:0], false))
}

// JA3N returns JA3 with the extension types sorted in ascending order, which
// is stable across Chrome's extension shuffling.
func (ch *ClientHello) JA3N() string {
	var buf [512]byte
	return string(ch.appendJA3(buf[:0], true))
}

// JA3NHash returns the lowercase hex MD5 of JA3N.
func (ch *ClientHello) JA3NHash() string {
	var buf [512]byte
	return md5Hex(ch.appendJA3(buf[:0], true))
}

func (ch *ClientHello) appendJA3(b []byte, sortExts bool) []byte {
	b = strconv.AppendUint(b, uint64(ch.Version), 10)
	b = append(b, ',')
	b = appendDecimalList(b, ch.CipherSuites)
	b = append(b, ',')
	var stack [64]uint16
	exts := stack[:0]
	for _, e := range ch.Extensions {
		exts = append(exts, e.Type)
	}
	if sortExts {
		slices.Sort(exts)
	}
	b = appendDecimalList(b, exts)
	b = append(b, ',')
	b = appendDecimalList(b, ch.SupportedGroups)
	b = append(b, ',')
	for i, f := range ch.ECPointFormats {
		if i > 0 {
			b = append(b, '-')
		}
		b = strconv.AppendUint(b, uint64(f), 10)
	}
	return b
}

// appendDecimalList appends the non-GREASE values of vs in decimal, joined
// by '-'.
func appendDecimalList(b []byte, vs []uint16) []byte {
	first := true
	for _, v := range vs {
		if IsGREASE(v) {
			continue
		}
		if !first {
			b = append(b, '-')
		}
		first = false
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	return b
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	var h [2 * md5.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
}
