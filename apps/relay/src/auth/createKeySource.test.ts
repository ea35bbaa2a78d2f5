import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { waitFor } from '@streamgate/testkit';
import { createKeySource } from './createKeySource.js';
import type { KeyFileReload } from './createKeySource.js';
import { TokenVerifier } from './TokenVerifier.js';

const REDIS = 'redis://127.0.0.1:6390/0';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function keyPair(kid: string): Promise<{ privateKey: CryptoKey; jwk: JWK; kid: string }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, kid, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

async function token(key: { privateKey: CryptoKey; kid: string }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ver: 1, stream: 'demo:a', redis: REDIS })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid })
    .setIssuer('auth')
    .setAudience('relay')
    .setSubject('alice')
    .setIssuedAt(now)
    .setExpirationTime(now + 60)
    .setJti(`j-${Math.random()}`)
    .sign(key.privateKey);
}

describe('createKeySource (file)', () => {
  it('follows RELAY_JWKS_FILE as it changes and keeps the keys in force when a rewrite is invalid', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-jwks-'));
    dirs.push(dir);
    const path = join(dir, 'jwks.json');
    const k1 = await keyPair('k1');
    const k2 = await keyPair('k2');
    writeFileSync(path, JSON.stringify({ keys: [k1.jwk] }));
    const reloads: KeyFileReload[] = [];
    const errors: Error[] = [];
    const source = createKeySource({ kind: 'file', path, pollMs: 100, onReload: (r) => reloads.push(r) }, (e) => errors.push(e));
    const verifier = new TokenVerifier({
      keys: source.getKey,
      algorithms: ['ES256'],
      audience: 'relay',
      issuer: 'auth',
      clockSkewSeconds: 0,
      redisAllowlist: new Set([REDIS]),
    });
    try {
      expect((await verifier.verify(await token(k1))).ok).toBe(true);
      expect(await verifier.verify(await token(k2))).toMatchObject({ ok: false, error: { code: 'token_kid_unknown' } });

      writeFileSync(path, JSON.stringify({ keys: [k1.jwk, k2.jwk] }));
      await waitFor(() => reloads.length === 1, { timeoutMs: 5_000, message: 'the added key was not loaded' });
      expect(reloads[0]).toEqual({ outcome: 'loaded', kids: ['k1', 'k2'] });
      expect((await verifier.verify(await token(k2))).ok).toBe(true);

      writeFileSync(path, '{"keys": [ not json');
      await waitFor(() => reloads.length === 2, { timeoutMs: 5_000, message: 'the invalid file was not reported' });
      expect(reloads[1]).toMatchObject({ outcome: 'invalid' });
      expect((await verifier.verify(await token(k1))).ok).toBe(true);
      expect((await verifier.verify(await token(k2))).ok).toBe(true);

      writeFileSync(path, JSON.stringify({ keys: [k2.jwk] }));
      // A poll may catch the in-place rewrite half done (reported invalid, keys kept): wait for the
      // load of the whole file, not for a count of reloads.
      await waitFor(() => reloads.at(-1)?.outcome === 'loaded' && reloads.length >= 3, {
        timeoutMs: 5_000,
        message: 'the removal was not loaded',
      });
      expect(reloads.at(-1)).toEqual({ outcome: 'loaded', kids: ['k2'] });
      expect(await verifier.verify(await token(k1))).toMatchObject({ ok: false, error: { code: 'token_kid_unknown' } });
      expect((await verifier.verify(await token(k2))).ok).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      source.close();
    }
  });
});
