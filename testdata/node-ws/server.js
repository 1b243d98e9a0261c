// An echo server of the Node ws package for websocket_peers_test.go, over
// TLS (HTTP/1.1) with permessage-deflate, on 127.0.0.1:PORT. Messages:
//   "frag" is answered with a text message sent in three fragments;
//   "ping" makes the server ping, then report "pong seen" once the pong came;
//   "big N" is answered with a binary message of N bytes;
//   "close" closes with 4000 "bye from ws";
// anything else is echoed with its type.
const https = require('https');
const fs = require('fs');
const { WebSocketServer } = require('ws');
const [port, cert, key] = process.argv.slice(2);
const srv = https.createServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) });
const wss = new WebSocketServer({ server: srv, perMessageDeflate: { threshold: 0 }, maxPayload: 1 << 20 });
wss.on('connection', (sock, req) => {
  sock.on('pong', () => sock.send('pong seen'));
  sock.on('message', (data, isBinary) => {
    const s = isBinary ? '' : data.toString();
    if (s === 'frag') {
      sock.send('one ', { fin: false });
      sock.send('two ', { fin: false });
      sock.send('three', { fin: true });
    } else if (s === 'ping') {
      sock.ping('are you there');
    } else if (s.startsWith('big ')) {
      sock.send(Buffer.alloc(+s.slice(4), 120), { binary: true });
    } else if (s === 'close') {
      sock.close(4000, 'bye from ws');
    } else if (s === 'headers') {
      sock.send(JSON.stringify(req.rawHeaders));
    } else {
      sock.send(data, { binary: isBinary });
    }
  });
});
srv.listen(+port, '127.0.0.1');
