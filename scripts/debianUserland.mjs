#!/usr/bin/env node
// Runs commands with the apps on another Node, and the relay inside a Debian 13 (trixie) userland.
//
// Why: uWebSockets.js's binaries for Node 22 and 24 (ABI 127/137) need glibc >= 2.38, and these
// hosts are Debian 12 (glibc 2.36). Node itself runs fine on the host; only the relay, which loads
// uWS, needs the newer glibc. So a minimal trixie root is debootstrapped once into a cache outside
// the checkout, Node comes from the npm registry (node-linux-<arch>@<major>), and a command (the
// test runner, on this host's Node) runs with STREAMGATE_APP_NODE and STREAMGATE_RELAY_CHROOT set:
// the testkit spawns every app on that Node and the relay as `chroot <root> env -C <cwd> node …`.
//
//   node scripts/debianUserland.mjs prepare [--node 24] [--node 22]   # cache both, print paths
//   node scripts/debianUserland.mjs run --node 24 -- <command> [args…]
//
// The bind mounts (checkout, /tmp, /proc, /dev, the Node cache) are made inside a private mount
// namespace (`unshare --mount`) that lives only as long as the command: nothing is ever mounted on
// the host, so nothing is left mounted however the run ends, and concurrent runs cannot unmount
// each other's. Where unshare is refused, the mounts are made on the host and undone on exit.
// Linux only, as root (debootstrap, mount and chroot need it). Standard library only.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(import.meta.url);
const REPO = dirname(dirname(SCRIPT));
const CACHE = process.env.STREAMGATE_USERLAND_CACHE || '/var/cache/streamgate';
const ROOT = join(CACHE, 'trixie');
const NODE_CACHE = join(CACHE, 'node');
const MIRROR = process.env.STREAMGATE_DEBIAN_MIRROR || 'http://deb.debian.org/debian';

/** @param {string} message */
function log(message) {
  process.stderr.write(`debianUserland: ${message}\n`);
}

/**
 * @param {string} message
 * @returns {never}
 */
function fail(message) {
  log(message);
  process.exit(1);
}

/**
 * @param {string} command
 * @param {string[]} args
 * @param {import('node:child_process').SpawnSyncOptions} [options]
 */
