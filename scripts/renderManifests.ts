/**
 * Renders every overlay under deploy/overlays into deploy/rendered/<overlay>.yaml, the files
 * test/deploy validates on every machine (kubectl and kustomize are not needed to run the tests,
 * only to re-render). Run after changing anything under deploy/base or deploy/overlays, then
 * commit the renders with the change:
 *
 *   npm run manifests:render
 *
 * Needs kustomize v5 or kubectl >= 1.27 on PATH. Renders every overlay before writing any, so a
 * failure leaves deploy/rendered/ as it was; removes the render of an overlay that is gone.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import process from 'node:process';
import { overlayNames, renderOverlayFile, renderedDir, renderedPath } from './renderOverlayFile.js';

const renders: { name: string; text: string }[] = [];
for (const name of overlayNames()) {
  const result = renderOverlayFile(name);
  if (!result.ok) {
    process.stderr.write(`manifests:render: deploy/overlays/${name}: ${result.error.code}: ${result.error.message}\n`);
    process.stderr.write('manifests:render: nothing written\n');
    process.exit(1);
  }
  if (renders.length === 0) process.stdout.write(`manifests:render: rendering with ${result.renderer.version}\n`);
  renders.push({ name, text: result.text });
}

mkdirSync(renderedDir, { recursive: true });
let changed = false;
const shown = (path: string): string => relative(process.cwd(), path) || path;
for (const { name, text } of renders) {
  const path = renderedPath(name);
  const before = existsSync(path) ? readFileSync(path, 'utf8') : null;
  if (before === text) {
    process.stdout.write(`${shown(path)}: unchanged\n`);
    continue;
  }
  writeFileSync(path, text);
  changed = true;
  process.stdout.write(`${shown(path)}: ${before === null ? 'created' : 'updated'}\n`);
}

const expected = new Set(renders.map(({ name }) => `${name}.yaml`));
for (const file of readdirSync(renderedDir)) {
  if (file.endsWith('.yaml') && !expected.has(file)) {
    const path = renderedPath(file.slice(0, -'.yaml'.length));
    rmSync(path);
    changed = true;
    process.stdout.write(`${shown(path)}: removed (no such overlay)\n`);
  }
}
if (changed) process.stdout.write('manifests:render: review `git diff deploy/rendered` and commit it with the overlay change\n');
