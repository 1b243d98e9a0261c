package h2

import (
	"github.com/guise-http/guise/fields"
)

// chromeConfig and firefoxConfig are the fingerprints recorded in
// fingerprint/testdata/recordings/chromium-156 and firefox-esr-153.
func chromeConfig() *Config {
	return &Config{
		Settings: []Setting{
			{ID: SettingHeaderTableSize, Val: 65536}, {ID: SettingEnablePush, Val: 0},
			{ID: SettingInitialWindowSize, Val: 6291456}, {ID: SettingMaxHeaderListSize, Val: 262144},
		},
		ConnWindowUpdate: 15663105,
		FirstStreamID:    1,
		PseudoOrder:      []string{":method", ":authority", ":scheme", ":path"},
		HPACK:            ChromiumHPACK(),
	}
}

func firefoxConfig() *Config {
	return &Config{
		Settings: []Setting{
			{ID: SettingHeaderTableSize, Val: 65536}, {ID: SettingEnablePush, Val: 0},
			{ID: SettingInitialWindowSize, Val: 131072}, {ID: SettingMaxFrameSize, Val: 16384},
		},
		ConnWindowUpdate:   12517377,
		FirstStreamID:      3,
		StreamWindowUpdate: 12451840,
		PseudoOrder:        []string{":method", ":path", ":authority", ":scheme"},
		HPACK:              FirefoxHPACK(),
	}
}

var chromeNav = fields.Header{
	{Name: "sec-ch-ua", Value: `"Not:A-Brand";v="8", "Chromium";v="156"`},
	{Name: "sec-ch-ua-mobile", Value: "?0"},
	{Name: "sec-ch-ua-platform", Value: `"Linux"`},
	{Name: "upgrade-insecure-requests", Value: "1"},
	{Name: "user-agent", Value: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36"},
	{Name: "accept", Value: "text/html,application/xhtml+xml,application/xml;q=0.9,image/jxl,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"},
	{Name: "sec-fetch-site", Value: "none"},
	{Name: "sec-fetch-mode", Value: "navigate"},
	{Name: "sec-fetch-user", Value: "?1"},
	{Name: "sec-fetch-dest", Value: "document"},
	{Name: "accept-encoding", Value: "gzip, deflate, br, zstd"},
	{Name: "accept-language", Value: "en-US,en;q=0.9"},
	{Name: "priority", Value: "u=0, i"},
}

var firefoxNav = fields.Header{
	{Name: "user-agent", Value: "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0"},
	{Name: "accept", Value: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"},
	{Name: "accept-language", Value: "en-US,en;q=0.9"},
	{Name: "accept-encoding", Value: "gzip, deflate, br, zstd"},
	{Name: "upgrade-insecure-requests", Value: "1"},
	{Name: "sec-fetch-dest", Value: "document"},
	{Name: "sec-fetch-mode", Value: "navigate"},
	{Name: "sec-fetch-site", Value: "none"},
	{Name: "priority", Value: "u=0, i"},
	{Name: "te", Value: "trailers"},
}
