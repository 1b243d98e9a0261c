package fingerprint

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Handler returns the echo server's HTTP handler. Its endpoints:
//
//	/                 a page that makes a browser send every kind of request a
//	                  profile needs: the navigation itself, a script (/app.js),
//	                  images on this host and on sub.fp.test, a same-origin
//	                  fetch(), a CORS and a no-cors fetch() to sub.fp.test,
//	                  then a request the server answers with Connection: close
//	                  (GOAWAY on HTTP/2) so that the last fetch() goes out on a
//	                  new connection that resumes the TLS session.
//	/api/all          JSON report of this request: TLS, HTTP/2, headers, JA4H.
//	/api/conns        JSON array of every connection record so far.
//	/api/fetch        a small JSON answer that allows CORS.
//	/api/close        answers with Connection: close.
//	/api/resume       answers {"resumed": bool}: whether this request's
//	                  connection resumed a TLS session. The page closes the
//	                  connection and asks again (at most 3 times) until one
//	                  did: a browser may use a spare connection it opened
//	                  earlier with a full handshake.
//	/api/wait.png     holds the page's load event until the page's last
//	                  /api/resume (at most 5 s), so that browsers that stop
//	                  at load (Firefox --screenshot) still send the fetches.
//	/app.js, /pixel.png, /sub-pixel.png, /favicon.ico   page resources.
//	/flow/...         the cookie, fetch() POST and form flow (see FlowStart).
//	/ws/              a page that opens a WebSocket to /ws/echo on its own
//	                  origin and sends a few messages (see WebSocketPage).
//
// The handler only works when served by the Server it came from (it finds
// each request's connection record through the connection context).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /app.js", serveScript)
	mux.HandleFunc("GET /pixel.png", servePixel)
	mux.HandleFunc("GET /sub-pixel.png", servePixel)
	mux.HandleFunc("GET /favicon.ico", servePixel)
	mux.HandleFunc("/api/all", s.serveAll)
	mux.HandleFunc("/api/conns", s.serveConns)
	mux.HandleFunc("/api/fetch", s.serveSmall)
	mux.HandleFunc("/api/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		s.serveSmall(w, r)
	})
	mux.HandleFunc("/api/resume", s.serveResume)
	mux.HandleFunc("GET /api/wait.png", s.serveWait)
	s.handleFlow(mux)
	s.handleWebSocket(mux)
	return s.count(mux)
}

// count numbers HTTP/1 requests per connection (so that /api/all finds
// its head) and counts the requests answered on each connection.
func (s *Server) count(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lc, ok := r.Context().Value(liveConnKey{}).(*liveConn)
		if ok && r.ProtoMajor == 1 {
			r = r.WithContext(context.WithValue(r.Context(), h1IndexKey{}, lc.nextH1()))
		}
		h.ServeHTTP(w, r)
		if ok {
			lc.mu.Lock()
			lc.rec.Requests++
			lc.mu.Unlock()
		}
		s.notify()
	})
}

