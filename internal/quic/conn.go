package quic

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/internal/tlsfp"
	"github.com/guise-http/guise/profile"
)

// Config is what Dial needs. Its fields are read by Dial and must not
// be changed while a Dial runs; the zero value of every optional field
// means its default.
type Config struct {
	// TLS holds the browser profile (TLS.Profile, whose QUIC part is
	// the first flight and whose transport parameters are the client's
	// advertised limits) and the certificate settings tlsfp.QUICClient
	// uses: RootCAs, TrustStore, InsecureSkipVerify. Required. ALPN is
	// always h3. TLS.Rand is not used: Rand is.
	TLS *tlsfp.Config
	// ServerName is the TLS server name. Required.
	ServerName string
	// Rand is the source of every drawn value (connection IDs, packet
	// numbers, GREASE, the layout's draws, the hello's). Nil means
	// crypto/rand.
	Rand io.Reader
	// HandshakeTimeout bounds the handshake; zero means 10 s.
	HandshakeTimeout time.Duration
	// MaxIdleTimeout closes the connection after that long without a
	// packet from the server. Zero means the profile's max_idle_timeout.
	// It only shortens what the profile advertises: the transport
	// parameter sent is always the profile's.
	MaxIdleTimeout time.Duration
}

// Clone returns a copy of c with its TLS config cloned.
func (c *Config) Clone() *Config {
	if c == nil {
		return nil
	}
	d := *c
	d.TLS = c.TLS.Clone()
	return &d
}

// Packet number spaces.
const (
	spInitial = iota
	spHandshake
	spApp
	numSpaces
)

var spaceLevel = [numSpaces]tlsfp.QUICLevel{tlsfp.QUICInitial, tlsfp.QUICHandshake, tlsfp.QUICApplication}

// maxCryptoBuffer bounds the CRYPTO data held beyond a gap at one level
// (CRYPTO_BUFFER_EXCEEDED past it).
const maxCryptoBuffer = 64 << 10

// maxAckRanges bounds the ranges an ACK frame reports; older ones are
// forgotten (their late duplicates are then dropped as old).
const maxAckRanges = 32

// space is one packet number space's state.
type space struct {
	nextPN       uint64
	largestAcked int64
	sent         []*sentPacket // by packet number; acked or lost ones are done
	// ackElicitingInFlight counts the sent ack-eliciting packets not
	// acked or lost; lastAckEliciting is when the latest was sent.
	ackElicitingInFlight int
	lastAckEliciting     time.Time
	lossTime             time.Time
	probes               int

	// receiving
	recv         rangeSet
	floor        uint64 // packet numbers below are treated as duplicates
	largestRecv  int64
	largestTime  time.Time
	ackNew       bool // a packet arrived since the last ACK sent
	ackNow       bool // send an ACK now
	unackedElic  int  // ack-eliciting packets since the last ACK sent
	ackDeadline  time.Time
	lastAck      time.Time // when the last ACK of this space was sent
	discarded    bool
	cryptoRecv   reassembly
	cryptoSend   []byte // every byte handed by TLS at this level
	cryptoNext   uint64 // next new byte to send
	cryptoLost   rangeSet
	cryptoAcked  rangeSet
	closePending bool
}

// Conn is a QUIC client connection. Its methods are safe for concurrent
// use. See the package documentation for its goroutine and lock.
type Conn struct {
	pc  net.PacketConn
	udp *net.UDPConn // pc, when it is one: reads and writes without allocating
	// connected is set when udp is connected to the server (net.DialUDP):
	// writes go without an address, and the kernel's ICMP port unreachable
	// ends the connection at once (a read error) instead of at the
	// handshake timeout.
	connected bool
	raddr     net.Addr
	rap       netip.AddrPort
	cfg       Config
	q         *profile.QUIC
	maxSize   int // datagram size of every packet sent

	mu       sync.Mutex
	tls      *tlsfp.QUICConn
	spaces   [numSpaces]space
	seal     [numSpaces]*quicwire.Keys
	open     [numSpaces]*quicwire.Keys
	nextOpen *quicwire.Keys // the 1-RTT read keys of the next phase
	prevOpen *quicwire.Keys
	keyPhase bool
	// seal0 protects 0-RTT packets: set when the hello offers 0-RTT and
	// the ticket came with the server's remembered limits, dropped once
	// the 1-RTT key is in or the server rejects it. early says the
	// connection sent (or may send) 0-RTT; earlyRejected that the server
	// declined it.
	seal0                *quicwire.Keys
	early, earlyRejected bool
	sent0RTT             int  // 0-RTT packets sent
	peerSet              bool // the server's transport parameters arrived
	// held is the first flight's last Initial packet, kept back to share
	// its datagram with the first 0-RTT packet (see ReleaseFlight) until
	// released (heldFree) or heldUntil.
	held      []byte
	heldFree  bool
	heldUntil time.Time
	// keyUpdates counts the server's key updates followed;
	// lostPackets the packets declared lost.
	keyUpdates, lostPackets int

	odcid, dcid, scid []byte
	token             []byte
	retrySCID         []byte
	gotServerPacket   bool
	gotServerInitial  bool
	sentHandshake     bool
	tlsDone           bool
	confirmed         bool
	cids              []connID   // the server's connection IDs, by sequence
	localCIDs         []localCID // the client's (see cid.go), once it issues more
	nextCIDSeq        uint64
	cidSeq            uint64 // the sequence of dcid
	retireQueue       []uint64
	resetTokens       [][16]byte
	pathResponse      [][8]byte

	local, peer params
	rtt         rttStats
	cc          newReno
	ptoCount    int
	inFlight    int
	lastElic    time.Time // last ack-eliciting packet sent, any space
	idle        time.Duration
	lastRecv    time.Time
	idleStart   time.Time // idle timer start: last receive, or first ack-eliciting send after it
	armed       time.Time

	streams
	pool      []*sentPacket
	ackRanges [][2]uint64
	b         builder

	closed   bool
	err      error
	done     chan struct{}
	hsDone   chan struct{}
	loopDone chan struct{}
	rbuf     []byte

	// sendCh wakes the sender goroutine (one slot): application calls
	// queue frames and flush, so that what several calls queue before the
	// sender runs leaves in one datagram (a request's PRIORITY_UPDATE,
	// HEADERS and FIN; 16 concurrent requests' HEADERS). Nil for a Conn
	// without goroutines (tests), which sends from the caller.
	sendCh     chan struct{}
	senderDone chan struct{}

	// rx reads the datagrams queued in one recvmmsg (Linux), nil where
	// reads are one by one into rbuf (rlen bytes, rfrom: from the
	// server). tx sends runs of equal-sized datagrams with one sendmsg
	// (UDP_SEGMENT), nil where the kernel lacks it or refused it once
	// (gsoOff); out holds the run not yet sent: outN datagrams of outSeg
	// bytes, the last maybe shorter (outShort).
	rx       *rxBatch
	timeouts int // reads ended by the deadline (the timers), for tests
	rlen     int
	rfrom    bool
	tx       *txBatch
	gsoOff   bool
	out      []byte
	outN     int
	outSeg   int
	outShort bool
}

