import { join, relative } from 'node:path';
import { repoRoot } from './repoRoot.js';

/** The app entry points tests spawn (spawnApps.ts, spawnIngest.ts), each built to `<name>.mjs` by buildApps.ts. */
export const APP_ENTRIES = {
  auth: 'apps/auth/src/main.ts',
  dashboard: 'apps/dashboard/src/main.ts',
  ingest: 'apps/ingest/src/main.ts',
  relay: 'apps/relay/src/main.ts',
} as const;

type AppName = keyof typeof APP_ENTRIES;

/**
 * The built file for a source entry in `buildDir`, or undefined if the entry is not an app built
 * there. Kept apart from buildApps.ts so that importing the testkit never loads esbuild (which
 * refuses to load under jsdom, where the React hook tests run).
 */
export function builtAppPath(buildDir: string, entry: string): string | undefined {
  const rel = relative(repoRoot(), entry);
  const name = (Object.keys(APP_ENTRIES) as AppName[]).find((app) => APP_ENTRIES[app] === rel);
  return name === undefined ? undefined : join(buildDir, `${name}.mjs`);
}
