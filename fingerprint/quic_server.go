package fingerprint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/qpackref"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
)

// quicSide is the Server's QUIC listener: quic-go completes the handshake
// on a UDP socket the server wraps to record every datagram, and the
// server answers HTTP/3 itself, reading the streams raw.
type quicSide struct {
	udp   *net.UDPConn
	tr    *quic.Transport
	ln    *quic.EarlyListener
	conns map[string]*liveConn // by client address; guarded by Server.mu
	open  map[*quic.Conn]struct{}
	// pending are the handshake deadlines of registered connections.
	pending []*time.Timer
	wg      sync.WaitGroup // accept loop and connection goroutines
}

// listenQUIC opens the UDP side on the TCP listener's address.
func (s *Server) listenQUIC(tcp net.Addr) error {
	ta := tcp.(*net.TCPAddr)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: ta.IP, Port: ta.Port, Zone: ta.Zone})
	if err != nil {
		return err
	}
	q := &quicSide{udp: udp, conns: map[string]*liveConn{}, open: map[*quic.Conn]struct{}{}}
	q.tr = &quic.Transport{Conn: &tapConn{u: udp, srv: s}, ConnContext: s.quicConnContext}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{s.ca.Leaf()}, NextProtos: []string{ProtoH3}}
	// ListenEarly with Allow0RTT: the session tickets crypto/tls issues
	// allow early data, so a resumed connection can carry 0-RTT requests,
	// which the server serves before the handshake completes.
	q.ln, err = q.tr.ListenEarly(tlsConf, &quic.Config{
		HandshakeIdleTimeout: s.handshakeTimeout(),
		MaxIdleTimeout:       s.idleTimeout(),
		Allow0RTT:            true,
		Tracer:               earlyTracer,
	})
	if err != nil {
		udp.Close()
		return err
	}
	s.quic = q
	q.wg.Add(1)
	go s.acceptQUIC(q)
	return nil
}

// quicConnContext gives a connection quic-go accepts the record that
// quicDatagram started for its client, for earlyTracer.
func (s *Server) quicConnContext(ctx context.Context, ci *quic.ClientInfo) (context.Context, error) {
	s.mu.Lock()
	lc := s.quic.conns[ci.RemoteAddr.String()]
	s.mu.Unlock()
	if lc == nil {
		return ctx, nil
	}
	return context.WithValue(ctx, liveConnKey{}, lc), nil
}

// earlyTracer traces a connection for the one fact the recorder takes
// from quic-go's view of its packets: which streams began in 0-RTT.
// Whether the handshake had completed when the server accepted a stream
// is a race the server's scheduling decides (under load a stream that
// came in 0-RTT was accepted after it); the packet type is not.
func earlyTracer(ctx context.Context, _ bool, _ quic.ConnectionID) qlogwriter.Trace {
	lc, _ := ctx.Value(liveConnKey{}).(*liveConn)
	if lc == nil {
		return nil
	}
	return earlyTrace{lc}
}

// earlyTrace is a qlogwriter.Trace and its own Recorder.
type earlyTrace struct{ lc *liveConn }

func (t earlyTrace) AddProducer() qlogwriter.Recorder { return t }
func (earlyTrace) Close() error                       { return nil }

func (t earlyTrace) RecordEvent(ev qlogwriter.Event) {
	p, ok := ev.(qlog.PacketReceived)
	if !ok || p.Header.PacketType != qlog.PacketType0RTT {
		return
	}
	for _, f := range p.Frames {
		if sf, ok := f.Frame.(*qlog.StreamFrame); ok && sf.Offset == 0 {
			t.lc.earlyStream(uint64(sf.StreamID))
		}
	}
}

// earlyStream marks stream id as begun in a 0-RTT packet, whether or not
// the server has accepted it yet.
func (lc *liveConn) earlyStream(id uint64) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.early0RTT == nil {
		lc.early0RTT = map[uint64]bool{}
	}
	if len(lc.early0RTT) < maxQUICStreams {
		lc.early0RTT[id] = true
	}
	if qr := lc.rec.QUIC; qr != nil {
		for i := range qr.Streams {
			if qr.Streams[i].ID == id {
				qr.Streams[i].Early = true
			}
		}
	}
}