type connID struct {
	seq   uint64
	id    []byte
	token [16]byte
}

// params are one side's transport parameters as guise uses them.
type params struct {
	idleTimeout       time.Duration
	maxData           uint64
	bidiLocal         uint64 // initial_max_stream_data_bidi_local
	bidiRemote        uint64
	uni               uint64
	maxStreamsBidi    uint64
	maxStreamsUni     uint64
	ackDelayExponent  uint64
	maxAckDelay       time.Duration
	cidLimit          uint64
	maxUDPPayload     uint64
	resetToken        []byte
	maxDatagramFrame  uint64
	hasMinAckDelay    bool
	disableMigration  bool
	odcid, iscid      []byte
	rscid             []byte
	hasODCID, hasRSCD bool
}

func defaultParams() params {
	return params{ackDelayExponent: 3, maxAckDelay: 25 * time.Millisecond, cidLimit: 2, maxUDPPayload: 65527}
}

// parseParams reads encoded transport parameters.
func parseParams(b []byte) (params, error) {
	p := defaultParams()
	list, err := quicwire.ParseTransportParameters(b)
	if err != nil {
		return p, err
	}
	for _, tp := range list {
		v, _ := tp.Uint()
		switch tp.ID {
		case quicwire.ParamMaxIdleTimeout:
			p.idleTimeout = time.Duration(v) * time.Millisecond
		case quicwire.ParamInitialMaxData:
			p.maxData = v
		case quicwire.ParamInitialMaxStreamDataBidiLocal:
			p.bidiLocal = v
		case quicwire.ParamInitialMaxStreamDataBidiRemote:
			p.bidiRemote = v
		case quicwire.ParamInitialMaxStreamDataUni:
			p.uni = v
		case quicwire.ParamInitialMaxStreamsBidi:
			p.maxStreamsBidi = v
		case quicwire.ParamInitialMaxStreamsUni:
			p.maxStreamsUni = v
		case quicwire.ParamAckDelayExponent:
			p.ackDelayExponent = v
		case quicwire.ParamMaxAckDelay:
			p.maxAckDelay = time.Duration(v) * time.Millisecond
		case quicwire.ParamActiveConnectionIDLimit:
			p.cidLimit = v
		case quicwire.ParamMaxUDPPayloadSize:
			p.maxUDPPayload = v
		case quicwire.ParamStatelessResetToken:
			p.resetToken = tp.Value
		case quicwire.ParamMaxDatagramFrameSize:
			p.maxDatagramFrame = v
		case quicwire.ParamMinAckDelay:
			p.hasMinAckDelay = true
		case quicwire.ParamDisableActiveMigration:
			p.disableMigration = true
		case quicwire.ParamOriginalDestinationConnectionID:
			p.odcid, p.hasODCID = tp.Value, true
		case quicwire.ParamInitialSourceConnectionID:
			p.iscid = tp.Value
		case quicwire.ParamRetrySourceConnectionID:
			p.rscid, p.hasRSCD = tp.Value, true
		}
	}
	if p.maxStreamsBidi > 1<<60 || p.maxStreamsUni > 1<<60 {
		return p, errors.New("quic: max_streams beyond 2^60")
	}
	return p, nil
}

