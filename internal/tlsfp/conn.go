package tlsfp

import (
	"io"
	"net"
	"sync"
	"sync/atomic"

	utls "github.com/refraction-networking/utls"
)

// handshakeConn is the net.Conn a uTLS client runs over. During the
// handshake it does two things; afterwards it only passes calls through.
//
//   - It holds back writes until the next read (or the handshake's end), so
//     that a flight of several records leaves in one write, as BoringSSL
//     and NSS send a flight: after a HelloRetryRequest uTLS writes the
//     dummy change_cipher_spec and the second ClientHello separately. The
//     bytes sent are the same; the server gets one segment instead of two.
//   - It watches the server's first record and, if it is a ServerHello (not
//     a HelloRetryRequest), reports the group of its key share to onGroup
//     before uTLS reads it.
//
// After a successful handshake it holds the last flight (the client's
// Finished) and the records written after it until the first read, so
// that the Finished and the first request (HTTP/1.1), or the Finished, the
// HTTP/2 preface and the first HEADERS, leave in one write: the records
// are the same, in the same order, as separate records; only their TCP
// segments are fewer, and each saved write(2) is a loopback or NIC
// transmission the client process pays for. A read, Close, or more than
// maxHeld bytes end the holding, once and for good (see corked).
//
// inHandshake is set and cleared only by the goroutine running the
// handshake, before the connection is handed to anyone else, so the
// post-handshake readers and writers see it without synchronisation.
type handshakeConn struct {
	net.Conn
	inHandshake bool
	out         *[]byte // held writes
	// corked says writes are still held after the handshake (the first
	// flight). From then on a reader and a writer may run at once, so the
	// held bytes are under mu while corked; once it is false it stays
	// false and the paths no longer lock.
	corked   atomic.Bool
	mu       sync.Mutex
	head     []byte // the server's first record, while incomplete
	watching bool
	onGroup  func(group uint16)
	eof      bool // a Read returned nothing but the end: the peer's FIN
	// hostThread says the reads come from a goroutine locked to a C
	// thread: they wait in the kernel on that thread (see hostRead). Set
	// by the reader between reads (SetHostThreadReads).
	hostThread bool

	// The records read since the handshake or since uTLS last returned
	// application data (see countRecords), and the state of the record
	// being read (hdr collects a split header; left is the rest of the
	// record's body), followed from the server's first byte, as uTLS may
	// read past the handshake's last record.
	quiet int
	hdr   [5]byte
	nhdr  int
	left  int
}

// maxQuietRecords is how many records in a row a server may send after the
// handshake without application data: session tickets, KeyUpdates, empty
// records. BoringSSL allows 32 KeyUpdates in a row; browsers see a few
// tickets.
const maxQuietRecords = 64

// countRecords follows the record boundaries in b, the next bytes read
// from the server, and counts the records that begin in it.
func (c *handshakeConn) countRecords(b []byte) {
	for len(b) > 0 {
		if c.left > 0 {
			n := min(c.left, len(b))
			c.left -= n
			b = b[n:]
			continue
		}
		n := copy(c.hdr[c.nhdr:], b)
		c.nhdr += n
		b = b[n:]
		if c.nhdr == len(c.hdr) {
			c.nhdr = 0
			c.left = int(c.hdr[3])<<8 | int(c.hdr[4])
			c.quiet++
		}
	}
}

// maxRecord is the largest record watch collects: a TLS record's largest
// ciphertext and its header.
const maxRecord = 5 + 16384 + 2048

// maxHeld bounds what is held back; a ClientHello is about 2 KiB.
const maxHeld = 16 << 10

var heldPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func newHandshakeConn(nc net.Conn) *handshakeConn {
	return &handshakeConn{Conn: nc, inHandshake: true}
}

// watchHello asks for onGroup to be called with the ServerHello's key
// share group, from the Read that completes the record.
func (c *handshakeConn) watchHello(onGroup func(group uint16)) {
	c.watching, c.onGroup = true, onGroup
}

