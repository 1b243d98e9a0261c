'use strict';
// Tests of the Node binding against loopback servers (Node's http, https
// and http2), and of fidelity against guise's echo server. Run with
//   node --expose-gc --test bindings/node/test/
// GUISE_FULL=1 runs the leak test at 100,000 requests instead of 10,000.

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile, execFileSync } = require('node:child_process');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { cert, serve, connectProxy, echoServer, rssMiB, load } = require('./helpers');

const guise = load();

const ca = cert().cert;

function hello(req, res) {
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Proto', `${req.httpVersion}`);
  res.end(`hello ${req.method} ${req.url}`);
}

for (const kind of ['https', 'h2']) {
  test(`fetch over ${kind}: status, headers, text, json, arrayBuffer`, async () => {
    const srv = await serve(kind, (req, res) => {
      if (req.url === '/json') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ ok: true, n: 7 }));
      } else hello(req, res);
    });
    try {
      const r = await guise.fetch(`${srv.url}/a?b=1`, { ca });
      assert.equal(r.status, 200);
      assert.equal(r.ok, true);
      assert.equal(r.httpVersion, kind === 'h2' ? 'HTTP/2' : 'HTTP/1.1');
      assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(r.headers.get('X-PROTO'), kind === 'h2' ? '2.0' : '1.1');
      assert.equal(await r.text(), 'hello GET /a?b=1');
      await assert.rejects(r.text(), /already used/);
      const j = await guise.fetch(`${srv.url}/json`, { ca });
      assert.deepEqual(await j.json(), { ok: true, n: 7 });
      const b = await guise.fetch(`${srv.url}/x`, { ca });
      assert.equal(Buffer.from(await b.arrayBuffer()).toString(), 'hello GET /x');
    } finally {
      await srv.close();
    }
  });
}

// A response whose head and body fit the request's buffer (16 KiB in
// src/guise_node.c) comes back whole in its completion; a larger one whose
// body guise prefetched (64 KiB) comes through head(); a larger one still
// is read in pieces. Each must give the same status, fields in wire order
// and case, and body; headers of any size, including a value with bytes
// above 0x7f (latin1), survive the one-string crossing.
test('responses in the completion, through head() and read in pieces agree', async () => {
  const sizes = [0, 1, 100, 16 * 1024 - 600, 16 * 1024, 40 * 1024, 64 * 1024, 200 * 1024];
  for (const kind of ['https', 'h2']) {
    const srv = await serve(kind, (req, res) => {
      const n = Number(new URL(req.url, 'https://x').searchParams.get('n'));
      const body = Buffer.alloc(n);
      for (let i = 0; i < n; i++) body[i] = (i * 7) & 0xff;
      const raw = [['Content-Length', String(n)], ['X-First', 'a'], ['x-MiXeD', 'b\u00e9'], ['X-Long', 'v'.repeat(n > 30000 ? 9000 : 10)]];
      for (let i = 0; i < 20; i++) raw.push([`X-Many-${i}`, String(i)]);
      if (kind === 'h2') {
        res.writeHead(200, Object.fromEntries(raw.map(([k, v]) => [k.toLowerCase(), v])));
      } else {
        res.writeHead(200, raw.flat());
      }
      res.end(body);
    });
    try {
      const s = guise.createSession({ ca });
      try {
        for (const n of sizes) {
          const r = await s.fetch(`${srv.url}/b?n=${n}`);
          const want = Buffer.alloc(n);
          for (let i = 0; i < n; i++) want[i] = (i * 7) & 0xff;
          assert.equal(r.status, 200, `n=${n}`);
          assert.ok(Buffer.from(await r.arrayBuffer()).equals(want), `${kind} body of ${n} bytes`);
          assert.equal(r.headers.get('x-mixed'), 'b\u00e9', `${kind} n=${n}`);
          assert.equal(r.headers.get('x-many-19'), '19');
          const names = r.headers.raw().map(([k]) => k).filter((k) => /^x-/i.test(k));
          const wantNames = ['X-First', 'x-MiXeD', 'X-Long', ...Array.from({ length: 20 }, (_, i) => `X-Many-${i}`)];
          assert.deepEqual(names, kind === 'h2' ? wantNames.map((k) => k.toLowerCase()) : wantNames, `${kind} n=${n}`);
        }
      } finally {
        s.close();
      }
      const st = guise.stats();
      assert.equal(st.calls, 0, 'every call is closed');
    } finally {
      await srv.close();
    }
  }
});

