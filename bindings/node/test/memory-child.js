'use strict';
// The client process of the memory tests in guise.test.js:
//   node --expose-gc memory-child.js download URL CA_PEM byob|default
//   node --expose-gc memory-child.js control URL CA_PEM   (GUISE_CONTROL_BYTES in the environment)
//   node --expose-gc memory-child.js many URL CA_PEM N
// prints one JSON line with what it measured.
const guise = require(process.env.GUISE_PACKAGE || '..'); // as helpers.js's load(), without its servers' modules

const rss = () => process.memoryUsage.rss() / (1 << 20);
const [mode, url, ca, count] = process.argv.slice(2);

async function settle() {
  for (let i = 0; i < 3; i++) {
    global.gc();
    guise.collect();
    await new Promise((r) => setTimeout(r, 50));
  }
}

const anon = () => Number(/RssAnon:\s+(\d+)/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;

// download reads the body with a BYOB reader (guise reads into this
// process's one buffer) or the default reader (chunks allocated per read).
async function download() {
  const byob = count === 'byob';
  const r = await guise.fetch(url, { ca });
  await settle();
  const start = rss();
  let peak = start;
  let peakAnon = anon();
  let bytes = 0;
  let i = 0;
  const note = () => {
    peak = Math.max(peak, rss());
    peakAnon = Math.max(peakAnon, anon());
  };
  if (byob) {
    const rd = r.body.getReader({ mode: 'byob' });
    let buf = new Uint8Array(64 << 10);
    for (;;) {
      const { value, done } = await rd.read(buf);
      if (done) break;
      bytes += value.length;
      buf = new Uint8Array(value.buffer);
      if (++i % 64 === 0) note();
    }
  } else {
    for await (const c of r.body) {
      bytes += c.length;
      if (++i % 256 === 0) note();
    }
  }
  note();
  return { bytes, start, peak, peakAnon };
}

// control reads as many bytes through the same BYOB reader from a
// JavaScript byte stream, after the same guise request's head, so that
// what Node's own streams and compiler add to the RSS is known: here
// about 11 MiB, about as much as the whole guise download adds.
async function control() {
  await guise.fetch(url, { ca });
  await settle();
  const start = rss();
  let peak = start;
  let left = Number(process.env.GUISE_CONTROL_BYTES);
  const src = new ReadableStream({
    type: 'bytes',
    pull(c) {
      const v = c.byobRequest.view;
      const n = Math.min(v.byteLength, 16384, left);
      left -= n;
      if (n === 0) {
        c.close();
        c.byobRequest.respond(0);
        return undefined;
      }
      return new Promise((resolve) => setImmediate(() => { c.byobRequest.respond(n); resolve(); }));
    },
  });
  const rd = src.getReader({ mode: 'byob' });
  let buf = new Uint8Array(64 << 10);
  let bytes = 0;
  let i = 0;
  for (;;) {
    const { value, done } = await rd.read(buf);
    if (done) break;
    bytes += value.length;
    buf = new Uint8Array(value.buffer);
    if (++i % 64 === 0) peak = Math.max(peak, rss());
  }
  peak = Math.max(peak, rss());
  return { bytes, start, peak };
}

async function many() {
  const n = Number(count);
  const s = guise.createSession({ ca });
  const batch = async (k) => {
    let left = k;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (left-- > 0) await (await s.fetch(url)).text();
    }));
  };
  await batch(Math.min(n / 5, 5000));
  await settle();
  const rss0 = rss();
  const heap0 = guise.stats().heapBytes;
  await batch(n);
  await settle();
  const st = guise.stats();
  return { rss0, rss1: rss(), heap0, heap1: st.heapBytes, calls: st.calls, handles: st.handles };
}

(({ download, control, many })[mode] || (() => Promise.reject(new Error(`unknown mode ${mode}`))))().then((r) => {
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.exit(0);
}, (e) => {
  console.error(e);
  process.exit(1);
});
