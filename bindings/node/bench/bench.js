'use strict';
// Benchmarks the guise Node binding against wreq-js 3.1.0, side by side in
// one run against one server (bench/cmd/bindserver, a separate process),
// then the Python binding against guise's Go API on the same server.
//
// Run from the repository root, after bindings/build.sh and
// (cd bindings/node/bench && npm install):
//
//	node bindings/node/bench/bench.js [-d SECONDS] [-rounds N] [-n PY_REQUESTS] [-pyrounds N] [-pyonly 1]
//	    [-nopy 1] [-only h1,h2,per,isolated] [-client guise|wreq] [-pin 0|1]
//
// For each scenario the two clients take turns (guise, wreq, guise, ...),
// -rounds times for -d seconds each; the table has the medians. CPU is the
// client process's user+system time (process.cpuUsage: every thread,
// the native libraries' included); the server's is not counted. For the
// cases of a new connection per request it then runs the Go API alone
// against the same server (bindserver -go -mode per|isolated).

const { spawn, spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

function arg(name, def) {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : def;
}

// -pin 1 (the default where taskset exists and there are two CPUs or
// more): the clients on CPU 0, the server on CPU 1, as the bench module
// measures (bench/all). The script runs itself again under taskset -c 0,
// before loading either client, and starts the server under taskset -c 1.
// Unpinned, the server's work on the clients' CPU and the clients'
// threads on the server's are counted against whichever ran there.
const TASKSET = ['/usr/bin/taskset', '/bin/taskset'].find((f) => fs.existsSync(f));
// (In the pinned run availableParallelism is 1: the variable says it.)
const PIN = process.env.GUISE_BENCH_PINNED === '1' ||
  (arg('-pin', TASKSET && os.availableParallelism() >= 2 ? 1 : 0) === 1 && TASKSET !== undefined);
if (PIN && process.env.GUISE_BENCH_PINNED !== '1') {
  const r = spawnSync(TASKSET, ['-c', '0', process.execPath, ...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, GUISE_BENCH_PINNED: '1' } });
  process.exit(r.status === null ? 1 : r.status);
}

