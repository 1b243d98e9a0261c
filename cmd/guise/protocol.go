package main

import (
	"github.com/spf13/cobra"

	"github.com/guise-http/guise"
)

// protocolFlags are the curl-like flags that choose the HTTP versions:
// --http1.1 and --http2 (the default, as in the browser).
type protocolFlags struct {
	http1, http2 bool
}

// register adds the flags to cmd, which refuses both at once.
func (p *protocolFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&p.http1, "http1.1", false, "use HTTP/1.1 only: the TLS hello offers only http/1.1, as the browser's with HTTP/2 disabled")
	fl.BoolVar(&p.http2, "http2", false, "use HTTP/2 where the server offers it, else HTTP/1.1 (the default)")
	cmd.MarkFlagsMutuallyExclusive("http1.1", "http2")
}

// protocol is the Session's Protocol the flags ask for.
func (p *protocolFlags) protocol() guise.Protocol {
	switch {
	case p.http1:
		return guise.HTTP1
	case p.http2:
		return guise.HTTP2
	}
	return guise.AnyProtocol
}
