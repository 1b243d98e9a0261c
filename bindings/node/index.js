'use strict';
// guise for Node: browser-faithful HTTP over guise's Go engine (libguise,
// ffi/), through a small N-API shim (src/guise_node.c). Every call is
// asynchronous: requests, body reads and body writes complete on guise's
// threads and come back through the addon's uv_async_t, so the event loop
// never waits on the network.

const fs = require('node:fs');
const path = require('node:path');

const version = require('./version.js');

const native = loadNative();
if (native.abi !== version.abi) {
  throw new Error(`guise: the native addon speaks C ABI ${native.abi}, this package (guise ${version.version}) was written for ${version.abi}: reinstall guise`);
}

// loadNative finds the addon: $GUISE_NODE_ADDON, else the tree's build
// (bindings/build.sh), else the package of this platform's prebuilt addon
// and library, @guise-http/guise-PLATFORM, which npm installed as one of
// the optionalDependencies whose "os" and "cpu" fit.
function loadNative() {
  const platform = `${process.platform}-${process.arch}`;
  if (process.env.GUISE_NODE_ADDON) return loadAddon(path.resolve(process.env.GUISE_NODE_ADDON), platform);
  const tree = path.join(__dirname, 'build', 'guise.node');
  if (fs.existsSync(tree)) return loadAddon(tree, platform);
  const pkg = `@guise-http/guise-${platform}`;
  const supported = Object.keys(require('./package.json').optionalDependencies || {})
    .map((name) => name.replace('@guise-http/guise-', ''));
  if (!supported.includes(platform)) {
    const list = supported.length > 0 ? supported.join(', ') : 'none, as this is a source tree: run bindings/build.sh';
    throw new Error(`guise: no prebuilt binary for ${platform}; supported: ${list}`);
  }
  let file;
  try {
    file = require.resolve(`${pkg}/guise.node`);
  } catch (e) {
    const musl = muslNote();
    const err = new Error(musl ? `guise: no prebuilt binary for ${platform}: ${musl}` : `guise: ${pkg}, which holds the native addon for ${platform}, is not installed; ` +
      'npm installs it with guise unless optional dependencies are omitted (--omit=optional, --no-optional): ' +
      `run npm install ${pkg}@${version.version}`);
    err.cause = e;
    throw err;
  }
  return loadAddon(file, platform);
}

// muslNote says why a Linux without glibc has no binary (the prebuilt
// ones link glibc), asked only once loading failed: a report costs time.
function muslNote() {
  if (process.platform !== 'linux' || process.report.getReport().header.glibcVersionRuntime) return '';
  return 'this Linux has no glibc (musl?), which the prebuilt Linux binaries need';
}

// loadAddon loads the addon at file, saying which file and what to do
// when it, or the library next to it, is missing or cannot be loaded.
function loadAddon(file, platform) {
  try {
    return require(file);
  } catch (e) {
    if (e.code === 'GUISE_ABI') throw e; // the addon's own message: library and addon disagree
    const lib = process.platform === 'win32' ? 'guise.dll' : (process.platform === 'darwin' ? 'libguise.dylib' : 'libguise.so');
    const beside = path.join(path.dirname(file), lib);
    const msg = String(e.message);
    const musl = muslNote();
    let why = msg;
    if (!fs.existsSync(file)) why = `${file} does not exist`;
    else if (/cannot open shared object|could not be found|image not found|no such file/i.test(msg) && msg.includes(lib) && !fs.existsSync(beside) && file !== path.join(__dirname, 'build', 'guise.node')) why = `${beside} is missing (${msg})`;
    else if (musl) why = `${musl} (${msg})`;
    const err = new Error(`guise: cannot load the native addon ${file} for ${platform}: ${why}; ` +
      'reinstall guise (rm -rf node_modules/guise node_modules/@guise-http && npm install guise), ' +
      'or point GUISE_NODE_ADDON at a working guise.node');
    err.code = 'GUISE_LOAD';
    err.cause = e;
    throw err;
  }
}

