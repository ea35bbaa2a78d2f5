import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findRenderer } from '../../scripts/renderKustomization.js';
import {
  RENDER_COMMAND,
  overlayNames,
  renderOverlayFile,
  renderedDir,
  renderedHeader,
  renderedPath,
} from '../../scripts/renderOverlayFile.js';
import { diffRenders } from './diffRenders.js';

// The other deploy tests read deploy/rendered/, so they pass on a machine with only Node and npm.
// This file keeps those renders honest: where a renderer is on PATH (it is on CI), each must equal
// a fresh `kustomize build` of its overlay. Without one, that comparison alone is skipped, and
// said so on the console and in the skipped test's name, never passed in silence.
const found = findRenderer();
if (!found.ok) {
  console.warn(
    'test/deploy: SKIPPED comparing deploy/rendered/*.yaml with a fresh kustomize build (the committed renders are still ' +
      `schema-validated and checked by every other test/deploy test): ${found.error.code}: ${found.error.message}`,
  );
}
const skipped = found.ok
  ? ''
  : found.error.code === 'renderer_missing'
    ? 'neither kustomize v5 nor kubectl >= 1.27 is on PATH'
    : 'the kustomize or kubectl on PATH is older than kustomize v5';

const staleHint = (name: string): string =>
  `deploy/rendered/${name}.yaml does not match deploy/overlays/${name}: run \`${RENDER_COMMAND}\`, review \`git diff deploy/rendered\`, and commit it`;

it('deploy/rendered/ holds exactly one render per overlay', () => {
  const files = readdirSync(renderedDir).sort();
  expect(files, `run \`${RENDER_COMMAND}\` and commit deploy/rendered/`).toEqual(
    // Sorted as file names: `prod-cluster.yaml` comes before `prod.yaml`, though `prod` comes before `prod-cluster`.
    overlayNames()
      .map((name) => `${name}.yaml`)
      .sort(),
  );
});

describe.each(overlayNames())('deploy/rendered/%s.yaml', (name) => {
  it('starts with the header that marks it generated and says how to re-render', () => {
    expect(readFileSync(renderedPath(name), 'utf8').startsWith(renderedHeader(name)), staleHint(name)).toBe(true);
  });

  if (found.ok) {
    it(`equals a fresh render by ${found.renderer.version}`, () => {
      const fresh = renderOverlayFile(name);
      if (!fresh.ok) throw new Error(`${fresh.error.code}: ${fresh.error.message}`);
      expect(diffRenders(readFileSync(renderedPath(name), 'utf8'), fresh.text), staleHint(name)).toEqual([]);
    });
  } else {
    it.skip(`equals a fresh render: SKIPPED, ${skipped} (see the warning above; CI has one)`, () => {});
  }
});