const root = path.resolve(__dirname, '..', '..', '..');
const guise = require(path.join(root, 'bindings', 'node'));
const DUR = arg('-d', 2) * 1000;
const ROUNDS = arg('-rounds', 3);
const PY_N = arg('-n', 20000);
const PY_ROUNDS = arg('-pyrounds', 5);
const PY_ONLY = arg('-pyonly', 0); // 1: the Python comparison alone
const NO_PY = arg('-nopy', 0); // 1: skip the Python comparison
// -only h1,h2,per,isolated: a subset of the scenarios; -client guise or
// wreq: one client alone (for profiling one side).
function strArg(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const ONLY = strArg('-only');
const CLIENT = strArg('-client');

async function startServer() {
  const bin = path.join(root, 'bench', 'bin', 'bindserver');
  execFileSync('go', ['build', '-o', bin, './cmd/bindserver'], { cwd: path.join(root, 'bench'), stdio: 'inherit' });
  const p = PIN ? spawn(TASKSET, ['-c', '1', bin], { stdio: ['pipe', 'pipe', 'inherit'] }) : spawn(bin, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const rl = readline.createInterface({ input: p.stdout });
  const urls = {};
  for await (const line of rl) {
    const [name, url] = line.split(' ');
    urls[name] = url;
    if (urls.h1 && urls.h2) break;
  }
  return { p, urls, bin };
}

// loop runs `one` with c concurrent loops for ms and returns requests, wall
// seconds and CPU seconds.
async function loop(c, ms, one) {
  let n = 0;
  let stop = false;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const timer = setTimeout(() => { stop = true; }, ms);
  await Promise.all(Array.from({ length: c }, async () => {
    while (!stop) {
      await one();
      n++;
    }
  }));
  clearTimeout(timer);
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cu = process.cpuUsage(cpu0);
  return { n, wall, cpu: (cu.user + cu.system) / 1e6 };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main() {
  const wreq = await import('wreq-js');
  const { p, urls, bin } = await startServer();
  const small = (proto) => `${urls[proto]}/small`;

  const clients = {
    guise: {
      session: async () => guise.createSession({ insecure: true }),
      fetchOn: async (s, url) => { const r = await s.fetch(url); await r.arrayBuffer(); },
      isolated: async (url) => { const r = await guise.fetch(url, { insecure: true }); await r.arrayBuffer(); },
      close: async (s) => s.close(),
    },
    'wreq-js 3.1.0': {
      session: async () => wreq.createSession({ insecure: true }),
      fetchOn: async (s, url) => { const r = await s.fetch(url); await r.arrayBuffer(); },
      isolated: async (url) => { const r = await wreq.fetch(url, { insecure: true }); await r.arrayBuffer(); },
      close: async (s) => s.close(),
    },
  };

  const scenarios = [
    { id: 'h1', name: 'session GET c16, HTTP/1.1', c: 16, proto: 'h1', kind: 'session' },
    { id: 'h2', name: 'session GET c16, HTTP/2', c: 16, proto: 'h2', kind: 'session' },
    { id: 'per', name: 'session per request c16, HTTP/2 port', c: 16, proto: 'h2', kind: 'per' },
    { id: 'isolated', name: 'isolated fetch c16, HTTP/2 port', c: 16, proto: 'h2', kind: 'isolated' },
  ].filter((sc) => !ONLY || ONLY.split(',').includes(sc.id));
  if (CLIENT) {
    for (const name of Object.keys(clients)) if (!name.startsWith(CLIENT)) delete clients[name];
  }

  const rows = [];
  for (const sc of PY_ONLY ? [] : scenarios) {
    const res = {};
    for (const name of Object.keys(clients)) res[name] = [];
    for (let round = 0; round <= ROUNDS; round++) {
      for (const [name, cl] of Object.entries(clients)) {
        const url = small(sc.proto);
        let one;
        let s;
        if (sc.kind === 'session') {
          s = await cl.session();
          await cl.fetchOn(s, url);
          one = () => cl.fetchOn(s, url);
        } else if (sc.kind === 'per') {
          one = async () => { const x = await cl.session(); try { await cl.fetchOn(x, url); } finally { await cl.close(x); } };
        } else {
          one = () => cl.isolated(url);
        }
        const r = await loop(sc.c, round === 0 ? 300 : DUR, one); // round 0 warms up
        if (s) await cl.close(s);
        if (round > 0) res[name].push(r);
        if (global.gc) global.gc();
      }
    }
    const out = {};
    for (const [name, rs] of Object.entries(res)) {
      out[name] = {
        rps: median(rs.map((r) => r.n / r.wall)),
        perCPU: median(rs.map((r) => r.n / r.cpu)),
        usCPU: median(rs.map((r) => (r.cpu / r.n) * 1e6)),
      };
    }
    rows.push({ sc, out });
    process.stderr.write(`${sc.name}: ${JSON.stringify(out)}\n`);
  }

  const lines = [];
  if (!PY_ONLY) lines.push('| scenario | guise req/s | guise req/CPU-s | guise µs CPU/req | wreq-js req/s | wreq-js req/CPU-s | wreq-js µs CPU/req | guise/wreq per CPU |');
  if (!PY_ONLY) lines.push('|---|---|---|---|---|---|---|---|');
  for (const { sc, out } of CLIENT ? [] : rows) {
    const g = out.guise;
    const w = out['wreq-js 3.1.0'];
    lines.push(`| ${sc.name} | ${g.rps.toFixed(0)} | ${g.perCPU.toFixed(0)} | ${g.usCPU.toFixed(1)} | ${w.rps.toFixed(0)} | ${w.perCPU.toFixed(0)} | ${w.usCPU.toFixed(1)} | ${(g.perCPU / w.perCPU).toFixed(2)}x |`);
  }

  // Python binding vs the Go API: sequential keep-alive GETs on one Session,
  // the two processes taking turns -pyrounds times; medians, and the
  // difference of the minima (the least disturbed runs of each).
  // The Go API on the same server for the cases of a new connection per
  // request: what the binding adds on top of it is the difference with
  // guise's column above.
  const goNew = rows.filter(({ sc }) => sc.kind !== 'session' && !CLIENT);
  if (goNew.length > 0) lines.push('');
  for (const { sc, out } of goNew) {
    const us = [];
    for (let i = 0; i < ROUNDS; i++) {
      const o = execFileSync(bin, ['-go', small(sc.proto), '-mode', sc.kind, '-c', String(sc.c), '-n', '2000']).toString();
      us.push(Number(/([\d.]+) us CPU/.exec(o)[1]));
    }
    lines.push(`Go API, ${sc.name} (bindserver -go -mode ${sc.kind} -c ${sc.c} -n 2000, ${ROUNDS} runs): us CPU/req ${us.map((x) => x.toFixed(1)).join(', ')}; median ${median(us).toFixed(1)}; the Node binding's ${out.guise.usCPU.toFixed(1)}`);
  }
  if (NO_PY) {
    console.log(lines.join('\n'));
    p.stdin.end();
    return;
  }
  const url = small('h1');
  const go = [];
  const py = [];
  const cpuOf = (out) => Number(/([\d.]+) us CPU/.exec(out)[1]);
  for (let i = 0; i < PY_ROUNDS; i++) {
    go.push(cpuOf(execFileSync(bin, ['-go', url, '-n', String(PY_N)]).toString()));
    py.push(cpuOf(execFileSync('/usr/bin/python3', [path.join(root, 'bindings', 'python', 'bench.py'), url, String(PY_N)],
      { env: { ...process.env, PYTHONPATH: path.join(root, 'bindings', 'python') } }).toString()));
  }
  lines.push('');
  lines.push(`Python binding vs Go API, ${PY_N} sequential keep-alive GETs of /small over HTTP/1.1, ${PY_ROUNDS} alternating runs each:`);
  lines.push(`  go: us CPU/req ${go.map((x) => x.toFixed(1)).join(', ')}; median ${median(go).toFixed(1)}`);
  lines.push(`  python: us CPU/req ${py.map((x) => x.toFixed(1)).join(', ')}; median ${median(py).toFixed(1)}`);
  lines.push(`  Python overhead: ${(median(py) - median(go)).toFixed(1)} us CPU/req (medians), ${(Math.min(...py) - Math.min(...go)).toFixed(1)} (minima)`);
  console.log(lines.join('\n'));
  p.stdin.end();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