test('body is a ReadableStream that reads only as it is consumed', async () => {
  const total = 8 << 20;
  let written = 0;
  const srv = await serve('https', (req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
    const chunk = Buffer.alloc(64 << 10, 1);
    const more = () => {
      while (written < total) {
        written += chunk.length;
        if (!res.write(chunk)) return res.once('drain', more);
      }
      res.end();
    };
    more();
  });
  try {
    const r = await guise.fetch(`${srv.url}/big`, { ca });
    const reader = r.body.getReader();
    const first = await reader.read();
    assert.ok(first.value.length > 0);
    await sleep(300);
    // Not consumed: the server is held back by TCP and guise's window.
    assert.ok(written < total, `server wrote ${written} of ${total} bytes while the reader paused`);
    let n = first.value.length;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      n += value.length;
    }
    assert.equal(n, total);
  } finally {
    await srv.close();
  }
});

test('POST bodies: bytes, string, URLSearchParams, and a streamed async iterable', async () => {
  const srv = await serve('h2', (req, res) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      res.end(JSON.stringify({ len: body.length, ct: req.headers['content-type'] || null, head: body.subarray(0, 16).toString() }));
    });
  });
  try {
    const s = guise.createSession({ ca });
    let r = await s.fetch(`${srv.url}/p`, { method: 'POST', body: 'a=b', kind: 'fetch' });
    assert.deepEqual(await r.json(), { len: 3, ct: 'text/plain;charset=UTF-8', head: 'a=b' });
    r = await s.fetch(`${srv.url}/p`, { method: 'POST', body: new URLSearchParams({ q: 'x y' }) });
    assert.deepEqual(await r.json(), { len: 5, ct: 'application/x-www-form-urlencoded;charset=UTF-8', head: 'q=x+y' });
    r = await s.fetch(`${srv.url}/p`, { method: 'PUT', body: new Uint8Array([1, 2, 3]), headers: { 'content-type': 'application/x-bin' } });
    assert.deepEqual(await r.json(), { len: 3, ct: 'application/x-bin', head: '\x01\x02\x03' });
    async function* gen() {
      for (let i = 0; i < 64; i++) yield Buffer.alloc(32 << 10, 65 + (i % 26));
    }
    r = await s.fetch(`${srv.url}/p`, { method: 'POST', body: gen() });
    // A navigation with a body goes out as a form submission would.
    assert.deepEqual(await r.json(), { len: 64 * (32 << 10), ct: 'application/x-www-form-urlencoded', head: 'AAAAAAAAAAAAAAAA' });
    s.close();
  } finally {
    await srv.close();
  }
});

test('a session keeps cookies, exports and imports them; isolated fetches keep none', async () => {
  const srv = await serve('https', (req, res) => {
    if (req.url === '/set') res.setHeader('Set-Cookie', 'sid=abc; Path=/; Secure');
    res.end(req.headers.cookie || '');
  });
  try {
    const s = guise.createSession({ ca });
    await (await s.fetch(`${srv.url}/set`)).text();
    assert.equal(await (await s.fetch(`${srv.url}/echo`)).text(), 'sid=abc');
    const doc = s.cookies();
    assert.equal(doc.cookies.length, 1);
    assert.equal(doc.cookies[0].name, 'sid');
    const s2 = guise.createSession({ ca });
    s2.setCookies(doc);
    assert.equal(await (await s2.fetch(`${srv.url}/echo`)).text(), 'sid=abc');
    await (await guise.fetch(`${srv.url}/set`, { ca })).text();
    assert.equal(await (await guise.fetch(`${srv.url}/echo`, { ca })).text(), '');
    s.close();
    s2.close();
    await assert.rejects(s.fetch(`${srv.url}/echo`), (e) => e.kind === 'closed');
  } finally {
    await srv.close();
  }
});