// closeQUIC ends every QUIC connection and waits for their goroutines.
func (s *Server) closeQUIC() {
	q := s.quic
	if q == nil {
		return
	}
	s.mu.Lock()
	for c := range q.open {
		c.CloseWithError(0, "server closed")
	}
	for _, t := range q.pending {
		t.Stop()
	}
	lcs := make([]*liveConn, 0, len(q.conns))
	for _, lc := range q.conns {
		lcs = append(lcs, lc)
	}
	s.mu.Unlock()
	q.ln.Close()
	q.tr.Close()
	q.udp.Close()
	q.wg.Wait()
	for _, lc := range lcs {
		lc.finish("fingerprint: server closed")
	}
}

// SPKIHash returns the base64 SHA-256 of the leaf certificate's public
// key, what Chromium's --ignore-certificate-errors-spki-list takes (its
// QUIC ignores --ignore-certificate-errors alone); "" before Start.
func (s *Server) SPKIHash() string {
	s.mu.Lock()
	ca := s.ca
	s.mu.Unlock()
	if ca == nil {
		return ""
	}
	leaf, err := x509.ParseCertificate(ca.Leaf().Certificate[0])
	if err != nil {
		return ""
	}
	h := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(h[:])
}

// tapConn is the UDP socket quic-go reads through: every datagram from a
// client is recorded before quic-go sees it. It is a plain net.PacketConn
// (no ReadMsgUDP), so quic-go reads one datagram at a time.
type tapConn struct {
	u   *net.UDPConn
	srv *Server
}

func (c *tapConn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, addr, err := c.u.ReadFrom(p)
	if err == nil {
		c.srv.quicDatagram(addr, p[:n])
	}
	return n, addr, err
}

func (c *tapConn) WriteTo(p []byte, addr net.Addr) (int, error) { return c.u.WriteTo(p, addr) }
func (c *tapConn) Close() error                                 { return c.u.Close() }
func (c *tapConn) LocalAddr() net.Addr                          { return c.u.LocalAddr() }
func (c *tapConn) SetDeadline(t time.Time) error                { return c.u.SetDeadline(t) }
func (c *tapConn) SetReadDeadline(t time.Time) error            { return c.u.SetReadDeadline(t) }
func (c *tapConn) SetWriteDeadline(t time.Time) error           { return c.u.SetWriteDeadline(t) }
func (c *tapConn) SetReadBuffer(n int) error                    { return c.u.SetReadBuffer(n) }
func (c *tapConn) SetWriteBuffer(n int) error                   { return c.u.SetWriteBuffer(n) }

// quicDatagram records a datagram from addr. A client Initial with a new
// Source Connection ID starts a new connection record; datagrams of no
// known connection are ignored (quic-go drops them too).
func (s *Server) quicDatagram(addr net.Addr, b []byte) {
	key := addr.String()
	var scid []byte
	if len(b) > 0 && b[0]&0xf0 == 0xc0 { // long header, Initial
		if h, err := quicwire.ParseHeader(b); err == nil && h.Type == quicwire.PacketInitial {
			scid = h.SCID
		}
	}
	s.mu.Lock()
	q := s.quic
	lc := q.conns[key]
	s.mu.Unlock()
	if scid != nil && (lc == nil || !bytes.Equal(lc.quicSCIDOf(), scid)) {
		var ok bool
		if lc, ok = s.register(nil, key, s.quic.udp.LocalAddr().String(), TransportQUIC); !ok {
			return
		}
		lc.mu.Lock()
		lc.quicSCID = bytes.Clone(scid)
		lc.mu.Unlock()
		s.mu.Lock()
		if len(q.conns) >= DefaultMaxRecords {
			clear(q.conns) // bounded: older connections stop being recorded
			q.pending = q.pending[:0]
		}
		q.conns[key] = lc
		// A handshake that never completes still ends its record.
		q.pending = append(q.pending, time.AfterFunc(s.handshakeTimeout(), func() {
			lc.mu.Lock()
			done := lc.rec.Protocol != ""
			lc.mu.Unlock()
			if !done {
				lc.finish("fingerprint: quic handshake did not complete")
			}
		}))
		s.mu.Unlock()
	}
	if lc == nil {
		return
	}
	lc.mu.Lock()
	qr := lc.rec.QUIC
	qr.DatagramsTotal++
	if len(qr.Datagrams) < maxQUICDatagrams {
		d := QUICDatagram{Size: len(b)}
		if b[0]&0x80 != 0 {
			d.Data = bytes.Clone(b)
		}
		qr.Datagrams = append(qr.Datagrams, d)
	}
	lc.mu.Unlock()
	s.notify()
}

