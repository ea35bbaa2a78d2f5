import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SignJWT, createLocalJWKSet, createRemoteJWKSet, exportJWK, generateKeyPair } from 'jose';
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
type Over = {
  alg?: string;
  kid?: string | null;
  typ?: string;
  extra?: Record<string, unknown>;
  aud?: string;
  iss?: string;
  exp?: number;
  nbf?: number;
  stream?: string;
  redis?: string;
  key?: CryptoKey;
};

function sign(over: Over = {}): Promise<string> {
  const t = now();
  const header: { alg: string; kid?: string; typ?: string } = { alg: over.alg ?? 'ES256' };
  if (over.kid !== null) header.kid = over.kid ?? 'es-1';
  if (over.typ !== undefined) header.typ = over.typ;
  return new SignJWT({ ...over.extra, ver: 1, stream: over.stream ?? 'demo:x', redis: over.redis ?? REDIS })
    .setProtectedHeader(header)
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

  it('refuses a token without kid as token_malformed, even when only one key could match', async () => {
    const single = new TokenVerifier({
      keys: createLocalJWKSet({ keys: [es.jwk] }),
      algorithms: ['ES256'],
      audience: AUD,
      issuer: ISS,
      clockSkewSeconds: 0,
      redisAllowlist: new Set([REDIS]),
    });
    const result = await single.verify(await sign({ kid: null }));
    expect(result).toEqual({ ok: false, error: { code: 'token_malformed', retryable: false, message: 'header: kid is required' } });
    // A kid-less token with a disallowed alg still hears about the alg first.
    expect(await code(`${b64({ alg: 'none' })}.${b64({ ver: 1 })}.`)).toBe('token_algorithm_not_allowed');
  });

  it('refuses a header without alg for its algorithm, and one with crit as malformed', async () => {
    const [, payload, signature] = (await sign()).split('.') as [string, string, string];
    expect(await code(`${b64({ kid: 'es-1' })}.${payload}.${signature}`)).toBe('token_algorithm_not_allowed');
    expect(await code(`${b64({ alg: null, kid: 'es-1' })}.${payload}.${signature}`)).toBe('token_algorithm_not_allowed');
    const signedCrit = await new SignJWT({ ver: 1 })
      .setProtectedHeader({ alg: 'ES256', kid: 'es-1', crit: ['foo'], foo: 1 })
      .sign(es.privateKey, { crit: { foo: true } });
    const refused = await verifier.verify(signedCrit);
    expect(refused).toEqual({
      ok: false,
      error: { code: 'token_malformed', retryable: false, message: 'header: crit names extensions the relay does not support' },
    });
    expect(await code(`${b64({ alg: 'ES256', kid: 'es-1', b64: false, crit: ['b64'] })}.${payload}.${signature}`)).toBe('token_malformed');
  });

  it('refuses a padded signature part and a kid that is not a string as token_malformed', async () => {
    const good = await sign();
    expect(await code(good)).toBe('ok');
    expect(await code(`${good}==`)).toBe('token_malformed');
    const [, payload, signature] = good.split('.') as [string, string, string];
    expect(await code(`${b64({ alg: 'ES256', kid: 5 })}.${payload}.${signature}`)).toBe('token_malformed');
  });

  it('refuses an nbf that is not a number as a claim, not as a token not valid yet', async () => {
    const t = now();
    const claims: Record<string, unknown> = { ver: 1, stream: 'demo:x', redis: REDIS, nbf: 'soon' };
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'es-1' })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setSubject('alice')
      .setIssuedAt(t)
      .setExpirationTime(t + 60)
      .setJti('j')
      .sign(es.privateKey);
    expect(await code(token)).toBe('token_claims_invalid');
  });

  it('answers the first failure in the documented order (docs/protocol.md §10)', async () => {
    const expired = now() - 60;
    expect(await code(await sign({ exp: expired, key: stranger.privateKey }))).toBe('token_signature_invalid');
    expect(await code(await sign({ exp: expired, aud: 'someone-else' }))).toBe('token_audience_invalid');
    expect(await code(await sign({ exp: expired, iss: 'evil', aud: 'someone-else' }))).toBe('token_issuer_invalid');
    expect(await code(await sign({ exp: expired, stream: 'bad stream name!' }))).toBe('token_expired');
    expect(await code(await sign({ nbf: now() + 600, exp: expired }))).toBe('token_not_yet_valid');
    expect(await code(await sign({ stream: 'bad stream name!', redis: 'redis://10.0.0.9:6379/0' }))).toBe('token_claims_invalid');
  });

  it('names the expiry of an expired token', async () => {
    const exp = now() - 60;
    expect(await verifier.verify(await sign({ exp }))).toEqual({
      ok: false,
      error: { code: 'token_expired', retryable: false, message: `token expired at ${exp}` },
    });
  });

  it('answers jwks_unavailable (retryable) when the key set endpoint answers an error status', async () => {
    const server = createServer((_, res) => res.writeHead(503).end('down'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const remote = new TokenVerifier({
        keys: createRemoteJWKSet(new URL(`http://127.0.0.1:${port}/jwks`), { timeoutDuration: 2_000 }),
        algorithms: ['ES256'],
        audience: AUD,
        issuer: ISS,
        clockSkewSeconds: 0,
        redisAllowlist: new Set([REDIS]),
      });
      const result = await remote.verify(await sign());
      expect(result.ok ? 'ok' : `${result.error.code} ${String(result.error.retryable)}`).toBe('jwks_unavailable true');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('ignores typ and claims the schema does not name', async () => {
    for (const typ of ['JWT', 'at+jwt', 'anything']) expect(await code(await sign({ typ }))).toBe('ok');
    const result = await verifier.verify(await sign({ extra: { role: 'admin', scope: ['x'], streams: ['demo:y'] } }));
    expect(result.ok && result.claims).toEqual(expect.not.objectContaining({ role: 'admin' }));
    expect(result.ok && result.claims.stream).toBe('demo:x');
  });

  it('refuses a redis claim carrying credentials as token_claims_invalid naming the claim', async () => {
    for (const redis of ['redis://user:pw@127.0.0.1:6390/0', 'redis://:pw@127.0.0.1:6390/0', 'rediss://user@127.0.0.1:6390/0']) {
      const result = await verifier.verify(await sign({ redis }));
      expect(result.ok ? 'ok' : `${result.error.code}: ${result.error.message}`).toMatch(
        /^token_claims_invalid: claim redis: .*no credentials/,
      );
    }
  });

  it('tolerates the configured clock skew on exp', async () => {
    expect(await code(await sign({ exp: now() - 2 }))).toBe('ok');
  });
});
