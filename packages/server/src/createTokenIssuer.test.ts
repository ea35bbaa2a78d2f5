import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { CLAIMS_VERSION, defineStream, relayClaimsSchema } from '@streamgate/protocol';
import { placeStream } from '@streamgate/redis';
import type { RelaySubscription } from '@streamgate/protocol';
import { createTokenIssuer } from './createTokenIssuer.js';
import { generateSigningKey } from './generateSigningKey.js';
import { jwksDocument } from './jwksDocument.js';
import { SigningKeySet } from './SigningKeySet.js';

type Reply = { chunk: string };
const replies = defineStream<Reply>('agent-replies');

async function keySet(...algs: Array<'ES256' | 'EdDSA'>): Promise<SigningKeySet> {
  const jwks = await Promise.all(algs.map((alg, i) => generateSigningKey(alg, `${alg.toLowerCase()}-${i}`)));
  const result = await SigningKeySet.fromJwks(jwks);
  if (!result.ok) throw new Error(result.error.message);
  return result.keys;
}

const base = { issuer: 'https://auth.test', audience: 'streamgate-relay', redis: 'redis://Streams.internal' };

describe('createTokenIssuer', () => {
  it.each(['ES256', 'EdDSA'] as const)('mints %s tokens whose claims match relayClaimsSchema', async (alg) => {
    const keys = await keySet(alg);
    const issuer = createTokenIssuer({ ...base, keys, ttlSeconds: 120 });
    const before = Math.floor(Date.now() / 1000);
    const sub: RelaySubscription<Reply> = await issuer.issue(replies.for('run', 7), { subject: 'user-1' });

    const { payload, protectedHeader } = await jwtVerify(sub.token, createLocalJWKSet(jwksDocument(keys)), {
      issuer: base.issuer,
      audience: base.audience,
      algorithms: [alg],
    });
    expect(protectedHeader).toEqual({ alg, kid: keys.current.kid, typ: 'JWT' });
    const claims = relayClaimsSchema.parse(payload);
    expect(Object.keys(payload).sort()).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'nbf', 'redis', 'stream', 'sub', 'ver']);
    expect(claims).toMatchObject({
      iss: base.issuer,
      aud: base.audience,
      sub: 'user-1',
      ver: CLAIMS_VERSION,
      stream: 'agent-replies:run:7',
      redis: 'redis://streams.internal:6379/0',
    });
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(claims.nbf).toBe(claims.iat);
    expect(claims.exp).toBe(claims.iat + 120);
    expect(sub).toEqual({ token: sub.token, stream: 'agent-replies:run:7', expiresAt: claims.exp * 1000 });
  });

  it('gives every token its own jti and honours per-token redis and ttl', async () => {
    const keys = await keySet('ES256');
    const issuer = createTokenIssuer({ ...base, keys, now: () => 1_700_000_000_000 });
    const a = await issuer.issue(replies, { subject: 's' });
    const b = await issuer.issue(replies, { subject: 's', redis: 'rediss://other:6380/2', ttlSeconds: 30 });
    const pa = relayClaimsSchema.parse(decodeClaims(a.token));
    const pb = relayClaimsSchema.parse(decodeClaims(b.token));
    expect(pa.jti).not.toBe(pb.jti);
    expect(pa.exp).toBe(1_700_000_000 + 300);
    expect(pb).toMatchObject({ redis: 'rediss://other:6380/2', exp: 1_700_000_000 + 30 });
  });

  it('signs with the first key while verifiers holding either key accept it (rotation)', async () => {
    const keys = await keySet('EdDSA', 'ES256');
    const sub = await createTokenIssuer({ ...base, keys }).issue(replies, { subject: 's' });
    expect(decodeProtectedHeader(sub.token).kid).toBe(keys.all[0]?.kid);
    expect(jwksDocument(keys).keys).toHaveLength(2);
  });

  it('refuses credentials in the redis target and invalid subjects', async () => {
    const keys = await keySet('ES256');
    expect(() => createTokenIssuer({ ...base, keys, redis: 'redis://user:pw@r:6379' })).toThrow(/no credentials/);
    expect(() => createTokenIssuer({ ...base, keys, ttlSeconds: 0 })).toThrow(/ttlSeconds/);
    const issuer = createTokenIssuer({ ...base, keys });
    await expect(issuer.issue(replies, { subject: 's', redis: 'redis://:pw@r' })).rejects.toThrow(/no credentials/);
    await expect(issuer.issue(replies, { subject: '' })).rejects.toThrow(/sub/);
  });
});

describe('createTokenIssuer with several Redis targets', () => {
  const four = ['redis://R0:6379', 'redis://r1:6379/0', 'redis://r2', 'redis://r3:6379/0'];
  const normalized = ['redis://r0:6379/0', 'redis://r1:6379/0', 'redis://r2:6379/0', 'redis://r3:6379/0'];

  it('names each stream’s placeStream target of the normalized list', async () => {
    const issuer = createTokenIssuer({ ...base, keys: await keySet('ES256'), redis: four });
    const seen = new Set<string>();
    for (let i = 0; i < 40; i += 1) {
      const ref = replies.for('run', i);
      const claims = relayClaimsSchema.parse(decodeClaims((await issuer.issue(ref, { subject: 's' })).token));
      expect(claims.redis).toBe(placeStream(ref.name, normalized));
      seen.add(claims.redis);
    }
    expect(seen.size).toBe(4);
  });

  it('asks a per-stream function, and names a cluster as its seed URL', async () => {
    const asked: string[] = [];
    const issuer = createTokenIssuer({
      ...base,
      keys: await keySet('ES256'),
      redis: (stream) => {
        asked.push(stream);
        return stream.endsWith(':vip') ? 'redis-cluster://Big:7000/0' : 'redis://small:6379';
      },
    });
    const vip = relayClaimsSchema.parse(decodeClaims((await issuer.issue(replies.for('vip'), { subject: 's' })).token));
    const other = relayClaimsSchema.parse(decodeClaims((await issuer.issue(replies.for('x'), { subject: 's' })).token));
    expect([vip.redis, other.redis]).toEqual(['redis-cluster://big:7000', 'redis://small:6379/0']);
    expect(asked).toEqual(['agent-replies:vip', 'agent-replies:x']);
    const bad = createTokenIssuer({ ...base, keys: await keySet('ES256'), redis: () => 'redis://u:pw@r' });
    await expect(bad.issue(replies, { subject: 's' })).rejects.toThrow(/redis\("agent-replies"\) must be/);
  });

  it('refuses an empty list, a repeated target and a bad entry at construction', async () => {
    const keys = await keySet('ES256');
    expect(() => createTokenIssuer({ ...base, keys, redis: [] })).toThrow(/at least one/);
    expect(() => createTokenIssuer({ ...base, keys, redis: ['redis://a', 'redis://A:6379/0'] })).toThrow(/twice/);
    expect(() => createTokenIssuer({ ...base, keys, redis: ['redis://a', 'http://b'] })).toThrow(/redis\[1\]/);
  });
});

function decodeClaims(token: string): unknown {
  const part = token.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}