func (lc *liveConn) quicSCIDOf() []byte {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.quicSCID
}

// clone returns a copy whose slices later appends cannot reach; nil for
// nil.
func (q *QUICRecord) clone() *QUICRecord {
	if q == nil {
		return nil
	}
	c := *q
	c.Datagrams = q.Datagrams[:len(q.Datagrams):len(q.Datagrams)]
	c.Streams = make([]QUICStream, len(q.Streams))
	for i, st := range q.Streams {
		st.Data = st.Data[:len(st.Data):len(st.Data)]
		c.Streams[i] = st
	}
	return &c
}

// streamData records bytes of stream id; it returns the stream's index.
func (lc *liveConn) streamData(idx int, id uint64, p []byte, fin bool) int {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	qr := lc.rec.QUIC
	if idx < 0 {
		if len(qr.Streams) >= maxQUICStreams {
			return -2 // not kept
		}
		qr.Streams = append(qr.Streams, QUICStream{ID: id, Early: lc.early0RTT[id], At: time.Since(lc.rec.Start)})
		idx = len(qr.Streams) - 1
	}
	if idx == -2 {
		return idx
	}
	st := &qr.Streams[idx]
	st.Total += int64(len(p))
	if room := maxQUICStreamBytes - len(st.Data); room > 0 {
		st.Data = append(st.Data, p[:min(room, len(p))]...)
	}
	st.Fin = st.Fin || fin
	return idx
}

func (s *Server) acceptQUIC(q *quicSide) {
	defer q.wg.Done()
	for {
		c, err := q.ln.Accept(context.Background())
		if err != nil {
			return
		}
		s.mu.Lock()
		lc := q.conns[c.RemoteAddr().String()]
		if lc == nil || s.closed {
			s.mu.Unlock()
			c.CloseWithError(0, "")
			continue
		}
		q.open[c] = struct{}{}
		s.mu.Unlock()
		q.wg.Add(1)
		go s.serveQUIC(q, c, lc)
	}
}

// h3Conn is what a request handler needs of its connection.
type h3Conn struct {
	c    *quic.Conn
	mu   sync.Mutex // over ctrl's writes
	ctrl *quic.SendStream
}

// serveQUIC answers HTTP/3 on one connection until it closes. The
// connection is accepted early, so streams that came in 0-RTT packets are
// served before the handshake completes.
func (s *Server) serveQUIC(q *quicSide, c *quic.Conn, lc *liveConn) {
	defer q.wg.Done()
	hc := &h3Conn{c: c}
	var wg sync.WaitGroup
	// Every stream is read as it arrives, so that each one's first bytes
	// are timed (QUICStream.At) even while the SETTINGS are held back;
	// an encoder stream's instructions reach the decoder, and requests
	// are answered, once the SETTINGS are sent and qc is known (ready).
	var qc *qpackConn
	ready := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			u, err := c.AcceptUniStream(context.Background())
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.readUni(lc, u, ready, func() *uniReader { return qc.uniReader() })
			}()
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ready)
		s.holdSettings(c)
		if ctrl, err := c.OpenUniStream(); err == nil {
			// The server's control stream: SETTINGS with the QPACK
			// settings it advertises (none by default: no table).
			b := quicwire.AppendVarint(nil, uint64(h3wire.StreamControl))
			b = h3wire.AppendSettings(b, append([]h3wire.Setting{{ID: h3wire.SettingMaxFieldSectionSize, Value: maxH3FieldSection}},
				s.qpackSettings()...)...)
			ctrl.Write(b)
			hc.ctrl = ctrl
		}
		qc = s.newQPACKConn(c, lc) // nil unless a dynamic table is allowed
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-c.HandshakeComplete():
		case <-c.Context().Done():
			return
		}
		st := c.ConnectionState()
		lc.mu.Lock()
		lc.rec.Negotiated = negotiated(st.TLS)
		lc.rec.Protocol = ProtoH3
		lc.rec.QUIC.Used0RTT = st.Used0RTT
		lc.mu.Unlock()
		s.notify()
	}()
	for {
		st, err := c.AcceptStream(context.Background())
		if err != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveH3Request(lc, hc, st, ready, func() *qpackConn { return qc })
		}()
	}
	c.CloseWithError(0, "")
	wg.Wait()
	s.mu.Lock()
	delete(q.open, c)
	s.mu.Unlock()
	lc.finish("")
}

