package proxy_test

import (
	"fmt"
	"net/url"

	"github.com/guise-http/guise/internal/proxy"
)

func ExampleForURL() {
	env := map[string]string{
		"HTTPS_PROXY": "socks5h://127.0.0.1:1080",
		"NO_PROXY":    ".internal.example,10.0.0.0/8",
	}
	for _, target := range []string{"https://www.example.com/", "https://db.internal.example/", "https://10.1.2.3/"} {
		u, _ := url.Parse(target)
		p, err := proxy.ForURL(u, func(name string) string { return env[name] })
		fmt.Println(target, "->", p, err)
	}
	// Output:
	// https://www.example.com/ -> socks5h://127.0.0.1:1080 <nil>
	// https://db.internal.example/ -> <nil> <nil>
	// https://10.1.2.3/ -> <nil> <nil>
}

func ExampleKey() {
	a, _ := url.Parse("http://alice:one@proxy.example:3128")
	b, _ := url.Parse("http://alice:two@proxy.example:3128")
	c, _ := url.Parse("HTTP://alice:one@PROXY.example:3128/")
	fmt.Println(proxy.Key(a) == proxy.Key(b), proxy.Key(a) == proxy.Key(c))
	// Output: false true
}