// Dial runs the handshake of a QUIC connection to raddr over pc and
// returns the connection once the TLS handshake is complete. The
// connection reads pc and sets its read deadline for as long as it
// lives; it never closes pc, which the caller closes after the
// connection is done. ctx bounds the handshake only.
func Dial(ctx context.Context, pc net.PacketConn, raddr net.Addr, cfg *Config) (*Conn, error) {
	if cfg == nil || cfg.TLS == nil || cfg.TLS.Profile == nil || cfg.TLS.Profile.QUIC == nil {
		return nil, errors.New("quic: config has no profile with quic data")
	}
	if cfg.ServerName == "" {
		return nil, errors.New("quic: config has no server name")
	}
	c := &Conn{pc: pc, raddr: raddr, cfg: *cfg,
		done: make(chan struct{}), hsDone: make(chan struct{}), loopDone: make(chan struct{})}
	if c.cfg.Rand == nil {
		c.cfg.Rand = rand.Reader
	}
	if c.cfg.HandshakeTimeout == 0 {
		c.cfg.HandshakeTimeout = 10 * time.Second
	}
	if u, ok := pc.(*net.UDPConn); ok {
		if ua, ok := raddr.(*net.UDPAddr); ok {
			c.udp, c.rap = u, ua.AddrPort()
			c.rap = netip.AddrPortFrom(c.rap.Addr().Unmap(), c.rap.Port())
			c.connected = u.RemoteAddr() != nil
		}
	}
	q := cfg.TLS.Profile.QUIC
	c.q = q
	c.maxSize = q.DatagramSize
	f, err := Start(q, c.cfg.Rand)
	if err != nil {
		return nil, err
	}
	tcfg := cfg.TLS.Clone()
	tcfg.Rand = c.cfg.Rand
	f.InitialRTT = tlsfp.QUICInitialRTT(cfg.ServerName, tcfg)
	tp, err := f.TransportParameters(q, c.cfg.Rand)
	if err != nil {
		return nil, err
	}
	if c.local, err = parseParams(tp); err != nil {
		return nil, fmt.Errorf("quic: the profile's transport parameters: %w", err)
	}
	c.tls, err = tlsfp.QUICClient(cfg.ServerName, tcfg, tp)
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, c.cfg.HandshakeTimeout)
	defer cancel()
	if err := c.tls.Start(context.WithoutCancel(hctx)); err != nil {
		c.tls.Close()
		return nil, err
	}
	c.odcid, c.dcid, c.scid = f.DCID, f.DCID, f.SCID
	c.seal[spInitial], c.open[spInitial] = quicwire.ClientInitialKeys(f.DCID), quicwire.ServerInitialKeys(f.DCID)
	c.init()
	c.mu.Lock()
	if err := c.drainTLS(); err != nil {
		c.mu.Unlock()
		c.tls.Close()
		return nil, err
	}
	hello := c.spaces[spInitial].cryptoSend
	// A resumed connection's Initials carry the token its ticket was
	// kept with.
	f.Token = c.tls.Token()
	c.token = f.Token
	if err := f.Build(q, hello, c.cfg.Rand); err != nil {
		c.mu.Unlock()
		c.tls.Close()
		return nil, err
	}
	now := time.Now()
	if c.seal0 != nil {
		if err := c.startEarly(); err != nil {
			c.mu.Unlock()
			c.tls.Close()
			return nil, err
		}
	}
	early := c.early
	s := &c.spaces[spInitial]
	s.nextPN = f.FirstPacketNumber
	for i, d := range f.Datagrams {
		p := c.newSent(s.nextPN, now, len(d))
		s.nextPN++
		for _, r := range f.ranges[i] {
			p.frames = append(p.frames, sentFrame{kind: sfCrypto, off: uint64(r[0]), n: r[1] - r[0]})
		}
		c.onSent(spInitial, p)
		if early && i == len(f.Datagrams)-1 && i > 0 && q.Layout == profile.LayoutSNISlice {
			// neqo sends the 0-RTT that follows the hello in the
			// flight's last datagram, after its Initial: held until
			// the caller has written it (ReleaseFlight).
			c.held = d[:f.packetLens[i]]
			c.heldUntil = now.Add(maxHold)
			break
		}
		if err := c.writeDatagram(d); err != nil {
			c.mu.Unlock()
			c.tls.Close()
			return nil, err
		}
	}
	s.cryptoNext = uint64(len(hello))
	c.idleStart = now
	c.armTimer(now)
	c.sendCh, c.senderDone = make(chan struct{}, 1), make(chan struct{})
	c.batch()
	c.mu.Unlock()
	go c.sender()
	go c.run()
	if early {
		// 0-RTT: the caller writes now; the handshake goes on in run,
		// bounded by the same timeout.
		timeout := c.cfg.HandshakeTimeout
		if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
			timeout = time.Until(d)
		}
		stop := time.AfterFunc(timeout, func() {
			c.mu.Lock()
			if !c.tlsDone {
				c.closeLocked(ErrHandshakeTimeout)
			}
			c.mu.Unlock()
		})
		go func() {
			select {
			case <-c.hsDone:
			case <-c.done:
			}
			stop.Stop()
		}()
		return c, nil
	}

	select {
	case <-c.hsDone:
		return c, nil
	case <-c.done:
		<-c.loopDone
		return nil, c.Err()
	case <-hctx.Done():
		err := ErrHandshakeTimeout
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		c.mu.Lock()
		c.closeLocked(err)
		c.mu.Unlock()
		<-c.loopDone
		return nil, err
	}
}

func (c *Conn) init() {
	for i := range c.spaces {
		c.spaces[i].largestAcked = -1
		c.spaces[i].largestRecv = -1
	}
	c.rtt.init()
	c.cc.init(c.maxSize)
	c.idle = c.local.idleTimeout
	if c.cfg.MaxIdleTimeout > 0 && (c.idle == 0 || c.cfg.MaxIdleTimeout < c.idle) {
		c.idle = c.cfg.MaxIdleTimeout
	}
	c.streams.init(c)
	c.b.buf = make([]byte, 0, c.maxSize)
}

// maxHold bounds how long the first flight's last datagram waits for the
// 0-RTT data it is to carry when the caller never calls ReleaseFlight
// (a connection dialed for a request that went elsewhere). A variable
// for tests.
var maxHold = 100 * time.Millisecond

// ReleaseFlight says the caller has written what its first 0-RTT packet
// is to carry (an HTTP/3 client's control streams and first request):
// the first flight's last datagram, when held back for it (Firefox's
// profile: neqo coalesces the two), goes now with it. Otherwise it does
// nothing.
func (c *Conn) ReleaseFlight() {
	c.mu.Lock()
	if c.held != nil && !c.heldFree {
		c.heldFree = true
		c.flush()
	}
	c.mu.Unlock()
}

// HandshakeComplete is closed when the handshake has completed. Dial
// returns before that when the connection resumes with 0-RTT: what is
// written until then goes in 0-RTT packets, which a server may replay, so
// a caller sends only idempotent requests before it is closed.
func (c *Conn) HandshakeComplete() <-chan struct{} { return c.hsDone }

// UsedEarlyData reports whether the connection sent 0-RTT that the server
// did not decline (valid once HandshakeComplete is closed).
func (c *Conn) UsedEarlyData() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.early && !c.earlyRejected
}

// startEarly takes the limits of 0-RTT data from the server's transport
// parameters remembered with the ticket (RFC 9000 §7.4.1: the flow
// control and stream limits, nothing else) until the new ones arrive.
func (c *Conn) startEarly() error {
	p, err := parseParams(c.tls.EarlyParams())
	if err != nil {
		c.seal0 = nil // a remembered value that does not parse: no 0-RTT
		return nil
	}
	c.peer.maxData, c.peer.bidiLocal, c.peer.bidiRemote, c.peer.uni = p.maxData, p.bidiLocal, p.bidiRemote, p.uni
	c.peer.maxStreamsBidi, c.peer.maxStreamsUni = p.maxStreamsBidi, p.maxStreamsUni
	c.streams.applyPeer(&c.peer)
	c.early = true
	return nil
}

