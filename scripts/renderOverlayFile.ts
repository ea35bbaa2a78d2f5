import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { renderKustomization } from './renderKustomization.js';
import type { RenderError, Renderer } from './renderKustomization.js';

/** What a developer runs to bring deploy/rendered/ back in line with deploy/overlays/. */
export const RENDER_COMMAND = 'npm run manifests:render';

const repo = fileURLToPath(new URL('..', import.meta.url));

export const overlaysDir = join(repo, 'deploy', 'overlays');
export const renderedDir = join(repo, 'deploy', 'rendered');

/** Every overlay, by directory name, sorted so renders and reports come out in a stable order. */
export function overlayNames(): string[] {
  return readdirSync(overlaysDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** The committed render of an overlay: `deploy/rendered/<name>.yaml`. */
export const renderedPath = (name: string): string => join(renderedDir, `${name}.yaml`);

/**
 * The first lines of every committed render. It names no renderer version on purpose: two
 * kustomize v5 releases produce the same objects, and a header that changed with the tool would
 * make every re-render on another machine a diff.
 */
export function renderedHeader(name: string): string {
  return [
    `# GENERATED from deploy/overlays/${name} by \`${RENDER_COMMAND}\` (kustomize build). Do not edit:`,
    '# change the overlay or deploy/base, re-render, and commit both. test/deploy validates this file,',
    '# and checks it equals a fresh render wherever kustomize v5 or kubectl >= 1.27 is on PATH.',
    '',
  ].join('\n');
}

export type RenderFileResult = { ok: true; text: string; renderer: Renderer } | { ok: false; error: RenderError };

type Env = Readonly<Record<string, string | undefined>>;

/** The text `deploy/rendered/<name>.yaml` must hold: the header, then the overlay as kustomize renders it. */
export function renderOverlayFile(name: string, env: Env = process.env): RenderFileResult {
  const rendered = renderKustomization(join(overlaysDir, name), env);
  if (!rendered.ok) return rendered;
  return { ok: true, text: renderedHeader(name) + rendered.yaml, renderer: rendered.renderer };
}
