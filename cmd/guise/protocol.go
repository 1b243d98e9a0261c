package main

import (
	"github.com/spf13/cobra"

	"github.com/guise-http/guise"
)

// protocolFlags are the curl-like flags that choose the HTTP versions:
// --http1.1, --http2 (never HTTP/3) and --http3 (HTTP/3 only, as curl's
// --http3-only); with none, as the browser does.
type protocolFlags struct {
	http1, http2, http3 bool
}

// register adds the flags to cmd, which refuses both at once.
func (p *protocolFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&p.http1, "http1.1", false, "use HTTP/1.1 only: the TLS hello offers only http/1.1, as the browser's with HTTP/2 disabled")
	fl.BoolVar(&p.http2, "http2", false, "use HTTP/2 where the server offers it, else HTTP/1.1, never HTTP/3")
	fl.BoolVar(&p.http3, "http3", false, "use HTTP/3 only, with no fallback (curl's --http3-only); not through a proxy")
	cmd.MarkFlagsMutuallyExclusive("http1.1", "http2", "http3")
}

// protocol is the Session's Protocol the flags ask for.
func (p *protocolFlags) protocol() guise.Protocol {
	switch {
	case p.http1:
		return guise.HTTP1
	case p.http2:
		return guise.HTTP2
	case p.http3:
		return guise.HTTP3
	}
	return guise.AnyProtocol
}