// rejectEarly handles a server that declined 0-RTT: nothing sent in it
// arrived, so every 0-RTT packet's frames are queued again, for 1-RTT,
// without a congestion signal (RFC 9001 §4.6.2).
func (c *Conn) rejectEarly() error {
	c.seal0 = nil
	if !c.early {
		return nil
	}
	c.earlyRejected = true
	s := &c.spaces[spApp]
	for _, p := range s.sent {
		if p == nil || p.done {
			continue
		}
		p.done = true
		if p.inFlight {
			c.inFlight -= p.size
		}
		if p.ackEliciting {
			s.ackElicitingInFlight--
		}
		c.requeue(spApp, p)
	}
	c.compact(spApp)
	if c.peerSet {
		return c.streams.rejectedLimits(&c.peer)
	}
	return nil // the new limits come later (applyPeerParams checks them)
}

// Done is closed when the connection is gone; Err says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Resumed reports whether the handshake resumed a TLS session, from a
// ticket in Config.TLS.Sessions (which also keeps the tickets this
// connection receives).
func (c *Conn) Resumed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tlsDone && c.tls.Resumed()
}

// Err returns why the connection ended, or nil while it lives: a
// *ConnectionError (a CONNECTION_CLOSE sent or received),
// ErrIdleTimeout, ErrStatelessReset, ErrVersionNegotiation,
// ErrHandshakeTimeout, or the PacketConn's error.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// CloseWithError closes the connection with an application
// CONNECTION_CLOSE (HTTP/3's codes) and waits for its goroutine to end.
// Closing a closed connection does nothing.
func (c *Conn) CloseWithError(code uint64, reason string) error {
	c.mu.Lock()
	if !c.closed {
		c.sendClose(true, code, 0, reason)
		c.closeLocked(&ConnectionError{Code: code, App: true, Reason: reason})
	}
	c.mu.Unlock()
	<-c.loopDone
	return nil
}

// fail closes the connection with a transport error sent to the peer.
func (c *Conn) fail(code TransportErrorCode, ft quicwire.FrameType, reason string, cause error) {
	if c.closed {
		return
	}
	c.sendClose(false, uint64(code), ft, reason)
	c.closeLocked(&ConnectionError{Code: uint64(code), FrameType: uint64(ft), Reason: reason, Cause: cause})
}

// closeLocked ends the connection with err: no more packets are sent
// or read, every waiter wakes, the TLS handshake's goroutine ends.
func (c *Conn) closeLocked(err error) {
	if c.closed {
		return
	}
	c.closed = true
	c.err = err
	close(c.done)
	if c.tls != nil {
		c.tls.Close()
	}
	c.streams.closeAll(err)
	c.pc.SetReadDeadline(time.Unix(1, 0))
}

// run is the connection's goroutine: it reads datagrams and runs the
// timers.
func (c *Conn) run() {
	defer func() {
		if c.senderDone != nil {
			<-c.senderDone // ends with c.done, closed before run returns
		}
		close(c.loopDone)
	}()
	for {
		n, err := c.read()
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		now := time.Now()
		timers := false
		switch {
		case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
			c.timeouts++
			c.onTimers(now)
			timers = true
		case err != nil:
			c.closeLocked(fmt.Errorf("quic: reading the socket: %w", err))
		default:
			for i := 0; i < n && !c.closed; i++ {
				if b, ok := c.received(i); ok {
					c.handleDatagram(b, now)
				}
			}
			// a timer due while datagrams kept coming
			if t := c.nextTimer(now); !c.closed && !t.IsZero() && !now.Before(t) {
				c.onTimers(now)
				timers = true
			}
		}
		switch {
		case c.closed:
		case timers:
			// what a timer wants sent (probes, an ACK) leaves before the
			// timers are read again, so that a PTO's backoff counts the
			// probes sent and no deadline is left in the past
			c.send(now)
			c.armTimer(now)
		default:
			// The sender sends for the whole batch read (one ACK covers
			// it all) after the goroutines it woke have run: the ACK then
			// leaves with the requests they make next.
			c.armTimer(now)
			c.flush()
		}
		c.mu.Unlock()
	}
}

// read waits for datagrams until the read deadline and returns how many
// it read (received returns them): all those queued on the socket with
// batched reads, else one.
func (c *Conn) read() (int, error) {
	if c.rx != nil {
		return c.rx.read()
	}
	if c.rbuf == nil {
		c.rbuf = make([]byte, 65536) // only reads without rx need it
	}
	var n int
	var err error
	if c.udp != nil {
		var ap netip.AddrPort
		n, ap, err = c.udp.ReadFromUDPAddrPort(c.rbuf)
		if err == nil {
			ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
			c.rfrom = ap == c.rap
		}
	} else {
		var a net.Addr
		n, a, err = c.pc.ReadFrom(c.rbuf)
		if err == nil {
			c.rfrom = a.String() == c.raddr.String()
		}
	}
	c.rlen = n
	if err != nil {
		return 0, err
	}
	return 1, nil
}

// received returns the i-th datagram read, and whether it is the
// server's.
func (c *Conn) received(i int) ([]byte, bool) {
	if c.rx != nil {
		b, from, ok := c.rx.datagram(i)
		return b, ok && (c.connected || from == c.rap)
	}
	return c.rbuf[:c.rlen], c.rfrom
}

// batch sets up batched reads and GSO sends on a UDP socket.
func (c *Conn) batch() {
	if c.udp == nil {
		return
	}
	// the server sends no datagram larger than our max_udp_payload_size
	if size := int(c.local.maxUDPPayload); size >= 1200 && size <= 4096 {
		c.rx = newRxBatch(c.udp, size)
	}
	if c.tx = newTxBatch(c.udp, c.rap, c.connected); c.tx != nil {
		c.out = make([]byte, 0, 4*c.maxSize) // grows to maxRun
	}
}

// maxRun bounds the bytes of one UDP_SEGMENT send (the kernel takes up to
// 64 KiB less the headers).
const maxRun = 60000