function run(command, args, options = {}) {
  log(`$ ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  if (result.error) fail(`${command} could not be started: ${result.error.message}`);
  if (result.status !== 0) fail(`${command} exited with ${String(result.status ?? result.signal)}`);
}

/**
 * Mount points at or under `dir` in this mount namespace.
 * @param {string} dir
 * @returns {string[]}
 */
function mountsUnder(dir) {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point) => point !== undefined && (point === dir || point.startsWith(`${dir}/`)));
}

/**
 * Removes a half-made directory, never through a mount (that would delete the host's /tmp or /dev).
 * @param {string} dir
 */
function removeUnmounted(dir) {
  if (!existsSync(dir)) return;
  const mounted = mountsUnder(dir);
  if (mounted.length > 0) fail(`${dir} has mounts (${mounted.join(', ')}); unmount them before it can be removed`);
  rmSync(dir, { recursive: true, force: true });
}

function requireRootOnLinux() {
  if (process.platform !== 'linux') fail(`the Debian userland is for linux hosts (this is ${process.platform})`);
  if (process.getuid?.() !== 0) fail('debootstrap, mount and chroot need root: run this as root (CI does)');
}

/** The trixie root, debootstrapped on first use (about 40 s, 214 MB) and reused after. */
function ensureUserland() {
  if (existsSync(join(ROOT, 'etc', 'debian_version'))) return ROOT;
  requireRootOnLinux();
  if (spawnSync('debootstrap', ['--version'], { stdio: 'ignore' }).error) {
    if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).error)
      fail('debootstrap is not installed and there is no apt-get to install it');
    // Waits for another apt/dpkg run (bootstrap's) rather than failing on its lock.
    run('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', 'debootstrap'], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  }
  // Into a scratch directory renamed at the end: an interrupted debootstrap never looks complete.
  const partial = `${ROOT}.partial`;
  removeUnmounted(partial);
  mkdirSync(CACHE, { recursive: true });
  run('debootstrap', ['--variant=minbase', 'trixie', partial, MIRROR]);
  // debootstrap writes no /etc/hosts: without one, `localhost` would go to DNS inside the root.
  copyFileSync('/etc/hosts', join(partial, 'etc', 'hosts'));
  renameSync(partial, ROOT);
  log(`Debian 13 userland ready at ${ROOT}`);
  return ROOT;
}

/**
 * A node binary of that major version from the npm registry's node-linux-<arch> package.
 * @param {string} major
 * @returns {string}
 */
function ensureNode(major) {
  if (!/^\d+$/.test(major)) fail(`--node takes a major version such as 24 (got ${JSON.stringify(major)})`);
  const pkg = `node-${process.platform}-${process.arch}`;
  const dir = join(NODE_CACHE, major);
  const binary = join(dir, 'node_modules', pkg, 'bin', 'node');
  if (existsSync(binary)) return binary;
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  run('npm', ['install', '--prefix', partial, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `${pkg}@${major}`]);
  renameSync(partial, dir);
  return binary;
}

/**
 * @param {string[]} argv
 * @returns {{ majors: string[], rest: string[] }}
 */
function parseArgs(argv) {
  /** @type {string[]} */
  const majors = [];
  let i = 0;
  for (; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--') {
      i += 1;
      break;
    }
    if (arg === '--node') majors.push(argv[++i] ?? fail('--node needs a major version'));
    else if (arg.startsWith('--node=')) majors.push(arg.slice('--node='.length));
    else break;
  }
  return { majors, rest: argv.slice(i) };
}

const BINDS = () => [REPO, '/tmp', '/proc', '/dev', NODE_CACHE];

/** @param {string} root */
function mountAll(root) {
  for (const source of BINDS()) {
    const target = join(root, source);
    if (mountsUnder(target).includes(target)) continue;
    mkdirSync(target, { recursive: true });
    run('mount', ['--rbind', source, target]);
  }
}

/** @param {string} root */
function unmountAll(root) {
  for (const source of BINDS().reverse()) {
    const target = join(root, source);
    if (!mountsUnder(target).includes(target)) continue;
    const result = spawnSync('umount', ['--recursive', '--lazy', target], { stdio: 'inherit' });
    if (result.status !== 0) log(`could not unmount ${target}: umount exited ${String(result.status)}`);
  }
}

/**
 * Runs the command with the environment the testkit reads; resolves with its exit code.
 * @param {string} nodeBinary
 * @param {string} root
 * @param {string[]} command
 * @returns {Promise<number>}
 */
function runCommand(nodeBinary, root, command) {
  const [file, ...args] = command;
  if (file === undefined) fail('no command to run');
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      stdio: 'inherit',
      env: { ...process.env, STREAMGATE_APP_NODE: nodeBinary, STREAMGATE_RELAY_CHROOT: root },
    });
    /** @type {NodeJS.Signals[]} */
    const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    for (const signal of forwarded) process.on(signal, () => child.kill(signal));
    child.on('error', (error) => {
      log(`${file} could not be started: ${error.message}`);
      resolve(127);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

/** @returns {Promise<number>} */
async function main() {
  const [verb, ...argv] = process.argv.slice(2);
  if (verb === 'prepare') {
    const { majors } = parseArgs(argv);
    process.stdout.write(`userland ${ensureUserland()}\n`);
    for (const major of majors.length > 0 ? majors : ['24', '22']) process.stdout.write(`node${major} ${ensureNode(major)}\n`);
    return 0;
  }
  if (verb === 'run') {
    const { majors, rest } = parseArgs(argv);
    if (majors.length !== 1) fail('run takes exactly one --node <major>');
    if (rest.length === 0) fail('run needs a command after --');
    requireRootOnLinux();
    const root = ensureUserland();
    const nodeBinary = ensureNode(majors[0]);
    const inner = [process.execPath, SCRIPT, '__mounted', root, nodeBinary, '--', ...rest];
    // A private mount namespace: the mounts vanish with the command, and the host never sees them.
    const probe = spawnSync('unshare', ['--mount', '--propagation', 'private', 'true'], { stdio: 'ignore' });
    if (probe.status === 0) return runCommand(nodeBinary, root, ['unshare', '--mount', '--propagation', 'private', '--', ...inner]);
    log('unshare --mount was refused here: mounting on the host and unmounting on exit');
    return mounted(root, nodeBinary, rest, true);
  }
  if (verb === '__mounted') {
    const [root, nodeBinary, separator, ...command] = argv;
    if (root === undefined || nodeBinary === undefined || separator !== '--' || command.length === 0) fail('__mounted: bad arguments');
    return mounted(root, nodeBinary, command, false);
  }
  fail('usage: debianUserland.mjs prepare [--node N]… | run --node N -- <command> [args…]');
}

/**
 * @param {string} root
 * @param {string} nodeBinary
 * @param {string[]} command
 * @param {boolean} unmountAfter
 * @returns {Promise<number>}
 */
async function mounted(root, nodeBinary, command, unmountAfter) {
  try {
    mountAll(root);
    const version = spawnSync(nodeBinary, ['--version'], { encoding: 'utf8' }).stdout.trim();
    log(`relay userland: ${root} (glibc ${glibcIn(root)}), apps on Node ${version} (${nodeBinary})`);
    return await runCommand(nodeBinary, root, command);
  } finally {
    if (unmountAfter) unmountAll(root);
  }
}

/**
 * @param {string} root
 * @returns {string}
 */
function glibcIn(root) {
  const result = spawnSync('chroot', [root, '/usr/bin/ldd', '--version'], { encoding: 'utf8' });
  return result.status === 0 ? (/(\d+\.\d+)\s*$/m.exec(result.stdout.split('\n')[0] ?? '')?.[1] ?? 'unknown') : 'unknown';
}

process.exitCode = await main();
