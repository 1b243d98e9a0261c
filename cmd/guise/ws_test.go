package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestWS: each stdin line goes out as a text message, each message comes
// back as a line, end of input closes with 1000 and exits 0; a server that
// closes with 1011 makes the exit code 56.
func TestWS(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if string(b) == "fail" {
				c.Close(websocket.StatusInternalError, "as asked")
				return
			}
			c.Write(r.Context(), typ, append([]byte("echo "), b...))
		}
	}))
	defer srv.Close()
	url := strings.Replace(srv.URL, "http", "ws", 1)
	var out, errOut bytes.Buffer
	if err := runWS(context.Background(), &wsFlags{}, url, strings.NewReader("one\ntwo\n"), &out, &errOut); err != nil {
		t.Fatalf("runWS: %v", err)
	}
	if out.String() != "echo one\necho two\n" {
		t.Fatalf("output %q", out.String())
	}
	out.Reset()
	err := runWS(context.Background(), &wsFlags{}, url, strings.NewReader("fail\n"), &out, &errOut)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitWSClosed {
		t.Fatalf("server close 1011: %v", err)
	}
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	err = runWS(context.Background(), &wsFlags{}, plain.URL+"/", strings.NewReader(""), &out, &errOut)
	if !errors.As(err, &ee) || ee.code != exitWSHandshake {
		t.Fatalf("a 404 to the handshake: %v, want exit %d", err, exitWSHandshake)
	}
}