const KIND_NAMES = [
  'ok', 'invalid', 'closed', 'canceled', 'timeout', 'refused', 'dns', 'network', 'tls',
  'certificate', 'proxy', 'http2', 'protocol', 'redirect', 'decode', 'truncated',
  'bad_handle', 'short_buffer', 'busy', 'not_ready', 'other',
];
const PHASE_NAMES = [undefined, 'dial', 'proxy', 'tls', 'head', 'body_idle', 'total'];
const PROTOS = [undefined, 'HTTP/1.0', 'HTTP/1.1', 'HTTP/2'];
const REQUEST_KINDS = { navigate: 1, fetch: 2, subresource: 3, image: 4 };
const REDIRECTS = { follow: 1, manual: 2, error: 3 };
const PROTOCOLS = { any: 0, http1: 1, http2: 2, http3: 3 };
const HEAD_DECODED = 1;
const CHUNK = 64 * 1024;
const E_CANCELED = 3;

/** GuiseError is a failed request: kind is guise's error kind ("timeout",
 * "refused", "tls", "certificate", "proxy", ...), phase a timeout's phase
 * ("dial", "tls", "head", "body_idle", "total"), status a proxy's HTTP
 * status, code the TLS alert, HTTP/2 error code or SOCKS reply. */
class GuiseError extends Error {
  constructor(e) {
    super(e.message);
    this.name = e.kind === E_CANCELED ? 'AbortError' : 'GuiseError';
    this.kind = KIND_NAMES[e.kind] || 'other';
    this.phase = PHASE_NAMES[e.phase];
    this.status = e.status || undefined;
    this.code = e.code || undefined;
  }
}

function errorOf(call, result) {
  const e = native.error(call);
  return new GuiseError(e || { kind: -result, phase: 0, status: 0, code: 0, message: `guise: ${KIND_NAMES[-result] || 'error'}` });
}

function abortError(signal) {
  const r = signal && signal.reason;
  if (r instanceof Error) return r;
  const e = new GuiseError({ kind: E_CANCELED, phase: 0, status: 0, code: 0, message: 'guise: the request was aborted' });
  return e;
}

/** Headers are the response's fields in the order and case received;
 * lookups ignore case, as WHATWG Headers do. */