// Write holds p during the handshake and writes it through afterwards.
func (c *handshakeConn) Write(p []byte) (int, error) {
	if !c.inHandshake {
		if c.corked.Load() {
			return c.writeCorked(p)
		}
		return c.Conn.Write(p)
	}
	if c.out == nil {
		c.out = heldPool.Get().(*[]byte)
	}
	if len(*c.out)+len(p) > maxHeld {
		if err := c.flush(); err != nil {
			return 0, err
		}
		return c.Conn.Write(p)
	}
	*c.out = append(*c.out, p...)
	return len(p), nil
}

// Read sends what is held, then reads; during the handshake it watches
// for the ServerHello.
func (c *handshakeConn) Read(p []byte) (int, error) {
	if !c.inHandshake {
		// uTLS reads only when the records it holds are used up: those
		// counted since it last returned application data all came
		// without any. (Counting after the read would also count records
		// read ahead, which may well hold data.)
		if c.quiet > maxQuietRecords {
			return 0, ErrRecordFlood
		}
		if c.corked.Load() {
			if err := c.uncork(); err != nil {
				return 0, err
			}
		}
		var n int
		var err error
		ok := false
		if c.hostThread {
			n, err, ok = hostRead(c.Conn, p)
		}
		if !ok {
			n, err = c.Conn.Read(p)
		}
		if n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
			// The peer's FIN, or, under a tunnel through an HTTPS
			// proxy, the outer connection's end (an unclean one is
			// io.ErrUnexpectedEOF). Data that comes with io.EOF (the
			// outer connection's close_notify read ahead) is not the
			// end yet: the next read says.
			c.eof = true
		}
		c.countRecords(p[:n])
		return n, err
	}
	if err := c.flush(); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if c.watching && n > 0 {
		c.watch(p[:n])
	}
	c.countRecords(p[:n]) // to know where records begin once it is over
	return n, err
}

// flush writes what is held.
func (c *handshakeConn) flush() error {
	if c.out == nil || len(*c.out) == 0 {
		return nil
	}
	_, err := c.Conn.Write(*c.out)
	*c.out = (*c.out)[:0]
	return err
}

// Conn is the connection Handshake returns: uTLS's, whose Read reports a
// close without close_notify as io.ErrUnexpectedEOF, a fatal alert from the
// server as an *AlertError, and ends a flood of records without
// application data with ErrRecordFlood.
//
// uTLS, like crypto/tls, returns io.EOF both for the peer's close_notify
// alert and for a TCP FIN at a record boundary without one (RFC 8446 6.1
// makes the latter an error; crypto/tls accepts it because sites do it).
// A reader of a body delimited by the close alone (HTTP/1.0 style) must
// tell them apart: only close_notify says nobody cut the body short. uTLS
// reads the FIN only when it needs more bytes for a record, so an io.EOF
// from uTLS after its reader saw the FIN is the unclean close; after a
// close_notify, uTLS has what it needs and reads no further.
type Conn struct {
	*utls.UConn
	raw *handshakeConn
}

// Write writes application data through uTLS's record layer (its Conn's
// Write), not through UConn.Write. The two differ only in which handshake
// they would run, and the handshake is over when a Conn is handed out
// (renegotiation is refused). UConn.Write defers its Close interlock inside
// a loop, which puts a defer record on the heap: an allocation per write.
func (c *Conn) Write(p []byte) (int, error) {
	return c.UConn.Conn.Write(p)
}

// Flush writes what is still held of the first flight after the handshake
// (see handshakeConn): the first read does it anyway, so only a
// connection that may stay unread for long, one parked idle before its
// first request, needs it, lest the server wait for the Finished.
func (c *Conn) Flush() error {
	if c.raw.corked.Load() {
		return c.raw.uncork()
	}
	return nil
}

// SetHostThreadReads says whether the reads that follow come from a
// goroutine locked to a C thread (a request made through the C ABI on the
// host's thread), which then waits for the network in the kernel on its
// own thread (see hostRead). Call it between reads, from the reader.
func (c *Conn) SetHostThreadReads(on bool) { c.raw.hostThread = on }

// Read reads application data; a close without close_notify ends it with
// io.ErrUnexpectedEOF instead of io.EOF, and a fatal alert from the server
// with an *AlertError.
func (c *Conn) Read(p []byte) (int, error) {
	n, err := c.UConn.Read(p)
	if n > 0 {
		// Application data: the records so far were not a flood.
		// Those already counted but not yet used (read ahead) are
		// forgotten too; a flood is counted from the next read on.
		c.raw.quiet = 0
	}
	if err == io.EOF && c.raw.eof {
		err = io.ErrUnexpectedEOF
	} else if err != nil && err != io.EOF {
		if a, ok := remoteAlert(err); ok {
			err = &AlertError{Alert: a}
		}
	}
	return n, err
}

