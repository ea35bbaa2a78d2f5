import { createRequire } from 'node:module';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { appCommand } from './appRuntime.js';
import { repoRoot } from './repoRoot.js';
import { spawnService } from './spawnService.js';
import type { Service, SpawnServiceOptions } from './spawnService.js';

export interface SpawnTsEntryOptions extends Omit<SpawnServiceOptions, 'name' | 'command' | 'args'> {
  /** Default: the entry file's name. */
  name?: string;
  /** Arguments for the entry point itself. */
  args?: readonly string[];
  /** Extra Node options, placed before the entry (e.g. `--enable-source-maps`). */
  nodeArgs?: readonly string[];
  /** The entry needs uWebSockets.js: run it in STREAMGATE_RELAY_CHROOT when that is set (appRuntime.ts). */
  relayUserland?: boolean;
}

let tsxLoader: string | undefined;

/**
 * tsx is a devDependency of the workspace root, not of the package a test lives in, and the child
 * may run with any cwd: so it is resolved from the root's package.json and passed as a file URL,
 * which `--import` accepts from anywhere.
 */
export function tsxLoaderUrl(): string {
  tsxLoader ??= pathToFileURL(createRequire(join(repoRoot(), 'package.json')).resolve('tsx')).href;
  return tsxLoader;
}

/**
 * Runs a TypeScript entry point in a fresh Node process, with workspace packages resolved to
 * their source (`streamgate-source` condition) as in tests, so no build is needed. The Node is
 * this one unless STREAMGATE_APP_NODE names another (appRuntime.ts).
 * A relative `entryPath` is taken from `cwd`, else from the repo root.
 */
export function spawnTsEntry(entryPath: string, options: SpawnTsEntryOptions = {}): Promise<Service> {
  const { name, args = [], nodeArgs = [], relayUserland = false, ...rest } = options;
  const entry = resolve(options.cwd ?? repoRoot(), entryPath);
  const command = appCommand(['--conditions=streamgate-source', '--import', tsxLoaderUrl(), ...nodeArgs, entry, ...args], {
    relay: relayUserland,
    cwd: options.cwd ?? process.cwd(),
  });
  return spawnService({ ...rest, name: name ?? basename(entry), ...command });
}