class Headers {
  #raw; // the native side's fields: name NUL value NUL ..., split when first asked
  #list;
  #map;
  constructor(fields) {
    if (Array.isArray(fields)) this.#list = fields;
    else this.#raw = fields || '';
  }
  // #flat is the fields as the list name, value, name, value, ...
  get #flat() {
    if (this.#list === undefined) {
      const f = this.#raw.split('\0');
      f.length = f.length - 1 & ~1; // the last NUL ends the block
      this.#list = f;
      this.#raw = undefined;
    }
    return this.#list;
  }
  #index() {
    if (this.#map === undefined) {
      const m = new Map();
      const f = this.#flat;
      for (let i = 0; i < f.length; i += 2) {
        const k = f[i].toLowerCase();
        const prev = m.get(k);
        m.set(k, prev === undefined ? f[i + 1] : (k === 'set-cookie' ? prev : `${prev}, ${f[i + 1]}`));
      }
      this.#map = m;
    }
    return this.#map;
  }
  get(name) {
    const v = this.#index().get(String(name).toLowerCase());
    return v === undefined ? null : v;
  }
  has(name) {
    return this.#index().has(String(name).toLowerCase());
  }
  getSetCookie() {
    const out = [];
    const f = this.#flat;
    for (let i = 0; i < f.length; i += 2) if (f[i].toLowerCase() === 'set-cookie') out.push(f[i + 1]);
    return out;
  }
  /** raw returns [name, value] pairs in wire order and case. */
  raw() {
    const out = [];
    const f = this.#flat;
    for (let i = 0; i < f.length; i += 2) out.push([f[i], f[i + 1]]);
    return out;
  }
  *entries() {
    const keys = [...this.#index().keys()].sort();
    for (const k of keys) yield [k, this.#map.get(k)];
  }
  *keys() {
    for (const [k] of this.entries()) yield k;
  }
  *values() {
    for (const [, v] of this.entries()) yield v;
  }
  forEach(fn, self) {
    for (const [k, v] of this.entries()) fn.call(self, v, k, this);
  }
  [Symbol.iterator]() {
    return this.entries();
  }
}

// Responses whose body was not fully read, closed if they are dropped.
const responses = new FinalizationRegistry((call) => native.close(call));

/** Response follows WHATWG fetch's: status, statusText, ok, headers, url,
 * redirected, and the body once, as text(), json(), arrayBuffer(), bytes()
 * or the ReadableStream body (which reads only as fast as it is consumed).
 * Its connection is held until the body is read, cancelled or close() is
 * called; a dropped Response is closed by a finalizer. */
class Response {
  #call;
  #buf;
  #stream;
  #used = false;
  #signal;
  #onAbort;
  constructor(call, h, requestURL, signal, onAbort) {
    this.status = h[0];
    this.httpVersion = PROTOS[h[1]];
    this.statusText = h[5];
    this.url = h[4];
    this.redirected = h[4] !== requestURL;
    this.decoded = (h[3] & HEAD_DECODED) !== 0;
    this.headers = new Headers(h[6]);
    this.type = 'basic';
    if (h[7] !== undefined) {
      this.#buf = h[7]; // the whole body; the call is closed
      this.#call = 0;
    } else {
      this.#call = call;
      this.#signal = signal;
      this.#onAbort = onAbort;
      responses.register(this, call, this);
    }
  }
  get ok() {
    return this.status >= 200 && this.status < 300;
  }
  get bodyUsed() {
    return this.#used;
  }
  #release() {
    if (this.#call !== 0) {
      responses.unregister(this);
      native.close(this.#call);
      this.#call = 0;
      if (this.#signal) this.#signal.removeEventListener('abort', this.#onAbort);
    }
  }
  /** close releases the response and its connection without reading the body. */
  close() {
    this.#release();
  }
  #take() {
    if (this.#used) throw new TypeError('guise: body already used');
    this.#used = true;
  }
  async #all() {
    this.#take();
    if (this.#buf !== undefined) {
      const b = this.#buf;
      this.#buf = undefined;
      return b;
    }
    const call = this.#call;
    const parts = [];
    let total = 0;
    try {
      for (;;) {
        const buf = Buffer.allocUnsafeSlow(CHUNK);
        const n = await native.read(call, buf);
        if (n < 0) throw errorOf(call, n);
        if (n === 0) break;
        parts.push(n === CHUNK ? buf : buf.subarray(0, n));
        total += n;
      }
    } finally {
      this.#release();
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts, total);
  }
  async text() {
    return (await this.#all()).toString('utf8');
  }
  async json() {
    return JSON.parse(await this.text());
  }
  async arrayBuffer() {
    const b = await this.#all();
    return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  }
  async bytes() {
    const b = await this.#all();
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  async blob() {
    return new Blob([await this.#all()], { type: this.headers.get('content-type') || '' });
  }
  get body() {
    if (this.#stream !== undefined) return this.#stream;
    if (this.#used) return null;
    this.#used = true;
    const self = this;
    let pre = this.#buf;
    this.#buf = undefined;
    const call = this.#call;
    // A byte stream: a BYOB reader (body.getReader({mode: 'byob'})) has
    // guise read straight into the caller's buffer; the default reader gets
    // chunks of CHUNK bytes allocated for it.
    this.#stream = new ReadableStream({
      type: 'bytes',
      autoAllocateChunkSize: 32 * 1024,
      async pull(controller) {
        if (pre !== undefined) {
          const b = pre;
          pre = undefined;
          if (b.length > 0) controller.enqueue(new Uint8Array(b.buffer, b.byteOffset, b.length));
          controller.close();
          if (controller.byobRequest) controller.byobRequest.respond(0);
          return;
        }
        const req = controller.byobRequest;
        const n = await native.read(call, req.view);
        if (n > 0) {
          req.respond(n);
        } else if (n === 0) {
          self.#release();
          controller.close();
          req.respond(0);
        } else {
          const e = errorOf(call, n);
          self.#release();
          controller.error(e);
        }
      },
      cancel() {
        self.#release();
      },
    });
    return this.#stream;
  }
}

// Request bodies.
function bodyOf(body, fields) {
  if (body === undefined || body === null) return [undefined, null];
  if (typeof body === 'string') return [Buffer.from(body), 'text/plain;charset=UTF-8'];
  if (body instanceof URLSearchParams) return [Buffer.from(body.toString()), 'application/x-www-form-urlencoded;charset=UTF-8'];
  if (ArrayBuffer.isView(body) || body instanceof ArrayBuffer) return [body, null];
  if (typeof Blob !== 'undefined' && body instanceof Blob) return [body, body.type || null, true];
  if (typeof body.getReader === 'function' || typeof body[Symbol.asyncIterator] === 'function' || typeof body[Symbol.iterator] === 'function') {
    return [undefined, null, false, body];
  }
  throw new TypeError('guise: unsupported body type');
}

// headerBlock flattens headers (a Headers-like object, [name, value] pairs
// or a plain object) to name NUL value NUL ..., in the caller's order.
function headerBlock(h, extra) {
  let s = '';
  let hasCT = false;
  const add = (k, v) => {
    k = String(k);
    v = String(v);
    if (k.includes('\0') || v.includes('\0')) throw new TypeError('guise: NUL in a header field');
    if (!hasCT && k.length === 12 && k.toLowerCase() === 'content-type') hasCT = true;
    s += k + '\0' + v + '\0';
  };
  if (h) {
    if (typeof h.forEach === 'function' && !Array.isArray(h) && typeof h.raw !== 'function') {
      h.forEach((v, k) => add(k, v));
    } else if (typeof h.raw === 'function') {
      for (const [k, v] of h.raw()) add(k, v);
    } else if (Array.isArray(h) || typeof h[Symbol.iterator] === 'function') {
      for (const [k, v] of h) add(k, v);
    } else {
      for (const k of Object.keys(h)) add(k, h[k]);
    }
  }
  if (extra && !hasCT) add('Content-Type', extra);
  return s;
}

async function pump(stream, body) {
  try {
    const it = typeof body.getReader === 'function' ? body[Symbol.asyncIterator]() : (body[Symbol.asyncIterator] ? body[Symbol.asyncIterator]() : body[Symbol.iterator]());
    for (;;) {
      const { value, done } = await it.next();
      if (done) break;
      let chunk = typeof value === 'string' ? Buffer.from(value) : value;
      if (!ArrayBuffer.isView(chunk) && !(chunk instanceof ArrayBuffer)) throw new TypeError('guise: body chunks must be bytes or strings');
      if (chunk.byteLength === 0) continue;
      const n = await native.write(stream, chunk); // resolves once guise has sent it: backpressure
      if (n < 0) return;
    }
    native.streamEnd(stream);
  } catch {
    native.close(stream); // fails the request's body
  }
}

function optNum(v) {
  return typeof v === 'number' && v > 0 ? Math.ceil(v) : 0;
}

function protocolOf(init) {
  if (init.http1Only) return 1;
  if (init.protocol === undefined || init.protocol === null) return 0;
  const p = PROTOCOLS[init.protocol];
  if (p === undefined) throw new TypeError(`guise: unknown protocol ${init.protocol}`);
  return p;
}

async function send(client, input, init) {
  init = init || {};
  const url = typeof input === 'string' ? input : (input instanceof URL ? input.href : String(input.url || input));
  const signal = init.signal;
  if (signal && signal.aborted) throw abortError(signal);
  let [body, ctype, isBlob, streamBody] = bodyOf(init.body);
  if (isBlob) body = Buffer.from(await body.arrayBuffer());
  const header = headerBlock(init.headers, ctype);
  let stream = 0;
  if (streamBody !== undefined) stream = native.streamNew();
  const kind = init.kind ? REQUEST_KINDS[init.kind] : 0;
  if (kind === undefined) throw new TypeError(`guise: unknown kind ${init.kind}`);
  const redirect = init.redirect ? REDIRECTS[init.redirect] : 0;
  if (redirect === undefined) throw new TypeError(`guise: unknown redirect ${init.redirect}`);
  const flags = (init.insecure ? 1 : 0) | (init.scripted ? 2 : 0);
  const [call, done] = native.start(
    client, init.method ? String(init.method).toUpperCase() : '', url, header, body, stream,
    optNum(init.contentLength), optNum(init.timeout), profileOf(init.browser), init.proxy, init.referrer,
    init.ca, kind, redirect, protocolOf(init), flags, init.prefetch || 0,
  );
  if (stream !== 0) pump(stream, streamBody);
  let onAbort;
  if (signal) {
    onAbort = () => native.cancel(call);
    signal.addEventListener('abort', onAbort, { once: true });
  }
  // done resolves to the whole response (its head array, body included,
  // the call over) when it came back in the completion, else to a result.
  const v = await done;
  if (stream !== 0) native.close(stream);
  if (typeof v !== 'number') {
    if (signal) signal.removeEventListener('abort', onAbort);
    return new Response(0, v, url);
  }
  const result = v;
  if (result < 0) {
    const e = signal && signal.aborted ? abortError(signal) : errorOf(call, result);
    native.close(call);
    if (signal) signal.removeEventListener('abort', onAbort);
    throw e;
  }
  const h = native.head(call);
  const r = new Response(call, h, url, signal, onAbort);
  if (signal && h[7] !== undefined) signal.removeEventListener('abort', onAbort);
  return r;
}

/** fetch sends one request as an isolated visit: a connection of its own,
 * closed after the body, no TLS resumption, no cookies kept. init takes
 * fetch's method, headers, body, signal and redirect, and guise's browser,
 * proxy, timeout (ms), insecure, ca (PEM), referrer, kind, protocol,
 * http1Only. With init.session (or init.transport's Session) it goes
 * through that Session instead. */
function fetch(input, init) {
  if (init && init.session) return init.session.fetch(input, init);
  return send(0, input, init);
}

const sessions = new FinalizationRegistry((h) => native.close(h));

function create(which, opts) {
  return native.create(which, JSON.stringify(opts));
}

// profileOf is the profile option of browser: a name ('chrome'), a profile
// file's path (a string or a file: URL), its JSON (a string, or the parsed
// object), or a weighted set ('chrome:3,firefox:1,mine.json:2').
function profileOf(browser) {
  if (!browser) return browser;
  if (browser instanceof URL) return require('node:url').fileURLToPath(browser);
  if (typeof browser === 'object') return JSON.stringify(browser);
  return String(browser);
}

function transportJSON(o) {
  const t = {};
  if (o.browser) t.profile = profileOf(o.browser);
  if (o.seed) t.seed = o.seed;
  if (o.maxConnsPerHost) t.maxConnsPerHost = o.maxConnsPerHost;
  if (o.maxIdleConnsPerHost !== undefined) t.maxIdleConnsPerHost = o.maxIdleConnsPerHost;
  if (o.poolMaxIdlePerHost !== undefined) t.maxIdleConnsPerHost = o.poolMaxIdlePerHost;
  if (o.idleConnTimeout) t.idleConnTimeoutMs = o.idleConnTimeout;
  if (o.poolIdleTimeout) t.idleConnTimeoutMs = o.poolIdleTimeout;
  if (o.dialTimeout) t.dialTimeoutMs = o.dialTimeout;
  if (o.tlsHandshakeTimeout) t.tlsHandshakeTimeoutMs = o.tlsHandshakeTimeout;
  if (o.responseHeaderTimeout) t.responseHeaderTimeoutMs = o.responseHeaderTimeout;
  if (o.bodyIdleTimeout) t.bodyIdleTimeoutMs = o.bodyIdleTimeout;
  if (o.maxResponseHeaderBytes) t.maxResponseHeaderBytes = o.maxResponseHeaderBytes;
  if (o.drainLimit) t.drainLimit = o.drainLimit;
  return t;
}

function closeError(rc) {
  if (rc !== 0 && rc !== 16) throw new GuiseError({ kind: rc, phase: 0, status: 0, code: 0, message: 'guise: close failed' });
}

/** Transport is a connection pool Sessions share (createSession({transport}))
 * without sharing cookies. */
class Transport {
  #h;
  constructor(opts) {
    this.#h = create(1, transportJSON(opts || {}));
    sessions.register(this, this.#h, this);
  }
  get handle() {
    if (this.#h === 0) throw new GuiseError({ kind: 2, phase: 0, status: 0, code: 0, message: 'guise: transport closed' });
    return this.#h;
  }
  get closed() {
    return this.#h === 0;
  }
  close() {
    if (this.#h !== 0) {
      sessions.unregister(this);
      closeError(native.close(this.#h));
      this.#h = 0;
    }
  }
}

/** Session is one browser: its connections, TLS tickets and cookie jar.
 * Requests of one Session may run concurrently. close() ends it; a Session
 * dropped without close() is closed by a finalizer. */
class Session {
  #h;
  #transport;
  constructor(opts) {
    opts = opts || {};
    const o = opts.transport ? {} : transportJSON(opts);
    if (opts.browser) o.profile = profileOf(opts.browser);
    if (opts.seed) o.seed = opts.seed;
    if (opts.proxy) o.proxy = opts.proxy;
    if (opts.proxyFromEnvironment) o.proxyFromEnvironment = true;
    if (opts.timeout) o.timeoutMs = opts.timeout;
    if (opts.insecure) o.insecure = true;
    if (opts.ca) o.caPem = String(opts.ca);
    if (opts.trustStore) o.trustStore = opts.trustStore;
    if (opts.redirect) o.redirect = opts.redirect;
    if (opts.maxRedirects) o.maxRedirects = opts.maxRedirects;
    if (opts.compress === false || opts.rawBody) o.rawBody = true;
    if (opts.maxBodySize) o.maxBodySize = opts.maxBodySize;
    if (opts.protocol) o.protocol = opts.protocol;
    if (opts.http1Only) o.http1Only = true;
    if (opts.cookies) o.cookies = typeof opts.cookies === 'string' ? opts.cookies : JSON.stringify(opts.cookies);
    if (opts.transport) {
      o.transport = opts.transport.handle;
      this.#transport = opts.transport; // kept reachable while the Session is
    }
    this.#h = create(2, o);
    sessions.register(this, this.#h, this);
  }
  get closed() {
    return this.#h === 0;
  }
  /** fetch sends a request through this Session (see the package's fetch). */
  fetch(input, init) {
    if (this.#h === 0) return Promise.reject(new GuiseError({ kind: 2, phase: 0, status: 0, code: 0, message: 'guise: session closed' }));
    return send(this.#h, input, init);
  }
  get(input, init) {
    return this.fetch(input, { ...init, method: 'GET' });
  }
  post(input, body, init) {
    return this.fetch(input, { ...init, method: 'POST', body });
  }
  /** cookies returns the jar as package cookie's JSON document, parsed. */
  cookies() {
    return JSON.parse(native.cookies(this.#h));
  }
  /** setCookies adds the cookies of a JSON document (the cookies() format or
   * a browser extension's array). */
  setCookies(doc) {
    const e = native.setCookies(this.#h, typeof doc === 'string' ? doc : JSON.stringify(doc));
    if (e) throw new GuiseError(e);
  }
  close() {
    if (this.#h !== 0) {
      sessions.unregister(this);
      closeError(native.close(this.#h));
      this.#h = 0;
    }
  }
}

function createSession(opts) {
  return new Session(opts);
}

function createTransport(opts) {
  return new Transport(opts);
}

async function withSession(fn, opts) {
  const s = new Session(opts);
  try {
    return await fn(s);
  } finally {
    s.close();
  }
}

/** stats returns libguise's counts (handles, calls, goroutines, heapBytes,
 * heapSys), for leak tests; collect runs Go's collector. */
function stats() {
  return native.stats();
}

function collect() {
  native.collect();
}

module.exports = {
  version: version.version,
  fetch, createSession, createTransport, withSession, Session, Transport, Response, Headers,
  GuiseError, stats, collect,
};