// queueDatagram sends d, or adds it to the run of datagrams sent in one
// call by flushOut; send flushes before it returns.
func (c *Conn) queueDatagram(d []byte) error {
	if c.tx == nil {
		return c.writeDatagram(d)
	}
	if c.outN > 0 && (len(d) > c.outSeg || c.outShort || c.outN == gsoMaxSegments || len(c.out)+len(d) > maxRun) {
		if err := c.flushOut(); err != nil {
			return err
		}
	}
	if c.outN == 0 {
		c.outSeg, c.outShort = len(d), false
	} else if len(d) < c.outSeg {
		c.outShort = true // a shorter datagram ends the run
	}
	c.out = append(c.out, d...)
	c.outN++
	return nil
}

// flushOut sends the queued run: one datagram as it is, several with
// UDP_SEGMENT. When the kernel refuses segmentation (EIO, EINVAL), the
// run goes one datagram at a time and so does every later one.
func (c *Conn) flushOut() error {
	if c.outN == 0 {
		return nil
	}
	out, seg, n := c.out, c.outSeg, c.outN
	c.out, c.outN = c.out[:0], 0
	if c.closed {
		return nil // what was queued before the close is not sent after it
	}
	if n == 1 || c.tx == nil {
		return c.writeDatagram(out)
	}
	err := c.tx.write(out, seg)
	if err == nil || !gsoRefused(err) {
		return err
	}
	c.tx, c.gsoOff = nil, true
	for len(out) > 0 {
		k := min(seg, len(out))
		if err := c.writeDatagram(out[:k]); err != nil {
			return err
		}
		out = out[k:]
	}
	return nil
}

// flush sends what an application call queued: it wakes the sender
// goroutine, which sends once the callers running have queued what they
// will. Called with c.mu held.
func (c *Conn) flush() {
	if c.sendCh == nil {
		now := time.Now()
		c.send(now)
		c.armTimer(now)
		return
	}
	select {
	case c.sendCh <- struct{}{}:
	default: // already woken: it sends what is queued when it runs
	}
}

// sender is the goroutine that sends what application calls queued.
func (c *Conn) sender() {
	defer close(c.senderDone)
	for {
		select {
		case <-c.done:
			return
		case <-c.sendCh:
		}
		// The caller that woke the sender made it the next goroutine to
		// run; yielding first lets the other callers ready to run queue
		// their frames too (16 concurrent requests: a few datagrams, one
		// GSO send, rather than one each).
		runtime.Gosched()
		c.mu.Lock()
		if !c.closed {
			now := time.Now()
			c.send(now)
			c.armTimer(now)
		}
		c.mu.Unlock()
	}
}

// writeDatagram sends d to the server.
func (c *Conn) writeDatagram(d []byte) error {
	var err error
	switch {
	case c.connected:
		_, err = c.udp.Write(d)
	case c.udp != nil:
		_, err = c.udp.WriteToUDPAddrPort(d, c.rap)
	default:
		_, err = c.pc.WriteTo(d, c.raddr)
	}
	return err
}

// armTimer sets the socket's read deadline to the next timer. A deadline
// already set before it and still ahead is left: when it fires, onTimers
// finds nothing due and the deadline is set again, which costs less than
// moving it at every packet (each one moves the idle timer later).
func (c *Conn) armTimer(now time.Time) {
	next := c.nextTimer(now)
	if next.Equal(c.armed) {
		return
	}
	if !c.armed.IsZero() && c.armed.After(now) && (next.IsZero() || next.After(c.armed)) {
		return
	}
	c.armed = next
	c.pc.SetReadDeadline(next)
}

// nextTimer is the earliest of the ACK, loss, PTO and idle timers.
func (c *Conn) nextTimer(now time.Time) time.Time {
	var t time.Time
	earlier := func(x time.Time) {
		if !x.IsZero() && (t.IsZero() || x.Before(t)) {
			t = x
		}
	}
	for sp := range numSpaces {
		if s := &c.spaces[sp]; !s.ackDeadline.IsZero() {
			earlier(s.ackDeadline)
		}
	}
	lt, _ := c.lossTimer()
	earlier(lt)
	if c.held != nil && !c.heldFree {
		earlier(c.heldUntil)
	}
	if d := c.idleTimeout(); d > 0 {
		earlier(c.idleStart.Add(d))
	}
	return t
}

// idleTimeout is the effective idle timeout (RFC 9000 §10.1): the
// smaller of both sides', at least three PTOs.
func (c *Conn) idleTimeout() time.Duration {
	d := c.idle
	if p := c.peer.idleTimeout; p > 0 && (d == 0 || p < d) {
		d = p
	}
	if d == 0 {
		return 0
	}
	return max(d, 3*c.rtt.pto(0))
}

// onTimers runs the timers due at now.
func (c *Conn) onTimers(now time.Time) {
	if d := c.idleTimeout(); d > 0 && !now.Before(c.idleStart.Add(d)) {
		c.closeLocked(ErrIdleTimeout)
		return
	}
	for sp := range numSpaces {
		if s := &c.spaces[sp]; !s.ackDeadline.IsZero() && !now.Before(s.ackDeadline) {
			s.ackNow, s.ackDeadline = true, time.Time{} // owed now: no longer a timer
		}
	}
	if t, sp := c.lossTimer(); !t.IsZero() && !now.Before(t) {
		c.onLossTimer(now, sp)
	}
	if c.held != nil && !now.Before(c.heldUntil) {
		c.heldFree = true // sent by the send that follows
	}
}

