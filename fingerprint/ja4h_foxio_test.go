package fingerprint

import (
	"strings"
	"testing"

	"github.com/guise-http/guise/fields"
)

// JA4H vectors published with FoxIO's Wireshark plugin tests
// (github.com/FoxIO-LLC/ja4, wireshark/test/testdata/*.pcapng.json, from
// pcap/http1-with-cookies.pcapng and pcap/http2-with-cookies.pcapng): the
// field names in wire order and the cookies in wire order are read off the
// published ja4h_ro strings; field values other than Accept-Language do not
// enter JA4H and are placeholders. The expected ja4h covers the sorted
// cookie names and cookies through its hashes.
var foxioJA4HVectors = []struct {
	name    string
	method  string
	proto   string
	headers string // non-cookie, non-referer names, wire order
	lang    string
	referer bool
	cookies string // "name=value" in wire order, joined by ','
	want    string
	wantR   string // ja4h_r when short enough to keep here
}{
	{
		name: "http1-with-cookies frame 5", method: "GET", proto: "HTTP/1.1",
		headers: "Host,User-Agent,Accept,Accept-Language", lang: "da", referer: true,
		cookies: "yummy_cookie=choco,tasty_cookie=strawberry",
		want:    "ge11cr04da00_8ddaef5d77af_280f366eaa04_c2fb0fe53442",
		wantR:   "ge11cr04da00_Host,User-Agent,Accept,Accept-Language_tasty_cookie,yummy_cookie_tasty_cookie=strawberry,yummy_cookie=choco",
	},
	{
		name: "http2-with-cookies frame 15", method: "GET", proto: "HTTP/2",
		headers: "sec-ch-ua,sec-ch-ua-mobile,sec-ch-ua-platform,upgrade-insecure-requests,user-agent,accept,sec-ch-ua-arch,sec-ch-ua-platform-version,sec-ch-ua-model,sec-ch-ua-bitness,sec-ch-ua-wow64,sec-ch-ua-full-version-list,x-client-data,sec-fetch-site,sec-fetch-mode,sec-fetch-user,sec-fetch-dest,accept-encoding,accept-language",
		lang:    "en-US,en;q=0.9",
		cookies: "VISITOR_INFO1_LIVE=5CuVaSL9wDE,LOGIN_INFO=AFmmF2swRgIhAOltLQJUxXKDwpOeYd1REmFWIv-SZOX5_Mt3l8dB8TUyAiEAq9Hxidx9TIYr9Usi0QvZwoAY7hWdD0TrwUBJ-vDNhFw:QUQ3MjNmeHlXOVFoOGc1bWNjT2VKNnZPVlJzVktiM3pXc2ExNENfTkFqZzh6SEFIODBCWUo2d0hZU1preThtcjVjNW1oV1NXX2dXbV9laUsxN2gxNlRMZGM4QlVEMkJNVFR3UWpfbWtoSTdXSlVYUnRIekJiVmxXT0NLMklXRmxDSEZ1M2xDYkZjYld5NTg2azdMOTRuSFg0SEQ1NmhCcXJR,SID=bAiSGpEASIdYDutJlWaOLSpT-A0OtSymfAqQHglc8wCyKvJK3oyvm4YN6azbdj99oAEv6g.,__Secure-1PSIDTS=sidts-CjEB3e41hfRDIv3qE6IhIGL4regkBrZQzMepIsMI60XzPXMHjuDBFb8Jzi6e3Q_XguntEAA,__Secure-3PSIDTS=sidts-CjEB3e41hfRDIv3qE6IhIGL4regkBrZQzMepIsMI60XzPXMHjuDBFb8Jzi6e3Q_XguntEAA,__Secure-1PSID=bAiSGpEASIdYDutJlWaOLSpT-A0OtSymfAqQHglc8wCyKvJK3ZH4QQAFpOKIred2Wu8QgA.,__Secure-3PSID=bAiSGpEASIdYDutJlWaOLSpT-A0OtSymfAqQHglc8wCyKvJK9erTPZ3XpDCPS4p8f5PnjQ.,HSID=AOF5tyazl7ZAKFyZY,SSID=AqFHwVpJHIK9H1lfZ,APISID=pEXHoyISD5STpHG9/AajENhWjLXnfNmbhI,SAPISID=_4e9wsQoZw81B655/A2zwmxsRQhzaXtNW0,__Secure-1PAPISID=_4e9wsQoZw81B655/A2zwmxsRQhzaXtNW0,__Secure-3PAPISID=_4e9wsQoZw81B655/A2zwmxsRQhzaXtNW0,__Secure-3PSIDCC=APoG2W80ReNqY71qp2I8hZk8BsmVmWk_ejh3LtS-HuboNyHI73aZAnaQhqTWkTHUiz45rCPv",
		want:    "ge20cn19enus_cb83bf27b7a9_c7713052b7e4_348cad68b6fb",
	},
	{
		name: "http2-with-cookies frame 37", method: "GET", proto: "HTTP/2",
		headers: "sec-ch-ua,sec-ch-ua-mobile,user-agent,sec-ch-ua-arch,sec-ch-ua-full-version,sec-ch-ua-platform-version,sec-ch-ua-full-version-list,sec-ch-ua-bitness,sec-ch-ua-model,sec-ch-ua-wow64,sec-ch-ua-platform,accept,x-client-data,sec-fetch-site,sec-fetch-mode,sec-fetch-dest,accept-encoding,accept-language",
		lang:    "en-US,en;q=0.9", referer: true,
		cookies: "VISITOR_INFO1_LIVE=5CuVaSL9wDE,LOGIN_INFO=AFmmF2swRgIhAOltLQJUxXKDwpOeYd1REmFWIv-SZOX5_Mt3l8dB8TUyAiEAq9Hxidx9TIYr9Usi0QvZwoAY7hWdD0TrwUBJ-vDNhFw:QUQ3MjNmeHlXOVFoOGc1bWNjT2VKNnZPVlJzVktiM3pXc2ExNENfTkFqZzh6SEFIODBCWUo2d0hZU1preThtcjVjNW1oV1NXX2dXbV9laUsxN2gxNlRMZGM4QlVEMkJNVFR3UWpfbWtoSTdXSlVYUnRIekJiVmxXT0NLMklXRmxDSEZ1M2xDYkZjYld5NTg2azdMOTRuSFg0SEQ1NmhCcXJR,SID=bAiSGpEASIdYDutJlWaOLSpT-A0OtSymfAqQHglc8wCyKvJK3oyvm4YN6azbdj99oAEv6g.,__Secure-1PSIDTS=sidts-CjEB3e41hfRDIv3qE6IhIGL4regkBrZQzMepIsMI60XzPXMHjuDBFb8Jzi6e3Q_XguntEAA,__Secure-3PSIDTS=sidts-CjEB3e41hfRDIv3qE6IhIGL4regkBrZQzMepIsMI60XzPXMHjuDBFb8Jzi6e3Q_XguntEAA,__Secure-1PSID=bAiSGpEASIdYDutJlWaOLSpT-A0OtSymfAqQHglc8wCyKvJK3ZH4QQAFpOKIred2Wu8QgA.,__Secure-3PSID=bAiSGpEASIdYDutJlWaOLSpT-A0OtSymfAqQHglc8wCyKvJK9erTPZ3XpDCPS4p8f5PnjQ.,HSID=AOF5tyazl7ZAKFyZY,SSID=AqFHwVpJHIK9H1lfZ,APISID=pEXHoyISD5STpHG9/AajENhWjLXnfNmbhI,SAPISID=_4e9wsQoZw81B655/A2zwmxsRQhzaXtNW0,__Secure-1PAPISID=_4e9wsQoZw81B655/A2zwmxsRQhzaXtNW0,__Secure-3PAPISID=_4e9wsQoZw81B655/A2zwmxsRQhzaXtNW0,YSC=fmJvKZ98ZzM,VISITOR_PRIVACY_METADATA=CgJDQRICGgA%3D,SIDCC=APoG2W_-Qsh5iRlLVDzN2OkIW0cAz_0yN7-rr-KCkBL1IXxKRG0CdQP6-ZkTxzy7D4H-DselDw,__Secure-1PSIDCC=APoG2W-ysomredm6Llr5hD-_lAbJvmQ7uTdjhZQS5pPUXf4Avu9tKLhKjZXAlGhtseKPB6dC,__Secure-3PSIDCC=APoG2W-TOlRHTYrgLGQiaBdvBhHjJ9JVpf6IZAguDfwj958a7ObWfITcu9ql2EdL0cxQ_e33",
		want:    "ge20cr18enus_40430d236f7c_10ff48fdaa11_ac323afc21f7",
	},
}

