#!/usr/bin/env node
// Installs the publishable packages the way a product team does: packed tarballs, plain npm, a
// project outside the workspace. Workspace links and the `streamgate-source` condition hide
// exactly the failures a user meets (a `workspace:*` left in a tarball, a declaration naming a
// Node module, a browser bundle dragging in server code), so nothing here resolves through them.
//
//   node scripts/checkPackages.mjs [--keep]     (--keep leaves the scratch directory for a look)
//
// Steps: every non-private workspace package is one of PACKAGES → build → pack → publish dry
// run → per fixture in scripts/consumer/*/: npm install, tsc (strict, skipLibCheck false), then
// for a browser fixture a vite build, for a `backend-*` fixture (a product backend, sharing
// scripts/consumer/_backend/src) a run of its dist/main.js, which calls the router through
// createCallerFactory and checks the token's claims → browser-only typecheck and bundle size of
// client+react (React external, at most 20 kB gzip, no ingest schema).
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import process from 'node:process';
import { gzipSync } from 'node:zlib';

/**
 * @typedef {{ name: string; version: string; private?: boolean; dependencies?: Record<string, string>;
 *   devDependencies?: Record<string, string>; overrides?: Record<string, string> }} Manifest
 */

/** @param {string} file @returns {Manifest} */
function readManifest(file) {
  /** @type {unknown} */
  const parsed = JSON.parse(readFileSync(file, 'utf8'));
  return /** @type {Manifest} */ (parsed);
}

/** @param {string} line */
function say(line) {
  process.stdout.write(`${line}\n`);
}

const root = join(import.meta.dirname, '..');
// The published packages, the same list as the README's "Published packages"; every other
// workspace package must be private.
const PACKAGES = ['protocol', 'redis', 'client', 'react', 'server'];
const BUNDLE_LIMIT_BYTES = 20 * 1024;
// Names and literals of the ingest event schemas: none belongs in a browser bundle. The literals
// survive minification, the names only an unminified build, so both builds are scanned.
const INGEST_MARKERS = ['ingestEventSchema', 'ingestBlockEventSchema', 'ingestReorgEventSchema', "'reorg'", '"reorg"', 'backfill_limit'];
const keep = process.argv.includes('--keep');
const started = Date.now();

/** @param {string} title */
function step(title) {
  say(`== packages: ${title} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

/** @param {string} message @returns {never} */
function fail(message) {
  process.stderr.write(`checkPackages: ${message}\n`);
  process.exit(1);
}

/**
 * Runs a command, streaming its output; a non-zero exit ends the check naming the command.
 * @param {string} cmd @param {string[]} args @param {string} cwd
 */
function run(cmd, args, cwd) {
  try {
    execFileSync(cmd, args, { cwd, stdio: 'inherit' });
  } catch {
    fail(`\`${cmd} ${args.join(' ')}\` failed in ${cwd}`);
  }
}

/**
 * Like run, but the output is shown only when the command fails (pnpm pack lists every file).
 * @param {string} cmd @param {string[]} args @param {string} cwd
 */
function quiet(cmd, args, cwd) {
  try {
    execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const output = /** @type {{ stdout?: string; stderr?: string }} */ (error);
    process.stdout.write(output.stdout ?? '');
    process.stderr.write(output.stderr ?? '');
    fail(`\`${cmd} ${args.join(' ')}\` failed in ${cwd}`);
  }
}