test('a transport shares connections between sessions, never cookies', async () => {
  const srv = await serve('h2', (req, res) => {
    if (req.url === '/set') res.setHeader('Set-Cookie', 'a=1; Path=/');
    res.end(req.headers.cookie || '-');
  });
  try {
    const t = guise.createTransport({});
    const a = guise.createSession({ ca, transport: t });
    const b = guise.createSession({ ca, transport: t });
    await (await a.fetch(`${srv.url}/set`)).text();
    assert.equal(await (await a.fetch(`${srv.url}/`)).text(), 'a=1');
    assert.equal(await (await b.fetch(`${srv.url}/`)).text(), '-');
    assert.equal(srv.accepted, 1, 'one HTTP/2 connection for both sessions');
    a.close();
    b.close();
    t.close();
  } finally {
    await srv.close();
  }
});

test('redirects: follow, manual, error', async () => {
  const srv = await serve('https', (req, res) => {
    if (req.url === '/from') {
      res.writeHead(302, { Location: '/to' });
      return res.end();
    }
    res.end(`at ${req.url}`);
  });
  try {
    const r = await guise.fetch(`${srv.url}/from`, { ca });
    assert.equal(await r.text(), 'at /to');
    assert.equal(r.url, `${srv.url}/to`);
    assert.equal(r.redirected, true);
    const m = await guise.fetch(`${srv.url}/from`, { ca, redirect: 'manual' });
    assert.equal(m.status, 302);
    assert.equal(m.headers.get('location'), '/to');
    m.close();
    await assert.rejects(guise.fetch(`${srv.url}/from`, { ca, redirect: 'error' }), (e) => e.kind === 'redirect');
  } finally {
    await srv.close();
  }
});

test('errors carry guise kinds: refused, certificate, timeout with its phase, invalid', async () => {
  const dead = await serve('http', () => {});
  const port = new URL(dead.url).port;
  await dead.close();
  await assert.rejects(guise.fetch(`http://127.0.0.1:${port}/`), (e) => e instanceof guise.GuiseError && e.kind === 'refused');
  const srv = await serve('https', (req, res) => {
    if (req.url === '/hang') return; // never answers
    res.end('ok');
  });
  try {
    await assert.rejects(guise.fetch(`${srv.url}/`), (e) => e.kind === 'certificate');
    assert.equal(await (await guise.fetch(`${srv.url}/`, { insecure: true })).text(), 'ok');
    await assert.rejects(guise.fetch(`${srv.url}/hang`, { ca, timeout: 200 }), (e) => e.kind === 'timeout' && e.phase === 'total');
    const s = guise.createSession({ ca, responseHeaderTimeout: 200 });
    await assert.rejects(s.fetch(`${srv.url}/hang`), (e) => e.kind === 'timeout' && e.phase === 'head');
    s.close();
    await assert.rejects(guise.fetch('ftp://127.0.0.1/'), (e) => e.kind === 'invalid');
    await assert.rejects(guise.fetch(`${srv.url}/`, { browser: 'netscape4' }), (e) => e.kind === 'invalid');
    assert.throws(() => guise.createSession({ trustStore: 'nope' }), (e) => e.kind === 1);
  } finally {
    await srv.close();
  }
});

test('a proxy from the options carries the request', async () => {
  const srv = await serve('https', hello);
  const proxy = await connectProxy();
  try {
    const r = await guise.fetch(`${srv.url}/via`, { ca, proxy: proxy.url });
    assert.equal(await r.text(), 'hello GET /via');
    const s = guise.createSession({ ca, proxy: proxy.url });
    assert.equal(await (await s.fetch(`${srv.url}/s`)).text(), 'hello GET /s');
    s.close();
    assert.equal(proxy.tunnels, 2);
    assert.equal(proxy.targets[0], new URL(srv.url).host);
  } finally {
    await proxy.close();
    await srv.close();
  }
});

