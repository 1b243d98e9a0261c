package fingerprint

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
)

// The flow pages make a browser send the requests the main page does not:
// requests that carry a cookie, fetch() POSTs and a form submission. A
// visit starts at FlowStart:
//
//	/flow/start       sets the cookie FlowCookie and redirects (302) to
//	                  /flow/, so that the browser's top-level navigation
//	                  carries the cookie (still a browser-initiated
//	                  navigation: sec-fetch-site none).
//	/flow/            a page with an image (/flow/img.png), a script
//	                  (/flow/app.js) and a form; the script sends a GET
//	                  fetch() (/flow/fetch), a text/plain fetch() POST
//	                  (/flow/post-text), an application/json fetch() POST
//	                  (/flow/post-json), then submits the form
//	                  (application/x-www-form-urlencoded POST, a navigation)
//	                  to /flow/form.
//	/flow/nav         a browser that kept the cookie (a second run on the
//	                  same profile) sends a typed navigation carrying it,
//	                  without the redirect of /flow/start; the page's script
//	                  then navigates to /flow/linked, a navigation with a
//	                  Referer.
//	/flow/wait.png    holds the page's load event until the form arrived
//	                  (at most 5 s), for browsers that stop at load;
//	/flow/nav-wait.png does the same on /flow/nav until /flow/linked.
const (
	FlowStart  = "/flow/start"
	FlowNav    = "/flow/nav"
	FlowCookie = "guise_flow=1"
)

// Bodies the flow page's script and form send.
const (
	FlowTextBody = "hello"
	FlowJSONBody = `{"a":1}`
	FlowFormBody = "a=1&b=x+y"
)

const flowHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>guise flow</title></head><body>
<img src="/flow/img.png" alt="" width="1" height="1">
<img src="/flow/wait.png" alt="" width="1" height="1">
<form id="f" method="post" action="/flow/form"><input type="hidden" name="a" value="1"><input type="hidden" name="b" value="x y"></form>
<script src="/flow/app.js"></script>
</body></html>
`

const flowScript = `(async function () {
  async function step(url, opts) {
    try { var r = await fetch(url, opts); await r.text(); } catch (e) {}
  }
  await step("/flow/fetch");
  await step("/flow/post-text", {method: "POST", body: "hello"});
  await step("/flow/post-json", {method: "POST", headers: {"Content-Type": "application/json"}, body: '{"a":1}'});
  document.getElementById("f").submit();
})();
`

const flowNavHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>guise flow nav</title></head><body>
<img src="/flow/nav-wait.png" alt="" width="1" height="1">
<script>location.href = "/flow/linked";</script>
</body></html>
`

const flowDoneHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>done</title></head><body>done</body></html>
`

// handleFlow registers the flow endpoints on mux.
func (s *Server) handleFlow(mux *http.ServeMux) {
	mux.HandleFunc("GET "+FlowStart, func(w http.ResponseWriter, r *http.Request) {
		c := FlowCookie + "; Path=/; Max-Age=3600; SameSite=Lax"
		if r.TLS != nil {
			c += "; Secure"
		}
		w.Header().Set("Set-Cookie", c)
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Location", "/flow/")
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("GET /flow/{$}", func(w http.ResponseWriter, r *http.Request) {
		s.flowPages.Add(1)
		s.notify()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte(flowHTML))
	})
	mux.HandleFunc("GET /flow/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte(flowScript))
	})
	mux.HandleFunc("GET "+FlowNav, func(w http.ResponseWriter, r *http.Request) {
		s.flowNavs.Add(1)
		s.notify()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte(flowNavHTML))
	})
	mux.HandleFunc("GET /flow/linked", func(w http.ResponseWriter, r *http.Request) {
		s.flowLinked.Add(1)
		s.notify()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte(flowDoneHTML))
	})
	mux.HandleFunc("GET /flow/img.png", servePixel)
	mux.HandleFunc("GET /flow/wait.png", func(w http.ResponseWriter, r *http.Request) {
		s.waitUntil(r.Context(), &s.flowForms, &s.flowPages)
		servePixel(w, r)
	})
	mux.HandleFunc("GET /flow/nav-wait.png", func(w http.ResponseWriter, r *http.Request) {
		s.waitUntil(r.Context(), &s.flowLinked, &s.flowNavs)
		servePixel(w, r)
	})
	mux.HandleFunc("/flow/fetch", s.serveSmall)
	mux.HandleFunc("/flow/post-text", drained(s.serveSmall))
	mux.HandleFunc("/flow/post-json", drained(s.serveSmall))
	mux.HandleFunc("POST /flow/form", func(w http.ResponseWriter, r *http.Request) {
		drainBody(r)
		s.flowForms.Add(1)
		s.notify()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte(flowDoneHTML))
	})
}

// waitUntil returns once done has caught up with started, after
// waitLimit, or when ctx ends or the server closes.
func (s *Server) waitUntil(ctx context.Context, done, started *atomic.Int64) {
	ctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	for done.Load() < started.Load() {
		ch := s.Changed()
		if done.Load() >= started.Load() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
		case <-s.closing:
		}
		if ctx.Err() != nil || s.isClosing() {
			return
		}
	}
}

// maxFlowBody bounds the request body a flow handler reads.
const maxFlowBody = 1 << 20

// drainBody reads the request body (bounded) before the answer, as most
// servers do: an HTTP/2 server that answers first resets the stream, and a
// client may lose the answer to that race.
func drainBody(r *http.Request) {
	io.Copy(io.Discard, io.LimitReader(r.Body, maxFlowBody))
}

func drained(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		drainBody(r)
		h(w, r)
	}
}