/** @param {string} cmd @param {string[]} args @param {string} cwd */
function capture(cmd, args, cwd) {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

const execFileAsync = promisify(execFile);

const scratch = mkdtempSync(join(tmpdir(), 'streamgate-packages-'));
// npm must not see the workspace: no parent package.json, no .npmrc of ours, a cache of its own
// is not needed (the user's cache is what a user has).
process.on('exit', () => {
  if (keep) say(`scratch kept: ${scratch}`);
  else rmSync(scratch, { recursive: true, force: true });
});

step('published packages');
{
  const published = [];
  for (const group of ['packages', 'apps']) {
    for (const entry of readdirSync(join(root, group), { withFileTypes: true })) {
      const file = join(root, group, entry.name, 'package.json');
      if (!entry.isDirectory() || !existsSync(file)) continue;
      if (readManifest(file).private !== true) published.push(`${group}/${entry.name}`);
    }
  }
  const listed = PACKAGES.map((name) => `packages/${name}`);
  const unchecked = published.filter((dir) => !listed.includes(dir));
  if (unchecked.length > 0)
    fail(`not private, so publishable, but not packed and checked here: ${unchecked.join(', ')} (add to PACKAGES or set "private": true)`);
  say(`published: ${PACKAGES.map((name) => `@streamgate/${name}`).join(', ')}; every other workspace package is private`);
}

step('build');
for (const name of PACKAGES) rmSync(join(root, 'packages', name, 'dist'), { recursive: true, force: true });
run('npx', ['pnpm', '-r', ...PACKAGES.flatMap((name) => ['--filter', `./packages/${name}`]), 'run', 'build'], root);

step('pack');
const tarballDir = join(scratch, 'tarballs');
mkdirSync(tarballDir);
/** @type {Record<string, string>} */
const tarballs = {};
for (const name of PACKAGES) {
  const dir = join(root, 'packages', name);
  const manifest = readManifest(join(dir, 'package.json'));
  if (manifest.private) fail(`packages/${name} is private: it cannot be published`);
  const before = new Set(readdirSync(tarballDir));
  quiet('npx', ['pnpm', 'pack', '--pack-destination', tarballDir], dir);
  const made = readdirSync(tarballDir).filter((f) => !before.has(f));
  if (made.length !== 1) fail(`pnpm pack in packages/${name} made ${made.length} files`);
  const file = made[0] ?? fail(`pnpm pack in packages/${name} made no file`);
  const tarball = join(tarballDir, file);
  const packed = capture('tar', ['-xzOf', tarball, 'package/package.json'], root);
  if (packed.includes('workspace:')) fail(`${file} still names a workspace: version:\n${packed}`);
  const listing = capture('tar', ['-tzf', tarball], root).split('\n');
  for (const required of ['package/README.md', 'package/dist/index.js', 'package/dist/index.d.ts']) {
    if (!listing.includes(required)) fail(`${file} lacks ${required.slice('package/'.length)}`);
  }
  if (listing.some((f) => /\.test\.tsx?$/.test(f))) fail(`${file} contains test files`);
  tarballs[manifest.name] = tarball;
  say(`${manifest.name}@${manifest.version}: ${listing.filter(Boolean).length} files`);
}

step('release dry run');
quiet(
  'npx',
  ['pnpm', '-r', ...PACKAGES.flatMap((name) => ['--filter', `./packages/${name}`]), 'publish', '--dry-run', '--no-git-checks'],
  root,
);

/**
 * The fixture's package.json with every @streamgate/* dependency taken from its tarball.
 * @param {string} fixture
 */
function consumerManifest(fixture) {
  const manifest = readManifest(join(fixture, 'package.json'));
  for (const deps of [manifest.dependencies ?? {}, manifest.devDependencies ?? {}]) {
    for (const dep of Object.keys(deps)) {
      if (!dep.startsWith('@streamgate/')) continue;
      const tarball = tarballs[dep] ?? fail(`${fixture} depends on ${dep}, which is not one of the published packages`);
      deps[dep] = `file:${tarball}`;
    }
  }
  // A package's own @streamgate/* dependencies (react → client, protocol) are not on the registry
  // yet: the tarballs stand in for the versions about to be published.
  manifest.overrides = Object.fromEntries(Object.entries(tarballs).map(([dep, file]) => [dep, `file:${file}`]));
  return manifest;
}

const consumers = join(root, 'scripts', 'consumer');
// `_backend` holds what the backend fixtures share; it is not a fixture itself.
const sharedBackend = join(consumers, '_backend', 'src');
const fixtures = readdirSync(consumers, { withFileTypes: true })
  .filter((d) => d.isDirectory() && !d.name.startsWith('_'))
  .map((d) => d.name)
  .sort();
if (fixtures.length === 0) fail(`no fixture in ${consumers}`);

/**
 * One fixture's checks. Its commands' output is collected and printed as one block when the
 * fixture is done, so two fixtures checked at once never interleave their lines.
 * @param {string} fixture @returns {Promise<string>} the fixture's scratch directory
 */
async function checkFixture(fixture) {
  const source = join(consumers, fixture);
  const dir = join(scratch, fixture);
  const backend = fixture.startsWith('backend-');
  /** @type {string[]} */
  const out = [];
  const note = (/** @type {string} */ title) => out.push(`== packages: ${title} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  /** @param {string} cmd @param {string[]} args @param {{ show?: boolean }} [options] show: keep stdout in the output (default) */
  const exec = async (cmd, args, { show = true } = {}) => {
    try {
      const { stdout, stderr } = await execFileAsync(cmd, args, { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      out.push(show ? stdout : '', stderr);
      return stdout;
    } catch (error) {
      const output = /** @type {{ stdout?: string; stderr?: string }} */ (error);
      out.push(output.stdout ?? '', output.stderr ?? '');
      process.stdout.write(out.join(''));
      return fail(`\`${cmd} ${args.join(' ')}\` failed in ${dir}`);
    }
  };
  cpSync(source, dir, { recursive: true, filter: (f) => !/[/\\](node_modules|dist)$/.test(f) });
  if (backend) {
    for (const file of readdirSync(sharedBackend)) {
      if (existsSync(join(dir, 'src', file))) fail(`scripts/consumer/${fixture}/src/${file} would be overwritten by _backend/src/${file}`);
    }
    cpSync(sharedBackend, join(dir, 'src'), { recursive: true });
  }
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(consumerManifest(source), null, 2)}\n`);
  const expectErrors = capture('grep', ['-rc', '@ts-expect-error', join(dir, 'src')], root)
    .split('\n')
    .reduce((n, line) => n + Number(line.split(':').pop() || 0), 0);
  if (expectErrors === 0) fail(`scripts/consumer/${fixture}/src has no @ts-expect-error line: inference is not checked`);

  note(`${fixture}: npm install`);
  await exec('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error']);

  note(`${fixture}: tsc --strict --skipLibCheck false (${expectErrors} @ts-expect-error line(s) must be errors)`);
  // The flags override the fixture's tsconfig, so no fixture can relax them. An @ts-expect-error
  // line that is no longer an error is itself an error (TS2578), so broken inference fails here.
  // A backend is compiled to dist/ and run; a browser app only typechecks here (vite builds it).
  const emit = backend ? [] : ['--noEmit'];
  await exec(join(dir, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json', ...emit, '--strict', '--skipLibCheck', 'false']);

  if (backend) {
    const trpc = readManifest(join(dir, 'node_modules', '@trpc', 'server', 'package.json')).version;
    const copies = (await exec('npm', ['ls', '@trpc/server', '--all', '--parseable'], { show: false })).split('\n').filter(Boolean);
    // One copy: @streamgate/server takes the product's @trpc/server as a peer, never its own.
    if (copies.length !== 1) fail(`${fixture} has ${copies.length} copies of @trpc/server:\n${copies.join('\n')}`);
    note(`${fixture}: node dist/main.js (@trpc/server ${trpc}: createCallerFactory call, token claims per docs/protocol.md §10)`);
    await exec('node', [join('dist', 'main.js')]);
  } else {
    note(`${fixture}: vite build`);
    await exec(join(dir, 'node_modules', '.bin', 'vite'), ['build', '--logLevel', 'warn']);
    const assets = join(dir, 'dist', 'assets');
    for (const file of readdirSync(assets).filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(join(assets, file), 'utf8');
      const found = INGEST_MARKERS.filter((m) => code.includes(m));
      if (found.length > 0) fail(`${fixture}'s app bundle ${file} contains ingest schema code: ${found.join(', ')}`);
    }
  }
  process.stdout.write(out.join(''));
  return dir;
}

