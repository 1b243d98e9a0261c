package peer

import (
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// Run is the benchmark server's main: it parses args, listens on
// 127.0.0.1 (plain HTTP, and with -tls also HTTPS with a self-signed
// certificate), prints "http://ADDR" (and "https://ADDR") lines on stdout and
// serves until stdin reaches EOF, so that the server ends with the process
// that started it.
func Run(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("benchserver", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "plain HTTP listen address")
	withTLS := fs.Bool("tls", false, "also listen for HTTPS with a self-signed certificate")
	tlsAddr := fs.String("tls-addr", "127.0.0.1:0", "HTTPS listen address (with -tls)")
	caFile := fs.String("ca", "", "write the self-signed certificate (PEM) to this file (with -tls)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s := New()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- s.Serve(ln, nil) }()
	fmt.Fprintf(stdout, "http://%s\n", ln.Addr())
	if *withTLS {
		cfg, _, err := SelfSigned()
		if err != nil {
			return err
		}
		if *caFile != "" {
			b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cfg.Certificates[0].Certificate[0]})
			if err := os.WriteFile(*caFile, b, 0o644); err != nil {
				return err
			}
		}
		tln, err := net.Listen("tcp", *tlsAddr)
		if err != nil {
			return err
		}
		go func() { errc <- s.Serve(tln, cfg) }()
		fmt.Fprintf(stdout, "https://%s\n", tln.Addr())
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		errc <- nil
	}()
	err = <-errc
	_ = s.Shutdown(2 * time.Second)
	return err
}
