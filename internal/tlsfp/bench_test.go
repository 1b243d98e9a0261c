//go:build unix

package tlsfp

import (
	"context"
	"crypto/ecdh"
	"crypto/mlkem"
	"crypto/rand"
	"net"
	"syscall"
	"testing"

	utls "github.com/refraction-networking/utls"
)

// TestBuildDoesNoParsing pins that per-connection work reuses the compiled
// template: no recompilation, and a bounded number of allocations for the
// fresh extension values.
func TestBuildDoesNoParsing(t *testing.T) {
	p := lookup(t, "chrome")
	tpl, err := compiled(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	compileMu.Lock()
	before := compileCount
	compileMu.Unlock()
	g := newRNG(rand.Reader)
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := compiled(p, nil); err != nil {
			t.Fatal(err)
		}
		_ = tpl.build(g, "fp.test", 0, false)
	})
	for i := 0; i < 20; i++ {
		buildHello(t, "fp.test", &Config{Profile: p})
	}
	compileMu.Lock()
	after := compileCount
	compileMu.Unlock()
	if after != before {
		t.Errorf("building hellos compiled the profile %d more times", after-before)
	}
	// 19 extensions, a few with a cloned slice, the ECH bytes, the spec and
	// the extension slice: about 30. A profile parse is in the hundreds.
	const budget = 40
	if allocs > budget {
		t.Errorf("template.build allocates %v times, budget %d", allocs, budget)
	}
	t.Logf("template.build: %v allocs", allocs)
}

func BenchmarkBuild(b *testing.B) {
	tpl, err := compiled(lookup(b, "chrome"), nil)
	if err != nil {
		b.Fatal(err)
	}
	g := newRNG(rand.Reader)
	b.ReportAllocs()
	for b.Loop() {
		_ = tpl.build(g, "fp.test", 0, false)
	}
}

// BenchmarkHandshake runs full TLS 1.3 handshakes (X25519MLKEM768) over
// loopback against a crypto/tls server in the same process: through
// Handshake, and through uTLS directly with the same spec, built outside
// the timed region. The difference is what tlsfp adds per connection
// (spec building, session scoping, state and error mapping). cpu-ns/op is
// the process's CPU per handshake, the server's included.
func BenchmarkHandshake(b *testing.B) {
	s := newServer(b, nil)
	p := lookup(b, "chrome")
	pool := testCerts(b).Roots
	b.Run("tlsfp", func(b *testing.B) {
		cfg := &Config{Profile: p, RootCAs: pool}
		b.ReportAllocs()
		cpu0 := processCPU()
		defer func() { b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
		for b.Loop() {
			nc, err := net.Dial("tcp", s.addr())
			if err != nil {
				b.Fatal(err)
			}
			c, _, err := Handshake(context.Background(), nc, "fp.test", cfg)
			if err != nil {
				b.Fatal(err)
			}
			<-s.hellos
			c.Close()
		}
	})
	b.Run("utls", func(b *testing.B) {
		tpl, err := compiled(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		cpu0 := processCPU()
		defer func() { b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
		for b.Loop() {
			b.StopTimer()
			spec := tpl.build(newRNG(rand.Reader), "fp.test", 0, false)
			b.StartTimer()
			nc, err := net.Dial("tcp", s.addr())
			if err != nil {
				b.Fatal(err)
			}
			uc := utls.UClient(nc, &utls.Config{ServerName: "fp.test", RootCAs: pool}, utls.HelloCustom)
			if err := uc.ApplyPreset(spec); err != nil {
				b.Fatal(err)
			}
			if err := uc.HandshakeContext(context.Background()); err != nil {
				b.Fatal(err)
			}
			<-s.hellos
			uc.Close()
		}
	})
}

// BenchmarkNewConn measures preparing one connection's hello (spec, key
// shares, uTLS state) for each profile, without a network.
func BenchmarkNewConn(b *testing.B) {
	for _, name := range []string{"chrome", "firefox"} {
		b.Run(name, func(b *testing.B) {
			cfg := &Config{Profile: lookup(b, name), InsecureSkipVerify: true}
			a, c := net.Pipe()
			defer a.Close()
			defer c.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := newConn(a, "fp.test", cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkKeyParts measures the cryptography a Chrome hello's key shares
// cost per connection, piece by piece: an X25519 public key by the Edwards
// route (two per hello), the crypto/ecdh key made for the share the server
// picks (crypto/ecdh recomputes its public key), the exchange itself, and
// the ML-KEM-768 key generation. The ECDSA verification of the server's
// signature is uTLS's and is not here.
func BenchmarkKeyParts(b *testing.B) {
	k, err := newX25519Key(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	peer, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	priv, err := k.ecdhKey()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("x25519-public-key", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			newX25519Key(rand.Reader)
		}
	})
	b.Run("x25519-ecdh-key", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			k.ecdhKey()
		}
	})
	b.Run("x25519-exchange", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			priv.ECDH(peer.PublicKey())
		}
	})
	b.Run("mlkem768-keygen", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mlkem.GenerateKey768()
		}
	})
}
