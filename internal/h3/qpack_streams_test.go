package h3

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h3wire"
)

// TestQPACKStreamsMoment (issue 29) writes, over an in-memory
// connection, the server's SETTINGS, waits until the client has them,
// then makes two requests, and reads the client's writes in order:
//   - Chromium's way (QPACKStreams off, CapacityAnnounced) against
//     SETTINGS that announce capacity 0: nothing but the control stream
//     and the first request, which Chromium encodes before it reads the
//     SETTINGS however early they came; then, before the second
//     request's HEADERS, the encoder stream on 10 with its type and Set
//     Dynamic Table Capacity 0 in one write, nothing on 6
//     (fingerprint/testdata/recordings/chromium-156-h3notable-*);
//     against 65536 and no blocked streams the same with 65536; against
//     SETTINGS without the QPACK settings, no QPACK stream at all;
//   - Firefox's way (QPACKStreams, CapacityAllowed): the encoder and
//     decoder streams on 6 and 10 with their types at once, and no
//     instruction against capacity 0 (firefox-esr-153-h3notable-*).
func TestQPACKStreamsMoment(t *testing.T) {
	chrome := &Config{QPACKDynamic: DynamicInsertAll, QPACKCapacity: CapacityAnnounced}
	firefox := &Config{QPACKDynamic: DynamicInsertNewNames, QPACKStreams: true}
	cap0 := []h3wire.Setting{{ID: h3wire.SettingQPACKMaxTableCapacity, Value: 0}, {ID: h3wire.SettingQPACKBlockedStreams, Value: 0}}
	cap64k := []h3wire.Setting{{ID: h3wire.SettingQPACKMaxTableCapacity, Value: 65536}, {ID: h3wire.SettingQPACKBlockedStreams, Value: 0}}
	for _, c := range []struct {
		name     string
		cfg      *Config
		settings []h3wire.Setting
		// want are the writes other than the control stream's, by
		// stream and hex, with "start" once the SETTINGS are taken and
		// "<id> req" for a request's writes.
		want []string
	}{
		{"chrome announced 0", chrome, cap0, []string{"start", "0 req", "10 0220", "4 req"}},
		{"chrome 65536 no blocked", chrome, cap64k, []string{"start", "0 req", "10 023fe1ff03", "4 req"}},
		{"chrome not announced", chrome, nil, []string{"start", "0 req", "4 req"}},
		{"firefox announced 0", firefox, cap0, []string{"6 02", "10 03", "start", "0 req", "4 req"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := h3wire.AppendFrame(nil, h3wire.FrameHeaders, h3wire.AppendResponseSection(nil, h3wire.Field{Name: "content-length", Value: "2"}))
			resp = h3wire.AppendFrame(resp, h3wire.FrameData, []byte("ok"))
			ctrl := append([]byte{byte(h3wire.StreamControl)}, h3wire.AppendSettings(nil, c.settings...)...)
			qc := newFakeConn(resp, ctrl)
			qc.logWrites, qc.holdUni = true, true
			cc, err := NewClientConn(qc, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			for range 500 {
				if _, ok := cc.PeerSettings(); ok {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if _, ok := cc.PeerSettings(); !ok {
				t.Fatal("no SETTINGS within 5 s")
			}
			got := writeLog(qc.written())
			got = append(got, "start")
			n := len(qc.written())
			for range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				r, err := cc.RoundTrip(ctx, &Request{Method: "GET", Scheme: "https", Authority: "a", Path: "/"})
				if err == nil {
					_, err = io.ReadAll(r.Body)
					r.Body.Close()
				}
				cancel()
				if err != nil {
					t.Fatal(err)
				}
			}
			got = append(got, writeLog(qc.written()[n:])...)
			if !slices.Equal(got, c.want) {
				t.Errorf("writes\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// writeLog describes the writes but the control stream's: a request
// stream's as "<id> req", a QPACK stream's as "<id> <hex>".
func writeLog(ws []fakeWrite) []string {
	var out []string
	for _, w := range ws {
		switch {
		case w.id == 2:
		case w.id%4 == 0:
			if len(out) == 0 || out[len(out)-1] != fmt.Sprint(w.id, " req") {
				out = append(out, fmt.Sprint(w.id, " req"))
			}
		default:
			out = append(out, fmt.Sprint(w.id, " ", hex.EncodeToString(w.b)))
		}
	}
	return out
}

// TestQPACKStreamsNoCredit is RELIABILITY Q-85: a server that lets the
// client open only its control stream (RFC 9114 §6.2 requires room for
// three unidirectional streams) and announces capacity 0. The Chromium
// way waits for the credit to open its QPACK streams, as quiche does,
// but only until the request's context ends: the request's section is
// then static-only and the request returns (with the context's error, or
// its response if that came first), nothing is written on a QPACK
// stream, the instruction stays held, and Close returns.
func TestQPACKStreamsNoCredit(t *testing.T) {
	resp := h3wire.AppendFrame(nil, h3wire.FrameHeaders, h3wire.AppendResponseSection(nil, h3wire.Field{Name: "content-length", Value: "2"}))
	resp = h3wire.AppendFrame(resp, h3wire.FrameData, []byte("ok"))
	ctrl := append([]byte{byte(h3wire.StreamControl)}, h3wire.AppendSettings(nil,
		h3wire.Setting{ID: h3wire.SettingQPACKMaxTableCapacity, Value: 0}, h3wire.Setting{ID: h3wire.SettingQPACKBlockedStreams, Value: 0})...)
	qc := newFakeConn(resp, ctrl)
	qc.logWrites, qc.holdUni, qc.uniLimit = true, true, 1
	cc, err := NewClientConn(qc, &Config{QPACKDynamic: DynamicInsertAll, QPACKCapacity: CapacityAnnounced})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		if _, ok := cc.PeerSettings(); ok {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The first request is encoded before the SETTINGS are taken (as
	// Chromium's), so it needs no QPACK stream: the second waits.
	first, err := cc.RoundTrip(context.Background(), &Request{Method: "GET", Scheme: "https", Authority: "a", Path: "/"})
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(first.Body)
	first.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err := cc.RoundTrip(ctx, &Request{Method: "GET", Scheme: "https", Authority: "a", Path: "/"})
	if err == nil {
		_, err = io.ReadAll(r.Body)
		r.Body.Close()
	}
	// The section goes static-only once the wait ends; the request then
	// fails with its context or, when the response was quicker than the
	// stream's abort, succeeds: either way it returns.
	if d := time.Since(start); d < 200*time.Millisecond || d > 5*time.Second || err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("RoundTrip: %v after %v", err, d)
	}
	for _, w := range qc.written() {
		if w.id != 2 && w.id%4 != 0 {
			t.Errorf("written on stream %d: %x", w.id, w.b)
		}
	}
	cc.dyn.mu.Lock()
	held := len(cc.dyn.held)
	cc.dyn.mu.Unlock()
	if held == 0 {
		t.Error("the capacity instruction was dropped")
	}
	cc.Close()
}