// drainTLS acts on the TLS handshake's events.
func (c *Conn) drainTLS() error {
	for {
		e := c.tls.NextEvent()
		sp := -1
		switch e.Level {
		case tlsfp.QUICInitial:
			sp = spInitial
		case tlsfp.QUICHandshake:
			sp = spHandshake
		case tlsfp.QUICApplication:
			sp = spApp
		}
		switch e.Kind {
		case tlsfp.QUICNoEvent:
			return nil
		case tlsfp.QUICSetReadSecret, tlsfp.QUICSetWriteSecret:
			if sp < 0 {
				// 0-RTT (only a write secret for a client): used
				// when the ticket came with the server's limits.
				if e.Kind == tlsfp.QUICSetWriteSecret && e.Level == tlsfp.QUICEarly && c.tls.EarlyParams() != nil {
					k, err := quicwire.NewKeys(e.Suite, e.Data)
					if err != nil {
						return err
					}
					c.seal0 = k
				}
				continue
			}
			k, err := quicwire.NewKeys(e.Suite, e.Data)
			if err != nil {
				return err
			}
			if e.Kind == tlsfp.QUICSetReadSecret {
				c.open[sp] = k
			} else {
				c.seal[sp] = k
				if sp == spApp {
					c.seal0 = nil // RFC 9001 §4.9.3: 1-RTT from now on
				}
			}
		case tlsfp.QUICWriteData:
			if sp >= 0 {
				c.spaces[sp].cryptoSend = append(c.spaces[sp].cryptoSend, e.Data...)
			}
		case tlsfp.QUICTransportParameters:
			if err := c.applyPeerParams(e.Data); err != nil {
				return err
			}
		case tlsfp.QUICRejectedEarlyData:
			if err := c.rejectEarly(); err != nil {
				return err
			}
		case tlsfp.QUICHandshakeDone:
			if !c.tlsDone {
				// The RTT the next connection to the server sends as
				// initial_rtt (a Chromium profile's, in its Session).
				c.tls.NoteRTT(c.rtt.smoothed)
				c.tlsDone = true
				close(c.hsDone)
			}
		}
	}
}

// errTransportParameter carries a bad server transport parameter.
type errTransportParameter struct{ why string }

func (e errTransportParameter) Error() string { return "quic: server transport parameters: " + e.why }

func (c *Conn) applyPeerParams(b []byte) error {
	p, err := parseParams(b)
	if err != nil {
		return errTransportParameter{err.Error()}
	}
	switch {
	case !p.hasODCID || !bytes.Equal(p.odcid, c.odcid):
		return errTransportParameter{"original_destination_connection_id does not match"}
	case !bytes.Equal(p.iscid, c.dcid) && c.cidSeq == 0:
		return errTransportParameter{"initial_source_connection_id does not match"}
	case c.retrySCID != nil && (!p.hasRSCD || !bytes.Equal(p.rscid, c.retrySCID)):
		return errTransportParameter{"retry_source_connection_id does not match the retry"}
	case c.retrySCID == nil && p.hasRSCD:
		return errTransportParameter{"retry_source_connection_id without a retry"}
	case p.maxUDPPayload < 1200:
		return errTransportParameter{"max_udp_payload_size below 1200"}
	case p.resetToken != nil && len(p.resetToken) != 16:
		return errTransportParameter{"stateless_reset_token not 16 bytes"}
	}
	c.peer = p
	if p.resetToken != nil {
		var t [16]byte
		copy(t[:], p.resetToken)
		c.resetTokens = append(c.resetTokens, t)
		c.cids = append(c.cids, connID{seq: 0, id: c.dcid, token: t})
	} else {
		c.cids = append(c.cids, connID{seq: 0, id: c.dcid})
	}
	c.rtt.maxAckDelay = p.maxAckDelay
	if int(p.maxUDPPayload) < c.maxSize {
		c.maxSize = int(p.maxUDPPayload)
	}
	c.peerSet = true
	sent := c.streams.sendMax
	c.streams.applyPeer(&p)
	if c.earlyRejected {
		return c.streams.rejectedLimits(&p)
	}
	if c.early {
		// What 0-RTT sent under the remembered limits stays sent: the
		// limits only grow from there (a server that accepted 0-RTT
		// must not lower them, RFC 9000 §7.4.1).
		c.streams.sendMax = max(c.streams.sendMax, sent)
		c.streams.earlyLimits(&p)
	}
	return nil
}

// handleDatagram processes the coalesced packets of one datagram.
func (c *Conn) handleDatagram(b []byte, now time.Time) {
	for len(b) > 0 && !c.closed {
		n := c.handlePacket(b, now)
		if n <= 0 || n > len(b) {
			return
		}
		b = b[n:]
	}
}

// handlePacket processes the packet at the start of b and returns its
// size, or 0 when the rest of the datagram is to be dropped.
func (c *Conn) handlePacket(b []byte, now time.Time) int {
	if b[0]&0x80 == 0 {
		c.handleShort(b, now)
		return 0
	}
	h, err := quicwire.ParseHeader(b)
	if err != nil {
		return 0
	}
	switch h.Type {
	case quicwire.PacketVersionNegotiation:
		c.handleVersionNegotiation(b, h)
		return 0
	case quicwire.PacketRetry:
		c.handleRetry(b, now)
		return 0
	case quicwire.PacketInitial, quicwire.PacketHandshake:
	default:
		return h.Size
	}
	if !c.isLocalCID(h.DCID) {
		return h.Size
	}
	sp := spInitial
	if h.Type == quicwire.PacketHandshake {
		sp = spHandshake
	}
	k := c.open[sp]
	if k == nil || c.spaces[sp].discarded {
		return h.Size
	}
	if c.gotServerInitial && sp == spInitial && !bytes.Equal(h.SCID, c.dcid) {
		return h.Size
	}
	pkt := b[:h.Size]
	first, pnLen, tpn, err := k.Unprotect(pkt, h.PNOffset)
	if err != nil {
		return h.Size
	}
	s := &c.spaces[sp]
	pn := quicwire.DecodePacketNumber(s.largestRecv, tpn, pnLen)
	payload, err := k.OpenInPlace(pkt, h.PNOffset+pnLen, pn)
	if err != nil {
		return h.Size
	}
	if first&0x0c != 0 {
		c.fail(ProtocolViolation, 0, "reserved bits set", nil)
		return 0
	}
	c.gotServerPacket = true
	if sp == spInitial && !c.gotServerInitial {
		c.gotServerInitial = true
		c.dcid = append([]byte(nil), h.SCID...)
	}
	c.onPacket(sp, h.Type, pn, payload, now)
	return h.Size
}

