package fingerprint

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"strconv"
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

// WebSocketDeflatePage is a page like WebSocketPage whose socket sends
// the messages of WebSocketDeflateMessages instead, in order: what a
// server that accepts permessage-deflate receives compressed.
const WebSocketDeflatePage = "/ws/deflate/"

// WebSocketDeflateMessages returns the text messages WebSocketDeflatePage
// sends: short ones, one sent twice, an empty one, JSON, and text of 3 KB
// and 20 KB, as its script builds them.
func WebSocketDeflateMessages() []string {
	words := func(n int) string {
		var b strings.Builder
		for k := 0; b.Len() < n; k++ {
			b.WriteString("word")
			b.WriteString(strconv.Itoa(k * 7 % 13))
			b.WriteString(" ")
		}
		return b.String()[:n]
	}
	ms := []string{"hello", "hello", "message 1", ""}
	for i := 1; i <= 3; i++ {
		var v []string
		for j := 1; j <= 20; j++ {
			v = append(v, strconv.Itoa(i*j))
		}
		ms = append(ms, `{"type":"update","id":`+strconv.Itoa(i)+`,"values":[`+strings.Join(v, ",")+`]}`)
	}
	return append(ms, words(3000), words(20000), strings.Repeat("a", 5000))
}

const wsDeflatePageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>guise websocket deflate</title></head><body>
<pre id="out">running</pre>
<script>
(function () {
  var words = function (n) { var s = ""; for (var k = 0; s.length < n; k++) { s += "word" + (k * 7 % 13) + " "; } return s.slice(0, n); };
  var ms = ["hello", "hello", "message 1", ""];
  for (var i = 1; i <= 3; i++) { var v = []; for (var j = 1; j <= 20; j++) { v.push(i * j); } ms.push('{"type":"update","id":' + i + ',"values":[' + v.join(",") + ']}'); }
  ms.push(words(3000), words(20000), "a".repeat(5000));
  var out = [], got = 0;
  var sock = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/echo");
  var finish = function (what) { out.push(what); document.getElementById("out").textContent = out.join("\n"); document.title = "done"; };
  sock.onopen = function () { for (var i = 0; i < ms.length; i++) { sock.send(ms[i]); } };
  sock.onmessage = function (e) { out.push("echo " + e.data.length); if (++got === ms.length) { sock.close(1000, "done"); } };
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
	mux.HandleFunc("GET "+WebSocketDeflatePage+"{$}", func(w http.ResponseWriter, r *http.Request) {
		s.wsPages.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, wsDeflatePageHTML)
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
	offer := r.Header.Get("Sec-WebSocket-Extensions")
	ext := ""
	if s.wsDeflate != "" && strings.Contains(strings.ToLower(offer), "permessage-deflate") {
		ext = s.wsDeflate
	}
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
		head := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			ws.Accept(r.Header.Get("Sec-WebSocket-Key")) + "\r\n"
		if ext != "" {
			head += "Sec-WebSocket-Extensions: " + ext + "\r\n"
		}
		brw.WriteString(head + "\r\n")
		rw, flush = brw, brw.Flush
	case r.ProtoMajor == 2 && r.Method == http.MethodConnect && r.Header.Get(":protocol") == "websocket":
		rc := http.NewResponseController(w)
		rc.SetReadDeadline(time.Now().Add(waitLimit))
		rc.SetWriteDeadline(time.Now().Add(waitLimit))
		if ext != "" {
			w.Header().Set("Sec-WebSocket-Extensions", ext)
		}
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
	var seen func(ws.Header, []byte)
	if s.onWSFrame != nil {
		seen = func(h ws.Header, p []byte) { s.onWSFrame(offer, h, p) }
	}
	echoFrames(rw, flush, seen)
}

// echoFrames echoes the client's frames (unmasked, compressed ones as they
// came: the client inflates its own stream) up to its close frame, for at
// most 100 frames of at most 64 KiB, showing each to seen if set.
func echoFrames(rw io.ReadWriter, flush func() error, seen func(ws.Header, []byte)) {
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
		if seen != nil {
			seen(h, p)
		}
		out := ws.AppendHeader(nil, ws.Header{Fin: h.Fin, RSV: h.RSV, Op: h.Op, PayloadLen: h.PayloadLen})
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
