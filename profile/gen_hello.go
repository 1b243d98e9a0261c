//go:build ignore

// This file is part of the generator (see gen.go): it builds a TLS
// ClientHello record from a description, for the profiles that are built
// from public facts rather than recorded. Every byte that a browser draws at
// random (random, session id, key shares, GREASE values) comes from a
// deterministic stream seeded with the profile name, so that the generator's
// output is stable under `go generate`.

package main

import (
	"crypto/sha256"
	"encoding/binary"
	"log"
)

// Extension code points used by the descriptions.
const (
	extServerName          = 0x0000
	extStatusRequest       = 0x0005
	extSupportedGroups     = 0x000a
	extECPointFormats      = 0x000b
	extSignatureAlgorithms = 0x000d
	extALPN                = 0x0010
	extSCT                 = 0x0012
	extPadding             = 0x0015
	extEMS                 = 0x0017
	extCompressCert        = 0x001b
	extSessionTicket       = 0x0023
	extSupportedVersions   = 0x002b
	extPSKModes            = 0x002d
	extKeyShare            = 0x0033
	extRenegotiationInfo   = 0xff01
)

// Named groups and their key share sizes.
const (
	groupX25519         = 0x001d
	groupP256           = 0x0017
	groupP384           = 0x0018
	groupP521           = 0x0019
	groupX25519MLKEM768 = 0x11ec
)

// greaseSlot names one of the GREASE values a BoringSSL-style client draws
// per connection: each slot's value is used wherever the slot appears.
type greaseSlot int

const (
	greaseCipher greaseSlot = iota + 1
	greaseGroup             // supported_groups and its key share
	greaseVersion
	greaseExt1
	greaseExt2
	greaseSlots
)

// helloSpec describes a ClientHello: everything in wire order. A value of
// 0 in a uint16 list marked "grease" stands for the slot's GREASE value.
type helloSpec struct {
	// Seed feeds the deterministic stream for random bytes.
	Seed string
	// Ciphers in order; GreaseCipher puts a GREASE suite first.
	GreaseCipher bool
	Ciphers      []uint16
	Exts         []extSpec
	// PadTo512 applies BoringSSL's padding rule: a hello (handshake
	// message) of 256..511 bytes gets a padding extension that makes it
	// 512 bytes.
	PadTo512 bool
}

// extSpec is one extension. Exactly one of the kinds applies: a GREASE
// extension (Grease slot, with GreaseBody), a computed body (Kind), or a
// fixed Body.
type extSpec struct {
	Type       uint16
	Grease     greaseSlot
	GreaseBody []byte
	// Body is sent as is.
	Body []byte
	// Groups, KeyShares, Versions and SigAlgs build the list bodies;
	// GreaseFirst puts the matching GREASE value first.
	Groups      []uint16
	KeyShares   []uint16
	Versions    []uint16
	SigAlgs     []uint16
	ALPN        []string
	ServerName  string
	GreaseFirst bool
	// Padding marks the padding extension, sized last.
	Padding bool
}

// detRand is a deterministic byte stream: SHA-256 over seed and counter.
type detRand struct {
	seed string
	ctr  uint64
	buf  []byte
}

func (r *detRand) read(p []byte) {
	for len(p) > 0 {
		if len(r.buf) == 0 {
			var c [8]byte
			binary.BigEndian.PutUint64(c[:], r.ctr)
			r.ctr++
			sum := sha256.Sum256(append([]byte(r.seed), c[:]...))
			r.buf = sum[:]
		}
		n := copy(p, r.buf)
		r.buf, p = r.buf[n:], p[n:]
	}
}

func (r *detRand) bytes(n int) []byte {
	b := make([]byte, n)
	r.read(b)
	return b
}

// keyShareLen is the size of a client key share for group.
func keyShareLen(group uint16) int {
	switch group {
	case groupX25519:
		return 32
	case groupP256:
		return 65
	case groupP384:
		return 97
	case groupP521:
		return 133
	case groupX25519MLKEM768:
		return 1216
	}
	log.Fatalf("no key share size for group %#04x", group)
	return 0
}

func appendU16(b []byte, v uint16) []byte { return append(b, byte(v>>8), byte(v)) }