// handleShort processes a 1-RTT packet, or sees a stateless reset.
func (c *Conn) handleShort(b []byte, now time.Time) {
	dl := len(c.scid)
	k := c.open[spApp]
	if k == nil || len(b) < 1+dl+4+quicwire.TagLen || !c.isLocalCID(b[1:1+dl]) {
		c.checkReset(b)
		return
	}
	var tail [16]byte
	copy(tail[:], b[len(b)-16:])
	first, pnLen, tpn, err := k.Unprotect(b, 1+dl)
	if err != nil {
		return
	}
	s := &c.spaces[spApp]
	pn := quicwire.DecodePacketNumber(s.largestRecv, tpn, pnLen)
	phase := first&0x04 != 0
	if phase != c.keyPhase {
		if s.largestRecv < 0 || pn > uint64(s.largestRecv) {
			if c.nextOpen == nil {
				c.nextOpen = k.Next()
			}
			k = c.nextOpen
		} else if c.prevOpen != nil {
			k = c.prevOpen
		} else {
			return
		}
	}
	payload, err := k.OpenInPlace(b, 1+dl+pnLen, pn)
	if err != nil {
		c.checkResetTail(len(b), tail)
		return
	}
	if k == c.nextOpen {
		if !c.confirmed {
			c.fail(KeyUpdateError, 0, "key update before the handshake was confirmed", nil)
			return
		}
		// the server updated its keys: follow (RFC 9001 §6.2)
		c.prevOpen, c.open[spApp], c.nextOpen = c.open[spApp], k, nil
		c.seal[spApp] = c.seal[spApp].Next()
		c.keyPhase = phase
		c.keyUpdates++
	}
	if first&0x18 != 0 {
		c.fail(ProtocolViolation, 0, "reserved bits set", nil)
		return
	}
	c.onPacket(spApp, quicwire.PacketShort, pn, payload, now)
}

func (c *Conn) checkReset(b []byte) {
	if len(b) >= 21 {
		var tail [16]byte
		copy(tail[:], b[len(b)-16:])
		c.checkResetTail(len(b), tail)
	}
}

func (c *Conn) checkResetTail(n int, tail [16]byte) {
	if n < 21 {
		return
	}
	for _, t := range c.resetTokens {
		if t == tail {
			c.closeLocked(ErrStatelessReset)
			return
		}
	}
}

func (c *Conn) handleVersionNegotiation(b []byte, h quicwire.Header) {
	if c.gotServerPacket || !bytes.Equal(h.DCID, c.scid) || !bytes.Equal(h.SCID, c.odcid) {
		return
	}
	off := 7 + len(h.DCID) + len(h.SCID)
	for ; off+4 <= len(b); off += 4 {
		if v := uint32(b[off])<<24 | uint32(b[off+1])<<16 | uint32(b[off+2])<<8 | uint32(b[off+3]); v == quicwire.Version1 {
			return // a version negotiation that lists ours: ignored (RFC 9000 §6.2)
		}
	}
	c.closeLocked(ErrVersionNegotiation)
}

// handleRetry takes the server's Retry: a new Destination Connection ID,
// the token on every Initial from now on, and the Initial data sent
// again (RFC 9000 §17.2.5).
func (c *Conn) handleRetry(b []byte, now time.Time) {
	if c.gotServerPacket || c.retrySCID != nil {
		return
	}
	token, scid, err := quicwire.RetryToken(b, c.odcid)
	if err != nil || len(token) == 0 || bytes.Equal(scid, c.odcid) {
		return
	}
	c.retrySCID = append([]byte(nil), scid...)
	c.dcid = c.retrySCID
	c.token = append([]byte(nil), token...)
	k := quicwire.ClientInitialKeys(c.dcid)
	c.seal[spInitial], c.open[spInitial] = k, quicwire.ServerInitialKeys(c.dcid)
	s := &c.spaces[spInitial]
	for _, p := range s.sent {
		if !p.done {
			c.forget(spInitial, p)
		}
	}
	s.sent = s.sent[:0]
	s.cryptoLost.add(0, uint64(len(s.cryptoSend)))
	s.cryptoNext = uint64(len(s.cryptoSend))
	c.ptoCount = 0
	c.held = nil // sealed for the old connection ID: the whole hello goes again
}

// onPacket processes the frames of one decrypted packet.
func (c *Conn) onPacket(sp int, typ quicwire.PacketType, pn uint64, payload []byte, now time.Time) {
	s := &c.spaces[sp]
	if pn < s.floor || s.recv.contains(pn) {
		return
	}
	c.lastRecv = now
	c.idleStart = now
	elicit := false
	for off := 0; off < len(payload); {
		f, n, err := quicwire.ParseFrame(payload[off:])
		if err != nil {
			c.fail(FrameEncodingError, f.Type, "", err)
			return
		}
		if !f.Type.AllowedIn(typ) {
			c.fail(ProtocolViolation, f.Type, "frame not allowed in "+typ.String(), nil)
			return
		}
		if f.Type.AckEliciting() {
			elicit = true
		}
		c.handleFrame(sp, &f, now)
		if c.closed || s.discarded {
			return
		}
		off += n
	}
	outOfOrder := s.largestRecv >= 0 && pn != uint64(s.largestRecv)+1
	s.recv.add(pn, pn+1)
	if len(s.recv) > maxAckRanges {
		s.floor = s.recv[0].hi
		s.recv = append(s.recv[:0], s.recv[1:]...)
	}
	if int64(pn) > s.largestRecv {
		s.largestRecv, s.largestTime = int64(pn), now
	}
	s.ackNew = true
	if elicit {
		s.unackedElic++
		switch {
		case sp != spApp && now.Sub(s.lastAck) < c.local.maxAckDelay:
			// Initial and Handshake packets are acknowledged at once
			// (RFC 9000 §13.2.1), but at most one ACK a max_ack_delay:
			// anyone who saw the client's first datagram can seal
			// Initials, and a flood of them must not draw a padded
			// datagram each (RELIABILITY Q-70).
			if s.ackDeadline.IsZero() {
				s.ackDeadline = s.lastAck.Add(c.local.maxAckDelay)
			}
		case sp != spApp || s.unackedElic >= 2 || outOfOrder:
			s.ackNow = true
		case s.ackDeadline.IsZero():
			s.ackDeadline = now.Add(c.local.maxAckDelay)
		}
	}
}

