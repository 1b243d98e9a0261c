package fingerprint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/guise-http/guise/fields"
)

// The JA4H vector of the reference Rust implementation
// (github.com/FoxIO-LLC/ja4, rust/ja4/src/http.rs, test_http_stats_into_out):
// an HTTP/1.1 GET to www.cnn.com with a Cookie and a Referer, the field
// list as given there (Sec-Fetch-Mode and Sec-Fetch-Dest twice).
const foxioJA4HHead = "GET / HTTP/1.1\r\n" +
	"Host: www.cnn.com\r\n" +
	"Cookie: FastAB=0=6859,1=8174,2=4183,3=3319,4=3917,5=2557,6=4259,7=6070,8=0804,9=6453,10=1942,11=4435,12=4143,13=9445,14=6957,15=8682,16=1885,17=1825,18=3760,19=0929; sato=1; countryCode=US; stateCode=VA; geoData=purcellville|VA|20132|US|NA|-400|broadband|39.160|-77.700|511; usprivacy=1---; umto=1; _dd_s=logs=1&id=b5c2d770-eaba-4847-8202-390c4552ff9a&created=1686159462724&expire=1686160422726\r\n" +
	"Sec-Ch-Ua: \r\n" +
	"Sec-Ch-Ua-Mobile: ?0\r\n" +
	"User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.5735.110 Safari/537.36\r\n" +
	"Sec-Ch-Ua-Platform: \"\"\r\n" +
	"Accept: */*\r\n" +
	"Sec-Fetch-Site: same-origin\r\n" +
	"Sec-Fetch-Mode: cors\r\n" +
	"Sec-Fetch-Dest: empty\r\n" +
	"Sec-Fetch-Mode: cors\r\n" +
	"Sec-Fetch-Dest: empty\r\n" +
	"Referer: https://www.cnn.com/\r\n" +
	"Accept-Encoding: gzip, deflate\r\n" +
	"Accept-Language: en-US,en;q=0.9\r\n" +
	"\r\n"

func TestJA4HFoxIOVector(t *testing.T) {
	r, err := ParseHTTP1Request([]byte(foxioJA4HHead))
	if err != nil {
		t.Fatal(err)
	}
	const headers = "Host,Sec-Ch-Ua,Sec-Ch-Ua-Mobile,User-Agent,Sec-Ch-Ua-Platform,Accept,Sec-Fetch-Site,Sec-Fetch-Mode,Sec-Fetch-Dest,Sec-Fetch-Mode,Sec-Fetch-Dest,Accept-Encoding,Accept-Language"
	const sortedCookies = "FastAB,_dd_s,countryCode,geoData,sato,stateCode,umto,usprivacy_FastAB=0=6859,1=8174,2=4183,3=3319,4=3917,5=2557,6=4259,7=6070,8=0804,9=6453,10=1942,11=4435,12=4143,13=9445,14=6957,15=8682,16=1885,17=1825,18=3760,19=0929,_dd_s=logs=1&id=b5c2d770-eaba-4847-8202-390c4552ff9a&created=1686159462724&expire=1686160422726,countryCode=US,geoData=purcellville|VA|20132|US|NA|-400|broadband|39.160|-77.700|511,sato=1,stateCode=VA,umto=1,usprivacy=1---"
	const wireCookies = "FastAB,sato,countryCode,stateCode,geoData,usprivacy,umto,_dd_s_FastAB=0=6859,1=8174,2=4183,3=3319,4=3917,5=2557,6=4259,7=6070,8=0804,9=6453,10=1942,11=4435,12=4143,13=9445,14=6957,15=8682,16=1885,17=1825,18=3760,19=0929,sato=1,countryCode=US,stateCode=VA,geoData=purcellville|VA|20132|US|NA|-400|broadband|39.160|-77.700|511,usprivacy=1---,umto=1,_dd_s=logs=1&id=b5c2d770-eaba-4847-8202-390c4552ff9a&created=1686159462724&expire=1686160422726"
	for _, c := range []struct{ name, got, want string }{
		{"ja4h", r.JA4H(), "ge11cr13enus_88d2d584d47f_0f2659b474bf_161698816dab"},
		{"ja4h_r", r.JA4HR(), "ge11cr13enus_" + headers + "_" + sortedCookies},
		{"ja4h_o", r.JA4HO(), "ge11cr13enus_88d2d584d47f_457935509480_ff4b0b83634b"},
		{"ja4h_ro", r.JA4HRO(), "ge11cr13enus_" + headers + "_" + wireCookies},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.got, c.want)
		}
	}
}

