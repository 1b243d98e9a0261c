package tlsfp_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/guise-http/guise/internal/tlsfp"
	"github.com/guise-http/guise/profile"
)

// A Session-scoped handshake: verification against the embedded Mozilla
// roots, tickets kept in the session's cache.
func ExampleHandshake() {
	p, err := profile.Lookup("chrome")
	if err != nil {
		panic(err)
	}
	sessions := tlsfp.NewSessionCache() // one per isolation scope
	cfg := &tlsfp.Config{Profile: p, Sessions: sessions}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", "example.com:443")
	if err != nil {
		fmt.Println(err)
		return
	}
	conn, st, err := tlsfp.Handshake(ctx, nc, "example.com", cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	fmt.Println(st.ALPN, st.Resumed)
}
