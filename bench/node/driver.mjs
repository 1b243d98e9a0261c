// driver.mjs runs wreq-js turns for the Go benchmarks (bench/internal/wreqjs).
// It reads one JSON command per line on stdin and answers one JSON line on
// stdout per command:
//   {"url": "...", "conc": 16, "ms": 1000, "isolated": false, "want": 100}
//   -> {"ops": N, "bytes": B, "cpuUs": C, "wallUs": W, "proto": "...", "err": ""}
// cpuUs is this process's user+system CPU over the turn (process.cpuUsage),
// JavaScript, the native binding and its threads together. A kept session
// serves every non-isolated turn; an isolated request is the package-level
// fetch, whose ephemeral context makes a new connection and handshake each
// time (checked against the benchmark server's connection count: one per
// request). A new Session per request would cost 5-9 ms in loading roots.
// Certificates are verified against SSL_CERT_FILE (trustStore
// "defaultPaths"), the benchmark server's own certificate.
import { createSession, fetch } from "wreq-js";
import { createInterface } from "node:readline";

const opts = { browser: "chrome", trustStore: "defaultPaths", timeout: 30000 };
let kept = null;

async function one(session, url, want) {
  const resp = session === null ? await fetch(url, opts) : await session.fetch(url);
  const body = await resp.arrayBuffer();
  if (resp.status !== 200) throw new Error(`status ${resp.status}`);
  if (body.byteLength !== want) throw new Error(`read ${body.byteLength} body bytes, want ${want}`);
  return body.byteLength;
}

async function turn(cmd) {
  if (!cmd.isolated && kept === null) kept = await createSession(opts);
  let ops = 0, bytes = 0;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const deadline = t0 + BigInt(Math.round(cmd.ms * 1e6));
  async function worker() {
    do {
      const n = await one(cmd.isolated ? null : kept, cmd.url, cmd.want);
      ops++;
      bytes += n;
    } while (process.hrtime.bigint() < deadline);
  }
  const workers = [];
  for (let i = 0; i < cmd.conc; i++) workers.push(worker());
  await Promise.all(workers);
  const wallUs = Number(process.hrtime.bigint() - t0) / 1e3;
  const c = process.cpuUsage(c0);
  return { ops, bytes, cpuUs: c.user + c.system, wallUs, err: "" };
}

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  if (line.trim() === "") continue;
  let out;
  try {
    out = await turn(JSON.parse(line));
  } catch (e) {
    out = { ops: 0, bytes: 0, cpuUs: 0, wallUs: 0, err: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
if (kept !== null) await kept.close();
