#!/usr/bin/env node
// Makes a checkout ready for `npm test` / `npm run fleet`: workspace dependencies installed, a
// redis-server binary on PATH (the tests start their own servers from it) and, for the tests,
// Chromium (the browser tests drive it; playwright-core downloads no browser). Runs on a machine
// with only Node and npm, on Linux or macOS, so it uses nothing but Node's standard library; it
// installs system packages only as root on Debian (apt-get) and elsewhere says what to install
// (installAdvice.mjs). Idempotent and fast (a few stat calls and one `redis-server --version`)
// when there is nothing to do.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, statSync, utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { installAdvice } from './installAdvice.mjs';

const PNPM = 'pnpm@10.34.8';
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const lockfile = join(root, 'pnpm-lock.yaml');
const modulesState = join(root, 'node_modules', '.modules.yaml');

/** @param {string} message */
function log(message) {
  process.stderr.write(`bootstrap: ${message}\n`);
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
 * Runs a command with its output streamed to ours; returns its exit code (127 if it could not start).
 * @param {string} command
 * @param {string[]} args
 * @param {import('node:child_process').SpawnSyncOptions} [options]
 * @returns {number}
 */
function run(command, args, options = {}) {
  log(`$ ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) {
    log(`${command} could not be started: ${result.error.message}`);
    return 127;
  }
  return result.status ?? 1;
}

function checkNode() {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 19) || (major === 22 && minor < 12)) {
    fail(`Node ${process.versions.node} is too old: install Node 24 (.nvmrc), 22.12+ or 20.19+ (package.json "engines").`);
  }
  // The relay's uWebSockets.js has binaries for these Node majors only (docs/platforms.md); the
  // rest of the workspace would install, but the relay would refuse to start.
  if (![20, 22, 24, 25].includes(major)) {
    log(`warning: Node ${process.versions.node} has no uWebSockets.js binary: the relay will not start. Use Node 24 (.nvmrc), 22 or 20.`);
  }
}

function needsInstall() {
  if (!existsSync(modulesState)) return 'node_modules is missing';
  if (!existsSync(lockfile)) fail(`${lockfile} is missing: the install must be reproducible from a committed lockfile.`);
  if (statSync(lockfile).mtimeMs > statSync(modulesState).mtimeMs) return 'pnpm-lock.yaml changed since the last install';
  return null;
}

function installDependencies() {
  const reason = needsInstall();
  if (reason === null) return;
  log(`${reason}: installing dependencies with ${PNPM}`);
  // npx fetches the pinned pnpm once into npm's cache; a global pnpm is neither needed nor used,
  // so every machine installs with the same pnpm version as CI. --frozen-lockfile: never rewrite
  // the lockfile here; a lockfile out of date with package.json is an error to fix and commit.
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
  const code = run(npx, ['-y', PNPM, 'install', '--frozen-lockfile']);
  if (code !== 0) fail(`pnpm install failed (exit ${code}); see its output above.`);
  // pnpm may leave .modules.yaml untouched when nothing changed; stamp it so the next run is a no-op.
  if (existsSync(modulesState)) {
    const now = new Date();
    utimesSync(modulesState, now, now);
  }
}

function redisServerVersion() {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return null;
  return probe.stdout.trim();
}

/** The facts installAdvice decides from; probed once. @returns {import('./installAdvice.mjs').Host} */
function probeHost() {
  const linux = process.platform === 'linux';
  return {
    platform: process.platform,
    root: typeof process.getuid === 'function' && process.getuid() === 0,
    debian: linux && existsSync('/etc/debian_version'),
    apt: linux && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0,
  };
}

/** @type {import('./installAdvice.mjs').Host | undefined} */
let host;
let aptUpdated = false;

/**
 * Installs a missing system tool with apt-get where that is ours to do (root on Debian), else
 * stops saying what to install on this platform.
 * @param {import('./installAdvice.mjs').SystemTool} tool
 * @returns {string} the advice, for a message if the tool is still missing afterwards
 */
function installSystemTool(tool) {
  host ??= probeHost();
  const advice = installAdvice(tool, host, chromiumPath());
  if (advice.kind === 'tell') fail(advice.howTo);
  const { packages, howTo } = advice;
  log(`${tool} is missing: installing ${packages.join(' ')} with apt-get (running as root on Debian)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    if (run('apt-get', ['update'], { env }) !== 0) fail(`apt-get update failed.\n${howTo}`);
    aptUpdated = true;
  }
  if (run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { env }) !== 0) {
    fail(`apt-get install ${packages.join(' ')} failed.\n${howTo}`);
  }
  return howTo;
}

function ensureRedisServer() {
  if (redisServerVersion() !== null) return;
  const howTo = installSystemTool('redis-server');
  const version = redisServerVersion();
  if (version === null) fail(`redis-server still not runnable after apt-get install.\n${howTo}`);
  log(`installed ${version}`);
}

/** The browser the tests drive; the same rule as chromiumPath() in @streamgate/testkit. */
function chromiumPath() {
  const override = process.env.STREAMGATE_CHROMIUM;
  return override === undefined || override.trim() === '' ? '/usr/bin/chromium' : override;
}

/** @param {string} path */
function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function ensureChromium() {
  // Only the tests use a browser; a local fleet does not need one.
  if (process.env.npm_lifecycle_event === 'fleet') return;
  const path = chromiumPath();
  if (isExecutable(path)) return;
  if (process.env.STREAMGATE_CHROMIUM !== undefined && process.env.STREAMGATE_CHROMIUM.trim() !== '') {
    fail(`STREAMGATE_CHROMIUM=${path} is not an executable file.`);
  }
  const howTo = installSystemTool('chromium');
  if (!isExecutable(path)) fail(`${path} still missing after apt-get install.\n${howTo}`);
  log(`installed chromium at ${path}`);
}

checkNode();
installDependencies();
ensureRedisServer();
ensureChromium();
