'use strict';
// Tests of how guise loads its native addon and library, and what it says
// when it cannot: each case loads a copy of the package or the addon in a
// child process (one process must not hold two copies of libguise's Go
// runtime) and checks the message. Run with the suite:
//   node --test bindings/node/test/load.test.js
// or against an installed package with GUISE_PACKAGE=guise (test-installed.sh).

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { guiseModule } = require('./helpers');

const platform = `${process.platform}-${process.arch}`;
const main = require.resolve(guiseModule); // index.js of the package under test
const pkgDir = path.dirname(main);
const libName = process.platform === 'win32' ? 'guise.dll' : (process.platform === 'darwin' ? 'libguise.dylib' : 'libguise.so');

// addonFile is the guise.node the package under test loads, as index.js
// finds it, and libFile the library it links.
function addonFile() {
  if (process.env.GUISE_NODE_ADDON) return path.resolve(process.env.GUISE_NODE_ADDON);
  const tree = path.join(pkgDir, 'build', 'guise.node');
  if (fs.existsSync(tree)) return tree;
  return require.resolve(`@guise-http/guise-${platform}/guise.node`, { paths: [pkgDir] });
}

function libFile(addon) {
  const beside = path.join(path.dirname(addon), libName);
  return fs.existsSync(beside) ? beside : path.join(path.dirname(addon), '..', '..', 'lib', libName); // the tree's layout
}

// copyAddon copies the addon and its library into a temp dir, keeping
// their relative places (the addon's rpath), and returns their paths.
function copyAddon() {
  const addon = addonFile();
  const lib = libFile(addon);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'guise-load-'));
  const a = path.join(dir, 'x', 'y', 'guise.node');
  const l = path.join(dir, 'x', 'y', path.relative(path.dirname(addon), lib));
  fs.mkdirSync(path.dirname(a), { recursive: true });
  fs.mkdirSync(path.dirname(l), { recursive: true });
  fs.copyFileSync(addon, a);
  fs.copyFileSync(lib, l);
  return { dir, addon: a, lib: l };
}

// requireIn runs require(module) in a child with env added, and returns
// its exit status and stderr.
function requireIn(module, env, preload) {
  const args = [];
  if (preload) args.push('-r', preload);
  args.push('-e', `require(${JSON.stringify(module)}); console.log('loaded')`);
  const r = spawnSync(process.execPath, args, { env: { ...process.env, ...env }, encoding: 'utf8' });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

test('the package loads in a fresh process and reports its version', () => {
  const r = requireIn(main, {});
  assert.equal(r.status, 0, r.err);
  const v = execFileSync(process.execPath, ['-p', `require(${JSON.stringify(main)}).version`], { encoding: 'utf8' }).trim();
  assert.equal(v, require(path.join(pkgDir, 'version.js')).version);
});

test('a missing library: the message names the addon, the platform and what to do', (t) => {
  const c = copyAddon();
  t.after(() => fs.rmSync(c.dir, { recursive: true, force: true }));
  fs.rmSync(c.lib);
  const r = requireIn(main, { GUISE_NODE_ADDON: c.addon });
  assert.notEqual(r.status, 0);
  assert.match(r.err, new RegExp(`guise: cannot load the native addon ${escape(c.addon)} for ${platform}: .*${escape(libName)}`));
  assert.match(r.err, /reinstall guise/);
});

test('a corrupt library: the message names the addon, the platform and what to do', (t) => {
  const c = copyAddon();
  t.after(() => fs.rmSync(c.dir, { recursive: true, force: true }));
  fs.writeFileSync(c.lib, Buffer.alloc(100, 0x2a)); // not an ELF/PE file
  const r = requireIn(main, { GUISE_NODE_ADDON: c.addon });
  assert.notEqual(r.status, 0);
  assert.match(r.err, new RegExp(`guise: cannot load the native addon ${escape(c.addon)} for ${platform}: .*${escape(libName)}`));
  assert.match(r.err, /reinstall guise/);
});

test('a library of another C ABI is refused at load time', (t) => {
  // A stub libguise, compiled here, that exports what the addon imports
  // and says it speaks ABI 999. It needs a C compiler and nm; the rest of
  // the suite does not.
  const cc = process.env.CC || 'cc';
  const have = (cmd) => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status === 0;
  if (process.platform !== 'linux' || !have(cc) || !have('nm')) {
    t.skip(`needs Linux, ${cc} and nm`);
    return;
  }
  const c = copyAddon();
  t.after(() => fs.rmSync(c.dir, { recursive: true, force: true }));
  const names = execFileSync('nm', ['-D', '--undefined-only', c.addon], { encoding: 'utf8' })
    .split('\n').map((l) => l.trim().split(/\s+/).pop()).filter((n) => n && n.startsWith('guise_'));
  assert.ok(names.includes('guise_abi_version'), names.join(' '));
  const src = path.join(c.dir, 'stub.c');
  fs.writeFileSync(src, names.map((n) => n === 'guise_abi_version'
    ? 'int guise_abi_version(void) { return 999; }'
    : `long long ${n}(void) { return -1; }`).join('\n') + '\n');
  execFileSync(cc, ['-shared', '-fPIC', '-o', c.lib, src]);
  const r = requireIn(main, { GUISE_NODE_ADDON: c.addon });
  assert.notEqual(r.status, 0);
  assert.match(r.err, /guise: libguise speaks C ABI 999, this addon was built for \d+: reinstall guise/);
});

// copyPackage copies the package's JavaScript (no addon) into a temp dir,
// its package.json listing platforms, so that index.js looks for
// @guise-http/guise-PLATFORM and finds none.
function copyPackage(t, platforms) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'guise-pkg-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const pkg = path.join(dir, 'node_modules', 'guise');
  fs.mkdirSync(pkg, { recursive: true });
  for (const f of ['index.js', 'version.js']) fs.copyFileSync(path.join(pkgDir, f), path.join(pkg, f));
  const json = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  json.optionalDependencies = Object.fromEntries(platforms.map((p) => [`@guise-http/guise-${p}`, json.version]));
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify(json));
  return pkg;
}

test('a platform without a prebuilt binary: the message names it and the supported ones', (t) => {
  const pkg = copyPackage(t, ['linux-x64', 'linux-arm64', 'win32-x64']);
  const preload = path.join(path.dirname(pkg), 'riscv.js');
  fs.writeFileSync(preload, "Object.defineProperty(process, 'arch', { value: 'riscv64' });\n");
  const r = requireIn(pkg, { GUISE_NODE_ADDON: '' }, preload);
  assert.notEqual(r.status, 0);
  assert.match(r.err, new RegExp(`guise: no prebuilt binary for ${process.platform}-riscv64; supported: linux-x64, linux-arm64, win32-x64`));
});

test('a supported platform whose package was not installed: the message says which to install', (t) => {
  const pkg = copyPackage(t, [platform]);
  const r = requireIn(pkg, { GUISE_NODE_ADDON: '' });
  assert.notEqual(r.status, 0);
  assert.match(r.err, new RegExp(`guise: @guise-http/guise-${platform}, which holds the native addon for ${platform}, is not installed; .*npm install @guise-http/guise-${platform}@`));
});

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
