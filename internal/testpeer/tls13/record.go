package tls13

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
)

// Record content types (RFC 8446 5.1).
const (
	recordChangeCipherSpec = 20
	recordAlert            = 21
	recordHandshake        = 22
	recordApplicationData  = 23
)

// Record size limits (RFC 8446 5.1 and 5.2).
const (
	maxPlaintext  = 1 << 14
	maxCiphertext = 1<<14 + 256
)

// Alert is a TLS alert description (RFC 8446 6).
type Alert uint8

// Alerts the server sends or tests look for.
const (
	AlertCloseNotify       Alert = 0
	AlertUnexpectedMessage Alert = 10
	AlertBadRecordMAC      Alert = 20
	AlertHandshakeFailure  Alert = 40
	AlertBadCertificate    Alert = 42
	AlertIllegalParameter  Alert = 47
	AlertDecodeError       Alert = 50
	AlertDecryptError      Alert = 51
	AlertProtocolVersion   Alert = 70
	AlertInternalError     Alert = 80
)

var alertNames = map[Alert]string{
	AlertCloseNotify: "close_notify", AlertUnexpectedMessage: "unexpected_message",
	AlertBadRecordMAC: "bad_record_mac", AlertHandshakeFailure: "handshake_failure",
	AlertBadCertificate: "bad_certificate", AlertIllegalParameter: "illegal_parameter",
	AlertDecodeError: "decode_error", AlertDecryptError: "decrypt_error",
	AlertProtocolVersion: "protocol_version", AlertInternalError: "internal_error",
}

// String returns the alert's name in RFC 8446, or its number.
func (a Alert) String() string {
	if n, ok := alertNames[a]; ok {
		return n
	}
	return "Alert(" + strconv.Itoa(int(a)) + ")"
}

// AlertError is an alert the client sent, as the server received it.
type AlertError struct {
	Level       uint8 // 1 warning, 2 fatal
	Description Alert
}

// Error names the alert.
func (e *AlertError) Error() string {
	return fmt.Sprintf("tls13: client sent alert %v (level %d)", e.Description, e.Level)
}

// recordConn is the record layer of one connection: it reads and writes
// records, protected once keys are installed, and reassembles handshake
// messages that span records.
type recordConn struct {
	nc  net.Conn
	in  *direction // nil: plaintext
	out *direction
	// outSecret is the server's application traffic secret, which a
	// KeyUpdate it sends advances.
	outSecret []byte
	hs        []byte // handshake bytes read but not yet returned as a message
	app       []byte // application data read but not yet consumed
}

// readRecord returns the next record's content type and content, decrypted
// when read keys are installed. Change-cipher-spec records (sent by clients
// for middlebox compatibility) are skipped; an alert is returned as an
// *AlertError.
func (c *recordConn) readRecord() (byte, []byte, error) {
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(c.nc, hdr[:]); err != nil {
			return 0, nil, err
		}
		typ, n := hdr[0], int(binary.BigEndian.Uint16(hdr[3:]))
		if n > maxCiphertext || (c.in == nil && n > maxPlaintext) {
			return 0, nil, fmt.Errorf("tls13: record of %d bytes", n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.nc, body); err != nil {
			return 0, nil, err
		}
		if typ == recordChangeCipherSpec {
			if n != 1 || body[0] != 1 {
				return 0, nil, fmt.Errorf("tls13: bad change_cipher_spec %q", body)
			}
			continue
		}
		if c.in != nil {
			if typ != recordApplicationData {
				return 0, nil, fmt.Errorf("tls13: plaintext record of type %d after keys were set", typ)
			}
			plain, err := c.in.aead.Open(body[:0], c.in.nonce(), body, hdr[:])
			if err != nil {
				c.sendAlert(AlertBadRecordMAC)
				return 0, nil, errors.New("tls13: record authentication failed")
			}
			// TLSInnerPlaintext: content, the real type, zero padding.
			i := len(plain) - 1
			for i >= 0 && plain[i] == 0 {
				i--
			}
			if i < 0 {
				return 0, nil, errors.New("tls13: encrypted record without a content type")
			}
			typ, body = plain[i], plain[:i]
		}
		if typ == recordAlert {
			if len(body) != 2 {
				return 0, nil, fmt.Errorf("tls13: malformed alert %q", body)
			}
			return typ, nil, &AlertError{Level: body[0], Description: Alert(body[1])}
		}
		return typ, body, nil
	}
}

