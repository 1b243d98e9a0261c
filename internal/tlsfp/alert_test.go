package tlsfp

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestAlertDuringHandshake: a scripted server answers the ClientHello with
// a fatal alert record; Handshake returns a *HandshakeError whose cause is
// an *AlertError with the alert's number.
func TestAlertDuringHandshake(t *testing.T) {
	for _, c := range []struct {
		alert Alert
		name  string
	}{
		{AlertHandshakeFailure, "handshake failure"},
		{AlertProtocolVersion, "protocol version"},
		{AlertUnrecognizedName, "unrecognized name"},
		{Alert(238), "alert(238)"},
	} {
		addr := fakeServer(t, func(nc net.Conn, _ []byte) {
			nc.Write([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, byte(c.alert)}) // fatal
		})
		_, err := handshakeTo(t, addr, context.Background(), &Config{Profile: lookup(t, "chrome")})
		var he *HandshakeError
		var ae *AlertError
		if !errors.As(err, &he) || !errors.As(err, &ae) || ae.Alert != c.alert {
			t.Fatalf("alert %d: got %v (%T), want *AlertError{%d} in a *HandshakeError", c.alert, err, err, c.alert)
		}
		if he.Timeout() {
			t.Errorf("alert %d: Timeout() is true", c.alert)
		}
		if ae.Alert.String() != c.name {
			t.Errorf("Alert(%d).String() = %q, want %q", c.alert, ae.Alert.String(), c.name)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "tlsfp: server sent tls alert "+c.name) || !strings.Contains(msg, `"fp.test"`) {
			t.Errorf("alert %d: error %q", c.alert, msg)
		}
	}
}

// TestAlertFromServer: crypto/tls refusing our ALPN offer sends
// no_application_protocol during the handshake.
func TestAlertFromServer(t *testing.T) {
	s := newServer(t, &tls.Config{NextProtos: []string{"x-none"}})
	_, _, err := dial(t, s, "fp.test", &Config{Profile: lookup(t, "chrome"), RootCAs: testCerts(t).Roots})
	var ae *AlertError
	if !errors.As(err, &ae) || ae.Alert != AlertNoApplicationProtocol {
		t.Fatalf("got %v, want *AlertError{no application protocol}", err)
	}
}

// TestAlertAfterHandshake: a TLS 1.3 server that requires a client
// certificate finds out only after our Finished, and sends
// certificate_required then; Read returns it as an *AlertError.
func TestAlertAfterHandshake(t *testing.T) {
	s := newServer(t, &tls.Config{ClientAuth: tls.RequireAnyClientCert, MinVersion: tls.VersionTLS13})
	nc := dialTCP(t, s.addr())
	c := chromeOver(t, nc, testCerts(t))
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Read(make([]byte, 16))
	var ae *AlertError
	if !errors.As(err, &ae) || ae.Alert != AlertCertificateRequired {
		t.Fatalf("Read: %v (%T), want *AlertError{certificate required}", err, err)
	}
	var he *HandshakeError
	if errors.As(err, &he) {
		t.Errorf("an alert after the handshake reads as a *HandshakeError: %v", err)
	}
}
