'use strict';
// One client, one case, for profiling (perf record -p, strace -f -c) and
// for A/B runs of two builds (GUISE_NODE_ADDON names the addon to load, or
// GUISE_PACKAGE the guise package, e.g. an installed node_modules/guise):
// 16 concurrent loops for SECONDS against URL (a bench/cmd/bindserver
// started by hand, e.g. `taskset -c 0 bench/bin/bindserver`), then the
// client process's CPU per request (user and system) and its voluntary
// and involuntary context switches per request (/proc/self/task/*/status,
// every thread's). From the repository root:
//
//	taskset -c 1 node bindings/node/bench/one.js URL SECONDS session|per|isolated guise|wreq

const fs = require('node:fs');
const path = require('node:path');

const [url, secs, mode, client] = [process.argv[2], Number(process.argv[3] || 3), process.argv[4] || 'session', process.argv[5] || 'guise'];

function switches() {
  let v = 0;
  let nv = 0;
  for (const t of fs.readdirSync('/proc/self/task')) {
    let s;
    try {
      s = fs.readFileSync(`/proc/self/task/${t}/status`, 'utf8');
    } catch {
      continue; // the thread has exited
    }
    v += Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(s)[1]);
    nv += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(s)[1]);
  }
  return [v, nv];
}

async function main() {
  const lib = client === 'guise' ? require(process.env.GUISE_PACKAGE || path.join(__dirname, '..')) : require('wreq-js');
  const s = await lib.createSession({ insecure: true });
  const get = async (x) => { const r = await x.fetch(url); await r.arrayBuffer(); };
  const one = {
    session: () => get(s),
    per: async () => { const x = await lib.createSession({ insecure: true }); try { await get(x); } finally { await x.close(); } },
    isolated: async () => { const r = await lib.fetch(url, { insecure: true }); await r.arrayBuffer(); },
  }[mode];
  for (let i = 0; i < 200; i++) await one(); // warm up
  let stop = false;
  let n = 0;
  const c0 = process.cpuUsage();
  const x0 = switches();
  const t0 = process.hrtime.bigint();
  setTimeout(() => { stop = true; }, secs * 1000);
  await Promise.all(Array.from({ length: 16 }, async () => { while (!stop) { await one(); n++; } }));
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cu = process.cpuUsage(c0);
  const x1 = switches();
  console.log(`${client} ${mode}: ${n} requests, ${(n / wall).toFixed(0)} req/s, ${((cu.user + cu.system) / n).toFixed(1)} us CPU/req ` +
    `(user ${(cu.user / n).toFixed(1)}, system ${(cu.system / n).toFixed(1)}), ` +
    `context switches/req ${((x1[0] - x0[0]) / n).toFixed(2)} voluntary, ${((x1[1] - x0[1]) / n).toFixed(2)} involuntary`);
  await s.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
