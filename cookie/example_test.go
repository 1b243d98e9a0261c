package cookie_test

import (
	"fmt"
	"net/url"
	"os"

	"github.com/guise-http/guise/cookie"
)

func Example() {
	jar := cookie.New(nil)
	u, _ := url.Parse("https://www.example.com/account/login")
	jar.SetCookies(u, []string{
		"sid=abc123; Path=/; Secure; HttpOnly; SameSite=Lax",
		"theme=dark; Domain=example.com; Path=/",
		"csrf=t0k3n; Path=/account; SameSite=Strict",
		"tracker=1; Domain=com", // a public suffix: rejected
	})

	next, _ := url.Parse("https://www.example.com/account/settings")
	fmt.Printf("same-site:  %s\n", jar.AppendCookieHeader(nil, next, cookie.SameSiteRequest))
	fmt.Printf("navigation: %s\n", jar.AppendCookieHeader(nil, next, cookie.CrossSiteNavigation))
	fmt.Printf("cross-site: %q\n", jar.AppendCookieHeader(nil, next, cookie.CrossSite))

	err := jar.SetCookie(u, "__Host-id=1; Domain=example.com; Secure; Path=/")
	fmt.Println(err)
	// Output:
	// same-site:  csrf=t0k3n; sid=abc123; theme=dark
	// navigation: sid=abc123; theme=dark
	// cross-site: ""
	// cookie: __Secure- or __Host- prefix requirements not met
}

func ExampleJar_WriteNetscape() {
	jar := cookie.New(nil)
	u, _ := url.Parse("https://www.example.com/")
	jar.SetCookies(u, []string{"a=1; Domain=example.com; HttpOnly", "b=2; Secure"})
	jar.WriteNetscape(os.Stdout)
	// Output:
	// # Netscape HTTP Cookie File
	// # Written by guise; one cookie per line, TAB-separated.
	//
	// #HttpOnly_.example.com	TRUE	/	FALSE	0	a	1
	// www.example.com	FALSE	/	TRUE	0	b	2
}