// Two fixtures at a time: each is an npm install (mostly waiting on the registry and the disk)
// then a single-threaded tsc and a build, so two overlap well on a 2-core CI host; more only
// queue for the same cores.
const FIXTURES_AT_ONCE = 2;
/** @type {Map<string, string>} */
const checked = new Map();
{
  const queue = [...fixtures];
  const worker = async () => {
    for (let fixture = queue.shift(); fixture !== undefined; fixture = queue.shift()) checked.set(fixture, await checkFixture(fixture));
  };
  await Promise.all(Array.from({ length: FIXTURES_AT_ONCE }, worker));
}
const vanillaDir = checked.get('vanilla');
if (vanillaDir === undefined) fail('the vanilla fixture is missing: it carries the browser-only checks');

step('browser-only typecheck of client, react and protocol (no Node types)');
// A browser project has no @types/node: the three browser packages must typecheck without it.
const probe = join(vanillaDir, 'browser-probe');
mkdirSync(probe);
writeFileSync(
  join(probe, 'probe.ts'),
  [
    "export * from '@streamgate/client';",
    "export * from '@streamgate/react';",
    "export { parseServerFrame, compareStreamIds } from '@streamgate/protocol';",
    '',
  ].join('\n'),
);
writeFileSync(join(probe, 'entry.ts'), "export * from '@streamgate/client';\nexport * from '@streamgate/react';\n");
writeFileSync(
  join(probe, 'tsconfig.json'),
  JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2022', 'DOM', 'DOM.Iterable'],
      module: 'ESNext',
      moduleResolution: 'Bundler',
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: [],
    },
    files: ['probe.ts'],
  }),
);
run(join(vanillaDir, 'node_modules', '.bin', 'tsc'), ['-p', join(probe, 'tsconfig.json')], probe);

