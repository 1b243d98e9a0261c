package h2

import (
	"context"
	"encoding/binary"
	"testing"
	"testing/synctest"
)

// TestDroppedResponseReturnsCredit (RELIABILITY L-18): a response the
// server drops early, resetting the stream while its body sits unread,
// gives the unread bytes' connection credit back at once, before the
// caller reads or closes the body, as an early Close does
// (TestBodyCloseEarlyReturnsCredit): the connection window is not lost
// and the stream's slot is free. (A request context that ends while no
// Read waits is seen at the next Read or Close; until then the stream and
// its unread bytes stay: see the row.)
func TestDroppedResponseReturnsCredit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig(), Setting{ID: SettingMaxConcurrentStreams, Val: 1})
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, false, ":status", "200")
		p.writeData(h.StreamID, false, make([]byte, 16000))
		p.writeData(h.StreamID, false, make([]byte, 16000))
		p.writeData(h.StreamID, false, make([]byte, 1000)) // past half the window: an update is owed
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		synctest.Wait()
		p.write(appendRSTStream(nil, h.StreamID, ErrCodeInternal))
		wu := p.nextOf(FrameWindowUpdate)
		if wu.StreamID != 0 || binary.BigEndian.Uint32(wu.payload) != 33000 {
			t.Fatalf("WINDOW_UPDATE %d +%d, want 0 +33000", wu.StreamID, binary.BigEndian.Uint32(wu.payload))
		}
		synctest.Wait()
		if !cc.CanTakeNewRequest() {
			t.Fatal("the reset stream, its body unread, still holds the only stream slot")
		}
		_, err := r.resp.Body.Read(make([]byte, 1))
		wantStreamError(t, err, ErrCodeInternal)
		r.resp.Body.Close()
	})
}
