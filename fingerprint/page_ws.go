package fingerprint

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/guise-http/guise/internal/ws"
)

// WebSocketPage is the path of the page that opens a WebSocket
// (new WebSocket()) to WebSocketEcho on its own origin, sends
// WebSocketMessages text messages, waits for their echoes and closes with
// 1000. The handshake is recorded as any request is: over HTTP/1.1 the
// Upgrade request's head, over HTTP/2 the extended CONNECT's HEADERS (RFC
// 8441), which a browser sends only when the server's SETTINGS enable it:
// Go's HTTP/2 server does when the process runs with
// GODEBUG=http2xconnect=1.
const (
	WebSocketPage     = "/ws/"
	WebSocketEcho     = "/ws/echo"
	WebSocketMessages = 3
)

const wsPageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>guise websocket</title></head><body>
<pre id="out">running</pre>
<script>
(function () {
  var out = [], got = 0;
  var sock = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/echo");
  var finish = function (what) { out.push(what); document.getElementById("out").textContent = out.join("\n"); document.title = "done"; };
  sock.onopen = function () { for (var i = 1; i <= 3; i++) { sock.send("message " + i); } };
  sock.onmessage = function (e) { out.push("echo " + e.data); if (++got === 3) { sock.close(1000, "done"); } };
  sock.onclose = function (e) { finish("closed " + e.code); };
  sock.onerror = function () { out.push("error"); };
})();
</script>
<img src="/ws/wait.png" alt="" width="1" height="1">
</body></html>
`

func (s *Server) handleWebSocket(mux *http.ServeMux) {
	mux.HandleFunc("GET "+WebSocketPage+"{$}", func(w http.ResponseWriter, r *http.Request) {
		s.wsPages.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, wsPageHTML)
	})
	mux.HandleFunc(WebSocketEcho, s.serveWebSocket)
	mux.HandleFunc("GET /ws/wait.png", func(w http.ResponseWriter, r *http.Request) {
		// Holds the page's load event (Firefox --screenshot stops there)
		// until every page's socket closed, or waitLimit.
		ctx, cancel := context.WithTimeout(r.Context(), waitLimit)
		defer cancel()
		for s.wsDone.Load() < s.wsPages.Load() && ctx.Err() == nil && !s.isClosing() {
			ch := s.Changed()
			if s.wsDone.Load() >= s.wsPages.Load() {
				break
			}
			select {
			case <-ch:
			case <-ctx.Done():
			case <-s.closing:
			}
		}
		servePixel(w, r)
	})
}

// serveWebSocket completes a WebSocket handshake, over HTTP/1.1 (101) or
// HTTP/2 (200 to an extended CONNECT), declining every extension, and
// echoes each message until a close frame, which it answers.
func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	defer func() {
		s.wsDone.Add(1)
		s.notify()
	}()
	if r.Header.Get("Sec-WebSocket-Version") != "13" {
		http.Error(w, "fingerprint: not a WebSocket handshake", http.StatusBadRequest)
		return
	}
	var rw io.ReadWriter
	var flush func() error
	switch {
	case r.ProtoMajor == 1 && strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
		hj, ok := w.(http.Hijacker)
		if !ok {
			http.Error(w, "fingerprint: cannot hijack", http.StatusInternalServerError)
			return
		}
		nc, brw, err := hj.Hijack()
		if err != nil {
			return
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(waitLimit))
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			ws.Accept(r.Header.Get("Sec-WebSocket-Key")) + "\r\n\r\n")
		rw, flush = brw, brw.Flush
	case r.ProtoMajor == 2 && r.Method == http.MethodConnect && r.Header.Get(":protocol") == "websocket":
		rc := http.NewResponseController(w)
		rc.SetReadDeadline(time.Now().Add(waitLimit))
		rc.SetWriteDeadline(time.Now().Add(waitLimit))
		w.WriteHeader(http.StatusOK)
		rc.Flush()
		rw = struct {
			io.Reader
			io.Writer
		}{bufio.NewReader(r.Body), w}
		flush = rc.Flush
	default:
		http.Error(w, "fingerprint: not a WebSocket handshake", http.StatusBadRequest)
		return
	}
	if err := flush(); err != nil {
		return
	}
	echoFrames(rw, flush)
}

// echoFrames echoes the client's frames (unmasked) up to its close frame,
// for at most 100 frames of at most 64 KiB.
func echoFrames(rw io.ReadWriter, flush func() error) {
	var hdr [14]byte
	for range 100 {
		if _, err := io.ReadFull(rw, hdr[:2]); err != nil {
			return
		}
		n := 2 + map[byte]int{126: 2, 127: 8}[hdr[1]&0x7f] + 4*int(hdr[1]>>7)
		if _, err := io.ReadFull(rw, hdr[2:n]); err != nil {
			return
		}
		h, _, err := ws.ParseHeader(hdr[:n])
		if err != nil || !h.Masked || h.PayloadLen > 64<<10 {
			return
		}
		p := make([]byte, h.PayloadLen)
		if _, err := io.ReadFull(rw, p); err != nil {
			return
		}
		ws.Mask(h.Mask, 0, p)
		out := ws.AppendHeader(nil, ws.Header{Fin: h.Fin, Op: h.Op, PayloadLen: h.PayloadLen})
		if h.Op == ws.OpClose && len(p) >= 2 {
			p = binary.BigEndian.AppendUint16(nil, binary.BigEndian.Uint16(p))
			out = ws.AppendHeader(nil, ws.Header{Fin: true, Op: ws.OpClose, PayloadLen: 2})
		}
		rw.Write(append(out, p...))
		if flush() != nil || h.Op == ws.OpClose {
			return
		}
	}
}
