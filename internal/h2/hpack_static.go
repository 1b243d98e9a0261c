package h2

// staticTable is the HPACK static table (RFC 7541 Appendix A); entry i is
// index i+1.
var staticTable = [61][2]string{
	{":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"},
	{":path", "/index.html"}, {":scheme", "http"}, {":scheme", "https"},
	{":status", "200"}, {":status", "204"}, {":status", "206"}, {":status", "304"},
	{":status", "400"}, {":status", "404"}, {":status", "500"},
	{"accept-charset", ""}, {"accept-encoding", "gzip, deflate"}, {"accept-language", ""},
	{"accept-ranges", ""}, {"accept", ""}, {"access-control-allow-origin", ""}, {"age", ""},
	{"allow", ""}, {"authorization", ""}, {"cache-control", ""}, {"content-disposition", ""},
	{"content-encoding", ""}, {"content-language", ""}, {"content-length", ""},
	{"content-location", ""}, {"content-range", ""}, {"content-type", ""}, {"cookie", ""},
	{"date", ""}, {"etag", ""}, {"expect", ""}, {"expires", ""}, {"from", ""}, {"host", ""},
	{"if-match", ""}, {"if-modified-since", ""}, {"if-none-match", ""}, {"if-range", ""},
	{"if-unmodified-since", ""}, {"last-modified", ""}, {"link", ""}, {"location", ""},
	{"max-forwards", ""}, {"proxy-authenticate", ""}, {"proxy-authorization", ""},
	{"range", ""}, {"referer", ""}, {"refresh", ""}, {"retry-after", ""}, {"server", ""},
	{"set-cookie", ""}, {"strict-transport-security", ""}, {"transfer-encoding", ""},
	{"user-agent", ""}, {"vary", ""}, {"via", ""}, {"www-authenticate", ""},
}

// staticName maps a name to its lowest and highest static index.
var staticName = func() map[string][2]uint8 {
	m := make(map[string][2]uint8, len(staticTable))
	for i, e := range staticTable {
		r, ok := m[e[0]]
		if !ok {
			r[0] = uint8(i + 1)
		}
		r[1] = uint8(i + 1)
		m[e[0]] = r
	}
	return m
}()
