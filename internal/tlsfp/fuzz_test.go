package tlsfp

import (
	"crypto/rand"
	"net"
	"testing"

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
		p := &profile.Profile{Name: "fuzz", TLS: profile.TLS{Hello: hello, ShuffleExtensions: shuffle}}
		tpl, err := compile(p, nil)
		if err != nil {
			return
		}
		for _, tt := range []*template{tpl, tpl.resumed} {
			if tt == nil {
				continue
			}
			a, b := net.Pipe()
			uc, err := applyTemplate(a, &utls.Config{ServerName: "fp.test", Rand: rand.Reader, InsecureSkipVerify: true}, tt, 152, "fuzz")
			if err == nil {
				_ = uc.BuildHandshakeState()
			}
			a.Close()
			b.Close()
		}
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
			if uc, err := applyTemplate(a, &utls.Config{ServerName: "fp.test", Rand: rand.Reader, InsecureSkipVerify: true}, tpl, 152, "corrupt"); err == nil {
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