// done ends the handshake mode. After a failure what is held (an alert)
// is written and the buffers are released; after a success the last
// flight stays held, with the writes that follow, until the first read
// (see corked).
func (c *handshakeConn) done(ok bool) error {
	var err error
	if ok && c.out != nil && len(*c.out) > 0 {
		c.corked.Store(true)
	} else {
		err = c.flush()
		c.release()
	}
	c.inHandshake, c.watching, c.head, c.onGroup = false, false, nil, nil
	c.quiet = 0 // the handshake's records are not a flood
	return err
}

// release gives the held-writes buffer back.
func (c *handshakeConn) release() {
	if c.out != nil {
		if cap(*c.out) <= maxHeld {
			heldPool.Put(c.out)
		}
		c.out = nil
	}
}

// writeCorked holds p with the first flight, or, when that would pass
// maxHeld, writes what is held and p and stops holding.
func (c *handshakeConn) writeCorked(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.corked.Load() { // uncorked while this write waited
		return c.Conn.Write(p)
	}
	if len(*c.out)+len(p) <= maxHeld {
		*c.out = append(*c.out, p...)
		return len(p), nil
	}
	if err := c.uncorkLocked(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// uncork writes what is held since the handshake and stops holding.
func (c *handshakeConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.uncorkLocked()
}

func (c *handshakeConn) uncorkLocked() error {
	if !c.corked.Load() {
		return nil
	}
	err := c.flush()
	c.release()
	c.corked.Store(false)
	return err
}

// Close writes what is still held (a close_notify, say) and closes the
// connection.
func (c *handshakeConn) Close() error {
	if c.corked.Load() {
		c.uncork()
	}
	return c.Conn.Close()
}

// watch collects the server's first record and, once it is complete,
// reports the ServerHello's key share group.
func (c *handshakeConn) watch(b []byte) {
	const hdr = 5
	if len(c.head) == 0 && len(b) >= hdr {
		if n := hdr + (int(b[3])<<8 | int(b[4])); len(b) >= n {
			c.report(b[:n]) // the usual case: the whole record in one read
			return
		}
	}
	if len(c.head)+len(b) > maxRecord {
		c.watching, c.head = false, nil // not a record uTLS accepts either
		return
	}
	c.head = append(c.head, b...)
	if len(c.head) < hdr {
		return
	}
	if n := hdr + (int(c.head[3])<<8 | int(c.head[4])); len(c.head) >= n {
		c.report(c.head[:n])
	}
}

func (c *handshakeConn) report(record []byte) {
	c.watching, c.head = false, nil
	if g, ok := serverHelloGroup(record); ok {
		c.onGroup(g)
	}
}

// serverHelloGroup returns the group of the key share in a ServerHello
// record. It returns false for anything else, a HelloRetryRequest (whose
// key_share names a group but carries no key) included.
func serverHelloGroup(rec []byte) (uint16, bool) {
	// record header; handshake type and length; version; random.
	const fixed = 5 + 4 + 2 + 32
	if len(rec) < fixed+1 || rec[0] != 0x16 || rec[5] != 2 {
		return 0, false
	}
	b := rec[fixed:]
	b = skipN(b, 1+int(b[0])) // session id
	b = skipN(b, 2+1)         // cipher suite, compression
	if len(b) < 2 {
		return 0, false
	}
	b = b[2:]
	for len(b) >= 4 {
		typ := uint16(b[0])<<8 | uint16(b[1])
		n := int(b[2])<<8 | int(b[3])
		if len(b) < 4+n {
			return 0, false
		}
		if typ == 51 {
			body := b[4 : 4+n]
			if len(body) < 4 { // a HelloRetryRequest's selected_group only
				return 0, false
			}
			return uint16(body[0])<<8 | uint16(body[1]), true
		}
		b = b[4+n:]
	}
	return 0, false
}

func skipN(b []byte, n int) []byte {
	if n > len(b) {
		return nil
	}
	return b[n:]
}
