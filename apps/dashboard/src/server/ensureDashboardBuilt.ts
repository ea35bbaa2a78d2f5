import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** apps/dashboard in the repository (from src/server/), the app's root in the image (from dist/server/). */
export const DASHBOARD_DIR = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
/** Where the page is built to and served from: beside the server's compiled dist/*.js. */
export const DASHBOARD_PAGE_DIR = join(DASHBOARD_DIR, 'dist', 'page');
const REPO_ROOT = dirname(dirname(DASHBOARD_DIR));
/** Written into the page directory last: the hash of every input the build read. */
const STAMP = '.build-input.json';

const dependencyMap = z.record(z.string(), z.string()).optional();
const packageJsonSchema = z.object({ dependencies: dependencyMap, devDependencies: dependencyMap });
const stampSchema = z.object({ inputHash: z.string() });

export type DashboardBuild = { readonly pageDir: string; readonly built: boolean; readonly ms: number };

/**
 * The page's source, the sources of the workspace packages it bundles (read through, transitively)
 * and the lockfile. The page is built, never run: what it bundles is among the dashboard's
 * devDependencies, while its dependencies are the server's (what the image ships), so they are not
 * inputs; in the packages it bundles, dependencies are what gets bundled.
 */
async function inputFiles(): Promise<string[]> {
  const files = [join(DASHBOARD_DIR, 'index.html'), join(DASHBOARD_DIR, 'vite.config.ts'), join(REPO_ROOT, 'pnpm-lock.yaml')];
  const packageDirs = [DASHBOARD_DIR];
  for (let i = 0; i < packageDirs.length; i++) {
    const dir = packageDirs[i] as string;
    files.push(join(dir, 'package.json'));
    const manifest = packageJsonSchema.parse(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')));
    const bundled = dir === DASHBOARD_DIR ? manifest.devDependencies : manifest.dependencies;
    for (const [name, range] of Object.entries(bundled ?? {})) {
      if (!range.startsWith('workspace:') || !name.startsWith('@streamgate/')) continue;
      const workspaceDir = join(REPO_ROOT, 'packages', name.slice('@streamgate/'.length));
      if (existsSync(workspaceDir) && !packageDirs.includes(workspaceDir)) packageDirs.push(workspaceDir);
    }
    files.push(...(await sourceFiles(join(dir, 'src'))));
  }
  return files.filter((f) => existsSync(f)).sort();
}

async function sourceFiles(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return (
    entries
      .filter((e) => e.isFile() && !/\.test\.tsx?$/.test(e.name) && !e.parentPath.includes('__fixtures__'))
      .map((e) => join(e.parentPath, e.name))
      // The server's code (src/main.ts and src/server/) is no part of the page.
      .filter((f) => f !== join(DASHBOARD_DIR, 'src', 'main.ts') && !f.startsWith(join(DASHBOARD_DIR, 'src', 'server')))
  );
}

async function inputHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of await inputFiles()) {
    hash.update(relative(REPO_ROOT, file)).update('\0');
    hash.update(await readFile(file)).update('\0');
  }
  return hash.digest('hex');
}

async function builtHash(pageDir: string): Promise<string | undefined> {
  try {
    return stampSchema.parse(JSON.parse(await readFile(join(pageDir, STAMP), 'utf8'))).inputHash;
  } catch {
    // No page, or a half-written or foreign one (`pnpm build` writes no stamp): it is rebuilt, which is the answer either way.
    return undefined;
  }
}

let building: Promise<DashboardBuild> | undefined;

/**
 * Builds the page with Vite into dist/page unless it was built from exactly the current inputs (a
 * content hash, not mtimes: a checkout or a copy touches every mtime). The build goes to a
 * directory of its own and is renamed into place, so a server reading dist/page never sees half a
 * build. For the repository (tests, the fleet); the image's page is built once, by `pnpm build`.
 */
export function ensureDashboardBuilt(): Promise<DashboardBuild> {
  building ??= build().finally(() => {
    building = undefined;
  });
  return building;
}

async function build(): Promise<DashboardBuild> {
  const started = performance.now();
  const pageDir = DASHBOARD_PAGE_DIR;
  const hash = await inputHash();
  if ((await builtHash(pageDir)) === hash) return { pageDir, built: false, ms: performance.now() - started };
  // In dist/ beside the page, so the rename stays on one file system; a dot name, never served.
  const outDir = join(dirname(pageDir), `.page-${process.pid}-${Date.now()}`);
  await mkdir(dirname(pageDir), { recursive: true });
  // Loaded only when a build is due: serving an up-to-date page needs no Vite.
  const vite = await import('vite');
  try {
    await vite.build({
      configFile: join(DASHBOARD_DIR, 'vite.config.ts'),
      root: DASHBOARD_DIR,
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
    });
    await writeFile(join(outDir, STAMP), JSON.stringify({ inputHash: hash }));
    await rm(pageDir, { recursive: true, force: true });
    await rename(outDir, pageDir);
  } catch (error) {
    await rm(outDir, { recursive: true, force: true });
    // Another process may have put the same build in place between our rm and rename.
    if ((await builtHash(pageDir)) !== hash) throw error;
  }
  return { pageDir, built: true, ms: performance.now() - started };
}