// readUni records a unidirectional stream until it ends. What it read
// before ready is closed goes to the stream's uniReader (newUR) then.
func (s *Server) readUni(lc *liveConn, u *quic.ReceiveStream, ready <-chan struct{}, newUR func() *uniReader) {
	var mu sync.Mutex // over ur, held and started
	var ur *uniReader
	var held []byte
	started := false
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		<-ready
		mu.Lock()
		ur, started = newUR(), true
		ur.read(held)
		held = nil
		mu.Unlock()
	}()
	defer func() { <-fed }()
	idx := -1
	buf := make([]byte, 4096)
	for {
		n, err := u.Read(buf)
		if n > 0 || err == io.EOF {
			idx = lc.streamData(idx, uint64(u.StreamID()), buf[:n], err == io.EOF)
			mu.Lock()
			if started {
				ur.read(buf[:n])
			} else {
				held = append(held, buf[:n]...)
			}
			mu.Unlock()
			s.notify()
		}
		if err != nil {
			return
		}
	}
}

// h3Pixel is a 1x1 GIF, the page's image.
var h3Pixel = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

// H3Page is the page the echo server serves over HTTP/3 at "/": it makes
// the browser send an image request and a fetch() on the same connection,
// then /h3/close (after which the server sends GOAWAY) and /h3/resume,
// which goes out on a new connection that resumes the TLS session (and
// may carry it in 0-RTT). Like the TCP page it tries close and resume up
// to three times, until the answer says the connection resumed, and an
// image, /h3/wait.gif, holds the load event until then (Firefox's
// --screenshot ends at load).
const H3Page = `<!doctype html><html><head><title>guise h3</title></head><body>` +
	`<img src="/h3/pixel.gif"><img src="/h3/wait.gif"><script>(async () => {` +
	`var t = await (await fetch("/h3/fetch")).text();` +
	`for (var i = 1; i <= 3; i++) {` +
	`try { await (await fetch("/h3/close")).text();` +
	` var r = await (await fetch("/h3/resume?try=" + i)).json(); t += " resume " + r.resumed + " early " + r.early;` +
	` if (r.resumed) { break; } } catch (e) { t += " failed " + e; } }` +
	`document.title = t })()</script>` +
	`</body></html>`

// H3FirstPage is the first connection of H3Page alone: its image and its
// fetch(), with no close and resume after them.
const H3FirstPage = `<!doctype html><html><head><title>guise h3</title></head><body>` +
	`<img src="/h3/pixel.gif"><script>fetch("/h3/fetch").then(r => r.text()).then(t => { document.title = t })</script>` +
	`</body></html>`

// serveH3Request reads a request stream, answers its HEADERS, and keeps
// recording until the client ends the stream.
// It answers once ready is closed (the server's SETTINGS sent), with
// the connection's qpackConn (qcf).
func (s *Server) serveH3Request(lc *liveConn, hc *h3Conn, st *quic.Stream, ready <-chan struct{}, qcf func() *qpackConn) {
	st.SetReadDeadline(time.Now().Add(s.handshakeTimeout()))
	idx := -1
	var in []byte
	answered := false
	buf := make([]byte, 4096)
	for {
		n, err := st.Read(buf)
		if n > 0 || err == io.EOF {
			idx = lc.streamData(idx, uint64(st.StreamID()), buf[:n], err == io.EOF)
			if !answered && len(in) < maxQUICStreamBytes {
				in = append(in, buf[:n]...)
				if f, perr := h3wire.ParseFrame(in); perr == nil && f.Type == h3wire.FrameHeaders {
					answered = true
					<-ready
					s.answerH3(lc, hc, st, f.Payload, qcf())
				} else if perr != nil && !errors.Is(perr, h3wire.ErrTruncated) {
					st.CancelRead(0x101) // H3_GENERAL_PROTOCOL_ERROR
					st.CancelWrite(0x101)
					return
				}
			}
			s.notify()
		}
		if err != nil {
			break
		}
	}
	if !answered {
		st.CancelWrite(0x10c) // H3_REQUEST_INCOMPLETE
	}
}

