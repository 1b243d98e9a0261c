//go:build ignore

package main

import (
	"encoding/json"
	"log"
	"os"
	"strings"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// websocket is what profile/testdata/record/flows.go -websocket recorded:
// the handshake of new WebSocket() on the echo server's WebSocket page, over
// h2 (an extended CONNECT, with its pseudo-header order) and HTTP/1.1.
type websocket struct {
	H2 []struct {
		Method      string         `json:"method"`
		Path        string         `json:"path"`
		PseudoOrder []string       `json:"pseudo_order"`
		Headers     []fields.Field `json:"headers"`
		StreamID    uint32         `json:"stream_id"`
		Priority    *wsPriority    `json:"priority"`
		// OpenedBefore are the streams the connection opened before the
		// CONNECT's: what its dependency is read against.
		OpenedBefore []struct {
			StreamID uint32      `json:"stream_id"`
			Priority *wsPriority `json:"priority"`
		} `json:"opened_before"`
	} `json:"h2"`
	Heads []string `json:"http1_heads"`
}

type wsPriority struct {
	Exclusive bool   `json:"exclusive"`
	StreamDep uint32 `json:"stream_dep"`
	Weight    int    `json:"weight"`
}

func readWebSocket(path string) *websocket {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var w websocket
	if err := json.Unmarshal(b, &w); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	if len(w.H2) != 1 || len(w.Heads) != 1 || w.H2[0].Method != "CONNECT" || w.H2[0].Path != fingerprint.WebSocketEcho {
		log.Fatalf("%s: want one h2 CONNECT and one HTTP/1.1 head for %s", path, fingerprint.WebSocketEcho)
	}
	if w.H2[0].Priority == nil || w.H2[0].StreamID == 0 {
		log.Fatalf("%s: the CONNECT's stream id and HEADERS priority are not recorded", path)
	}
	return &w
}

// wsPerRequest are the handshake fields whose value is the request's own:
// they keep their recorded place with an empty value. Cookie was not
// recorded (the page had none); it goes last, where neither browser put
// anything else, and is placed so in the profile's source.
var wsPerRequest = []string{"host", "origin", "sec-websocket-key", "sec-fetch-site", "cookie"}

// addWebSocketSets adds the WebSocket handshake header sets over h2 and
// HTTP/1.1, the extended CONNECT's pseudo-header order, and its HEADERS
// priority (kind websocket), whose dependency must follow the profile's
// rule (that of its navigations) on the streams recorded before it.
func addWebSocketSets(p *profile.Profile, w *websocket) {
	p.HTTP2.WebSocketPseudoOrder = w.H2[0].PseudoOrder
	nav, ok := p.Priority(profile.Navigate)
	if !ok {
		log.Fatalf("%s: no navigation priority to take the rule from", p.Name)
	}
	pr := w.H2[0].Priority
	var want uint32
	if nav.DependsOn == profile.LatestOpen {
		// The most recent stream opened before, of an equal or higher
		// weight (the page's own streams were still open: the image
		// waits for the socket).
		for _, b := range w.H2[0].OpenedBefore {
			if b.Priority != nil && b.Priority.Weight >= pr.Weight && b.StreamID > want {
				want = b.StreamID
			}
		}
	}
	if nav.DependsOn != profile.LatestOpen && nav.DependsOn != profile.Root || pr.StreamDep != want {
		log.Fatalf("%s: the CONNECT depends on stream %d, the rule %v says %d", p.Name, pr.StreamDep, nav.DependsOn, want)
	}
	p.HTTP2.HeaderPriority = append(p.HTTP2.HeaderPriority, profile.KindPriority{
		Kind: profile.WebSocket, Exclusive: pr.Exclusive, Weight: pr.Weight, DependsOn: nav.DependsOn,
	})
	h2 := profile.HeaderSet{Kind: profile.WebSocket, Proto: profile.H2}
	for _, f := range w.H2[0].Headers {
		h2.Header = append(h2.Header, wsField(&h2, f))
	}
	h2.Header = append(h2.Header, wsField(&h2, fields.Field{Name: "cookie"}))
	h1 := profile.HeaderSet{Kind: profile.WebSocket, Proto: profile.HTTP1}
	lines := strings.Split(strings.TrimSuffix(w.Heads[0], "\r\n\r\n"), "\r\n")
	if !strings.HasPrefix(lines[0], "GET "+fingerprint.WebSocketEcho+" ") {
		log.Fatalf("websocket: head %q", lines[0])
	}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ": ")
		if !ok {
			log.Fatalf("websocket: bad header line %q", l)
		}
		h1.Header = append(h1.Header, wsField(&h1, fields.Field{Name: name, Value: value}))
	}
	h1.Header = append(h1.Header, wsField(&h1, fields.Field{Name: "Cookie"}))
	p.Headers = append(p.Headers, h2, h1)
}

