// Package wsbench compares guise's WebSocket client with coder/websocket's
// and gorilla/websocket's (both over net/http's dialer): an echo of 1 KiB
// text messages on one connection, against one loopback echo server of
// coder/websocket without compression, so the three clients talk to the same peer.
//
//	go test -run XXX -bench . -benchtime 10000x -count 5 ./wsbench
package wsbench

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	gorilla "github.com/gorilla/websocket"
	"github.com/guise-http/guise"
)

func echoServer(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	}))
	b.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "http", "ws", 1)
}

var msg = bytes.Repeat([]byte("x"), 1024)

// cpu is the process's user+system CPU time: the server's share is the
// same peer for every client, so differences are the client's.
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/msg")
}

func BenchmarkEchoGuise(b *testing.B) {
	u := echoServer(b)
	ctx := context.Background()
	c, err := guise.DialWebSocket(ctx, u+"/", &guise.WebSocketOptions{PingInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(guise.CloseNormal, "")
	b.ReportAllocs()
	b.ResetTimer()
	start := cpu()
	for range b.N {
		if err := c.Write(ctx, guise.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		if _, p, err := c.Read(ctx); err != nil || len(p) != len(msg) {
			b.Fatal(err)
		}
	}
	report(b, start)
}

func BenchmarkEchoCoder(b *testing.B) {
	u := echoServer(b)
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, u+"/", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpu()
	for range b.N {
		if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		if _, p, err := c.Read(ctx); err != nil || len(p) != len(msg) {
			b.Fatal(err)
		}
	}
	report(b, start)
}

func BenchmarkEchoGorilla(b *testing.B) {
	u := echoServer(b)
	c, _, err := gorilla.DefaultDialer.Dial(u+"/", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpu()
	for range b.N {
		if err := c.WriteMessage(gorilla.TextMessage, msg); err != nil {
			b.Fatal(err)
		}
		if _, p, err := c.ReadMessage(); err != nil || len(p) != len(msg) {
			b.Fatal(err)
		}
	}
	report(b, start)
}
