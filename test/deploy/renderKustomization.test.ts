import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findRenderer, renderKustomization } from '../../scripts/renderKustomization.js';

const scratch = mkdtempSync(join(tmpdir(), 'streamgate-kustomize-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('renderKustomization', () => {
  it('says what to install when neither kustomize nor kubectl is on PATH, instead of skipping', () => {
    const emptyBin = join(scratch, 'empty-bin');
    mkdirSync(emptyBin);
    const result = findRenderer({ PATH: emptyBin });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('renderer_missing');
    expect(result.error.message).toMatch(/install kubectl 1\.27 or newer/);
    expect(result.error.message).toMatch(/standalone kustomize v5/);
  });

  it("refuses a kubectl whose bundled kustomize is older than v5 (Debian's kubectl 1.20)", () => {
    // A stand-in for that kubectl: only its version report matters to the check.
    const oldBin = join(scratch, 'old-bin');
    mkdirSync(oldBin);
    const kubectl = join(oldBin, 'kubectl');
    writeFileSync(kubectl, '#!/bin/sh\necho "Client Version: v1.20.2"\necho "Kustomize Version: v2.0.3"\n');
    chmodSync(kubectl, 0o755);
    const result = findRenderer({ PATH: oldBin });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('renderer_too_old');
    expect(result.error.message).toContain('Kustomize Version: v2.0.3');
  });

  // Needs a renderer to produce the error; without one, renderedManifests.test.ts prints why
  // (this machine lacks kustomize/kubectl) and this test is skipped with it.
  it.skipIf(!findRenderer().ok)("reports kustomize's own error for a broken kustomization (skipped when no renderer is on PATH)", () => {
    const broken = join(scratch, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'kustomization.yaml'), 'resources:\n  - missing.yaml\n');
    const result = renderKustomization(broken);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('render_failed');
    expect(result.error.message).toContain('missing.yaml');
  });
});
