//go:build ignore

// record captures the raw ClientHello of every TLS connection a real
// browser makes to it, for the hellos the first recordings
// (fingerprint/testdata/recordings/*/) lack: the
// HTTP/1.1-only hello and the hello of a resumed connection. It serves
// HTTPS on 127.0.0.1 with a fresh CA (written to ca.pem for the browser to
// trust), answers every request with "Connection: close" so that a page's
// sub-resources open new connections that resume the first one's session,
// and prints one line per connection: index, resumed, ALPN, record hex. On
// HTTP/1.1 connections it also prints each raw request head, as
// "HEAD <connection> <Go-quoted bytes>".
//
//	go run ./profile/testdata/record/main.go -addr 127.0.0.1:18444 -alpn h2,http/1.1 -ca /tmp/ca.pem > hellos.txt
//
// How testdata/recordings/*-extra.json were made is in their "how" field.
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18444", "listen address (loopback)")
	alpn := flag.String("alpn", "h2,http/1.1", "server ALPN protocols")
	caOut := flag.String("ca", "ca.pem", "where to write the CA certificate")
	flag.Parse()

	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caT := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "guise record CA"},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, caT, caT, &caKey.PublicKey, caKey)
	if err != nil {
		log.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafT := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "fp.test"},
		DNSNames: []string{"fp.test"}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	leaf, err := x509.CreateCertificate(rand.Reader, leafT, ca, &key.PublicKey, caKey)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*caOut, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		log.Fatal(err)
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{leaf}, PrivateKey: key}},
		NextProtos:   strings.Split(*alpn, ","),
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><body><img src=/a.png><script src=/b.js></script><img src=/c.png></body></html>`)
			return
		}
		if r.URL.Path == "/b.js" {
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, `fetch('/api/fetch').then(r => r.text());`)
			return
		}
		io.WriteString(w, "x")
	})}
	log.Fatal(srv.Serve(&recorder{Listener: ln, cfg: cfg}))
}

// recorder hands the HTTP server TLS connections after recording each
// connection's first record.
type recorder struct {
	net.Listener
	cfg *tls.Config
	mu  sync.Mutex
	n   int
}

func (l *recorder) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		hdr := make([]byte, 5)
		if _, err := io.ReadFull(c, hdr); err != nil {
			c.Close()
			continue
		}
		rec := make([]byte, 5+int(binary.BigEndian.Uint16(hdr[3:])))
		copy(rec, hdr)
		if _, err := io.ReadFull(c, rec[5:]); err != nil {
			c.Close()
			continue
		}
		tc := tls.Server(&prefixConn{c, io.MultiReader(bytes.NewReader(rec), c)}, l.cfg)
		if err := tc.Handshake(); err != nil {
			log.Printf("handshake: %v", err)
			c.Close()
			continue
		}
		st := tc.ConnectionState()
		l.mu.Lock()
		l.n++
		fmt.Printf("%d %v %s %s\n", l.n, st.DidResume, st.NegotiatedProtocol, hex.EncodeToString(rec))
		n := l.n
		l.mu.Unlock()
		if st.NegotiatedProtocol == "http/1.1" {
			return &headConn{Conn: tc, n: n}, nil
		}
		return tc, nil
	}
}

// headConn prints the raw HTTP/1.1 request heads read through it.
type headConn struct {
	net.Conn
	n   int
	buf []byte
}

func (c *headConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.buf = append(c.buf, p[:n]...)
	for {
		i := bytes.Index(c.buf, []byte("\r\n\r\n"))
		if i < 0 {
			break
		}
		fmt.Printf("HEAD %d %q\n", c.n, c.buf[:i+4])
		c.buf = c.buf[i+4:]
	}
	return n, err
}

type prefixConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixConn) Read(p []byte) (int, error) { return c.r.Read(p) }