// appendVec appends body with a length prefix of n bytes (1 or 2).
func appendVec(b []byte, n int, body []byte) []byte {
	if n == 1 {
		if len(body) > 0xff {
			log.Fatalf("vector of %d bytes in a 1-byte length", len(body))
		}
		b = append(b, byte(len(body)))
	} else {
		if len(body) > 0xffff {
			log.Fatalf("vector of %d bytes in a 2-byte length", len(body))
		}
		b = appendU16(b, uint16(len(body)))
	}
	return append(b, body...)
}

func u16s(grease uint16, first bool, vs []uint16) []byte {
	var b []byte
	if first {
		b = appendU16(b, grease)
	}
	for _, v := range vs {
		b = appendU16(b, v)
	}
	return b
}

// build returns the ClientHello as one TLS record.
func (s *helloSpec) build() []byte {
	r := &detRand{seed: "guise profile/gen " + s.Seed}
	var grease [greaseSlots]uint16
	for i := greaseCipher; i < greaseSlots; i++ {
		v := r.bytes(1)[0] & 0xf0
		grease[i] = uint16(v|0x0a)<<8 | uint16(v|0x0a)
	}
	if grease[greaseExt1] == grease[greaseExt2] {
		grease[greaseExt2] ^= 0x1010 // BoringSSL never repeats an extension type
	}

	var body []byte
	body = appendU16(body, 0x0303)      // legacy_version
	body = append(body, r.bytes(32)...) // random
	body = appendVec(body, 1, r.bytes(32))
	body = appendVec(body, 2, u16s(grease[greaseCipher], s.GreaseCipher, s.Ciphers))
	body = appendVec(body, 1, []byte{0}) // null compression

	var exts []byte
	padAt := -1
	for _, e := range s.Exts {
		var eb []byte
		typ := e.Type
		switch {
		case e.Grease != 0:
			typ = grease[e.Grease]
			eb = e.GreaseBody
		case e.Padding:
			padAt = len(exts)
			continue
		case e.ServerName != "":
			var entry []byte
			entry = append(entry, 0) // host_name
			entry = appendVec(entry, 2, []byte(e.ServerName))
			eb = appendVec(nil, 2, entry)
		case e.Groups != nil:
			eb = appendVec(nil, 2, u16s(grease[greaseGroup], e.GreaseFirst, e.Groups))
		case e.KeyShares != nil:
			var ks []byte
			if e.GreaseFirst {
				ks = appendU16(ks, grease[greaseGroup])
				ks = appendVec(ks, 2, []byte{0})
			}
			for _, g := range e.KeyShares {
				ks = appendU16(ks, g)
				ks = appendVec(ks, 2, r.bytes(keyShareLen(g)))
			}
			eb = appendVec(nil, 2, ks)
		case e.Versions != nil:
			eb = appendVec(nil, 1, u16s(grease[greaseVersion], e.GreaseFirst, e.Versions))
		case e.SigAlgs != nil:
			eb = appendVec(nil, 2, u16s(0, false, e.SigAlgs))
		case e.ALPN != nil:
			var l []byte
			for _, p := range e.ALPN {
				l = appendVec(l, 1, []byte(p))
			}
			eb = appendVec(nil, 2, l)
		default:
			eb = e.Body
		}
		exts = appendU16(exts, typ)
		exts = appendVec(exts, 2, eb)
	}
	if padAt >= 0 {
		// BoringSSL (ssl_add_clienthello_tlsext): the handshake message
		// is the 4-byte header, body and the extensions vector.
		n := 4 + len(body) + 2 + len(exts)
		if s.PadTo512 && n > 0xff && n < 0x200 {
			pad := 0x200 - n
			if pad >= 4+1 {
				pad -= 4
			} else {
				pad = 1
			}
			var pe []byte
			pe = appendU16(pe, extPadding)
			pe = appendVec(pe, 2, make([]byte, pad))
			exts = append(exts[:padAt:padAt], append(pe, exts[padAt:]...)...)
		}
	}
	body = appendVec(body, 2, exts)

	msg := []byte{1, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}
	msg = append(msg, body...)
	rec := []byte{0x16, 0x03, 0x01}
	return appendVec(rec, 2, msg)
}
