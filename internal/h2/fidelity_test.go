package h2

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
	"testing/synctest"

	"github.com/guise-http/guise/fields"
)

type recording struct {
	Source     string `json:"source"`
	PrefaceHex string `json:"preface_hex"`
	Frames     []struct {
		Type     int         `json:"type"`
		StreamID uint32      `json:"stream_id"`
		RawHex   string      `json:"raw_hex"`
		Headers  [][2]string `json:"headers"`
		Priority struct {
			Exclusive bool   `json:"exclusive"`
			Dep       uint32 `json:"stream_dependency"`
			Weight    uint16 `json:"weight"`
		} `json:"priority"`
	} `json:"frames"`
}

// loadRecordings reads testdata/recorded.json: the frames of one Chromium
// 156 and one Firefox ESR 153 connection, taken from the recordings in
// fingerprint/testdata/recordings/chromium-156 and firefox-esr-153.
func loadRecordings(t *testing.T) map[string]recording {
	b, err := os.ReadFile("testdata/recorded.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]recording
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFidelity opens a connection with each browser's Config and replays
// every request of the recording; the preface, SETTINGS, WINDOW_UPDATE,
// every HEADERS frame (flags, priority, HPACK bytes with the dynamic table
// carried across requests) and Firefox's stream WINDOW_UPDATEs must equal
// the browser's bytes.
func TestFidelity(t *testing.T) {
	recs := loadRecordings(t)
	for name, cfg := range map[string]*Config{"chrome": chromeConfig(), "firefox": firefoxConfig()} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testFidelity(t, cfg, recs[name], name == "firefox") })
		})
	}
}

func testFidelity(t *testing.T, cfg *Config, rec recording, serverFirst bool) {
	cc, p := newPeer(t, cfg)
	rf := rec.Frames
	// SETTINGS and connection WINDOW_UPDATE, byte for byte.
	for i := 0; i < 2; i++ {
		f := p.next()
		if got := hex.EncodeToString(f.raw()); got != rf[i].RawHex {
			t.Fatalf("frame %d: got %s, recorded %s", i, got, rf[i].RawHex)
		}
	}
	serverSettings := func() {
		p.writeSettings(Setting{ID: SettingMaxFrameSize, Val: 1 << 20}, Setting{ID: SettingMaxConcurrentStreams, Val: 250},
			Setting{ID: SettingMaxHeaderListSize, Val: 1 << 20}, Setting{ID: SettingHeaderTableSize, Val: 4096},
			Setting{ID: SettingInitialWindowSize, Val: 1 << 20})
		if f := p.next(); f.Type != FrameSettings || f.Flags != FlagAck {
			t.Fatalf("want SETTINGS ACK, got %v", f.Type)
		}
		synctest.Wait()
	}
	if serverFirst {
		// Firefox had the server's SETTINGS (Go's server sends
		// HEADER_TABLE_SIZE 4096) before its first HEADERS; Chromium did not.
		serverSettings()
	}
	type result struct {
		resp *Response
		err  error
	}
	open := map[uint32]chan result{}
	finish := func(id uint32) {
		p.writeHeaders(id, true, ":status", "204")
		r := <-open[id]
		if r.err != nil {
			t.Fatalf("stream %d: %v", id, r.err)
		}
		r.resp.Body.Close()
		delete(open, id)
	}
	for i := 2; i < len(rf); i++ {
		fr := rf[i]
		if fr.Type != 1 {
			continue
		}
		for id := range open {
			if id != fr.Priority.Dep {
				finish(id)
			}
		}
		synctest.Wait()
		req := &Request{ContentLength: -1}
		for _, h := range fr.Headers {
			switch h[0] {
			case ":method":
				req.Method = h[1]
			case ":authority":
				req.Authority = h[1]
			case ":scheme":
				req.Scheme = h[1]
			case ":path":
				req.Path = h[1]
			default:
				req.Header = append(req.Header, fields.Field{Name: h[0], Value: h[1]})
			}
		}
		req.Priority = Priority{Send: true, Exclusive: fr.Priority.Exclusive, Weight: fr.Priority.Weight, Dep: DepRoot}
		if fr.Priority.Exclusive {
			req.Priority.Dep = DepLatestOpen
		}
		ch := make(chan result, 1)
		open[fr.StreamID] = ch
		go func() {
			resp, err := cc.RoundTrip(context.Background(), req)
			ch <- result{resp, err}
		}()
		f := p.nextOf(FrameHeaders)
		if got := hex.EncodeToString(f.raw()); got != fr.RawHex {
			t.Fatalf("HEADERS of stream %d:\n got %s\nwant %s", fr.StreamID, got, fr.RawHex)
		}
		if cfg.StreamWindowUpdate > 0 {
			wu := p.next()
			if wu.Type != FrameWindowUpdate || wu.StreamID != fr.StreamID ||
				hex.EncodeToString(wu.raw()) != rf[i+1].RawHex {
				t.Fatalf("after HEADERS: %v on %d, want the recorded WINDOW_UPDATE %s", wu.Type, wu.StreamID, rf[i+1].RawHex)
			}
		}
		if !serverFirst && i == 2 {
			serverSettings()
		}
	}
	for id := range open {
		finish(id)
	}
}

// TestPrefacePriorityFrames checks the preface order: SETTINGS, then
// WINDOW_UPDATE, then the PRIORITY frames, and the first stream id.
func TestPrefacePriorityFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := &Config{
			Settings:         []Setting{{ID: SettingInitialWindowSize, Val: 131072}},
			ConnWindowUpdate: 12517377,
			PriorityFrames: []PriorityFrame{
				{3, PriorityParam{Weight: 200}},
				{5, PriorityParam{StreamDep: 3, Exclusive: true, Weight: 100}},
			},
			FirstStreamID: 13,
		}
		cc, p := newPeer(t, cfg.Clone())
		want := []string{
			"000006040000000000000400020000",
			"00000408000000000000bf0001",
			"00000502000000000300000000c8",
			"0000050200000000058000000364",
		}
		for i, w := range want {
			if got := hex.EncodeToString(p.next().raw()); got != w {
				t.Fatalf("frame %d: %s, want %s", i, got, w)
			}
		}
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		if h.StreamID != 13 || h.Flags&FlagPriority != 0 {
			t.Fatalf("HEADERS on %d flags %x", h.StreamID, h.Flags)
		}
		p.writeSettings()
		p.writeHeaders(13, true, ":status", "204")
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	})
}
