//go:build cgo

package main

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/guise-http/guise"
)

// Error kinds, as GUISE_E_* in the header.
const (
	kindOK int32 = iota
	kindInvalid
	kindClosed
	kindCanceled
	kindTimeout
	kindRefused
	kindDNS
	kindNetwork
	kindTLS
	kindCertificate
	kindProxy
	kindHTTP2
	kindProtocol
	kindRedirect
	kindDecode
	kindTruncated
	kindBadHandle
	kindShortBuffer
	kindBusy
	kindNotReady
	kindOther
)

var (
	errBadHandle = errors.New("guise ffi: unknown or closed handle")
	errBusy      = errors.New("guise ffi: a read or write is already in flight")
	errNotReady  = errors.New("guise ffi: the response head has not arrived")
	errCanceled  = errors.New("guise ffi: canceled")
)

// invalidError marks an error in the caller's arguments or options.
type invalidError struct{ err error }

func (e invalidError) Error() string { return e.err.Error() }
func (e invalidError) Unwrap() error { return e.err }

// errorInfo is what the C side learns of an error.
type errorInfo struct {
	kind, phase, status, code int32
	msg                       string
}

// classify sorts err into the kinds the ABI reports. The order matters: a
// timeout through a proxy is a timeout, a refused proxy is a proxy error.
func classify(err error) errorInfo {
	e := errorInfo{kind: kindOther, msg: err.Error()}
	var (
		te   *guise.TimeoutError
		pse  *guise.ProxyStatusError
		se   *guise.SOCKSError
		pe   *guise.ProxyError
		ce   *guise.CertificateError
		ae   *guise.AlertError
		he   *guise.HandshakeError
		stre guise.StreamError
		gae  guise.GoAwayError
		cne  guise.ConnectionError
		de   *guise.DecodeError
		pre  *guise.ProtocolError
		dnse *net.DNSError
		inv  invalidError
		ne   net.Error
	)
	switch {
	case errors.Is(err, errBadHandle):
		e.kind = kindBadHandle
	case errors.Is(err, errBusy):
		e.kind = kindBusy
	case errors.Is(err, errNotReady):
		e.kind = kindNotReady
	case errors.As(err, &inv):
		e.kind = kindInvalid
	case errors.Is(err, context.Canceled), errors.Is(err, errCanceled):
		e.kind = kindCanceled
	case errors.As(err, &te):
		e.kind, e.phase = kindTimeout, int32(te.Phase)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		e.kind, e.phase = kindTimeout, int32(guise.PhaseTotal)
	case errors.Is(err, guise.ErrClosed):
		e.kind = kindClosed
	case errors.As(err, &pse):
		e.kind, e.status = kindProxy, int32(pse.StatusCode)
	case errors.As(err, &se):
		e.kind, e.code = kindProxy, int32(se.Reply)
	case errors.As(err, &pe):
		e.kind = kindProxy
	case errors.As(err, &ce):
		e.kind = kindCertificate
	case errors.As(err, &ae):
		e.kind, e.code = kindTLS, int32(ae.Alert)
	case errors.As(err, &he), errors.Is(err, guise.ErrPlainHTTP), errors.Is(err, guise.ErrDowngrade),
		errors.Is(err, guise.ErrRecordFlood):
		e.kind = kindTLS
	case errors.As(err, &stre):
		e.kind, e.code = kindHTTP2, int32(stre.Code)
	case errors.As(err, &gae):
		e.kind, e.code = kindHTTP2, int32(gae.Code)
	case errors.As(err, &cne):
		e.kind, e.code = kindHTTP2, int32(cne.Code)
	case errors.Is(err, guise.ErrTooManyRedirects), errors.Is(err, guise.ErrRedirect), errors.Is(err, guise.ErrBadLocation):
		e.kind = kindRedirect
	case errors.As(err, &de), errors.Is(err, guise.ErrTooManyEncodings), errors.Is(err, guise.ErrDecodeLimit):
		e.kind = kindDecode
	case errors.Is(err, guise.ErrBodyTruncated):
		e.kind = kindTruncated
	case errors.As(err, &pre), errors.Is(err, guise.ErrHeaderTooLarge), errors.Is(err, guise.ErrTooManyHeaders),
		errors.Is(err, guise.ErrTooMany1xx), errors.Is(err, guise.ErrHeaderListTooLarge), errors.Is(err, guise.ErrFrameTooLarge):
		e.kind = kindProtocol
	case errors.Is(err, guise.ErrRefusedToSend), errors.Is(err, guise.ErrUnsupportedScheme), errors.Is(err, guise.ErrProtocolUnsupported):
		e.kind = kindInvalid
	case errors.Is(err, syscall.ECONNREFUSED):
		e.kind = kindRefused
	case errors.As(err, &dnse):
		e.kind = kindDNS
	case errors.As(err, &ne), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		e.kind = kindNetwork
	}
	return e
}
