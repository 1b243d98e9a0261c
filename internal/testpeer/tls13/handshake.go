package tls13

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"hash"
	"slices"
)

// helloRetryRandom is the ServerHello.random that marks a
// HelloRetryRequest: SHA-256 of "HelloRetryRequest" (RFC 8446 4.1.3).
var helloRetryRandom = func() []byte {
	h := sha256.Sum256([]byte("HelloRetryRequest"))
	return h[:]
}()

// handshake runs the server side of a full TLS 1.3 handshake over c,
// filling in r as it learns things. On return without error c holds the
// application traffic keys.
func (s *Server) handshake(c *recordConn, r *Result) error {
	transcript := sha256.New()
	ch, err := s.readHello(c, r)
	if err != nil {
		return err
	}
	transcript.Write(ch.raw)
	sentCCS := false
	clientShare, ok := ch.share(groupX25519)
	if !ok {
		// Ask for x25519 (RFC 8446 4.1.4): the transcript restarts with
		// the hash of the first hello in a message_hash message.
		if !slices.Contains(ch.groups, groupX25519) {
			c.sendAlert(AlertHandshakeFailure)
			return fmt.Errorf("tls13: the client does not support x25519 (groups %v)", ch.groups)
		}
		first := sha256.Sum256(ch.raw)
		transcript.Reset()
		transcript.Write(appendHeader(nil, msgMessageHash, hashLen))
		transcript.Write(first[:])
		hrr := serverHello(helloRetryRandom, ch.sessionID, []byte{0, extKeyShare, 0, 2, 0, groupX25519})
		transcript.Write(hrr)
		if err := c.writeRecords(recordHandshake, hrr); err != nil {
			return err
		}
		if len(ch.sessionID) > 0 {
			if err := c.writeRecords(recordChangeCipherSpec, []byte{1}); err != nil {
				return err
			}
			sentCCS = true
		}
		r.RetryRequest = true
		if ch, err = s.readHello(c, r); err != nil {
			return err
		}
		transcript.Write(ch.raw)
		if clientShare, ok = ch.share(groupX25519); !ok {
			c.sendAlert(AlertIllegalParameter)
			return fmt.Errorf("tls13: the second client hello has no x25519 share either")
		}
	}

	// Key exchange.
	peer, err := ecdh.X25519().NewPublicKey(clientShare)
	if err != nil {
		c.sendAlert(AlertIllegalParameter)
		return fmt.Errorf("tls13: client x25519 share: %w", err)
	}
	priv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	shared, err := priv.ECDH(peer)
	if err != nil {
		c.sendAlert(AlertIllegalParameter)
		return fmt.Errorf("tls13: x25519: %w", err)
	}
	random := make([]byte, 32)
	if _, err := rand.Read(random); err != nil {
		return err
	}
	shareExt := []byte{0, extKeyShare, 0, 4 + x25519KeyLength, 0, groupX25519, 0, x25519KeyLength}
	sh := serverHello(random, ch.sessionID, append(shareExt, priv.PublicKey().Bytes()...))
	transcript.Write(sh)
	if err := c.writeRecords(recordHandshake, sh); err != nil {
		return err
	}
	if len(ch.sessionID) > 0 && !sentCCS {
		// Middlebox compatibility (RFC 8446 D.4).
		if err := c.writeRecords(recordChangeCipherSpec, []byte{1}); err != nil {
			return err
		}
	}
	ks := newSchedule(shared, transcript.Sum(nil))
	c.out, c.in = newDirection(ks.serverHS), newDirection(ks.clientHS)

	// The encrypted flight: EncryptedExtensions, (Compressed)Certificate,
	// CertificateVerify, Finished.
	var flight []byte
	add := func(msg []byte) {
		transcript.Write(msg)
		flight = append(flight, msg...)
	}
	add(encryptedExtensions(ch.alpn))
	cert, alg, err := s.certificateMessage(ch)
	if err != nil {
		c.sendAlert(AlertInternalError)
		return err
	}
	add(cert)
	cv, err := certificateVerify(s.key(), transcript.Sum(nil))
	if err != nil {
		c.sendAlert(AlertInternalError)
		return err
	}
	add(cv)
	add(append(appendHeader(nil, msgFinished, finishedLength), finishedMAC(ks.serverHS, transcript.Sum(nil))...))
	if err := c.writeRecords(recordHandshake, flight); err != nil {
		return err
	}
	if alg != 0 {
		r.Sent = alg
		s.compressed.Add(1)
	}
	clientApp, serverApp := ks.application(transcript.Sum(nil))
	return readClientFinished(c, transcript, ks, clientApp, serverApp)
}

