package tls13

import (
	"bytes"
	"strconv"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// Algorithm is a CertificateCompressionAlgorithm code point (RFC 8879 3,
// 7.3).
type Algorithm uint16

// Certificate compression algorithms this server implements.
const (
	Zlib   Algorithm = 1
	Brotli Algorithm = 2
	Zstd   Algorithm = 3
)

// String returns the algorithm's IANA name, or its number.
func (a Algorithm) String() string {
	switch a {
	case Zlib:
		return "zlib"
	case Brotli:
		return "brotli"
	case Zstd:
		return "zstd"
	}
	return "Algorithm(" + strconv.Itoa(int(a)) + ")"
}

// Fault is a deliberate defect in the CompressedCertificate message.
type Fault uint8

// Faults the server can inject.
const (
	// FaultNone sends a correct message.
	FaultNone Fault = iota
	// FaultCorrupt flips the bits of the second half of the compressed
	// payload; uncompressed_length stays right.
	FaultCorrupt
	// FaultLengthLong declares an uncompressed_length one byte longer than
	// the Certificate message.
	FaultLengthLong
	// FaultLengthShort declares it one byte shorter.
	FaultLengthShort
	// FaultLengthHuge declares the largest length the field holds,
	// 2^24-1 bytes.
	FaultLengthHuge
	// FaultTrailingData compresses the Certificate message followed by 16
	// more bytes, and declares the length of the message alone: the
	// payload decompresses to more than uncompressed_length.
	FaultTrailingData
)

var faultNames = [...]string{"none", "corrupt payload", "length too long", "length too short", "length 2^24-1", "trailing data"}

// String names the fault.
func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return "Fault(" + strconv.Itoa(int(f)) + ")"
}

// compress returns data compressed with a. An algorithm this server does
// not implement "compresses" to data itself, so that a test can send any
// code point.
func compress(a Algorithm, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	switch a {
	case Zlib:
		w, err := zlib.NewWriterLevel(&buf, zlib.BestCompression)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case Brotli:
		// Quality 9 and a 64 KiB window: quality 10 and 11 search with
		// Zopfli (a second of CPU for a 57 KB chain under -race), and the
		// default window sizes the tables for 4 MiB (32 MB of allocation
		// per certificate).
		w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: 9, LGWin: 16})
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case Zstd:
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		out := enc.EncodeAll(data, nil)
		if err := enc.Close(); err != nil {
			return nil, err
		}
		return out, nil
	default:
		return bytes.Clone(data), nil
	}
	return buf.Bytes(), nil
}

// compressedCertificate builds a CompressedCertificate message (RFC 8879
// 4), header included, carrying body (a Certificate message's body)
// compressed with a, with fault applied.
func compressedCertificate(a Algorithm, body []byte, fault Fault) ([]byte, error) {
	plain := body
	if fault == FaultTrailingData {
		plain = append(bytes.Clone(body), "sixteen bytes..."...)
	}
	payload, err := compress(a, plain)
	if err != nil {
		return nil, err
	}
	length := len(body)
	switch fault {
	case FaultCorrupt:
		for i := len(payload) / 2; i < len(payload); i++ {
			payload[i] ^= 0xff
		}
	case FaultLengthLong:
		length++
	case FaultLengthShort:
		length--
	case FaultLengthHuge:
		length = 1<<24 - 1
	}
	m := make([]byte, 0, 4+2+3+3+len(payload))
	m = appendHeader(m, msgCompressedCertificate, 2+3+3+len(payload))
	m = append(m, byte(a>>8), byte(a))
	m = appendU24(m, length)
	m = appendU24(m, len(payload))
	return append(m, payload...), nil
}

func appendU24(b []byte, n int) []byte { return append(b, byte(n>>16), byte(n>>8), byte(n)) }

func appendHeader(b []byte, typ byte, n int) []byte { return appendU24(append(b, typ), n) }
