import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApps } from './buildApps.js';

/**
 * Vitest global setup for the cross-process projects: bundles the apps once per run into a
 * temporary directory (under /tmp, which STREAMGATE_RELAY_CHROOT sees at the same path) and
 * hands it to every test worker, and through them to every spawned fleet, as
 * STREAMGATE_APP_BUILD. A run that sets the variable itself keeps its own build.
 */
export default async function buildAppsOnce(): Promise<() => Promise<void>> {
  if (process.env.STREAMGATE_APP_BUILD !== undefined && process.env.STREAMGATE_APP_BUILD.trim() !== '') return async () => {};
  const dir = await mkdtemp(join(tmpdir(), 'streamgate-apps-'));
  await buildApps(dir);
  process.env.STREAMGATE_APP_BUILD = dir;
  return async () => {
    delete process.env.STREAMGATE_APP_BUILD;
    await rm(dir, { recursive: true, force: true });
  };
}