test('the protocol option chooses the HTTP version against a server offering h2 and http/1.1', async () => {
  const srv = await serve('h2', hello);
  try {
    for (const [init, want] of [[{ http1Only: true }, 'HTTP/1.1'], [{ protocol: 'http1' }, 'HTTP/1.1'], [{ protocol: 'http2' }, 'HTTP/2'], [{ protocol: 'any' }, 'HTTP/2']]) {
      const r = await guise.fetch(`${srv.url}/`, { ca, ...init });
      assert.equal(r.httpVersion, want, JSON.stringify(init));
      r.close();
    }
    const s = guise.createSession({ ca, http1Only: true });
    const r = await s.fetch(`${srv.url}/`);
    assert.equal(r.httpVersion, 'HTTP/1.1');
    r.close();
    s.close();
    // HTTP/3 goes to QUIC alone, never falling back: this server is on TCP
    // only, so its UDP port refuses the dial at once.
    await assert.rejects(guise.fetch(`${srv.url}/`, { ca, protocol: 'http3' }), (e) => e.kind === 'refused');
    assert.throws(() => guise.createSession({ protocol: 'http9' }), (e) => e.kind === 1);
  } finally {
    await srv.close();
  }
});

test('aborting from the host ends the Go request and its connection', async () => {
  let closed = 0;
  const srv = await serve('https', (req, res) => {
    req.socket.on('close', () => { closed++; });
    if (req.url === '/slowbody') {
      res.writeHead(200);
      res.write('x'.repeat(1000));
    }
  });
  try {
    const before = guise.stats().calls;
    const ac = new AbortController();
    const p = guise.fetch(`${srv.url}/hang`, { ca, signal: ac.signal });
    await sleep(100);
    ac.abort();
    await assert.rejects(p, (e) => e.name === 'AbortError');
    for (let i = 0; i < 50 && closed === 0; i++) await sleep(20);
    assert.equal(closed, 1, 'the server saw the connection close');
    // During the body.
    const ac2 = new AbortController();
    const r = await guise.fetch(`${srv.url}/slowbody`, { ca, signal: ac2.signal, prefetch: -1 });
    const reader = r.body.getReader();
    await reader.read();
    ac2.abort();
    await assert.rejects(reader.read());
    for (let i = 0; i < 50 && closed < 2; i++) await sleep(20);
    assert.equal(closed, 2);
    assert.equal(guise.stats().calls, before);
  } finally {
    await srv.close();
  }
});

test('a session dropped without close is closed by its finalizer', { skip: !global.gc && 'needs node --expose-gc' }, async () => {
  const srv = await serve('https', hello);
  try {
    const base = guise.stats().sessions;
    let closedConns = 0;
    srv.server.on('secureConnection', (s) => s.on('close', () => { closedConns++; }));
    await (async () => {
      const s = guise.createSession({ ca });
      await (await s.fetch(`${srv.url}/`)).text();
      assert.equal(guise.stats().sessions, base + 1);
    })();
    for (let i = 0; i < 50 && guise.stats().sessions > base; i++) {
      global.gc();
      await sleep(20);
    }
    assert.equal(guise.stats().sessions, base, 'the session was closed');
    for (let i = 0; i < 50 && closedConns === 0; i++) await sleep(20);
    assert.equal(closedConns, 1, 'its connection was closed');
  } finally {
    await srv.close();
  }
});

// The memory tests measure a client process of their own (memory-child.js),
// so the servers and the test runner do not count.
function runChild(args, env) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', path.join(__dirname, 'memory-child.js'), ...args],
      { maxBuffer: 1 << 20, env: { ...process.env, ...env } }, (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout.trim()))));
  });
}