step('client+react bundle (React external)');
// Everything @streamgate/client and @streamgate/react export, so the figure is an upper bound of
// what any page pays; React is the page's own. Built twice: minified to measure, unminified so
// the schema names can be searched for.
writeFileSync(
  join(probe, 'bundle.mjs'),
  `import { build } from 'vite';
const external = (id) => id === 'react' || id === 'react-dom' || id.startsWith('react/') || id.startsWith('react-dom/');
for (const minify of [true, false]) {
  await build({
    configFile: false,
    logLevel: 'warn',
    root: ${JSON.stringify(probe)},
    build: {
      lib: { entry: 'entry.ts', formats: ['es'], fileName: () => minify ? 'bundle.min.js' : 'bundle.js' },
      outDir: 'out',
      emptyOutDir: false,
      minify,
      rollupOptions: { external },
    },
  });
}
`,
);
run('node', [join(probe, 'bundle.mjs')], vanillaDir);
const minified = readFileSync(join(probe, 'out', 'bundle.min.js'));
const plain = readFileSync(join(probe, 'out', 'bundle.js'), 'utf8');
const gzipBytes = gzipSync(minified).length;
const found = INGEST_MARKERS.filter((m) => plain.includes(m) || minified.includes(m));
say(
  `client+react bundle: ${(minified.length / 1024).toFixed(1)} kB minified, ${(gzipBytes / 1024).toFixed(1)} kB gzip ` +
    `(limit ${BUNDLE_LIMIT_BYTES / 1024} kB, React external)`,
);
if (found.length > 0) fail(`the client+react bundle contains ingest schema code: ${found.join(', ')}`);
if (gzipBytes > BUNDLE_LIMIT_BYTES) fail(`the client+react bundle is ${gzipBytes} bytes gzip, over ${BUNDLE_LIMIT_BYTES}`);
if (!existsSync(join(probe, 'out', 'bundle.js'))) fail('the unminified bundle was not written');

step(`done: ${fixtures.join(', ')} installed, typechecked, and built or run`);
