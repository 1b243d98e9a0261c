package h1

import "time"

// Config holds per-connection limits. The zero value means the defaults
// noted on each field. A Config is read-only once a Conn uses it; one Config
// may be shared by many Conns.
type Config struct {
	// MaxHeaderBytes caps the response head, status line and CRLFs
	// included; the heads of skipped 1xx responses count toward it too.
	// 0 means 10 MiB (net/http's default).
	MaxHeaderBytes int
	// MaxHeaders caps the header fields of one response head and of one
	// trailer section. 0 means 1000.
	MaxHeaders int
	// Max1xx caps the informational responses skipped per request. 0 means 5.
	Max1xx int
	// DrainLimit is how much Body.Close reads and discards to finish an
	// unread body so the connection can be reused. 0 means 256 KiB.
	DrainLimit int64
	// DrainTimeout bounds the time Body.Close spends draining. 0 means 1s.
	DrainTimeout time.Duration
	// InlineLimit: a body that is complete in the read buffer when the head
	// is parsed and at most this long is copied out and the connection
	// released at once. 0 means 64 KiB.
	InlineLimit int
	// ReadBufferSize is the connection's read buffer. It grows, up to
	// MaxHeaderBytes, only for an oversized head. 0 means 16 KiB.
	ReadBufferSize int
	// MaxChunkExtBytes caps the chunk-extension bytes of one chunked body.
	// 0 means 16 KiB.
	MaxChunkExtBytes int
	// MaxTrailerBytes caps a trailer section. 0 means 16 KiB; the trailer
	// field count is capped by MaxHeaders.
	MaxTrailerBytes int
}

// limits is a Config with the defaults filled in.
type limits struct {
	maxHeaderBytes   int
	maxHeaders       int
	max1xx           int
	drainLimit       int64
	drainTimeout     time.Duration
	inlineLimit      int
	readBufferSize   int
	maxChunkExtBytes int
	maxTrailerBytes  int
}

func (cfg *Config) limits() limits {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	l := limits{
		maxHeaderBytes:   orInt(c.MaxHeaderBytes, 10<<20),
		maxHeaders:       orInt(c.MaxHeaders, 1000),
		max1xx:           orInt(c.Max1xx, 5),
		drainLimit:       c.DrainLimit,
		drainTimeout:     c.DrainTimeout,
		inlineLimit:      orInt(c.InlineLimit, 64<<10),
		readBufferSize:   orInt(c.ReadBufferSize, 16<<10),
		maxChunkExtBytes: orInt(c.MaxChunkExtBytes, 16<<10),
		maxTrailerBytes:  orInt(c.MaxTrailerBytes, 16<<10),
	}
	if l.drainLimit <= 0 {
		l.drainLimit = 256 << 10
	}
	if l.drainTimeout <= 0 {
		l.drainTimeout = time.Second
	}
	if l.readBufferSize < 512 {
		l.readBufferSize = 512
	}
	return l
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
