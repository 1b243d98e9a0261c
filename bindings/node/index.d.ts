// Type definitions for the guise Node binding (index.js).

export type ErrorKind =
  | 'invalid' | 'closed' | 'canceled' | 'timeout' | 'refused' | 'dns' | 'network' | 'tls'
  | 'certificate' | 'proxy' | 'http2' | 'protocol' | 'redirect' | 'decode' | 'truncated'
  | 'bad_handle' | 'short_buffer' | 'busy' | 'not_ready' | 'other';
export type Phase = 'dial' | 'proxy' | 'tls' | 'head' | 'body_idle' | 'total';
export type Protocol = 'any' | 'http1' | 'http2' | 'http3';
export type HeadersInit = Headers | Iterable<[string, string]> | Record<string, string>;
export type BodyInit =
  | string | URLSearchParams | ArrayBuffer | ArrayBufferView | Blob
  | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

/** A failed request, with guise's error kind. name is 'AbortError' when it was cancelled. */
export class GuiseError extends Error {
  kind: ErrorKind;
  phase?: Phase;
  status?: number;
  code?: number;
}

/** Response header fields in wire order and case; lookups ignore case. */
export class Headers implements Iterable<[string, string]> {
  get(name: string): string | null;
  has(name: string): boolean;
  getSetCookie(): string[];
  raw(): [string, string][];
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  forEach(fn: (value: string, name: string, headers: Headers) => void, self?: unknown): void;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

export class Response {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly url: string;
  readonly redirected: boolean;
  readonly httpVersion: 'HTTP/1.0' | 'HTTP/1.1' | 'HTTP/2';
  readonly decoded: boolean;
  readonly headers: Headers;
  readonly bodyUsed: boolean;
  readonly type: 'basic';
  /** A byte stream: getReader({mode: 'byob'}) reads into the caller's buffers. */
  readonly body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
  json(): Promise<any>;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
  blob(): Promise<Blob>;
  /** Releases the response and its connection without reading the body. */
  close(): void;
}

export interface RequestInit {
  method?: string;
  headers?: HeadersInit;
  body?: BodyInit | null;
  /** Length of a streamed body; unset means chunked. */
  contentLength?: number;
  signal?: AbortSignal;
  redirect?: 'follow' | 'manual' | 'error';
  /** Whole request, in milliseconds. */
  timeout?: number;
  /** A guise profile name ('chrome', 'firefox', 'chrome156-windows', ...), a
   * profile file from `guise capture` (its path, a file: URL, its JSON or the
   * parsed object), or a weighted set ('chrome:3,firefox:1'), drawn from per
   * request. */
  browser?: Browser;
  proxy?: string;
  insecure?: boolean;
  /** Root certificates (PEM) for this request. */
  ca?: string;
  referrer?: string;
  kind?: 'navigate' | 'fetch' | 'subresource' | 'image';
  scripted?: boolean;
  protocol?: Protocol;
  http1Only?: boolean;
  /** Bytes of a body of known length read before the promise resolves (default 64 KiB; -1 never). */
  prefetch?: number;
  session?: Session;
}

/** A profile name, a profile file (path, file: URL, JSON, parsed object) or a
 * weighted set such as 'chrome:3,firefox:1,mine.json:2'. */
export type Browser = string | URL | object;

export interface TransportOptions {
  browser?: Browser;
  /** Seed of the Sessions' draws from a set in browser, for reproducible picks. */
  seed?: number;
  maxConnsPerHost?: number;
  maxIdleConnsPerHost?: number;
  poolMaxIdlePerHost?: number;
  idleConnTimeout?: number;
  poolIdleTimeout?: number;
  dialTimeout?: number;
  tlsHandshakeTimeout?: number;
  responseHeaderTimeout?: number;
  bodyIdleTimeout?: number;
  maxResponseHeaderBytes?: number;
  drainLimit?: number;
}

export interface SessionOptions extends TransportOptions {
  proxy?: string;
  proxyFromEnvironment?: boolean;
  timeout?: number;
  insecure?: boolean;
  ca?: string;
  trustStore?: 'mozilla' | 'system' | 'both';
  redirect?: 'follow' | 'manual' | 'error';
  maxRedirects?: number;
  compress?: boolean;
  rawBody?: boolean;
  maxBodySize?: number;
  protocol?: Protocol;
  http1Only?: boolean;
  /** A cookie JSON document to start with. */
  cookies?: string | object;
  /** A Transport to share (then the transport options above must not be set). */
  transport?: Transport;
}

export class Transport {
  constructor(opts?: TransportOptions);
  readonly closed: boolean;
  close(): void;
}

export interface CookieDocument {
  version: number;
  cookies: Array<Record<string, unknown>>;
}

export class Session {
  constructor(opts?: SessionOptions);
  readonly closed: boolean;
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
  get(input: string | URL, init?: RequestInit): Promise<Response>;
  post(input: string | URL, body?: BodyInit | null, init?: RequestInit): Promise<Response>;
  cookies(): CookieDocument;
  setCookies(doc: string | CookieDocument | Array<Record<string, unknown>>): void;
  close(): void;
}

export interface Stats {
  handles: number;
  calls: number;
  sessions: number;
  goroutines: number;
  heapBytes: number;
  heapSys: number;
}

/** An isolated visit: a connection of its own, no cookies kept. */
export function fetch(input: string | URL, init?: RequestInit): Promise<Response>;
export function createSession(opts?: SessionOptions): Session;
export function createTransport(opts?: TransportOptions): Transport;
export function withSession<T>(fn: (s: Session) => Promise<T> | T, opts?: SessionOptions): Promise<T>;
export function stats(): Stats;
export function collect(): void;
/** The package's version, which is guise's (internal/version). */
export const version: string;
