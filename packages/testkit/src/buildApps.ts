import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { Plugin } from 'esbuild';
import { repoRoot } from './repoRoot.js';

/** The app entry points tests spawn (spawnApps.ts, spawnIngest.ts), each built to `<name>.mjs`. */
export const APP_ENTRIES = {
  auth: 'apps/auth/src/main.ts',
  dashboard: 'apps/dashboard/src/main.ts',
  ingest: 'apps/ingest/src/main.ts',
  relay: 'apps/relay/src/main.ts',
} as const;

export type AppName = keyof typeof APP_ENTRIES;

/** The built file for a source entry in `buildDir`, or undefined if the entry is not an app built here. */
export function builtAppPath(buildDir: string, entry: string): string | undefined {
  const rel = relative(repoRoot(), entry);
  const name = (Object.keys(APP_ENTRIES) as AppName[]).find((app) => APP_ENTRIES[app] === rel);
  return name === undefined ? undefined : join(buildDir, `${name}.mjs`);
}

const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);

/**
 * Workspace source is bundled (resolved through `streamgate-source`, as tests resolve it);
 * every third-party import stays external, pointed at the exact file Node would load from the
 * importing package, so pnpm's strict layout and native addons (uWebSockets.js) work unchanged
 * from a bundle in any directory.
 */
const externalDependencies: Plugin = {
  name: 'external-dependencies',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (builtins.has(args.path)) return { path: args.path, external: true };
      if (args.path.startsWith('@streamgate/') || args.pluginData === 'resolving') return undefined;
      const resolved = await pluginBuild.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'resolving',
      });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      return { path: pathToFileURL(resolved.path).href, external: true };
    });
  },
};

/**
 * Each source file keeps its own `import.meta.url`, so code that finds files beside itself (the
 * dashboard's page directory, the relay's uWS `createRequire`) behaves as when run from source.
 */
const ownImportMetaUrl: Plugin = {
  name: 'own-import-meta-url',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /\.tsx?$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const contents = source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href));
      return { contents, loader: args.path.endsWith('x') ? 'tsx' : 'ts' };
    });
  },
};

/**
 * Bundles every app in APP_ENTRIES into `outDir` once, so a test run spawns plain `node <app>.mjs`
 * rather than compiling the workspace's TypeScript through tsx in every spawned process.
 */
export async function buildApps(outDir: string): Promise<void> {
  const root = repoRoot();
  await build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(APP_ENTRIES).map(([name, entry]) => [name, join(root, entry)])),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['streamgate-source'],
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [externalDependencies, ownImportMetaUrl],
  });
}
