import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { Plugin } from 'esbuild';
import { APP_ENTRIES } from './builtAppPath.js';
import { repoRoot } from './repoRoot.js';

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
