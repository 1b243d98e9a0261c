//go:build ignore

// This file is part of the generator (see gen.go): the profiles built from
// public facts, not recorded here: Safari 18 and 26 (macOS and iOS) and
// OkHttp 4 on Android. Each fact below names where it comes from; every Source
// string repeats that for the profile file.

package main

import (
	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

// safariHello is Safari 18.4-18.5's ClientHello (macOS and iOS share
// Apple's TLS stack). Cipher order, extension order, groups, key shares,
// versions and zlib certificate compression: uTLS u_parrots.go
// HelloSafari_16_0 and bogdanfinn/tls-client Safari_IOS_18_5 agree (the
// latter without ecdsa_sha1, which Safari dropped in 18.2 per
// 0x676e67/wreq-util SIGALGS_LIST_2 and lexiforest/curl-impersonate
// safari184). Signature algorithms keep rsa_pss_rsae_sha384 twice, as all
// three give. Padding: BoringSSL's rule (tls-client BoringPaddingStyle; a
// public flow capture shows a 512-byte Safari hello record).
var safariHello = helloSpec{
	Seed:         "safari18",
	GreaseCipher: true,
	Ciphers: []uint16{
		0x1301, 0x1302, 0x1303,
		0xc02c, 0xc02b, 0xcca9, // ECDHE-ECDSA AES256-GCM, AES128-GCM, CHACHA20
		0xc030, 0xc02f, 0xcca8, // ECDHE-RSA AES256-GCM, AES128-GCM, CHACHA20
		0xc00a, 0xc009, // ECDHE-ECDSA AES256-CBC-SHA, AES128-CBC-SHA
		0xc014, 0xc013, // ECDHE-RSA AES256-CBC-SHA, AES128-CBC-SHA
		0x009d, 0x009c, // RSA AES256-GCM, AES128-GCM
		0x0035, 0x002f, // RSA AES256-CBC-SHA, AES128-CBC-SHA
		0xc008, 0xc012, 0x000a, // 3DES-EDE-CBC-SHA: ECDHE-ECDSA, ECDHE-RSA, RSA
	},
	Exts: []extSpec{
		{Grease: greaseExt1, GreaseBody: []byte{}},
		{Type: extServerName, ServerName: "fp.test"},
		{Type: extEMS, Body: []byte{}},
		{Type: extRenegotiationInfo, Body: []byte{0}},
		{Type: extSupportedGroups, GreaseFirst: true, Groups: []uint16{groupX25519, groupP256, groupP384, groupP521}},
		{Type: extECPointFormats, Body: []byte{1, 0}},
		{Type: extALPN, ALPN: []string{"h2", "http/1.1"}},
		{Type: extStatusRequest, Body: []byte{1, 0, 0, 0, 0}},
		{Type: extSignatureAlgorithms, SigAlgs: []uint16{0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0805, 0x0501, 0x0806, 0x0601, 0x0201}},
		{Type: extSCT, Body: []byte{}},
		{Type: extKeyShare, GreaseFirst: true, KeyShares: []uint16{groupX25519}},
		{Type: extPSKModes, Body: []byte{1, 1}},
		{Type: extSupportedVersions, GreaseFirst: true, Versions: []uint16{0x0304, 0x0303, 0x0302, 0x0301}},
		{Type: extCompressCert, Body: []byte{2, 0, 1}},
		{Grease: greaseExt2, GreaseBody: []byte{0}},
		{Type: extPadding, Padding: true},
	},
	PadTo512: true,
}

// safari26Hello is Safari 26.4's ClientHello on macOS 26.4 and iOS 26.4
// (Apple's TLS stack again sends one hello on both), field by field as in
// the real-device captures in testssl.sh's
// etc/client-simulation.wiresharked.txt (safari_264_osx_264 and
// safari_iOS_264; profile/testdata/safari26 keeps their bytes and
// safari26_test.go compares every field). Against Safari 18: the TLS 1.3
// suites lead with AES-256-GCM, X25519MLKEM768 comes first in
// supported_groups and key_share, supported_versions drops TLS 1.1 and
// 1.0, and there is no padding extension (the hello is far above 512
// bytes).
var safari26Hello = helloSpec{
	Seed:         "safari26",
	GreaseCipher: true,
	Ciphers: []uint16{
		0x1302, 0x1303, 0x1301, // AES256-GCM, CHACHA20, AES128-GCM
		0xc02c, 0xc02b, 0xcca9, // ECDHE-ECDSA AES256-GCM, AES128-GCM, CHACHA20
		0xc030, 0xc02f, 0xcca8, // ECDHE-RSA AES256-GCM, AES128-GCM, CHACHA20
		0xc00a, 0xc009, // ECDHE-ECDSA AES256-CBC-SHA, AES128-CBC-SHA
		0xc014, 0xc013, // ECDHE-RSA AES256-CBC-SHA, AES128-CBC-SHA
		0x009d, 0x009c, // RSA AES256-GCM, AES128-GCM
		0x0035, 0x002f, // RSA AES256-CBC-SHA, AES128-CBC-SHA
		0xc008, 0xc012, 0x000a, // 3DES-EDE-CBC-SHA: ECDHE-ECDSA, ECDHE-RSA, RSA
	},
	Exts: []extSpec{
		{Grease: greaseExt1, GreaseBody: []byte{}},
		{Type: extServerName, ServerName: "fp.test"},
		{Type: extEMS, Body: []byte{}},
		{Type: extRenegotiationInfo, Body: []byte{0}},
		{Type: extSupportedGroups, GreaseFirst: true, Groups: []uint16{groupX25519MLKEM768, groupX25519, groupP256, groupP384, groupP521}},
		{Type: extECPointFormats, Body: []byte{1, 0}},
		{Type: extALPN, ALPN: []string{"h2", "http/1.1"}},
		{Type: extStatusRequest, Body: []byte{1, 0, 0, 0, 0}},
		{Type: extSignatureAlgorithms, SigAlgs: []uint16{0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0805, 0x0501, 0x0806, 0x0601, 0x0201}},
		{Type: extSCT, Body: []byte{}},
		{Type: extKeyShare, GreaseFirst: true, KeyShares: []uint16{groupX25519MLKEM768, groupX25519}},
		{Type: extPSKModes, Body: []byte{1, 1}},
		{Type: extSupportedVersions, GreaseFirst: true, Versions: []uint16{0x0304, 0x0303}},
		{Type: extCompressCert, Body: []byte{2, 0, 1}},
		{Grease: greaseExt2, GreaseBody: []byte{0}},
	},
}

// okhttpHello is OkHttp 4 on Android (Conscrypt, BoringSSL): no GREASE.
// Ciphers and extension order: bogdanfinn/tls-client Okhttp4Android10..13
// (one spec for Android 10 to 13); the cipher order is Conscrypt's enabled
// order filtered by OkHttp's ConnectionSpec.MODERN_TLS (OkHttp keeps the
// socket's order), without 3DES, which Conscrypt no longer enables.
var okhttpHello = helloSpec{
	Seed: "okhttp4-android",
	Ciphers: []uint16{
		0x1301, 0x1302, 0x1303,
		0xc02b, 0xc02c, 0xcca9, // ECDHE-ECDSA AES128-GCM, AES256-GCM, CHACHA20
		0xc02f, 0xc030, 0xcca8, // ECDHE-RSA AES128-GCM, AES256-GCM, CHACHA20
		0xc013, 0xc014, // ECDHE-RSA AES128-CBC-SHA, AES256-CBC-SHA
		0x009c, 0x009d, // RSA AES128-GCM, AES256-GCM
		0x002f, 0x0035, // RSA AES128-CBC-SHA, AES256-CBC-SHA
	},
	Exts: []extSpec{
		{Type: extServerName, ServerName: "fp.test"},
		{Type: extEMS, Body: []byte{}},
		{Type: extRenegotiationInfo, Body: []byte{0}},
		{Type: extSupportedGroups, Groups: []uint16{groupX25519, groupP256, groupP384}},
		{Type: extECPointFormats, Body: []byte{1, 0}},
		{Type: extSessionTicket, Body: []byte{}},
		{Type: extALPN, ALPN: []string{"h2", "http/1.1"}},
		{Type: extStatusRequest, Body: []byte{1, 0, 0, 0, 0}},
		{Type: extSignatureAlgorithms, SigAlgs: []uint16{0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601, 0x0201}},
		{Type: extKeyShare, KeyShares: []uint16{groupX25519}},
		{Type: extPSKModes, Body: []byte{1, 1}},
		{Type: extSupportedVersions, Versions: []uint16{0x0304, 0x0303}},
		{Type: extPadding, Padding: true},
	},
	PadTo512: true,
}

const safariSource = "not recorded here: built from public facts for Safari 18.4-18.5. " +
	"TLS: cipher and extension order, groups, key shares, versions, zlib cert compression from uTLS u_parrots.go HelloSafari_16_0 and bogdanfinn/tls-client profiles Safari_IOS_18_5, " +
	"signature algorithms without ecdsa_sha1 (rsa_pss_rsae_sha384 twice) from tls-client Safari_IOS_18_5, 0x676e67/wreq-util SIGALGS_LIST_2 (safari18_2..18_5) and lexiforest/curl-impersonate safari184; " +
	"BoringSSL padding to 512 bytes; random, session id, key share and GREASE bytes are fixed dummies from profile/gen_hello.go. " +
	"HTTP/2: SETTINGS 2:0;3:100;4:2097152;9:1 in that order, connection WINDOW_UPDATE 10420225, pseudo-headers m,s,a,p, HEADERS priority weight 256 non-exclusive on stream 0, " +
	"from curl-impersonate safari184/safari184_ios, tls-client Safari_IOS_18_5 and wreq-util safari18_5; " +
	"navigation headers, order and values from curl-impersonate safari184 and wreq-util header_initializer_for_18; user-agent strings from deedy5/primp (Safari 18.5). " +
	"Checked: JA4 t13d2014h2_a09f3c656075_e42f34c56612 and Akamai 2:0;3:100;4:2097152;9:1|10420225|0|m,s,a,p as deedy5/primp's safari tests expect from tls.browserleaks.com for Safari 18.5 (macOS and iOS); " +
	"JA3 773906b0efdefa24a7f2b8eb6985bf37 as in a public flow dataset's real Safari hello. " +
	"Only navigation is given by the sources (no fetch, subresource or image sets); the HTTP/1.1 set is derived (Host first, the h2 fields in canonical case without priority, Connection: keep-alive last); " +
	"the Cookie slot, which the sources do not give, after accept-language as Chromium sends it; the HPACK encoder, which they do not give either, Chromium's"

const safari26Source = "not recorded here: built from public facts for Safari 26.4 on macOS 26.4 and iOS 26.4 (Safari 26 on an older macOS keeps Safari 18's hello, JA4 t13d2014h2_a09f3c656075_e42f34c56612, as a real Mac on Safari 26.0.1 showed tls.browserleaks.com in lexiforest/curl-impersonate#187: see safari18-macos). " +
	"TLS: every field (cipher and extension order, groups and key shares with X25519MLKEM768 first, signature algorithms, TLS 1.3 and 1.2 only, ALPN, zlib cert compression, no padding, the GREASE slots) " +
	"from the raw real-device ClientHellos in testssl/testssl.sh etc/client-simulation.wiresharked.txt (safari_264_osx_264, safari_iOS_264; commit 9fdf8028), kept in profile/testdata/safari26 and compared field by field by safari26_test.go; " +
	"their JA4 t13d2013h2_a09f3c656075_7f0f34a4126d as testssl.sh records it, and JA3 ecdf4f49dd59effc439639da29186671 as testssl.sh records it for iOS and as a real iPhone on 26.0.1 showed tls.browserleaks.com (lexiforest/curl-impersonate#186); " +
	"curl-impersonate's safari26_0 signatures (session_ticket, AES-128 first on iOS, padding) are from the beta and real devices contradict them (curl-impersonate#220, #221); " +
	"random, session id, key share and GREASE bytes are fixed dummies from profile/gen_hello.go. " +
	"HTTP/2: Akamai 2:0;3:100;4:2097152;9:1|10420225|0|m,s,a,p as real devices on 26.0.1 showed (akamai_hash c52879e43202aeb92740be6e8c86ea96, curl-impersonate#186 and #187), the same SETTINGS, WINDOW_UPDATE and pseudo-header order as Safari 18; HEADERS without priority. " +
	"Headers: Safari 18's navigation set and order; accept-encoding gains zstd, which Safari 26.3 offers on OS 26.3 and later (mdn/browser-compat-data#28949, from WebKit), appended last (the sources do not give its position); " +
	"user-agent Version/26.4 with the macOS token frozen at 10_15_7 and the iOS token frozen at 18_7, as real devices send (curl-impersonate#186). " +
	"As for Safari 18: the HTTP/1.1 set is derived (Host first, the h2 fields in canonical case, Connection: keep-alive last); the Cookie slot after accept-language; the HPACK encoder Chromium's"

const okhttpSource = "not recorded here: built from public facts for OkHttp 4.12 on Android 10-13 (Conscrypt). " +
	"TLS: bogdanfinn/tls-client profiles Okhttp4Android10..13 (ciphers, extension order, groups x25519,P-256,P-384, signature algorithms, TLS 1.3 and 1.2, BoringSSL padding); " +
	"random, session id and key share bytes are fixed dummies from profile/gen_hello.go. " +
	"HTTP/2 from square/okhttp's source: Http2Connection sends SETTINGS INITIAL_WINDOW_SIZE 16777216 and a connection WINDOW_UPDATE of 16777216-65535, starts client streams at 3, " +
	"Http2Writer sends HEADERS without priority; Http2ExchangeCodec orders :method,:path,:authority,:scheme and lower-cases and drops host and connection. " +
	"Headers from OkHttp's BridgeInterceptor: Host, Connection: Keep-Alive, Accept-Encoding: gzip, (Cookie,) User-Agent: okhttp/4.12.0; OkHttp has no request kinds, so every kind gets that set. " +
	"Checked: JA3 f79b6bad2ad0641e1921aef10262856b and Akamai 4:16777216|16711681|0|m,p,a,s as published for tls-client's okhttp4_android_13 at tls.peet.ws; " +
	"the published JA4 t13d1513h2_8daaf6152771_40271e0a5736 is tls.peet.ws's, which leaves padding out of the extension hash; with padding (FoxIO's rule, which guise follows) it is t13d1513h2_8daaf6152771_eca864cca44a; " +
	"the Cookie slot last, where guise has always sent it (BridgeInterceptor adds Cookie before User-Agent); the HPACK encoder, which the sources do not give, Chromium's"

// publicProfiles returns the profiles built from public facts.
func publicProfiles() []*profile.Profile {
	var out []*profile.Profile
	for _, v := range []safariFacts{
		{18, profile.MacOS, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Safari/605.1.15", &safariHello, safariSource, "gzip, deflate, br", true},
		{18, profile.IOS, "Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1", &safariHello, safariSource, "gzip, deflate, br", true},
		{26, profile.MacOS, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.4 Safari/605.1.15", &safari26Hello, safari26Source, "gzip, deflate, br, zstd", false},
		{26, profile.IOS, "Mozilla/5.0 (iPhone; CPU iPhone OS 18_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.4 Mobile/15E148 Safari/604.1", &safari26Hello, safari26Source, "gzip, deflate, br, zstd", false},
	} {
		out = append(out, safari(v))
	}
	return append(out, okhttp())
}

// safariFacts is what differs between the Safari profiles.
type safariFacts struct {
	version        int
	os             profile.OS
	ua             string
	hello          *helloSpec
	source         string
	acceptEncoding string
	// headerPriority sends the navigation HEADERS with a priority (weight
	// 256 on stream 0), as Safari 18 does; Safari 26 sends none.
	headerPriority bool
}

func safari(f safariFacts) *profile.Profile {
	p := &profile.Profile{Browser: profile.Safari, Version: f.version, OS: f.os, Source: f.source}
	p.Name = profile.CanonicalName(p.Browser, p.Version, p.OS)
	p.TLS.Hello = f.hello.build()
	p.HTTP2 = profile.HTTP2{
		Settings: []profile.Setting{
			{ID: profile.SettingEnablePush, Value: 0},
			{ID: profile.SettingMaxConcurrentStreams, Value: 100},
			{ID: profile.SettingInitialWindowSize, Value: 2097152},
			{ID: profile.SettingNoRFC7540Priorities, Value: 1},
		},
		ConnWindowUpdate: 10420225,
		FirstStreamID:    1,
		PseudoOrder:      []string{":method", ":scheme", ":authority", ":path"},
		HPACK:            chromiumHPACK, // not in the sources: guise's default encoder
	}
	if f.headerPriority {
		p.HTTP2.HeaderPriority = []profile.KindPriority{
			{Kind: profile.Navigate, Weight: 256, DependsOn: profile.Root},
		}
	}
	nav := fields.Header{
		{Name: "sec-fetch-dest", Value: "document"},
		{Name: "user-agent", Value: f.ua},
		{Name: "accept", Value: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
		{Name: "sec-fetch-site", Value: "none"},
		{Name: "sec-fetch-mode", Value: "navigate"},
		{Name: "accept-language", Value: "en-US,en;q=0.9"},
		{Name: "cookie"},
		{Name: "priority", Value: "u=0, i"},
		{Name: "accept-encoding", Value: f.acceptEncoding},
	}
	p.Headers = append(p.Headers, profile.HeaderSet{Kind: profile.Navigate, Proto: profile.H2, Header: nav, PerRequest: []string{"sec-fetch-site", "cookie"}})
	h1 := profile.HeaderSet{Kind: profile.Navigate, Proto: profile.HTTP1, Header: fields.Header{{Name: "Host"}}, PerRequest: []string{"Host", "Sec-Fetch-Site", "Cookie"}}
	for _, fl := range nav {
		if fl.Name == "priority" {
			continue
		}
		h1.Header = append(h1.Header, fields.Field{Name: canonicalCase(fl.Name), Value: fl.Value})
	}
	h1.Header = append(h1.Header, fields.Field{Name: "Connection", Value: "keep-alive"})
	p.Headers = append(p.Headers, h1)
	return p
}

func okhttp() *profile.Profile {
	p := &profile.Profile{Browser: profile.OkHttp, Version: 4, OS: profile.Android, Source: okhttpSource}
	p.Name = profile.CanonicalName(p.Browser, p.Version, p.OS)
	p.TLS.Hello = okhttpHello.build()
	p.HTTP2 = profile.HTTP2{
		Settings:         []profile.Setting{{ID: profile.SettingInitialWindowSize, Value: 16777216}},
		ConnWindowUpdate: 16777216 - 65535,
		FirstStreamID:    3,
		PseudoOrder:      []string{":method", ":path", ":authority", ":scheme"},
		HPACK:            chromiumHPACK, // not in the sources: guise's default encoder
	}
	const ua = "okhttp/4.12.0"
	for _, k := range []profile.RequestKind{profile.Navigate, profile.Fetch, profile.Subresource, profile.Image} {
		p.Headers = append(p.Headers,
			profile.HeaderSet{Kind: k, Proto: profile.H2, PerRequest: []string{"cookie"}, Header: fields.Header{
				{Name: "accept-encoding", Value: "gzip"},
				{Name: "user-agent", Value: ua},
				{Name: "cookie"},
			}},
			profile.HeaderSet{Kind: k, Proto: profile.HTTP1, PerRequest: []string{"Host", "Cookie"}, Header: fields.Header{
				{Name: "Host"},
				{Name: "Connection", Value: "Keep-Alive"},
				{Name: "Accept-Encoding", Value: "gzip"},
				{Name: "User-Agent", Value: ua},
				{Name: "Cookie"},
			}},
		)
	}
	return p
}

// canonicalCase returns an HTTP/1.1 field name in the usual case
// ("sec-fetch-dest" → "Sec-Fetch-Dest").
func canonicalCase(name string) string {
	b := []byte(name)
	up := true
	for i, c := range b {
		if up && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		up = c == '-'
	}
	return string(b)
}
