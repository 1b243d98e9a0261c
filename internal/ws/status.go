package ws

import "strconv"

// Opcode is a frame's opcode (RFC 6455 section 5.2).
type Opcode uint8

// Opcodes. The others are reserved.
const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

var opNames = [...]string{OpContinuation: "continuation", OpText: "text", OpBinary: "binary",
	OpClose: "close", OpPing: "ping", OpPong: "pong"}

// String returns the opcode's name ("text"), or "opcode(N)" for a reserved one.
func (o Opcode) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "opcode(" + strconv.Itoa(int(o)) + ")"
}

func (o Opcode) control() bool { return o&0x8 != 0 }

// StatusCode is a close frame's status code (RFC 6455 section 7.4).
type StatusCode uint16

// Status codes. NoStatus and Abnormal are never sent: they report a close
// frame without a code and a connection that ended without one.
const (
	StatusNormal          StatusCode = 1000
	StatusGoingAway       StatusCode = 1001
	StatusProtocolError   StatusCode = 1002
	StatusUnsupported     StatusCode = 1003
	StatusNoStatus        StatusCode = 1005
	StatusAbnormal        StatusCode = 1006
	StatusInvalidData     StatusCode = 1007
	StatusPolicyViolation StatusCode = 1008
	StatusTooBig          StatusCode = 1009
	StatusMandatoryExt    StatusCode = 1010
	StatusInternalError   StatusCode = 1011
	StatusServiceRestart  StatusCode = 1012
	StatusTryAgainLater   StatusCode = 1013
	StatusBadGateway      StatusCode = 1014
	StatusTLSHandshake    StatusCode = 1015
)

var statusNames = map[StatusCode]string{
	StatusNormal: "normal closure", StatusGoingAway: "going away", StatusProtocolError: "protocol error",
	StatusUnsupported: "unsupported data", StatusNoStatus: "no status", StatusAbnormal: "abnormal closure",
	StatusInvalidData: "invalid payload data", StatusPolicyViolation: "policy violation",
	StatusTooBig: "message too big", StatusMandatoryExt: "mandatory extension",
	StatusInternalError: "internal error", StatusServiceRestart: "service restart",
	StatusTryAgainLater: "try again later", StatusBadGateway: "bad gateway", StatusTLSHandshake: "TLS handshake",
}

// String returns the code and its name ("1000 normal closure").
func (c StatusCode) String() string {
	if n, ok := statusNames[c]; ok {
		return strconv.Itoa(int(c)) + " " + n
	}
	return strconv.Itoa(int(c))
}

// Sendable reports whether c may appear in a close frame on the wire: 1000
// to 1003, 1007 to 1014 and 3000 to 4999 (RFC 6455 section 7.4 and the IANA
// registry).
func (c StatusCode) Sendable() bool {
	switch {
	case c >= 1000 && c <= 1003, c >= 1007 && c <= 1014:
		return true
	case c >= 3000 && c <= 4999:
		return true
	}
	return false
}
