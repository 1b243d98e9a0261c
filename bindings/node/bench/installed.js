'use strict';
// Benchmarks the guise package as npm installs it (the tarballs in
// DIST/node, installed offline into a fresh project in a temp dir) side by
// side with this tree's build (bindings/build.sh) and wreq-js 3.1.0, in one
// run against one server (bench/cmd/bindserver). Two copies of guise cannot
// share a process (the dynamic loader would bind the second addon to the
// first's libguise.so, which has the same name), so every measurement is
// a process of its own: one.js, 16 concurrent loops after a warm-up, the
// clients taking turns round after round, their order rotated each round.
// Pinned as bench.js pins: clients on CPU 0, the server on CPU 1.
//
// From the repository root, after bindings/build.sh, bindings/package.sh
// (or bindings/node/package.sh DIST VERSION) and
// (cd bindings/node/bench && npm install):
//
//	node bindings/node/bench/installed.js dist [-rounds N] [-d SECONDS] [-only h1,h2,per,isolated]

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

function arg(name, def) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : def;
}

const root = path.resolve(__dirname, '..', '..', '..');
const dist = path.resolve(process.argv[2] || 'dist');
const ROUNDS = Number(arg('-rounds', 7));
const SECS = Number(arg('-d', 2));
const ONLY = arg('-only', 'h1,h2').split(',');
const TASKSET = ['/usr/bin/taskset', '/bin/taskset'].find((f) => fs.existsSync(f));
const PIN = TASKSET !== undefined && os.availableParallelism() >= 2;

function install() {
  const version = require(path.join(root, 'bindings', 'node', 'version.js')).version;
  const plat = `${process.platform}-${process.arch}`;
  const tgz = [`guise-http-guise-${plat}-${version}.tgz`, `guise-${version}.tgz`].map((f) => path.join(dist, 'node', f));
  for (const f of tgz) if (!fs.existsSync(f)) throw new Error(`installed.js: no ${f}: run bindings/package.sh`);
  const proj = fs.mkdtempSync(path.join(os.tmpdir(), 'guise-bench-npm-'));
  execFileSync('npm', ['init', '-y'], { cwd: proj, stdio: 'ignore' });
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', ...tgz], { cwd: proj, stdio: 'inherit' });
  return proj;
}

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
  return { p, urls };
}

// one runs one.js in a process of its own and returns its µs CPU/req and req/s.
function one(url, mode, client, env) {
  const args = [path.join(__dirname, 'one.js'), url, String(SECS), mode, client];
  const cmd = PIN ? TASKSET : process.execPath;
  const argv = PIN ? ['-c', '0', process.execPath, ...args] : args;
  const out = execFileSync(cmd, argv, { env: { ...process.env, GUISE_NODE_ADDON: '', ...env }, encoding: 'utf8' });
  return { us: Number(/([\d.]+) us CPU\/req/.exec(out)[1]), rps: Number(/(\d+) req\/s/.exec(out)[1]) };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main() {
  const proj = install();
  const installed = path.join(proj, 'node_modules', 'guise');
  const addon = require.resolve(`@guise-http/guise-${process.platform}-${process.arch}/guise.node`, { paths: [installed] });
  console.log(`installed: ${installed} (addon ${addon}); tree: ${path.join(root, 'bindings', 'node')}`);
  const { p, urls } = await startServer();
  const clients = {
    'guise, installed': ['guise', { GUISE_PACKAGE: installed }],
    'guise, tree': ['guise', { GUISE_PACKAGE: '' }],
    'wreq-js 3.1.0': ['wreq', {}],
  };
  const scenarios = [
    { id: 'h1', name: 'session GET c16, HTTP/1.1', proto: 'h1', mode: 'session' },
    { id: 'h2', name: 'session GET c16, HTTP/2', proto: 'h2', mode: 'session' },
    { id: 'per', name: 'session per request c16, HTTP/2 port', proto: 'h2', mode: 'per' },
    { id: 'isolated', name: 'isolated fetch c16, HTTP/2 port', proto: 'h2', mode: 'isolated' },
  ].filter((sc) => ONLY.includes(sc.id));
  const names = Object.keys(clients);
  const lines = [];
  try {
    for (const sc of scenarios) {
      const us = Object.fromEntries(names.map((n) => [n, []]));
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < names.length; k++) {
          const name = names[(round + k) % names.length];
          const [client, env] = clients[name];
          us[name].push(one(`${urls[sc.proto]}/small`, sc.mode, client, env).us);
        }
      }
      lines.push(`${sc.name}, µs CPU/req over ${ROUNDS} rounds of ${SECS} s:`);
      for (const n of names) {
        const m = median(us[n]);
        const lo = Math.min(...us[n]);
        const hi = Math.max(...us[n]);
        lines.push(`  ${n.padEnd(17)} ${us[n].map((x) => x.toFixed(1)).join(' ')}; median ${m.toFixed(1)}, range ${lo.toFixed(1)}-${hi.toFixed(1)} (spread ${(((hi - lo) / m) * 100).toFixed(0)}%)`);
      }
      const a = median(us['guise, installed']);
      const b = median(us['guise, tree']);
      const w = median(us['wreq-js 3.1.0']);
      lines.push(`  installed/tree ${(a / b).toFixed(3)} (${(((a - b) / b) * 100).toFixed(1)}%); guise/wreq per CPU: installed ${(w / a).toFixed(2)}x, tree ${(w / b).toFixed(2)}x`);
      process.stderr.write(`${lines.slice(-5).join('\n')}\n`);
    }
  } finally {
    p.stdin.end();
    fs.rmSync(proj, { recursive: true, force: true });
  }
  console.log(lines.join('\n'));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