func TestJA4HRules(t *testing.T) {
	h := func(kv ...string) []fields.Field {
		var out []fields.Field
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, fields.Field{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, c := range []struct {
		name string
		req  HTTPRequest
		want string // prefix of the JA4H (or all of it)
	}{
		// Issue FoxIO-LLC/ja4#123: no cookie gives zero hashes, not sha256("").
		{"no cookie", HTTPRequest{Method: "POST", Proto: "HTTP/1.0", Header: h("Host", "a", "Accept", "*/*")},
			"po10nn020000_" + hash12([]byte("Host,Accept")) + "_000000000000_000000000000"},
		{"no fields", HTTPRequest{Method: "GET", Proto: "HTTP/1.1"}, "ge11nn000000_000000000000_000000000000_000000000000"},
		// Issue FoxIO-LLC/ja4#42: Cookie and Referer match case-insensitively, other names keep case.
		{"case", HTTPRequest{Method: "get", Proto: "HTTP/2", Header: h("cookie", "b=2; a=1", "REFERER", "x", "User-Agent", "u")},
			"ge20cr010000_" + hash12([]byte("User-Agent")) + "_" + hash12([]byte("a,b")) + "_" + hash12([]byte("a=1,b=2"))},
		// HTTP/2 sends cookie crumbs as separate fields; every one counts.
		{"split cookies", HTTPRequest{Method: "GET", Proto: "HTTP/2", Header: h("cookie", "z=1", "accept", "*/*", "cookie", "y=2")},
			"ge20cn01" + "0000_" + hash12([]byte("accept")) + "_" + hash12([]byte("y,z")) + "_" + hash12([]byte("y=2,z=1"))},
		// Issue FoxIO-LLC/ja4#58: sort by cookie name, not by "name=value".
		{"sort by name", HTTPRequest{Method: "GET", Proto: "HTTP/1.1", Header: h("Cookie", "v-hash=1; v=2")},
			"ge11cn000000_000000000000_" + hash12([]byte("v,v-hash")) + "_" + hash12([]byte("v=2,v-hash=1"))},
		// Issue FoxIO-LLC/ja4#134: "x=y=z" is cookie "x".
		{"value with =", HTTPRequest{Method: "GET", Proto: "HTTP/1.1", Header: h("Cookie", "k=a=b")},
			"ge11cn000000_000000000000_" + hash12([]byte("k")) + "_" + hash12([]byte("k=a=b"))},
		{"lang short", HTTPRequest{Method: "GET", Proto: "HTTP/1.1", Header: h("Accept-Language", "da")}, "ge11nn01da00_"},
		{"lang q", HTTPRequest{Method: "GET", Proto: "HTTP/1.1", Header: h("Accept-Language", "en;q=0.9")}, "ge11nn01en00_"},
		{"lang long", HTTPRequest{Method: "GET", Proto: "HTTP/1.1", Header: h("accept-language", "zh-Hant-TW,zh")}, "ge11nn01zhha_"},
		{"lang first only", HTTPRequest{Method: "GET", Proto: "HTTP/1.1", Header: h("Accept-Language", "fr-CH, fr;q=0.9")}, "ge11nn01frch_"},
		{"lang empty", HTTPRequest{Method: "GET", Proto: "HTTP/1.1", Header: h("Accept-Language", "")}, "ge11nn010000_"},
		{"method short", HTTPRequest{Method: "X", Proto: "HTTP/3"}, "x030nn000000_"},
		{"unknown proto", HTTPRequest{Method: "OPTIONS", Proto: "SPDY/3"}, "op00nn000000_"},
	} {
		got := c.req.JA4H()
		if !strings.HasPrefix(got, c.want) || len(got) != 51 {
			t.Errorf("%s: got %s, want %s...", c.name, got, c.want)
		}
	}
	many := HTTPRequest{Method: "GET", Proto: "HTTP/1.1"}
	for range 120 {
		many.Header = append(many.Header, fields.Field{Name: "X-A", Value: "1"})
	}
	if got := many.JA4H(); got[6:8] != "99" {
		t.Errorf("120 fields: count %s, want 99", got[6:8])
	}
}

// JA4H of the recorded browser requests: pseudo-headers are left out
// (FoxIO-LLC/ja4#306), and the first section follows from the recording.
func TestRecordingsJA4H(t *testing.T) {
	for _, r := range loadRecordings(t) {
		h, err := ParseHTTP2(r.stream)
		if err != nil {
			t.Fatal(err)
		}
		for i, req := range h.Requests {
			hr := req.HTTPRequest()
			want := r.rec.HTTP2.Requests[i]
			lang, ref, cookie := "0000", "n", "n"
			var names []string
			for _, f := range want.Headers {
				switch {
				case strings.HasPrefix(f.Name, ":"):
				case f.Name == "referer":
					ref = "r"
				case f.Name == "cookie":
					cookie = "c"
				default:
					names = append(names, f.Name)
				}
				if f.Name == "accept-language" {
					lang = strings.ReplaceAll(strings.Split(f.Value, ",")[0], "-", "")
					lang = strings.ToLower(lang + "0000")[:4]
				}
			}
			if cookie != "n" {
				t.Fatalf("%s: recordings carry no cookies", r.name)
			}
			a := "ge20" + cookie + ref + twoDigits(len(names)) + lang
			if i > 0 && ref != "r" {
				t.Errorf("%s request %d: sub-resource without referer", r.name, i)
			}
			if got, wantS := hr.JA4H(), a+"_"+hash12([]byte(strings.Join(names, ",")))+"_000000000000_000000000000"; got != wantS {
				t.Errorf("%s request %d: got %s, want %s", r.name, i, got, wantS)
			}
		}
	}
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

func ExampleParseHTTP1Request() {
	r, err := ParseHTTP1Request([]byte("GET / HTTP/1.1\r\nHost: example.com\r\nAccept-Language: de-CH\r\nCookie: b=2; a=1\r\n\r\n"))
	if err != nil {
		panic(err)
	}
	fmt.Println(r.JA4HR())
	fmt.Println(r.JA4H())
	// Output:
	// ge11cn02dech_Host,Accept-Language_a,b_a=1,b=2
	// ge11cn02dech_09e340ee0db0_1eb7c54d5283_06beefe2b477
}
