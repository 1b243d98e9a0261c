package ws

import (
	"crypto/sha1"
	"encoding/base64"
	"io"
)

// acceptGUID is the GUID of RFC 6455 section 1.3.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// NewKey returns a fresh Sec-WebSocket-Key: 16 bytes of rnd, base64.
func NewKey(rnd io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b[:]), nil
}

// Accept returns the Sec-WebSocket-Accept value a server answers key with.
func Accept(key string) string {
	h := sha1.New()
	h.Write([]byte(key))
	h.Write([]byte(acceptGUID))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}