func wsField(hs *profile.HeaderSet, f fields.Field) fields.Field {
	for _, n := range wsPerRequest {
		if strings.EqualFold(f.Name, n) {
			hs.PerRequest = append(hs.PerRequest, f.Name)
			if n != "sec-fetch-site" {
				f.Value = ""
			}
		}
	}
	return f
}

// webSocketSource says where the WebSocket sets come from.
func webSocketSource(file string) string {
	return "; the WebSocket handshake (header sets of kind websocket over h2 and HTTP/1.1, the extended CONNECT's pseudo-header order and HEADERS priority) recorded with profile/testdata/record/flows.go -websocket (testdata/recordings/" + file + "), Cookie (not recorded: the page had none) placed last; the ALPN of the socket's new connection on an HTTP/1.1-only origin (websocket_full_alpn) recorded by fingerprint's TestLiveWebSocketHTTP1Origin* (testdata/recordings/" + strings.TrimSuffix(file, ".json") + "-h1origin.json); whether an empty message goes uncompressed (websocket.empty_uncompressed) recorded by fingerprint's TestLiveWebSocketDeflate* (fingerprint/testdata/ws-deflate/" + strings.TrimSuffix(file, "-websocket.json") + ".json)"
}

// wsH1Origin is what fingerprint's TestLiveWebSocketHTTP1Origin* recorded
// (GUISE_RECORD_WS_H1ORIGIN=1): the browser, HTTP/2 on, opening the
// WebSocket page of an origin that offers ALPN http/1.1 alone.
type wsH1Origin struct {
	How         string   `json:"how"`
	ALPNOffered []string `json:"alpn_offered"`
	PageConn    bool     `json:"page_loaded_on_it"`
}

// readWSH1Origin reads such a recording: whether the socket's new
// connection offered the browser's usual ALPN (h2 too) rather than
// http/1.1 alone.
func readWSH1Origin(path string) (fullALPN bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var w wsH1Origin
	if err := json.Unmarshal(b, &w); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	if w.PageConn || len(w.ALPNOffered) == 0 || w.ALPNOffered[len(w.ALPNOffered)-1] != "http/1.1" {
		log.Fatalf("%s: want a new connection offering http/1.1 last, got %v (page's: %v)", path, w.ALPNOffered, w.PageConn)
	}
	return len(w.ALPNOffered) > 1
}

// readWSDeflate reads fingerprint's recording of the browser's compressed
// messages (TestLiveWebSocketDeflate*, GUISE_RECORD_WS_DEFLATE=1):
// whether its empty message went uncompressed.
func readWSDeflate(path string) (emptyUncompressed bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var rec struct {
		Messages []struct {
			Text       string `json:"text"`
			Compressed bool   `json:"compressed"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	for _, m := range rec.Messages {
		if m.Text == "" {
			return !m.Compressed
		}
	}
	log.Fatalf("%s: no empty message recorded", path)
	return false
}

// readWSKeepSmaller reads fingerprint's recording of the browser's
// messages to a server that took away its context takeover: whether a
// message other than the empty one went uncompressed (Firefox sends a
// message whose compressed form would be longer as it is).
func readWSKeepSmaller(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var rec struct {
		Answer   string `json:"extensions_answer"`
		Messages []struct {
			Text       string `json:"text"`
			Compressed bool   `json:"compressed"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	if !strings.Contains(rec.Answer, "client_no_context_takeover") {
		log.Fatalf("%s: answered %q, want client_no_context_takeover", path, rec.Answer)
	}
	for _, m := range rec.Messages {
		if m.Text != "" && !m.Compressed {
			return true
		}
	}
	return false
}
