package harness

import (
	"strings"

	"github.com/guise-http/guise/profile"
)

// BrowserHeader returns the header fields guise sends for a top-level
// navigation over HTTP/1.1 with its default profile, in order, without Host
// and without the per-request fields it leaves out when there is nothing to
// send (Cookie, Referer). Given as Config.Header, it makes the other clients
// send the same head as guise.
func BrowserHeader() ([]Field, error) { return BrowserHeaderFor(profile.HTTP1) }

// BrowserHeaderFor is BrowserHeader for proto: over h2 the profile's h2
// navigation fields (lower case, no Connection, with priority).
func BrowserHeaderFor(proto profile.Proto) ([]Field, error) {
	p, err := profile.Lookup(profile.Default)
	if err != nil {
		return nil, err
	}
	hs := p.HeaderSet(profile.Navigate, proto)
	var out []Field
	for _, f := range hs.Header {
		if f.Value == "" || strings.EqualFold(f.Name, "host") || perRequest(hs.PerRequest, f.Name) && !strings.EqualFold(f.Name, "sec-fetch-site") {
			continue
		}
		out = append(out, Field{f.Name, f.Value})
	}
	return out, nil
}

func perRequest(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
