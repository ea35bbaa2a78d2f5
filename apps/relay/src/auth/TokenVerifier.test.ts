import { describe, expect, it } from 'vitest';
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { TokenVerifier } from './TokenVerifier.js';

const AUD = 'relay';
const ISS = 'auth';
const REDIS = 'redis://127.0.0.1:6390/0';

async function keyPair(alg: 'ES256' | 'EdDSA', kid: string): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

const es = await keyPair('ES256', 'es-1');
const ed = await keyPair('EdDSA', 'ed-1');
const stranger = await keyPair('ES256', 'stranger');
const verifier = new TokenVerifier({
  keys: createLocalJWKSet({ keys: [es.jwk, ed.jwk] }),
  algorithms: ['ES256', 'EdDSA'],
  audience: AUD,
  issuer: ISS,
  clockSkewSeconds: 5,
  redisAllowlist: new Set([REDIS]),
});

const now = (): number => Math.floor(Date.now() / 1000);
type Over = { alg?: string; kid?: string; aud?: string; iss?: string; exp?: number; nbf?: number; stream?: string; redis?: string; key?: CryptoKey };

function sign(over: Over = {}): Promise<string> {
  const t = now();
  return new SignJWT({ ver: 1, stream: over.stream ?? 'demo:x', redis: over.redis ?? REDIS })
    .setProtectedHeader({ alg: over.alg ?? 'ES256', kid: over.kid ?? 'es-1' })
    .setIssuer(over.iss ?? ISS)
    .setAudience(over.aud ?? AUD)
    .setSubject('alice')
    .setIssuedAt(t)
    .setNotBefore(over.nbf ?? t)
    .setExpirationTime(over.exp ?? t + 60)
    .setJti('j')
    .sign(over.key ?? es.privateKey);
}

function b64(json: unknown): string {
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

async function code(token: string): Promise<string> {
  const result = await verifier.verify(token);
  return result.ok ? 'ok' : result.error.code;
}

describe('TokenVerifier', () => {
  it('accepts ES256 and EdDSA tokens with the right claims', async () => {
    const result = await verifier.verify(await sign());
    expect(result.ok && result.claims).toMatchObject({ sub: 'alice', stream: 'demo:x', redis: REDIS });
    expect(await code(await sign({ alg: 'EdDSA', kid: 'ed-1', key: ed.privateKey }))).toBe('ok');
  });

  it('refuses each forgery and misuse with its own code', async () => {
    const good = await sign();
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const publicKeyAsSecret = new TextEncoder().encode(JSON.stringify(es.jwk));
    const hs256 = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'es-1' }).sign(publicKeyAsSecret);

    const cases: Array<[string, string | Promise<string>]> = [
      ['token_malformed', 'garbage'],
      ['token_malformed', 'a.b.c'],
      ['token_algorithm_not_allowed', `${b64({ alg: 'none', kid: 'es-1' })}.${payload}.`],
      ['token_algorithm_not_allowed', hs256],
      ['token_audience_invalid', sign({ aud: 'someone-else' })],
      ['token_issuer_invalid', sign({ iss: 'evil' })],
      ['token_expired', sign({ exp: now() - 60 })],
      ['token_not_yet_valid', sign({ nbf: now() + 600 })],
      ['token_kid_unknown', sign({ kid: 'stranger', key: stranger.privateKey })],
      ['token_signature_invalid', `${header}.${b64({ ...claims, stream: 'demo:other' })}.${signature}`],
      ['token_signature_invalid', sign({ key: stranger.privateKey })],
      ['token_claims_invalid', sign({ stream: 'bad stream name!' })],
      ['redis_not_allowed', sign({ redis: 'redis://10.0.0.9:6379/0' })],
      ['token_claims_invalid', sign({ redis: 'redis://user:pw@127.0.0.1:6390/0' })],
    ];
    for (const [expected, token] of cases) expect(`${expected} <- ${await code(await token)}`).toBe(`${expected} <- ${expected}`);
  });

  it('tolerates the configured clock skew on exp', async () => {
    expect(await code(await sign({ exp: now() - 2 }))).toBe('ok');
  });
});