func TestJA4HFoxIOWireshark(t *testing.T) {
	for _, v := range foxioJA4HVectors {
		// HTTP/1.1 sends one Cookie field; HTTP/2 (Chrome) one field per
		// cookie, placed before the other fields here. Both must give the
		// same JA4H.
		r := &HTTPRequest{Method: v.method, Proto: v.proto}
		crumbs := strings.Split(v.cookies, ",")
		if v.proto == "HTTP/2" {
			for _, c := range crumbs {
				r.Header = append(r.Header, fields.Field{Name: "cookie", Value: c})
			}
		} else {
			r.Header = append(r.Header, fields.Field{Name: "Cookie", Value: strings.Join(crumbs, "; ")})
		}
		for _, name := range strings.Split(v.headers, ",") {
			value := "x"
			if strings.EqualFold(name, "accept-language") {
				value = v.lang
			}
			r.Header = append(r.Header, fields.Field{Name: name, Value: value})
		}
		if v.referer {
			r.Header = append(r.Header, fields.Field{Name: "Referer", Value: "https://example.com/"})
		}
		if got := r.JA4H(); got != v.want {
			t.Errorf("%s:\n got %s\nwant %s", v.name, got, v.want)
		}
		if v.wantR != "" && r.JA4HR() != v.wantR {
			t.Errorf("%s ja4h_r:\n got %s\nwant %s", v.name, r.JA4HR(), v.wantR)
		}
		// ja4h_ro keeps the cookies in wire order.
		if got, want := r.JA4HRO(), v.want[:12]+"_"+v.headers+"_"+cookieNames(crumbs)+"_"+v.cookies; got != want {
			t.Errorf("%s ja4h_ro:\n got %s\nwant %s", v.name, got, want)
		}
	}
}

func cookieNames(crumbs []string) string {
	names := make([]string, len(crumbs))
	for i, c := range crumbs {
		names[i], _, _ = strings.Cut(c, "=")
	}
	return strings.Join(names, ",")
}