// readHello reads and checks a ClientHello.
func (s *Server) readHello(c *recordConn, r *Result) (*clientHello, error) {
	msg, err := c.readHandshake()
	if err != nil {
		return nil, err
	}
	ch, err := parseClientHello(msg)
	if err != nil {
		c.sendAlert(AlertDecodeError)
		return nil, err
	}
	r.Offered, r.ALPN = ch.certAlgs, ch.alpn
	switch {
	case !slices.Contains(ch.versions, versionTLS13):
		c.sendAlert(AlertProtocolVersion)
		return nil, fmt.Errorf("tls13: the client does not offer TLS 1.3 (versions %x)", ch.versions)
	case !slices.Contains(ch.suites, suiteAES128GCMSHA256):
		c.sendAlert(AlertHandshakeFailure)
		return nil, fmt.Errorf("tls13: the client does not offer TLS_AES_128_GCM_SHA256 (suites %x)", ch.suites)
	case !slices.Contains(ch.sigAlgs, sigECDSAP256SHA256):
		c.sendAlert(AlertHandshakeFailure)
		return nil, fmt.Errorf("tls13: the client does not accept ecdsa_secp256r1_sha256 (schemes %x)", ch.sigAlgs)
	}
	if k, ok := ch.share(groupX25519); ok && len(k) != x25519KeyLength {
		c.sendAlert(AlertIllegalParameter)
		return nil, fmt.Errorf("tls13: x25519 key share of %d bytes", len(k))
	}
	return ch, nil
}

// readClientFinished reads the client's Finished under the client handshake
// keys, checks it against the transcript through the server's Finished,
// and installs the application traffic keys.
func readClientFinished(c *recordConn, transcript hash.Hash, ks *schedule, clientApp, serverApp []byte) error {
	want := finishedMAC(ks.clientHS, transcript.Sum(nil))
	msg, err := c.readHandshake()
	if err != nil {
		return err
	}
	if msg[0] != msgFinished {
		c.sendAlert(AlertUnexpectedMessage)
		return fmt.Errorf("tls13: expected the client's finished, got message type %d", msg[0])
	}
	if len(msg) != 4+finishedLength || !hmac.Equal(msg[4:], want) {
		c.sendAlert(AlertDecryptError)
		return fmt.Errorf("tls13: the client's finished does not verify")
	}
	if len(c.hs) != 0 {
		// Handshake data must not straddle a key change (RFC 8446 5.1).
		c.sendAlert(AlertUnexpectedMessage)
		return fmt.Errorf("tls13: handshake data after the client's finished")
	}
	c.in, c.out = newDirection(clientApp), newDirection(serverApp)
	c.outSecret = serverApp
	return nil
}