// handleFrame acts on one frame of space sp.
func (c *Conn) handleFrame(sp int, f *quicwire.Frame, now time.Time) {
	switch t := f.Type; {
	case t == quicwire.FramePadding, t == quicwire.FramePing:
	case t == quicwire.FrameAck, t == quicwire.FrameAckECN:
		c.onAck(sp, f, now)
	case t == quicwire.FrameCrypto:
		c.onCrypto(sp, f)
	case t == quicwire.FrameConnectionClose, t == quicwire.FrameConnectionCloseApp:
		c.closeLocked(&ConnectionError{Code: f.ErrorCode, App: t == quicwire.FrameConnectionCloseApp,
			Remote: true, FrameType: uint64(f.FrameType), Reason: string(f.Reason)})
	case t == quicwire.FrameHandshakeDone:
		if !c.tlsDone {
			c.fail(ProtocolViolation, t, "HANDSHAKE_DONE before the handshake completed", nil)
			return
		}
		if !c.confirmed {
			c.confirmed = true
			c.discard(spHandshake)
		}
	case t == quicwire.FrameNewToken:
		if c.tls != nil { // a Conn without its handshake (the fuzz targets')
			c.tls.StoreToken(f.Data)
		}
	case t == quicwire.FrameNewConnectionID:
		c.onNewConnectionID(f)
	case t == quicwire.FrameRetireConnectionID:
		c.onRetireCID(f.Seq)
	case t == quicwire.FramePathChallenge:
		var d [8]byte
		copy(d[:], f.Data)
		if len(c.pathResponse) < 4 {
			c.pathResponse = append(c.pathResponse, d)
		}
	case t == quicwire.FramePathResponse:
	case t == quicwire.FrameDatagram, t == quicwire.FrameDatagramLen:
		if c.local.maxDatagramFrame == 0 {
			c.fail(ProtocolViolation, t, "DATAGRAM not offered", nil)
		}
	case t == quicwire.FrameImmediateAck, t == quicwire.FrameAckFrequency:
		if !c.local.hasMinAckDelay {
			c.fail(ProtocolViolation, t, "ack frequency not offered", nil)
			return
		}
		if t == quicwire.FrameImmediateAck {
			c.spaces[sp].ackNow = true
		}
	default:
		c.streams.handleFrame(f)
	}
}

// onCrypto takes CRYPTO data at sp's level and hands what is in order
// to TLS.
func (c *Conn) onCrypto(sp int, f *quicwire.Frame) {
	s := &c.spaces[sp]
	a := &s.cryptoRecv
	if f.Offset+uint64(len(f.Data)) > a.readOff+maxCryptoBuffer {
		c.fail(0x0d, quicwire.FrameCrypto, "CRYPTO_BUFFER_EXCEEDED", nil)
		return
	}
	if !a.push(f.Offset, f.Data) {
		return
	}
	data := a.buf[a.r:]
	a.read(data) // consumes: the bytes stay valid until the next push
	if c.tls == nil {
		return // a connection made by a test without a handshake
	}
	if err := c.tls.HandleData(spaceLevel[sp], data); err != nil {
		c.fail(CryptoError+80, quicwire.FrameCrypto, "tls handshake failed", err)
		return
	}
	if err := c.drainTLS(); err != nil {
		code := TransportErrorCode(CryptoError + 80)
		if _, ok := err.(errTransportParameter); ok {
			code = TransportParameterError
		}
		if err == ErrEarlyLimits {
			code = InternalError
		}
		c.fail(code, quicwire.FrameCrypto, "", err)
	}
}

func (c *Conn) onNewConnectionID(f *quicwire.Frame) {
	if len(c.dcid) == 0 {
		c.fail(ProtocolViolation, f.Type, "NEW_CONNECTION_ID on a zero-length connection id", nil)
		return
	}
	known := false
	for _, x := range c.cids {
		if x.seq == f.Seq {
			known = true
		}
	}
	if !known && f.Seq >= c.retiredBelow() {
		var t [16]byte
		copy(t[:], f.ResetToken)
		c.cids = append(c.cids, connID{seq: f.Seq, id: append([]byte(nil), f.ConnID...), token: t})
		c.resetTokens = append(c.resetTokens, t)
	} else if !known {
		c.retireQueue = append(c.retireQueue, f.Seq)
	}
	if f.RetirePriorTo > 0 {
		kept := c.cids[:0]
		for _, x := range c.cids {
			if x.seq < f.RetirePriorTo {
				c.retireQueue = append(c.retireQueue, x.seq)
			} else {
				kept = append(kept, x)
			}
		}
		c.cids = kept
		if c.cidSeq < f.RetirePriorTo && len(c.cids) > 0 {
			lo := 0
			for i, x := range c.cids {
				if x.seq < c.cids[lo].seq {
					lo = i
				}
			}
			c.dcid, c.cidSeq = c.cids[lo].id, c.cids[lo].seq
		}
	}
	if uint64(len(c.cids)) > c.local.cidLimit || len(c.retireQueue) > 64 {
		c.fail(ConnectionIDLimitError, f.Type, "", nil)
	}
}

func (c *Conn) retiredBelow() uint64 {
	lo := uint64(0)
	for i, x := range c.cids {
		if i == 0 || x.seq < lo {
			lo = x.seq
		}
	}
	return lo
}

// discard drops a space's keys and its packets in flight (RFC 9001
// §4.9).
func (c *Conn) discard(sp int) {
	s := &c.spaces[sp]
	if s.discarded {
		return
	}
	for _, p := range s.sent {
		if !p.done {
			c.forget(sp, p)
		}
	}
	s.sent = s.sent[:0]
	s.discarded = true
	s.lossTime, s.ackNow, s.ackNew, s.probes = time.Time{}, false, false, 0
	s.cryptoLost, s.cryptoRecv = nil, reassembly{}
	c.seal[sp], c.open[sp] = nil, nil
	c.ptoCount = 0
}
