package tlsfp

import (
	"crypto/rand"
	mrand "math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/profile"
	utls "github.com/refraction-networking/utls"
)

// FuzzCompile feeds arbitrary ClientHello records through the profile
// compiler and the per-connection builder: a profile file is input, and a
// bad one must give an error, never a panic.
func FuzzCompile(f *testing.F) {
	for _, name := range []string{"chrome", "firefox"} {
		p, err := profile.Lookup(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p.TLS.Hello, p.TLS.ShuffleExtensions)
	}
	f.Fuzz(func(t *testing.T, hello []byte, shuffle bool) {
		tryCompile(hello, shuffle)
	})
}

// TestCompileCorrupt runs FuzzCompile's body over every truncation and a
// spread of byte flips of the recorded hellos, so that the common
// corruptions are covered without the fuzzer.
func TestCompileCorrupt(t *testing.T) {
	for _, name := range []string{"chrome", "firefox"} {
		p, err := profile.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		h := p.TLS.Hello
		try := func(data []byte) {
			q := &profile.Profile{Name: "corrupt", TLS: profile.TLS{Hello: data, ShuffleExtensions: true}}
			tpl, err := compile(q, nil)
			if err != nil {
				return
			}
			a, b := net.Pipe()
			if uc, _, err := applyTemplate(a, &utls.Config{ServerName: "fp.test", Rand: rand.Reader, InsecureSkipVerify: true}, tpl, 152, "corrupt"); err == nil {
				_ = uc.BuildHandshakeState()
			}
			a.Close()
			b.Close()
		}
		for i := 0; i < len(h); i += 3 {
			try(h[:i])
		}
		for i := 0; i < len(h); i += 5 {
			c := append([]byte(nil), h...)
			c[i] ^= 0xff
			try(c)
		}
	}
}

// tryCompile is FuzzCompile's body: compile and build must not panic.
func tryCompile(data []byte, shuffle bool) error {
	q := &profile.Profile{Name: "mutant", TLS: profile.TLS{Hello: data, ShuffleExtensions: shuffle}}
	tpl, err := compile(q, nil)
	if err != nil {
		return err
	}
	for _, tt := range []*template{tpl, tpl.resumed} {
		if tt == nil {
			continue
		}
		a, b := net.Pipe()
		if uc, _, err := applyTemplate(a, &utls.Config{ServerName: "fp.test", Rand: rand.Reader, InsecureSkipVerify: true}, tt, 152, "mutant"); err == nil {
			_ = uc.BuildHandshakeState()
		}
		a.Close()
		b.Close()
	}
	return nil
}

// TestCompileMutations is a bounded, deterministic stand-in for running
// FuzzCompile: random byte changes, insertions and deletions of every
// recorded hello, each of which must compile or fail without a panic or a
// hang. It found the repeated-extension panic checkExtensions prevents.
func TestCompileMutations(t *testing.T) {
	r := mrand.New(mrand.NewPCG(7, 9))
	const n = 3000
	for i := 0; i < n; i++ {
		p, err := profile.Lookup([]string{"chrome", "firefox"}[i%2])
		if err != nil {
			t.Fatal(err)
		}
		src := [][]byte{p.TLS.Hello, p.TLS.HelloResumed, p.TLS.HelloHTTP1}[r.IntN(3)]
		d := append([]byte(nil), src...)
		for k := 0; k < 1+r.IntN(6); k++ {
			j := r.IntN(len(d))
			switch r.IntN(3) {
			case 0:
				d[j] = byte(r.IntN(256))
			case 1:
				d = append(d[:j], d[j+1:]...)
			default:
				d = append(d[:j], append([]byte{byte(r.IntN(256))}, d[j:]...)...)
			}
		}
		done := make(chan struct{})
		go func() { defer close(done); tryCompile(d, i%3 == 0) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("compile hangs on %x", d)
		}
	}
}

// withExtension returns the hello record rec with ext (type, length, body)
// appended and every length fixed.
func withExtension(rec, ext []byte) []byte {
	out := append(append([]byte(nil), rec...), ext...)
	put16 := func(off, v int) { out[off], out[off+1] = byte(v>>8), byte(v) }
	put16(3, len(out)-5)
	out[6], out[7], out[8] = byte((len(out)-9)>>16), byte((len(out)-9)>>8), byte(len(out)-9)
	extOff := len(rec) - len(extensionBlock(rec)) - 2
	put16(extOff, len(out)-extOff-2)
	return out
}

func TestCompileRejectsRepeatedExtensions(t *testing.T) {
	p, err := profile.Lookup("chrome")
	if err != nil {
		t.Fatal(err)
	}
	if err := tryCompile(withExtension(p.TLS.Hello, []byte{0, 0x23, 0, 0}), true); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("repeated session_ticket: %v", err)
	}
	if err := tryCompile(withExtension(p.TLS.Hello, []byte{0x5a, 0x5a, 0, 0}), true); err == nil || !strings.Contains(err.Error(), "grease") {
		t.Errorf("third GREASE extension: %v", err)
	}
	if err := tryCompile(withExtension(p.TLS.Hello, []byte{0xff, 0x00, 0, 0}), true); err != nil {
		t.Errorf("an unknown extension must compile (as a generic one): %v", err)
	}
}