// readHandshake returns the next handshake message, header included.
func (c *recordConn) readHandshake() ([]byte, error) {
	for len(c.hs) < 4 || len(c.hs) < 4+u24(c.hs[1:]) {
		if len(c.hs) >= 4 && u24(c.hs[1:]) > maxHandshake {
			c.sendAlert(AlertDecodeError)
			return nil, fmt.Errorf("tls13: handshake message of %d bytes", u24(c.hs[1:]))
		}
		typ, body, err := c.readRecord()
		if err != nil {
			return nil, err
		}
		if typ != recordHandshake {
			c.sendAlert(AlertUnexpectedMessage)
			return nil, fmt.Errorf("tls13: record of type %d where a handshake message was expected", typ)
		}
		c.hs = append(c.hs, body...)
	}
	n := 4 + u24(c.hs[1:])
	msg := append([]byte(nil), c.hs[:n]...)
	c.hs = c.hs[n:]
	return msg, nil
}

// maxHandshake bounds a handshake message from the client.
const maxHandshake = 1 << 16

// u24 reads a big-endian 24-bit length.
func u24(b []byte) int { return int(b[0])<<16 | int(b[1])<<8 | int(b[2]) }

// writeRecords sends data as records of type typ, split at the plaintext
// limit, encrypted when write keys are installed, in one write.
func (c *recordConn) writeRecords(typ byte, data []byte) error {
	var out []byte
	for first := true; first || len(data) > 0; first = false {
		n := min(len(data), maxPlaintext)
		chunk := data[:n]
		data = data[n:]
		if c.out == nil {
			out = append(out, typ, 3, 3, byte(n>>8), byte(n))
			out = append(out, chunk...)
			continue
		}
		// TLSInnerPlaintext without padding, then the AEAD tag.
		sealed := n + 1 + c.out.aead.Overhead()
		hdr := []byte{recordApplicationData, 3, 3, byte(sealed >> 8), byte(sealed)}
		inner := append(append(make([]byte, 0, n+1), chunk...), typ)
		out = append(out, hdr...)
		out = c.out.aead.Seal(out, c.out.nonce(), inner, hdr)
	}
	_, err := c.nc.Write(out)
	return err
}

// sendKeyUpdates sends n KeyUpdate messages (RFC 8446 4.6.3), in one
// record when together is set, else one record each, and advances the
// server's write keys past them: the next record is protected with the
// secret n updates on. requested sets their update_requested field.
func (c *recordConn) sendKeyUpdates(n int, together, requested bool) error {
	msg := []byte{msgKeyUpdate, 0, 0, 1, 0}
	if requested {
		msg[4] = 1
	}
	if together {
		if err := c.writeRecords(recordHandshake, bytes.Repeat(msg, n)); err != nil {
			return err
		}
	}
	for range n {
		if !together {
			if err := c.writeRecords(recordHandshake, msg); err != nil {
				return err
			}
		}
		c.outSecret = expandLabel(c.outSecret, "traffic upd", nil, hashLen)
		c.out = newDirection(c.outSecret)
	}
	return nil
}

// sendAlert sends a fatal alert (or close_notify, a warning), ignoring
// write errors: the connection is being given up anyway.
func (c *recordConn) sendAlert(desc Alert) {
	level := uint8(2)
	if desc == AlertCloseNotify {
		level = 1
	}
	_ = c.writeRecords(recordAlert, []byte{level, byte(desc)})
}

// readApplicationUntil reads application data until the buffered data contains
// marker, up to limit bytes, and returns everything read so far.
func (c *recordConn) readApplicationUntil(marker []byte, limit int) ([]byte, error) {
	for !bytes.Contains(c.app, marker) {
		if len(c.app) > limit {
			return nil, fmt.Errorf("tls13: no %q in the first %d bytes of application data", marker, limit)
		}
		typ, body, err := c.readRecord()
		if err != nil {
			return nil, err
		}
		if typ != recordApplicationData {
			// A post-handshake message from the client: none is expected.
			return nil, fmt.Errorf("tls13: record of type %d after the handshake", typ)
		}
		c.app = append(c.app, body...)
	}
	return c.app, nil
}
