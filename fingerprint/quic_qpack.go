package fingerprint

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/quic-go/quic-go"
)

// errCodeQPACKEncoderStream is QPACK_ENCODER_STREAM_ERROR (RFC 9204 §6).
const errCodeQPACKEncoderStream = 0x201

// qpackConn is one QUIC connection's QPACK decoding when the server
// allows a dynamic table (Server.QPACKMaxTableCapacity): the client's
// encoder stream feeds a decoder of internal/h3's, whose inserts and
// sections the server acknowledges on its decoder stream as a real server
// does, so that a browser's encoder sees what it would see there.
type qpackConn struct {
	c   *quic.Conn
	dec *h3.QPACKDecoder

	mu  sync.Mutex
	out *quic.SendStream // the server's decoder stream
}

// qpackSettings returns the QPACK settings the server advertises: none
// when it allows no dynamic table, unless AnnounceQPACK.
func (s *Server) qpackSettings() []h3wire.Setting {
	if s.QPACKMaxTableCapacity == 0 && !s.AnnounceQPACK {
		return nil
	}
	return []h3wire.Setting{
		{ID: h3wire.SettingQPACKMaxTableCapacity, Value: s.QPACKMaxTableCapacity},
		{ID: h3wire.SettingQPACKBlockedStreams, Value: s.QPACKBlockedStreams},
	}
}

// holdSettings waits Server.settingsDelay, or until c ends.
func (s *Server) holdSettings(c *quic.Conn) {
	if s.settingsDelay <= 0 {
		return
	}
	t := time.NewTimer(s.settingsDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.Context().Done():
	}
}

// newQPACKConn returns c's decoding state, nil when the server allows no
// dynamic table. It opens the server's encoder and decoder streams (the
// encoder stream stays empty: responses use the static table) and notes
// the advertised settings in lc's record, which reading it back needs.
func (s *Server) newQPACKConn(c *quic.Conn, lc *liveConn) *qpackConn {
	if s.QPACKMaxTableCapacity == 0 {
		return nil
	}
	lc.mu.Lock()
	lc.rec.QUIC.QPACKMaxTableCapacity = s.QPACKMaxTableCapacity
	lc.rec.QUIC.QPACKBlockedStreams = s.QPACKBlockedStreams
	lc.mu.Unlock()
	qc := &qpackConn{c: c, dec: h3.NewQPACKDecoder(s.QPACKMaxTableCapacity, int(s.QPACKBlockedStreams))}
	if enc, err := c.OpenUniStream(); err == nil {
		enc.Write(quicwire.AppendVarint(nil, uint64(h3wire.StreamQPACKEncoder)))
	}
	if out, err := c.OpenUniStream(); err == nil {
		out.Write(quicwire.AppendVarint(nil, uint64(h3wire.StreamQPACKDecoder)))
		qc.out = out
	}
	return qc
}

// writeLocked writes decoder stream instructions, with mu held.
func (qc *qpackConn) writeLocked(b []byte) {
	if qc.out != nil {
		qc.out.Write(b)
	}
}

// uniReader tells a client's unidirectional stream's type from its first
// bytes and passes the rest of an encoder stream to the decoder.
type uniReader struct {
	qc   *qpackConn
	head []byte // the type varint while incomplete
	typ  int64  // -1 until known
}

// uniReader returns a reader for a new stream; nil (which reads
// nothing) for a connection with no dynamic table.
func (qc *qpackConn) uniReader() *uniReader {
	if qc == nil {
		return nil
	}
	return &uniReader{qc: qc, typ: -1}
}

// read takes the stream's next bytes. An encoder stream instruction that
// does not apply closes the connection with QPACK_ENCODER_STREAM_ERROR.
func (u *uniReader) read(p []byte) {
	if u == nil {
		return
	}
	if u.typ < 0 {
		u.head = append(u.head, p...)
		t, n := quicwire.Varint(u.head)
		if n == 0 {
			if len(u.head) >= 8 {
				u.typ = 0x21 // not a type this reader needs
			}
			return
		}
		u.typ = int64(t)
		p = u.head[n:]
	}
	if u.typ != int64(h3wire.StreamQPACKEncoder) || len(p) == 0 {
		return
	}
	// Counted and written under mu: a section that needs these inserts
	// is decoded once Feed has them, and its Section Acknowledgment
	// (under mu too) must follow the increment that counts them, or the
	// client counts them twice (guise's then fails with
	// QPACK_DECODER_STREAM_ERROR, as it did once under -race in CI).
	u.qc.mu.Lock()
	_, inc, err := u.qc.dec.Feed(p)
	if err == nil && inc > 0 {
		u.qc.writeLocked(h3.AppendInsertCountIncrement(nil, inc))
	}
	u.qc.mu.Unlock()
	if err != nil {
		u.qc.c.CloseWithError(errCodeQPACKEncoderStream, err.Error())
	}
}

// decode decodes a request's HEADERS payload, waiting as a blocked
// stream (at most wait) for the inserts it needs, and acknowledges a
// section that used the dynamic table.
func (qc *qpackConn) decode(streamID uint64, block []byte, wait time.Duration) ([]h3wire.Field, error) {
	ric, _, err := qc.dec.Prefix(block)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for {
		ch, ok := qc.dec.Ready(ric)
		if ok {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, errors.New("fingerprint: qpack: inserts a section needs did not arrive")
		case <-qc.c.Context().Done():
			return nil, qc.c.Context().Err()
		}
	}
	_, _, lines, err := qc.dec.Decode(block, maxH3FieldSection)
	if err != nil {
		return nil, err
	}
	if ric > 0 {
		qc.mu.Lock()
		qc.writeLocked(h3.AppendSectionAck(nil, streamID))
		qc.mu.Unlock()
	}
	out := make([]h3wire.Field, len(lines))
	for i, l := range lines {
		out[i] = h3wire.Field{Name: l.Name, Value: l.Value}
	}
	return out, nil
}
