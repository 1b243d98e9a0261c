// Command benchserver is the peer of guise's benchmarks: a fasthttp server on
// 127.0.0.1 that prints its address ("http://127.0.0.1:PORT") on stdout and
// serves until its stdin is closed.
//
// Endpoints: /small (100 bytes, Content-Length), /chunked4k (4 KiB chunked),
// /1m (1 MiB, Content-Length), /chunked8m (8 MiB chunked, streamed in 32 KiB
// chunks), /smallchunked (64 bytes chunked), /upload (reads and discards the
// request body, answers its length), /stats (TCP connections accepted so
// far; /stats?reset=1 answers the count and resets it to zero).
//
// With -tls it also serves the same endpoints over HTTPS with a new
// self-signed certificate (written as PEM to -ca FILE) and prints a second
// line "https://127.0.0.1:PORT".
package main

import (
	"fmt"
	"os"

	"github.com/guise-http/guise/bench/internal/peer"
)

func main() {
	if err := peer.Run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(1)
	}
}
