import { spawnSync } from 'node:child_process';

/** Kustomize v5 is what the overlays are written for (`labels` with `includeTemplates`, `patches`). */
const MIN_KUSTOMIZE_MAJOR = 5;

export const INSTALL_HINT =
  'install kubectl 1.27 or newer (it bundles kustomize v5: `kubectl kustomize DIR`), or the standalone kustomize v5 binary, ' +
  "and put it on PATH. Debian's kubernetes-client package is kubectl 1.20 (kustomize v2) and too old for these overlays.";

export type RenderError = {
  code: 'renderer_missing' | 'renderer_too_old' | 'render_failed';
  retryable: false;
  message: string;
};

export type Renderer = { command: string; args: readonly string[]; version: string };

export type FindRendererResult = { ok: true; renderer: Renderer } | { ok: false; error: RenderError };
export type RenderResult = { ok: true; yaml: string; renderer: Renderer } | { ok: false; error: RenderError };

type Env = Readonly<Record<string, string | undefined>>;

function run(
  command: string,
  args: readonly string[],
  env: Env,
): { started: boolean; status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', env, timeout: 30_000, maxBuffer: 16 * 1024 * 1024 });
  if (result.error !== undefined) return { started: false, status: null, stdout: '', stderr: result.error.message };
  return { started: true, status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function kustomizeMajor(versionText: string): number | null {
  const match = /v(\d+)\.\d+\.\d+/.exec(versionText);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/**
 * Picks the tool that renders the overlays: a standalone `kustomize` first (what CI images and
 * GitOps controllers run), else `kubectl kustomize`. A machine with neither, or with one too old,
 * gets an error that says what to install; the caller decides what that means (the render script
 * stops, the test comparing the committed renders skips that comparison and says why).
 */
export function findRenderer(env: Env = process.env): FindRendererResult {
  const tried: string[] = [];
  const standalone = run('kustomize', ['version'], env);
  if (standalone.started && standalone.status === 0) {
    const version = standalone.stdout.trim();
    const major = kustomizeMajor(version);
    if (major !== null && major >= MIN_KUSTOMIZE_MAJOR) {
      return { ok: true, renderer: { command: 'kustomize', args: ['build'], version: `kustomize ${version}` } };
    }
    tried.push(`kustomize on PATH reports "${version}", older than v${MIN_KUSTOMIZE_MAJOR}`);
  } else {
    tried.push('no usable `kustomize` on PATH');
  }
  const kubectl = run('kubectl', ['version', '--client'], env);
  if (kubectl.started && kubectl.status === 0) {
    const line = kubectl.stdout.split('\n').find((l) => l.startsWith('Kustomize Version:'));
    const major = line === undefined ? null : kustomizeMajor(line);
    if (line !== undefined && major !== null && major >= MIN_KUSTOMIZE_MAJOR) {
      return { ok: true, renderer: { command: 'kubectl', args: ['kustomize'], version: `kubectl (${line.trim()})` } };
    }
    tried.push(`kubectl on PATH bundles ${line?.trim() ?? 'no kustomize version line'}, older than v${MIN_KUSTOMIZE_MAJOR}`);
    return { ok: false, error: { code: 'renderer_too_old', retryable: false, message: `${tried.join('; ')}: ${INSTALL_HINT}` } };
  }
  tried.push('no usable `kubectl` on PATH');
  return {
    ok: false,
    error: { code: 'renderer_missing', retryable: false, message: `cannot render deploy/ overlays (${tried.join('; ')}): ${INSTALL_HINT}` },
  };
}

/** Renders one kustomization directory to multi-document YAML, offline. */
export function renderKustomization(dir: string, env: Env = process.env): RenderResult {
  const found = findRenderer(env);
  if (!found.ok) return found;
  const { renderer } = found;
  const result = run(renderer.command, [...renderer.args, dir], env);
  if (!result.started || result.status !== 0) {
    return {
      ok: false,
      error: {
        code: 'render_failed',
        retryable: false,
        message: `${renderer.command} ${[...renderer.args, dir].join(' ')} failed (exit ${String(result.status)}): ${result.stderr.trim()}`,
      },
    };
  }
  return { ok: true, yaml: result.stdout, renderer };
}