// pageHTML is the page at /. SUB is replaced by the sub.fp.test origin.
const pageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>guise echo server</title>
<script src="/app.js"></script>
</head><body>
<h1>guise echo server</h1>
<p>This visit was recorded. <a href="/api/all">/api/all</a> shows what this browser sent;
<a href="/api/conns">/api/conns</a> every connection so far.</p>
<img src="/pixel.png" alt="" width="1" height="1">
<img src="SUB/sub-pixel.png" alt="" width="1" height="1">
<img src="/api/wait.png" alt="" width="1" height="1">
<pre id="out">running</pre>
</body></html>
`

// pageScript is /app.js: the fetch() calls, in sequence.
const pageScript = `(async function () {
  var out = [];
  async function step(name, url, opts) {
    try { var r = await fetch(url, opts); await r.text(); out.push(name + " " + r.status); }
    catch (e) { out.push(name + " failed: " + e); }
  }
  await step("fetch", "/api/fetch");
  if (location.hostname === "fp.test" && location.protocol === "https:") {
    await step("cors", "https://sub.fp.test:" + location.port + "/api/fetch", {mode: "cors"});
    await step("no-cors", "https://sub.fp.test:" + location.port + "/api/fetch?no-cors", {mode: "no-cors"});
  }
  // A browser may send the next request on a spare connection it opened
  // early with a full handshake; close that one too and try again.
  for (var i = 1; i <= 3; i++) {
    await step("close", "/api/close");
    var resumed = false;
    try {
      var r = await fetch("/api/resume?try=" + i);
      resumed = (await r.json()).resumed;
      out.push("resume " + r.status + " resumed=" + resumed);
    } catch (e) { out.push("resume failed: " + e); }
    if (resumed || location.protocol !== "https:") { break; }
  }
  var done = function () { document.getElementById("out").textContent = out.join("\n"); document.title = "done"; };
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", done); } else { done(); }
})();
`

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	s.pages.Add(1)
	sub := "/"
	if host, port := splitHostPort(r.Host); host == "fp.test" {
		if lc, ok := r.Context().Value(liveConnKey{}).(*liveConn); ok && lc.snapshot().Transport == TransportTLS {
			sub = "https://sub.fp.test:" + port + "/"
		}
	}
	page := strings.Replace(pageHTML, "SUB/", sub, 1)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(page))
}

func serveScript(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(pageScript))
}

// pixelPNG is a 1x1 transparent PNG.
var pixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

func servePixel(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Write(pixelPNG)
}

// serveSmall answers a fetch(), allowing the page's origin by CORS.
func (s *Server) serveSmall(w http.ResponseWriter, r *http.Request) {
	allowCORS(w, r)
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(`{"ok":true}` + "\n"))
}

func allowCORS(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" {
		w.Header().Set("Access-Control-Allow-Origin", o)
		w.Header().Set("Access-Control-Allow-Credentials", "true")
		w.Header().Set("Vary", "Origin")
	}
}

// maxResumeTries is the page's number of close-and-resume attempts.
const maxResumeTries = 3

// serveResume answers whether the request's connection resumed a TLS
// session, and counts the page's resume step as done when it did, when
// the connection is plain HTTP, or at the last try.
func (s *Server) serveResume(w http.ResponseWriter, r *http.Request) {
	resumed, plain := false, false
	if lc, ok := r.Context().Value(liveConnKey{}).(*liveConn); ok {
		rec := lc.snapshot()
		plain = rec.Transport == TransportTCP
		resumed = rec.Negotiated != nil && rec.Negotiated.Resumed
	}
	if resumed || plain || r.URL.Query().Get("try") == strconv.Itoa(maxResumeTries) {
		s.resumes.Add(1)
		s.notify()
	}
	allowCORS(w, r)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, "{\"ok\":true,\"resumed\":%t}\n", resumed)
}

// waitLimit bounds how long /api/wait.png holds a page's load event.
const waitLimit = 5 * time.Second

// serveWait answers once every page served so far was followed by a
// request to /api/resume, or after waitLimit.
func (s *Server) serveWait(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), waitLimit)
	defer cancel()
	for s.resumes.Load() < s.pages.Load() {
		ch := s.Changed()
		if s.resumes.Load() >= s.pages.Load() {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
		case <-s.closing:
		}
		if ctx.Err() != nil || s.isClosing() {
			break
		}
	}
	servePixel(w, r)
}

func (s *Server) serveConns(w http.ResponseWriter, r *http.Request) {
	allowCORS(w, r)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(s.Records())
}

func (s *Server) serveAll(w http.ResponseWriter, r *http.Request) {
	allowCORS(w, r)
	lc, ok := r.Context().Value(liveConnKey{}).(*liveConn)
	if !ok {
		http.Error(w, "fingerprint: no connection record", http.StatusInternalServerError)
		return
	}
	rep := s.report(lc, r)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(rep)
}

// splitHostPort splits a Host header value; the port is "" when absent.
func splitHostPort(hostport string) (host, port string) {
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.Contains(hostport[i:], "]") {
		return hostport[:i], hostport[i+1:]
	}
	return hostport, ""
}
