import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** apps/dashboard */
export const DASHBOARD_DIR = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const REPO_ROOT = dirname(dirname(DASHBOARD_DIR));
/** Written into dist/ last: the hash of every input the build read. */
const STAMP = '.build-input.json';

const packageJsonSchema = z.object({ dependencies: z.record(z.string(), z.string()).optional() });
const stampSchema = z.object({ inputHash: z.string() });

export type DashboardBuild = { readonly distDir: string; readonly built: boolean; readonly ms: number };

/** The page's source, the sources of the workspace packages it bundles (read through, transitively) and the lockfile. */
async function inputFiles(): Promise<string[]> {
  const files = [join(DASHBOARD_DIR, 'index.html'), join(DASHBOARD_DIR, 'vite.config.ts'), join(REPO_ROOT, 'pnpm-lock.yaml')];
  const packageDirs = [DASHBOARD_DIR];
  for (let i = 0; i < packageDirs.length; i++) {
    const dir = packageDirs[i] as string;
    files.push(join(dir, 'package.json'));
    const manifest = packageJsonSchema.parse(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')));
    for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
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
  return entries
    .filter((e) => e.isFile() && !/\.test\.tsx?$/.test(e.name) && !e.parentPath.includes('__fixtures__'))
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => !f.startsWith(join(DASHBOARD_DIR, 'src', 'server')));
}

async function inputHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of await inputFiles()) {
    hash.update(relative(REPO_ROOT, file)).update('\0');
    hash.update(await readFile(file)).update('\0');
  }
  return hash.digest('hex');
}

async function builtHash(distDir: string): Promise<string | undefined> {
  try {
    return stampSchema.parse(JSON.parse(await readFile(join(distDir, STAMP), 'utf8'))).inputHash;
  } catch {
    // No dist/, or a half-written or foreign one: it is rebuilt, which is the answer either way.
    return undefined;
  }
}

let building: Promise<DashboardBuild> | undefined;

/**
 * Builds the page with Vite unless dist/ was built from exactly the current inputs (a content
 * hash, not mtimes: a checkout or a copy touches every mtime). The build goes to a directory of
 * its own and is renamed into place, so a server reading dist/ never sees half a build.
 */
export function ensureDashboardBuilt(): Promise<DashboardBuild> {
  building ??= build().finally(() => {
    building = undefined;
  });
  return building;
}

async function build(): Promise<DashboardBuild> {
  const started = performance.now();
  const distDir = join(DASHBOARD_DIR, 'dist');
  const hash = await inputHash();
  if ((await builtHash(distDir)) === hash) return { distDir, built: false, ms: performance.now() - started };
  const outDir = join(DASHBOARD_DIR, `.dist-${process.pid}-${Date.now()}`);
  // Loaded only when a build is due: serving an up-to-date dist/ needs no Vite.
  const vite = await import('vite');
  try {
    await vite.build({
      configFile: join(DASHBOARD_DIR, 'vite.config.ts'),
      root: DASHBOARD_DIR,
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
    });
    await writeFile(join(outDir, STAMP), JSON.stringify({ inputHash: hash }));
    await rm(distDir, { recursive: true, force: true });
    await rename(outDir, distDir);
  } catch (error) {
    await rm(outDir, { recursive: true, force: true });
    // Another process may have put the same build in place between our rm and rename.
    if ((await builtHash(distDir)) !== hash) throw error;
  }
  return { distDir, built: true, ms: performance.now() - started };
}
