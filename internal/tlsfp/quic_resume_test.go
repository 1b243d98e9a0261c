package tlsfp

import (
	"bytes"
	"testing"

	"github.com/guise-http/guise/profile"
)

// TestUConnOf: the uTLS this module pins keeps the UConn where uconnOf
// looks for it. If an upgrade moves it, this fails here rather than in a
// resumed QUIC dial (which would refuse to offer 0-RTT).
func TestUConnOf(t *testing.T) {
	p, err := profile.Lookup("chrome156-linux")
	if err != nil {
		t.Fatal(err)
	}
	c, err := QUICClient("localhost", &Config{Profile: p, InsecureSkipVerify: true}, []byte{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if uconnOf(c.uc) == nil {
		t.Fatal("uconnOf found no UConn in uTLS's UQUICConn")
	}
}

// TestQUICTokenScope: a NEW_TOKEN token is kept only with a ticket cache
// and up to MaxTokenLen bytes, with the tickets stored before and after
// it, and the entry's token is what a resuming connection's Token returns.
func TestQUICTokenScope(t *testing.T) {
	p, err := profile.Lookup("chrome156-linux")
	if err != nil {
		t.Fatal(err)
	}
	// Without a cache: nothing kept, no panic.
	c, err := QUICClient("localhost", &Config{Profile: p, InsecureSkipVerify: true}, []byte{})
	if err != nil {
		t.Fatal(err)
	}
	c.StoreToken([]byte("tok"))
	c.NoteRTT(5)
	if c.Token() != nil {
		t.Error("a token without a cache")
	}
	c.Close()

	cache := NewSessionCache()
	cfg := &Config{Profile: p, InsecureSkipVerify: true, Sessions: cache}
	c, err = QUICClient("localhost", cfg, []byte{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.StoreToken(bytes.Repeat([]byte{1}, MaxTokenLen+1))
	if c.sc.token != nil {
		t.Error("a token over MaxTokenLen was kept")
	}
	c.StoreToken([]byte("tok"))
	c.sc.Put("localhost", nil) // no state: nothing stored
	if cache.Len() != 0 {
		t.Errorf("%d entries after a nil session", cache.Len())
	}
	if got := string(c.sc.token); got != "tok" {
		t.Errorf("pending token %q", got)
	}
	c.NoteRTT(7)
	if d := QUICInitialRTT("localhost", cfg); d != 7 {
		t.Errorf("remembered RTT %v, want 7ns", d)
	}
	if d := QUICInitialRTT("other.test", cfg); d != 0 {
		t.Errorf("RTT for another server: %v", d)
	}
}
