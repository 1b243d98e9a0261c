'use strict';
// Loopback servers and certificates for the binding's tests.
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const http = require('node:http');
const https = require('node:https');
const http2 = require('node:http2');
const readline = require('node:readline');

const root = path.resolve(__dirname, '..', '..', '..');

// guiseModule is what the tests require as guise: $GUISE_PACKAGE (the name
// of an installed package, 'guise', resolved from where these tests are,
// or a path), else this tree's bindings/node.
const guiseModule = process.env.GUISE_PACKAGE || path.join(__dirname, '..');

// load returns the guise module under test.
function load() {
  return require(guiseModule);
}

let certCache;
// cert returns a self-signed certificate for 127.0.0.1 and localhost,
// made with openssl once per process.
function cert() {
  if (certCache) return certCache;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'guise-node-'));
  const key = path.join(dir, 'key.pem');
  const crt = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', crt, '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  certCache = { key: fs.readFileSync(key, 'utf8'), cert: fs.readFileSync(crt, 'utf8') };
  return certCache;
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

// serve starts a server of kind 'http', 'https' (HTTP/1.1 only) or 'h2'
// with handler (req, res) and returns {url, server, sockets, close}.
async function serve(kind, handler) {
  const c = cert();
  let server;
  if (kind === 'http') server = http.createServer(handler);
  else if (kind === 'https') server = https.createServer({ key: c.key, cert: c.cert, ALPNProtocols: ['http/1.1'] }, handler);
  else server = http2.createSecureServer({ key: c.key, cert: c.cert, allowHTTP1: true }, handler);
  const sockets = new Set();
  let accepted = 0;
  server.on(kind === 'http' ? 'connection' : 'secureConnection', (s) => {
    accepted++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const port = await listen(server);
  const scheme = kind === 'http' ? 'http' : 'https';
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    server,
    sockets,
    get accepted() { return accepted; },
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      if (server.closeAllConnections) server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

// connectProxy is an HTTP proxy that tunnels CONNECT and counts tunnels.
async function connectProxy() {
  const server = http.createServer((req, res) => { res.writeHead(405); res.end(); });
  const p = { tunnels: 0, targets: [] };
  server.on('connect', (req, sock, head) => {
    p.tunnels++;
    p.targets.push(req.url);
    const [host, port] = req.url.split(':');
    const up = net.connect(Number(port), host, () => {
      sock.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      up.write(head);
      up.pipe(sock);
      sock.pipe(up);
    });
    up.on('error', () => sock.destroy());
    sock.on('error', () => up.destroy());
  });
  const port = await listen(server);
  p.url = `http://127.0.0.1:${port}`;
  p.close = () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); });
  return p;
}

// guiseCLI builds cmd/guise once (into a temp dir) and returns its path.
let cliCache;
function guiseCLI() {
  if (process.env.GUISE_CLI) return process.env.GUISE_CLI;
  if (cliCache) return cliCache;
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'guise-cli-')), 'guise');
  execFileSync('go', ['build', '-o', out, './cmd/guise'], { cwd: root, stdio: 'inherit' });
  cliCache = out;
  return out;
}

// echoServer runs `guise serve` (the fingerprint echo server) and returns
// {url, ca (PEM), ca file, stop}.
async function echoServer() {
  const cli = guiseCLI();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'guise-echo-'));
  const caFile = path.join(dir, 'ca.pem');
  const port = await new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
  const p = spawn(cli, ['serve', '--addr', `127.0.0.1:${port}`, '--ca-out', caFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    // The banner comes before the CA file is written: wait for the line
    // that says it was, within a bound.
    const rl = readline.createInterface({ input: p.stdout });
    const ready = (async () => {
      for await (const line of rl) {
        if (line.includes('CA certificate written')) return true;
      }
      return false;
    })();
    const bound = new Promise((resolve) => setTimeout(() => resolve(false), 30000).unref());
    if (!(await Promise.race([ready, bound]))) throw new Error('guise serve did not write its CA within 30s');
    rl.on('line', () => {});
    return { url: `https://127.0.0.1:${port}`, ca: fs.readFileSync(caFile, 'utf8'), caFile, cli, stop: () => p.kill() };
  } catch (e) {
    p.kill(); // a failed start leaves no child holding the test runner open
    throw e;
  }
}

function rssMiB() {
  return process.memoryUsage.rss() / (1 << 20);
}

module.exports = { cert, serve, connectProxy, guiseCLI, echoServer, rssMiB, root, guiseModule, load };
