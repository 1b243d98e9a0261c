package h2

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// nodeRST is a Node http2 compatibility-layer server whose handlers answer
// in full and never read the request body. On /end the handler ends the
// response: Node sends END_STREAM, then RST_STREAM(NO_ERROR). On /close it
// writes every byte of the declared Content-Length and then closes the
// stream with NO_ERROR: RST_STREAM(NO_ERROR) comes in place of END_STREAM.
// On /short it closes the stream the same way after half the body.
const nodeRST = `
const http2 = require('http2');
const fs = require('fs');
const [port, cert, key] = process.argv.slice(2);
const body = Buffer.from('refused: too large');
const srv = http2.createSecureServer({cert: fs.readFileSync(cert), key: fs.readFileSync(key)}, (req, res) => {
  res.writeHead(413, {'content-length': body.length, 'content-type': 'text/plain'});
  const close = () => res.stream.close(http2.constants.NGHTTP2_NO_ERROR);
  if (req.url === '/close') res.write(body, close);
  else if (req.url === '/short') res.write(body.subarray(0, 9), close);
  else res.end(body);
});
srv.listen(+port, '127.0.0.1');
`

// TestInteropNodeRSTNoError: POSTs larger than the stream window to Node's
// http2 compatibility layer, whose handlers never read them. A response
// whose body is complete by its Content-Length is delivered whole, whether
// END_STREAM came before RST_STREAM(NO_ERROR) or not at all; one cut short
// fails with the stream error. The connection carries every next request.
//
// RELIABILITY H2-23.
func TestInteropNodeRSTNoError(t *testing.T) {
	bin := testpeer.Need(t, "node", "nodejs")
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	script := filepath.Join(dir, "server.js")
	os.WriteFile(script, []byte(nodeRST), 0o644)
	port := freePort(t)
	startPeer(t, port, bin, script, fmt.Sprint(port), cert, key)
	cc := dialTLS(t, port, chromeConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up := bytes.Repeat([]byte("u"), 4<<20)
	for _, path := range []string{"/end", "/close", "/short", "/close", "/end"} {
		req := &Request{Method: "POST", Scheme: "https", Authority: "peer.test", Path: path,
			Header: chromeNav, Body: bytes.NewReader(up), ContentLength: int64(len(up))}
		resp, err := cc.RoundTrip(ctx, req)
		var b []byte
		if err == nil {
			b, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if path == "/short" {
			wantStreamError(t, err, ErrCodeNo)
			continue
		}
		if err != nil || resp.StatusCode != 413 || string(b) != "refused: too large" {
			t.Fatalf("%s: %q %v, want 413 and the whole body", path, b, err)
		}
	}
}