// serverHello builds a ServerHello (or, with helloRetryRandom, a
// HelloRetryRequest) selecting TLS 1.3 and TLS_AES_128_GCM_SHA256, with
// exts (encoded extensions) after supported_versions.
func serverHello(random, sessionID, exts []byte) []byte {
	versions := []byte{0, extSupportedVersions, 0, 2, versionTLS13 >> 8, versionTLS13 & 0xff}
	extLen := len(versions) + len(exts)
	n := 2 + 32 + 1 + len(sessionID) + 2 + 1 + 2 + extLen
	m := appendHeader(make([]byte, 0, 4+n), msgServerHello, n)
	m = append(m, legacyVersionTLS12>>8, legacyVersionTLS12&0xff)
	m = append(m, random...)
	m = append(m, byte(len(sessionID)))
	m = append(m, sessionID...)
	m = append(m, suiteAES128GCMSHA256>>8, suiteAES128GCMSHA256&0xff, compressionMethodNull)
	m = append(m, byte(extLen>>8), byte(extLen))
	m = append(m, versions...)
	return append(m, exts...)
}

// encryptedExtensions selects http/1.1 by ALPN when the client offers it,
// and nothing else.
func encryptedExtensions(alpn []string) []byte {
	var exts []byte
	if slices.Contains(alpn, "http/1.1") {
		const p = "http/1.1"
		exts = append(exts, 0, extALPN, 0, 2+1+byte(len(p)), 0, 1+byte(len(p)), byte(len(p)))
		exts = append(exts, p...)
	}
	m := appendHeader(nil, msgEncryptedExtensions, 2+len(exts))
	m = append(m, byte(len(exts)>>8), byte(len(exts)))
	return append(m, exts...)
}

// certificateMessage returns the server's Certificate message, or its
// CompressedCertificate form and the algorithm used (0: uncompressed).
// Each form is built once per Server.
func (s *Server) certificateMessage(ch *clientHello) ([]byte, Algorithm, error) {
	alg := s.cfg.Algorithm
	if alg == 0 {
		for _, a := range ch.certAlgs {
			if a == Zlib || a == Brotli || a == Zstd {
				alg = a
				break
			}
		}
	}
	if s.cfg.Uncompressed {
		alg = 0
	}
	s.certMu.Lock()
	defer s.certMu.Unlock()
	if m, ok := s.certs[alg]; ok {
		return m, alg, nil
	}
	// Certificate (RFC 8446 4.4.2): an empty certificate_request_context,
	// then certificate_list<0..2^24-1> of CertificateEntry {cert_data
	// <1..2^24-1>; extensions<0..2^16-1>}.
	var list []byte
	for _, der := range s.cfg.Identity.Chain {
		list = appendU24(list, len(der))
		list = append(list, der...)
		list = append(list, 0, 0)
	}
	body := appendU24([]byte{0}, len(list))
	body = append(body, list...)
	m := append(appendHeader(nil, msgCertificate, len(body)), body...)
	if alg != 0 {
		var err error
		if m, err = compressedCertificate(alg, body, s.cfg.Fault); err != nil {
			return nil, 0, err
		}
	}
	if s.certs == nil {
		s.certs = map[Algorithm][]byte{}
	}
	s.certs[alg] = m
	return m, alg, nil
}

// certificateVerify signs the transcript hash through the certificate with
// ecdsa_secp256r1_sha256 (RFC 8446 4.4.3): the signed content is 64 spaces,
// the context string, a zero byte and the hash.
func certificateVerify(key *ecdsa.PrivateKey, transcriptHash []byte) ([]byte, error) {
	content := make([]byte, 0, certificateVerifyPadBytes+len(certificateVerifyContext)+1+len(transcriptHash))
	for i := 0; i < certificateVerifyPadBytes; i++ {
		content = append(content, 0x20)
	}
	content = append(content, certificateVerifyContext...)
	content = append(content, 0)
	content = append(content, transcriptHash...)
	digest := sha256.Sum256(content)
	sig, err := ecdsa.SignASN1(rand.Reader, key, digest[:])
	if err != nil {
		return nil, err
	}
	m := appendHeader(nil, msgCertificateVerify, 4+len(sig))
	m = append(m, sigECDSAP256SHA256>>8, sigECDSAP256SHA256&0xff, byte(len(sig)>>8), byte(len(sig)))
	return append(m, sig...), nil
}