// answerH3 writes the response to a request whose HEADERS payload is
// block.
func (s *Server) answerH3(lc *liveConn, hc *h3Conn, st *quic.Stream, block []byte, qc *qpackConn) {
	path := "/"
	if qc != nil {
		if fs, err := qc.decode(uint64(st.StreamID()), block, s.handshakeTimeout()); err == nil {
			if p := fields.Header(toFields(fs)).Get(":path"); p != "" {
				path = p
			}
		}
	} else if fs, err := qpackref.DecodeFieldSection(block, maxH3FieldSection); err == nil {
		if p := fields.Header(toFields(fs.Fields)).Get(":path"); p != "" {
			path = p
		}
	}
	path, query, _ := strings.Cut(path, "?")
	ctype, body := "text/plain; charset=utf-8", []byte("ok")
	switch path {
	case "/":
		s.h3Pages.Add(1)
		page := H3Page
		if s.h3FirstPage {
			page = H3FirstPage
		}
		ctype, body = "text/html; charset=utf-8", []byte(page)
	case "/h3/pixel.gif":
		ctype, body = "image/gif", h3Pixel
	case "/h3/wait.gif":
		s.waitH3Resume()
		ctype, body = "image/gif", h3Pixel
	case "/h3/close":
		// GOAWAY past this request: the client sends later requests on
		// a new connection, and ends this one when it is done with it.
		hc.mu.Lock()
		if hc.ctrl != nil {
			hc.ctrl.Write(h3wire.AppendFrame(nil, h3wire.FrameGoAway, quicwire.AppendVarint(nil, uint64(st.StreamID())+4)))
		}
		hc.mu.Unlock()
	case "/h3/resume":
		ctype, body = "application/json", s.h3Resume(hc.c, query)
	}
	head := h3wire.AppendResponseSection(nil,
		h3wire.Field{Name: "content-type", Value: ctype},
		h3wire.Field{Name: "cache-control", Value: "no-store"})
	out := h3wire.AppendFrame(nil, h3wire.FrameHeaders, head)
	out = h3wire.AppendFrame(out, h3wire.FrameData, body)
	st.SetWriteDeadline(time.Now().Add(s.handshakeTimeout()))
	st.Write(out)
	st.Close()
	lc.mu.Lock()
	if lc.rec.QUIC.FirstResponse == 0 {
		lc.rec.QUIC.FirstResponse = time.Since(lc.rec.Start)
	}
	lc.rec.Requests++
	lc.mu.Unlock()
}

// h3Resume answers /h3/resume: whether the connection resumed a session
// and whether it used 0-RTT, known once the handshake completes. The
// page's resume step counts as done when it resumed or at the last try.
func (s *Server) h3Resume(c *quic.Conn, query string) []byte {
	select {
	case <-c.HandshakeComplete():
	case <-c.Context().Done():
	case <-time.After(s.handshakeTimeout()):
	}
	st := c.ConnectionState()
	resumed := st.TLS.DidResume
	if resumed || query == "try="+strconv.Itoa(maxResumeTries) {
		s.h3Resumes.Add(1)
		s.notify()
	}
	return fmt.Appendf(nil, "{\"ok\":true,\"resumed\":%t,\"early\":%t}\n", resumed, st.Used0RTT)
}

// waitH3Resume returns once every HTTP/3 page served so far was followed
// by its resume step, or after waitLimit.
func (s *Server) waitH3Resume() {
	deadline := time.After(waitLimit)
	for s.h3Resumes.Load() < s.h3Pages.Load() {
		ch := s.Changed()
		if s.h3Resumes.Load() >= s.h3Pages.Load() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			return
		case <-s.closing:
			return
		}
	}
}

func toFields(in []h3wire.Field) []fields.Field {
	out := make([]fields.Field, len(in))
	for i, f := range in {
		out[i] = fields.Field{Name: f.Name, Value: f.Value}
	}
	return out
}