// The host's RSS: Node alone is about 39 MiB here and about 53 MiB once
// libguise's code has run a request (most of it file-backed: node's and
// libguise's text, libguise 9.7 MiB of it). Reading 256 MiB through a BYOB
// reader then adds about 11 MiB whoever fills the stream: the control, a
// JavaScript byte stream read the same way, adds as much (node's own text
// paged in, 6 MiB, and V8's), so the whole process peaks at 64-66 MiB
// with or without guise under the stream. The absolute 64 MiB is
// therefore printed, not asserted; what is asserted is that guise's
// download over HTTP/1.1 into the host's buffer peaks within 4 MiB of the
// control's peak, and that no download adds 32 MiB (over HTTP/2 guise
// also holds up to the profile's 6 MiB stream window, and the default
// reader's chunks wait for V8's collector).
test('a 256 MiB streamed download keeps the host process\'s RSS within 4 MiB of Node\'s own streaming', { timeout: 300000 }, async (t) => {
  const total = 256 << 20;
  let ctl;
  for (const kind of ['https', 'h2']) {
    const srv = await serve(kind, (req, res) => {
      res.writeHead(200, { 'Content-Length': String(total) });
      const chunk = Buffer.alloc(256 << 10, 7);
      let sent = 0;
      const more = () => {
        while (sent < total) {
          sent += chunk.length;
          if (!res.write(chunk)) return res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    try {
      for (const reader of ['byob', 'default']) {
        if (!ctl) {
          ctl = await runChild(['control', `${srv.url}/big`, ca], { GUISE_CONTROL_BYTES: String(total) });
          assert.equal(ctl.bytes, total);
          t.diagnostic(`control (a JavaScript byte stream, BYOB reader): RSS ${ctl.start.toFixed(1)} MiB after the head, peak ${ctl.peak.toFixed(1)} MiB`);
        }
        const r = await runChild(['download', `${srv.url}/big`, ca, reader]);
        const what = `${kind} ${reader} reader: RSS ${r.start.toFixed(1)} MiB after the head, peak ${r.peak.toFixed(1)} MiB (anonymous ${r.peakAnon.toFixed(1)} MiB; the issue's limit 64 MiB ${r.peak < 64 ? 'met' : 'not met'}; control peak ${ctl.peak.toFixed(1)} MiB)`;
        t.diagnostic(what);
        assert.equal(r.bytes, total);
        if (kind === 'https' && reader === 'byob') assert.ok(r.peak < ctl.peak + 4, what);
        assert.ok(r.peak - r.start < 32, what);
      }
    } finally {
      await srv.close();
    }
  }
});

test('many requests leave no growth of RSS or of Go\'s heap', { timeout: 900000 }, async (t) => {
  const N = process.env.GUISE_FULL ? 100000 : 10000;
  const srv = await serve('h2', (req, res) => res.end('ok'));
  try {
    const r = await runChild(['many', `${srv.url}/`, ca, String(N)]);
    t.diagnostic(`${N} requests: RSS ${r.rss0.toFixed(1)} -> ${r.rss1.toFixed(1)} MiB, Go heap ${r.heap0} -> ${r.heap1} bytes`);
    assert.ok(r.rss1 - r.rss0 < 4, `RSS grew from ${r.rss0.toFixed(1)} to ${r.rss1.toFixed(1)} MiB over ${N} requests`);
    assert.ok(r.heap1 - r.heap0 < 256 << 10, `Go heap grew from ${r.heap0} to ${r.heap1} bytes over ${N} requests`);
    assert.equal(r.calls, 0);
    assert.equal(r.handles, 1, 'only the session is left');
  } finally {
    await srv.close();
  }
});

test('fidelity: JA4, Akamai and header order through the binding equal the Go API\'s', { timeout: 120000 }, async () => {
  const echo = await echoServer();
  try {
    for (const browser of ['chrome', 'firefox']) {
      const goJSON = JSON.parse(execFileSync(echo.cli, ['get', '--profile', browser, '--cacert', echo.caFile, `${echo.url}/api/all`]).toString());
      const r = await guise.fetch(`${echo.url}/api/all`, { ca: echo.ca, browser });
      const nodeJSON = await r.json();
      assert.equal(nodeJSON.tls.ja4, goJSON.tls.ja4, `${browser} JA4`);
      assert.equal(nodeJSON.http2.akamai, goJSON.http2.akamai, `${browser} Akamai`);
      assert.deepEqual(nodeJSON.header_order, goJSON.header_order, `${browser} header order`);
      assert.deepEqual(nodeJSON.pseudo_header_order, goJSON.pseudo_header_order, `${browser} pseudo-header order`);
      assert.deepEqual(nodeJSON.headers, goJSON.headers, `${browser} headers`);
    }
  } finally {
    echo.stop();
  }
});

test('the event loop keeps running while requests wait', async () => {
  const srv = await serve('https', (req, res) => setTimeout(() => res.end('late'), 300));
  try {
    let ticks = 0;
    const iv = setInterval(() => { ticks++; }, 10);
    const r = await guise.fetch(`${srv.url}/`, { ca });
    clearInterval(iv);
    assert.equal(await r.text(), 'late');
    assert.ok(ticks >= 10, `only ${ticks} timer ticks during a 300 ms request`);
  } finally {
    await srv.close();
  }
});
