//go:build cgo

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/internal/version"
)

// TestHeaderUpToDate regenerates the C header and compares it with the
// checked-in ffi/guise.h.
func TestHeaderUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the shared library")
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-trimpath", "-buildmode=c-shared", "-o", filepath.Join(dir, "libguise.so"), ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "libguise.h"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("guise.h")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("ffi/guise.h is stale: run bindings/build.sh and cp bindings/lib/guise.h ffi/guise.h")
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		kind int32
	}{
		{errBadHandle, kindBadHandle},
		{invalidError{errors.New("x")}, kindInvalid},
		{context.Canceled, kindCanceled},
		{&guise.Error{Op: "Get", Err: &guise.TimeoutError{Phase: guise.PhaseHead, Err: os.ErrDeadlineExceeded}}, kindTimeout},
		{&guise.Error{Op: "Get", Err: syscall.ECONNREFUSED}, kindRefused},
		{&guise.Error{Op: "Get", Err: guise.ErrClosed}, kindClosed},
		{&guise.Error{Op: "Get", Err: guise.ErrTooManyRedirects}, kindRedirect},
		{&guise.Error{Op: "Get", Err: guise.ErrBodyTruncated}, kindTruncated},
		{&guise.Error{Op: "Get", Err: &guise.ProxyStatusError{StatusCode: 407}}, kindProxy},
		{&guise.Error{Op: "Get", Err: guise.StreamError{Code: guise.ErrCodeCancel}}, kindHTTP2},
		{&guise.Error{Op: "Get", Err: guise.ErrUnsupportedScheme}, kindInvalid},
		{errors.New("something else"), kindOther},
	} {
		if got := classify(c.err); got.kind != c.kind {
			t.Errorf("classify(%v) = %d, want %d", c.err, got.kind, c.kind)
		}
	}
	if e := classify(&guise.TimeoutError{Phase: guise.PhaseTLS}); e.phase != int32(guise.PhaseTLS) {
		t.Errorf("phase %d", e.phase)
	}
	if e := classify(&guise.ProxyStatusError{StatusCode: 407}); e.status != 407 {
		t.Errorf("status %d", e.status)
	}
}

func TestStreamOrderEndAndAbort(t *testing.T) {
	s := newStream()
	var done []int64
	s.write([]byte("hello "), func(n int64) { done = append(done, n) })
	s.write([]byte("world"), func(n int64) { done = append(done, n) })
	s.end()
	b, err := io.ReadAll(s)
	if err != nil || string(b) != "hello world" {
		t.Fatalf("read %q, %v", b, err)
	}
	if len(done) != 2 || done[0] != 6 || done[1] != 5 {
		t.Fatalf("done %v", done)
	}
	a := newStream()
	res := make(chan int64, 1)
	a.write([]byte("x"), func(n int64) { res <- n })
	a.abort(errCanceled)
	select {
	case n := <-res:
		if n != -int64(kindCanceled) {
			t.Fatalf("aborted write done(%d)", n)
		}
	case <-time.After(time.Second):
		t.Fatal("aborted write never completed")
	}
	if _, err := a.Read(make([]byte, 1)); !errors.Is(err, errCanceled) {
		t.Fatalf("read after abort: %v", err)
	}
}

func TestOptions(t *testing.T) {
	if _, err := newSession([]byte(`{"profile":"firefox","timeoutMs":5,"dialTimeoutMs":100}`)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"nope":1}`, `{"profile":"netscape4"}`, `{"trustStore":"x"}`, `{"redirect":"x"}`,
		`{"protocol":"http9"}`, `{"protocol":"http2","http1Only":true}`, `{"transport":999999}`, `[`} {
		if _, err := newSession([]byte(bad)); err == nil {
			t.Errorf("newSession(%s) succeeded", bad)
		}
	}
	if p, err := protocolOption("", true); err != nil || p != protoHTTP1 {
		t.Errorf("http1Only: %d, %v", p, err)
	}
	for p, want := range map[int32]guise.Protocol{protoAny: guise.AnyProtocol, protoHTTP1: guise.HTTP1, protoHTTP2: guise.HTTP2, protoHTTP3: guise.HTTP3} {
		var req guise.Request
		if err := applyProtocol(&req, p); err != nil || req.Protocol != want {
			t.Errorf("applyProtocol(%d): %v, %v", p, req.Protocol, err)
		}
	}
	if err := applyProtocol(&guise.Request{}, protoHTTP3+1); err == nil {
		t.Error("applyProtocol accepted an unknown protocol")
	}
}

func TestParseHeader(t *testing.T) {
	h, err := parseHeader([]byte("A\x001\x00b-B\x00x y\x00"))
	if err != nil || len(h) != 2 || h[0].Name != "A" || h[1].Value != "x y" {
		t.Fatalf("%v %v", h, err)
	}
	for _, bad := range []string{"A\x001", "A\x00", "A"} {
		if _, err := parseHeader([]byte(bad)); err == nil {
			t.Errorf("parseHeader(%q) succeeded", bad)
		}
	}
}

func TestHandlesNeverReused(t *testing.T) {
	h := newHandle(1)
	if release(h) == nil || release(h) != nil {
		t.Fatal("release twice")
	}
	if _, ok := lookup[int](h); ok {
		t.Fatal("lookup after release")
	}
	if h2 := newHandle(2); h2 == h {
		t.Fatal("handle reused")
	}
}

// TestABIVersion checks that the library reports the ABI the header
// defines, and guise's version.
func TestABIVersion(t *testing.T) {
	h, err := os.ReadFile("guise.h")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#define GUISE_ABI_VERSION (\d+)$`).FindSubmatch(h)
	if m == nil {
		t.Fatal("guise.h defines no GUISE_ABI_VERSION")
	}
	if got, want := strconv.Itoa(int(guise_abi_version())), string(m[1]); got != want {
		t.Fatalf("guise_abi_version() = %s, guise.h defines %s", got, want)
	}
	if int(guise_abi_version()) != version.ABI {
		t.Fatalf("guise_abi_version() = %d, internal/version.ABI = %d", guise_abi_version(), version.ABI)
	}
	buf := make([]byte, 64)
	n := versionInto(buf)
	if string(buf[:max(n, 0)]) != version.Version {
		t.Fatalf("guise_version() = %d %q, want %q", n, buf[:max(n, 0)], version.Version)
	}
	if n := versionInto(buf[:2]); n != -int64(kindShortBuffer) {
		t.Fatalf("guise_version into 2 bytes = %d, want %d", n, -kindShortBuffer)
	}
}
