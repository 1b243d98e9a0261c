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
	} `json:"h2"`
	Heads []string `json:"http1_heads"`
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
	return &w
}

// wsPerRequest are the handshake fields whose value is the request's own:
// they keep their recorded place with an empty value. Cookie was not
// recorded (the page had none); it goes last, where neither browser put
// anything else, and is placed so in the profile's source.
var wsPerRequest = []string{"host", "origin", "sec-websocket-key", "sec-fetch-site", "cookie"}

// addWebSocketSets adds the WebSocket handshake header sets over h2 and
// HTTP/1.1, and the extended CONNECT's pseudo-header order.
func addWebSocketSets(p *profile.Profile, w *websocket) {
	p.HTTP2.WebSocketPseudoOrder = w.H2[0].PseudoOrder
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
	return "; the WebSocket handshake (header sets of kind websocket over h2 and HTTP/1.1, the extended CONNECT's pseudo-header order) recorded with profile/testdata/record/flows.go -websocket (testdata/recordings/" + file + "), Cookie (not recorded: the page had none) placed last"
}
