import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SigningKeySet } from '@streamgate/server';
import { repoRoot, tsxLoaderUrl } from '@streamgate/testkit';
import { editSigningKeyFile } from '../../scripts/signingKeyFile.js';
import type { ReadText } from '../../scripts/signingKeyFile.js';

const files = new Map<string, string>();
const readText: ReadText = (path) => {
  const text = files.get(path);
  return text === undefined ? { ok: false, message: 'ENOENT' } : { ok: true, text };
};

/** Runs one step and stores its output as the next key file; returns that file's kids, signer first. */
async function step(name: string, ...argv: string[]): Promise<string[]> {
  const result = await editSigningKeyFile(argv, readText);
  if (!result.ok) throw new Error(result.error.message);
  const json = JSON.stringify(result.keys);
  files.set(name, json);
  // Loads in auth exactly as written.
  const loaded = await SigningKeySet.fromJson(json);
  if (!loaded.ok) throw new Error(loaded.error.message);
  return loaded.keys.all.map((k) => k.kid);
}

describe('signing key rotation (scripts/signingKeyFile.ts)', () => {
  it('rotates so that every signing key was published one step before it signs and stays published one step after', async () => {
    const steps = [
      await step('start', 'new', 'k1'),
      await step('published', 'add', 'start', 'k2', 'EdDSA'),
      await step('promoted', 'promote', 'published', 'k2'),
      await step('retired', 'retire', 'promoted', 'k1'),
    ];
    expect(steps).toEqual([['k1'], ['k1', 'k2'], ['k2', 'k1'], ['k2']]);
    for (let i = 1; i < steps.length; i++) {
      const before = steps[i - 1] ?? [];
      const after = steps[i] ?? [];
      // Relays that refreshed their JWKS after the previous step already know the new signer...
      expect(before).toContain(after[0]);
      // ...and tokens the previous signer minted still verify after this step (until retired).
      if (i < steps.length - 1) expect(after).toContain(before[0]);
    }
  });

  it('refuses unsafe or malformed steps with a typed error', async () => {
    await step('single', 'new', 'only');
    files.set('not-keys', '{"hello":1}');
    const cases: Array<[string[], string, RegExp]> = [
      [['retire', 'single', 'only'], 'usage', /is the signing key: promote another key first/],
      [['add', 'single', 'only'], 'usage', /already has a key "only"/],
      [['promote', 'single', 'missing'], 'usage', /has no key "missing" \(it has "only"\)/],
      [['add', 'absent', 'k2'], 'key_file_invalid', /cannot read absent/],
      [['promote', 'not-keys', 'k1'], 'key_file_invalid', /must be a JSON array of private JWKs/],
      [['new', 'k1', 'RS256'], 'usage', /not one of ES256, EdDSA/],
      [['new'], 'usage', /missing <kid>/],
      [['rotate'], 'usage', /unknown command "rotate"/],
      [[], 'usage', /missing command/],
    ];
    for (const [argv, code, message] of cases) {
      const result = await editSigningKeyFile(argv, readText);
      expect(result.ok, argv.join(' ')).toBe(false);
      if (result.ok) continue;
      expect(result.error.code, argv.join(' ')).toBe(code);
      expect(result.error.message, argv.join(' ')).toMatch(message);
    }
  });
});

describe('scripts/signingKeys.ts', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'streamgate-keys-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['--conditions=streamgate-source', '--import', tsxLoaderUrl(), 'scripts/signingKeys.ts', ...args], {
      cwd: repoRoot(),
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('prints only the key file on stdout, and refuses with exit code 2 and a message, not a stack trace', async () => {
    const made = cli('new', 'k1');
    expect(made.status, made.stderr).toBe(0);
    expect(made.stderr).not.toMatch(/"d"\s*:/);
    const loaded = await SigningKeySet.fromJson(made.stdout);
    expect(loaded.ok && loaded.keys.current.kid).toBe('k1');

    const file = join(scratch, 'keys.json');
    writeFileSync(file, made.stdout);
    const refused = cli('retire', file, 'k1');
    expect(refused.status).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/"k1" is the signing key: promote another key first/);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
  });
});
