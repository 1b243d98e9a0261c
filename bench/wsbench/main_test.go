package wsbench

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

// serverEnv makes the test binary the benchmarks' echo server: it prints
// its URL and serves until its stdin closes (see peer.Spawn).
const serverEnv = "GUISE_WSBENCH_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		os.Exit(serve())
	}
	goleak.VerifyTestMain(m)
}

// serve runs a coder/websocket echo server without compression on
// loopback, the one peer every client of the benchmarks talks to.
func serve() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv := &http.Server{Handler: http.HandlerFunc(echo)}
	go srv.Serve(ln)
	fmt.Println("http://" + ln.Addr().String())
	io.Copy(io.Discard, os.Stdin)
	srv.Close()
	return 0
}

func echo(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled, InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	for {
		typ, p, err := c.Read(r.Context())
		if err != nil {
			return
		}
		if c.Write(r.Context(), typ, p) != nil {
			return
		}
	}
}
