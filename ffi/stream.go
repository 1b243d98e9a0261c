//go:build cgo

package main

import (
	"io"
	"sync"
	"sync/atomic"
)

// stream is a request body the host writes in chunks while the request
// runs: the object of a guise_stream_new handle, and the request's Body.
// Each chunk stays in the host's buffer until guise has copied all of it to
// the connection, and then its done runs, which is the host's backpressure.
type stream struct {
	used atomic.Bool // given to a request

	mu     sync.Mutex
	wake   chan struct{} // signalled when a chunk or the end arrives
	queue  []chunk
	ended  bool  // no more chunks: io.EOF after the queue
	failed error // aborted: pending and later chunks fail with it
}

// chunk is one write: a view of the host's buffer, and what to call once
// it was consumed (n is its length) or failed (n is -kind).
type chunk struct {
	p    []byte
	size int64
	done func(n int64)
}

func newStream() *stream { return &stream{wake: make(chan struct{}, 1)} }

func (s *stream) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// write queues p; done runs exactly once.
func (s *stream) write(p []byte, done func(int64)) {
	s.mu.Lock()
	switch {
	case s.failed != nil:
		err := s.failed
		s.mu.Unlock()
		done(-int64(classify(err).kind))
		return
	case s.ended:
		s.mu.Unlock()
		done(-int64(kindInvalid))
		return
	}
	s.queue = append(s.queue, chunk{p: p, size: int64(len(p)), done: done})
	s.mu.Unlock()
	s.signal()
}

// end marks the end of the body: reads return io.EOF after the queued
// chunks.
func (s *stream) end() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	s.signal()
}

// abort fails the chunks not yet consumed, and every later write and read.
func (s *stream) abort(err error) {
	s.mu.Lock()
	if s.failed != nil {
		s.mu.Unlock()
		return
	}
	s.failed = err
	q := s.queue
	s.queue = nil
	s.mu.Unlock()
	for _, c := range q {
		c.done(-int64(classify(err).kind))
	}
	s.signal()
}

// Read is the request body's: it copies from the oldest chunk, and runs that
// chunk's done once it is used up.
func (s *stream) Read(p []byte) (int, error) {
	for {
		s.mu.Lock()
		if s.failed != nil {
			err := s.failed
			s.mu.Unlock()
			return 0, err
		}
		if len(s.queue) > 0 {
			c := &s.queue[0]
			n := copy(p, c.p)
			c.p = c.p[n:]
			var done func(int64)
			var total int64
			if len(c.p) == 0 {
				done, total = c.done, c.size
				s.queue[0] = chunk{}
				s.queue = s.queue[1:]
			}
			s.mu.Unlock()
			if done != nil {
				done(total)
			}
			if n == 0 && len(p) > 0 {
				continue // an empty chunk
			}
			return n, nil
		}
		if s.ended {
			s.mu.Unlock()
			return 0, io.EOF
		}
		s.mu.Unlock()
		<-s.wake
	}
}
