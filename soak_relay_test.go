package guise

import (
	"bytes"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// fault is what the soak's relay does to one connection.
type fault uint8

const (
	faultNone  fault = iota // relay both ways untouched
	faultCut                // close both sides after a random count of server bytes
	faultStall              // stop relaying after a random count of server bytes, until the client leaves
	faultReset              // reset the client's socket (RST) after a random count of server bytes
	faultDrip               // relay the server's bytes one at a time, 1 ms apart
	faultDup                // send the first response head (TLS: the first record after the handshake) twice
	faultEarly              // close once the request is sent, before any response byte
	numFaults
)

// dripBurst is how many one-byte writes the drip fault makes between its
// 1 ms pauses: a TLS server flight of about 1 KB takes some 60 ms to arrive,
// a 64 KiB body about 4 s (past the soak's fault deadline), so that some
// dripped exchanges complete, one byte per segment, and others meet their
// deadline.
const dripBurst = 16

var faultNames = [numFaults]string{"none", "cut", "stall", "reset", "drip", "dup-head", "close-early"}

func (f fault) String() string { return faultNames[f] }

// relay is the soak's fault injector: a loopback listener that relays each
// connection to target, doing to it a fault picked from a PCG stream seeded
// with seed and the connection's number, so that a run can be replayed.
// Half the connections go untouched. Close stops it and waits for every
// connection it relays.
type relay struct {
	ln     net.Listener
	target string
	seed   uint64
	tls    bool  // the relayed bytes are TLS: a "response head" is a record
	force  fault // when not faultNone, every connection gets this fault
	n      atomic.Uint64
	counts [numFaults]atomic.Int64
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	done   chan struct{}
}

// newRelay starts a relay to target; force, when not faultNone, is the
// fault of every connection.
func newRelay(target string, seed uint64, isTLS bool, force fault) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &relay{ln: ln, target: target, seed: seed, tls: isTLS, force: force, conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

func (r *relay) addr() string { return r.ln.Addr().String() }

func (r *relay) Close() {
	close(r.done)
	r.ln.Close()
	r.mu.Lock()
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

func (r *relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.done:
		return false
	default:
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *relay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	c.Close()
}

func (r *relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		i := r.n.Add(1)
		rng := rand.New(rand.NewPCG(r.seed, i))
		f := faultNone
		if rng.IntN(2) == 1 {
			f = fault(1 + rng.IntN(int(numFaults)-1))
		}
		if r.force != faultNone {
			f = r.force
		}
		r.counts[f].Add(1)
		r.wg.Add(1)
		go r.serve(c, f, rng)
	}
}

// serve relays one connection with fault f.
func (r *relay) serve(client net.Conn, f fault, rng *rand.Rand) {
	defer r.wg.Done()
	if !r.track(client) {
		client.Close()
		return
	}
	defer r.untrack(client)
	server, err := net.DialTimeout("tcp", r.target, 5*time.Second)
	if err != nil {
		return
	}
	if !r.track(server) {
		server.Close()
		return
	}
	defer r.untrack(server)
	// left closes when either side is gone; the fault's waits end with it.
	left := make(chan struct{})
	var once sync.Once
	leave := func() { once.Do(func() { close(left); client.Close(); server.Close() }) }
	// sent counts the client's reads forwarded: a request has gone out
	// once one (plain) or two (TLS: the hello, then Finished) have.
	var sent atomic.Int64
	need := int64(1)
	if r.tls {
		need = 2
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer leave()
		buf := make([]byte, 32<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				if _, werr := server.Write(buf[:n]); werr != nil {
					return
				}
				sent.Add(1)
			}
			if err != nil {
				return
			}
		}
	}()
	defer leave()
	limit := int64(rng.IntN(20000)) // for cut, stall and reset
	var total, dripped int64
	buf := make([]byte, 32<<10)
	dup := dupState{tls: r.tls}
	for {
		n, err := server.Read(buf)
		b := buf[:n]
		switch f {
		case faultCut, faultStall, faultReset:
			if total+int64(n) > limit {
				b = b[:limit-total]
				if len(b) > 0 {
					client.Write(b)
				}
				switch f {
				case faultStall:
					select {
					case <-left:
					case <-r.done:
					case <-time.After(30 * time.Second):
					}
				case faultReset:
					if tc, ok := client.(*net.TCPConn); ok {
						tc.SetLinger(0)
					}
				}
				return
			}
		case faultEarly:
			if n > 0 && sent.Load() >= need {
				return
			}
		case faultDrip:
			for i := range b {
				if _, werr := client.Write(b[i : i+1]); werr != nil {
					return
				}
				if dripped++; dripped%dripBurst != 0 {
					continue
				}
				select {
				case <-left:
					return
				case <-time.After(time.Millisecond):
				}
			}
			b = nil
		case faultDup:
			b = dup.feed(b, sent.Load() >= need)
		}
		total += int64(n)
		if len(b) > 0 {
			if _, werr := client.Write(b); werr != nil {
				return
			}
		}
		if err != nil {
			if f == faultDup {
				client.Write(dup.flush())
			}
			return
		}
	}
}

// dupState duplicates the first response head of a plain HTTP/1.1 stream
// after its body (bytes that answer no request, RELIABILITY X-09), or the
// first server chunk after a TLS handshake (a replayed record).
type dupState struct {
	tls  bool
	done bool
	buf  []byte // plain: the first response, held until it is whole
}

func (d *dupState) feed(b []byte, afterRequest bool) []byte {
	if d.done {
		return b
	}
	if d.tls {
		if !afterRequest || len(b) == 0 {
			return b
		}
		d.done = true
		return append(append([]byte(nil), b...), b...)
	}
	d.buf = append(d.buf, b...)
	end := bytes.Index(d.buf, []byte("\r\n\r\n"))
	if end < 0 {
		if len(d.buf) > 64<<10 {
			return d.flush()
		}
		return nil
	}
	head := d.buf[:end+4]
	cl := contentLengthOf(head)
	if cl < 0 {
		return d.flush() // chunked or no length: pass through
	}
	whole := len(head) + int(cl)
	if len(d.buf) < whole {
		return nil
	}
	d.done = true
	out := make([]byte, 0, len(d.buf)+len(head))
	out = append(out, d.buf[:whole]...)
	out = append(out, head...)
	out = append(out, d.buf[whole:]...)
	d.buf = nil
	return out
}

func (d *dupState) flush() []byte {
	d.done = true
	b := d.buf
	d.buf = nil
	return b
}

// contentLengthOf returns the Content-Length of an HTTP/1.1 response head,
// or -1 when it has none (or is the head of a HEAD's answer, which the
// relay cannot tell: the soak sends no HEAD through the relay).
func contentLengthOf(head []byte) int64 {
	for _, line := range bytes.Split(head, []byte("\r\n")) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte("content-length")) {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}
