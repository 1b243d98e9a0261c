'use strict';
// Profiles from files and weighted sets through the Node binding; with
// chromium installed, a profile captured from it by guise capture and used
// at once, compared on the wire with what the browser sent. Run with
// node --test test/profile-file.test.js (after ../build.sh).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const readline = require('node:readline');
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const { pathToFileURL } = require('node:url');
const { echoServer, root, guiseModule } = require('./helpers');

const guise = require(guiseModule);
// An embedded profile's file; test-installed.sh, which runs a copy of the
// tests outside the checkout, copies it out and names its folder.
const file = path.join(process.env.GUISE_PROFILE_DATA || path.join(root, 'profile', 'data'), 'firefox153-linux.json');

test('a profile file by path, file: URL, JSON and object is the embedded profile on the wire', { timeout: 120000 }, async () => {
  const echo = await echoServer();
  try {
    const want = await (await guise.fetch(`${echo.url}/api/all`, { ca: echo.ca, browser: 'firefox153-linux' })).json();
    const text = fs.readFileSync(file, 'utf8');
    for (const browser of [file, pathToFileURL(file), text, JSON.parse(text)]) {
      const s = guise.createSession({ browser, ca: echo.ca });
      try {
        const got = await (await s.fetch(`${echo.url}/api/all`)).json();
        assert.equal(got.tls.ja4, want.tls.ja4);
        assert.equal(got.http2.akamai, want.http2.akamai);
        assert.deepEqual(got.header_order, want.header_order);
      } finally {
        s.close();
      }
    }
    const got = await (await guise.fetch(`${echo.url}/api/all`, { ca: echo.ca, browser: file })).json();
    assert.deepEqual(got.header_order, want.header_order);
  } finally {
    echo.stop();
  }
});

test('a bad profile file is refused when the Session is made, naming the field', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'guise-bad-'));
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, fs.readFileSync(file, 'utf8').replace('"first_stream_id": 3', '"first_stream_id": 4'));
  assert.throws(() => guise.createSession({ browser: bad }), (e) => /http2\.first_stream_id/.test(e.message) && /bad\.json/.test(e.message));
  assert.throws(() => guise.createSession({ browser: 'chrome:0' }));
});

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

function which(name) {
  for (const dir of (process.env.PATH || '').split(':').concat(['/usr/bin', '/usr/lib/chromium'])) {
    const p = path.join(dir, name);
    try { fs.accessSync(p, fs.constants.X_OK); return p; } catch { /* next */ }
  }
  return '';
}

test('a profile captured from chromium works at once and equals the browser', { timeout: 300000 }, async (t) => {
  const chromium = which('chromium');
  if (!chromium) {
    if (process.env.GUISE_REQUIRE_PEERS === '1') assert.fail('chromium is not installed; GUISE_REQUIRE_PEERS=1 makes this a failure');
    t.skip('chromium is not installed (apt-get install chromium)');
    return;
  }
  const echo = await echoServer(); // builds the CLI once
  try {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'guise-capture-'));
    const out = path.join(dir, 'mine.json');
    const port = await freePort();
    const cap = spawn(echo.cli, ['capture', '--out', out, '--addr', `127.0.0.1:${port}`, '--http1', '--timeout', '150s'],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => cap.on('exit', (code) => resolve(code)));
    try {
      const rl = readline.createInterface({ input: cap.stdout });
      for await (const line of rl) if (line.includes('waiting up to')) break;
      rl.on('line', () => {});
      const origin = `https://fp.test:${port}`;
      for (const extra of [[], ['--disable-http2']]) {
        for (const page of [`${origin}/`, `${origin}/flow/start`]) {
          spawnSync(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
            '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-default-apps',
            '--disable-domain-reliability', '--no-default-browser-check', '--ignore-certificate-errors',
            `--user-data-dir=${fs.mkdtempSync(path.join(dir, 'u'))}`,
            '--host-resolver-rules=MAP fp.test 127.0.0.1, MAP sub.fp.test 127.0.0.1, MAP * ~NOTFOUND',
            '--virtual-time-budget=5000', '--dump-dom', ...extra, page], { stdio: 'ignore', timeout: 60000 });
        }
      }
      assert.equal(await exited, 0, 'guise capture failed');
    } finally {
      cap.kill();
    }
    const ref = JSON.parse(fs.readFileSync(out, 'utf8')).reference;
    const got = await (await guise.fetch(`${echo.url}/api/all`, { ca: echo.ca, browser: out })).json();
    const go = JSON.parse(execFileSync(echo.cli, ['get', '--profile', out, '--cacert', echo.caFile, `${echo.url}/api/all`]).toString());
    const hashes = (ja4) => ja4.split('_').slice(1).join('_'); // an IP address gets no SNI
    for (const seen of [got, go]) {
      assert.equal(hashes(seen.tls.ja4), hashes(ref.ja4));
      assert.equal(seen.http2.akamai, ref.akamai);
      assert.deepEqual(seen.header_order, ref.header_order);
      assert.deepEqual(seen.pseudo_header_order, ref.pseudo_order);
    }
    assert.deepEqual(got.headers, go.headers);
    fs.rmSync(dir, { recursive: true, force: true });
  } finally {
    echo.stop();
  }
});
