import { describe, expect, it } from 'vitest';
import { decodeProtectedHeader } from 'jose';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createJwksHandler } from './createJwksHandler.js';
import { createTokenIssuer } from './createTokenIssuer.js';
import { generateSigningKey } from './generateSigningKey.js';
import { jwksDocument } from './jwksDocument.js';
import { SigningKeySet } from './SigningKeySet.js';

describe('SigningKeySet.reload', () => {
  it('rotates in place: the issuer holding the set signs, and the JWKS publishes, the new keys at once', async () => {
    const old = await generateSigningKey('ES256', 'old');
    const next = await generateSigningKey('ES256', 'next');
    const loaded = await SigningKeySet.fromJson(JSON.stringify([old]));
    if (!loaded.ok) throw new Error(loaded.error.message);
    const keys = loaded.keys;
    const issuer = createTokenIssuer({ keys, issuer: 'auth', audience: 'relay', redis: 'redis://127.0.0.1:6390/0', ttlSeconds: 60 });
    const kidOf = async (): Promise<string | undefined> => {
      const minted = await issuer.issue({ name: 'demo:a', schema: undefined }, { subject: 'alice' });
      return decodeProtectedHeader(minted.token).kid;
    };
    expect(await kidOf()).toBe('old');

    expect((await keys.reload(JSON.stringify([old, next]))).ok).toBe(true);
    expect(jwksDocument(keys).keys.map((k) => k.kid)).toEqual(['old', 'next']);
    expect(await kidOf()).toBe('old');

    expect((await keys.reload(JSON.stringify([next, old]))).ok).toBe(true);
    expect(await kidOf()).toBe('next');

    expect((await keys.reload(JSON.stringify([next]))).ok).toBe(true);
    expect(jwksDocument(keys).keys.map((k) => k.kid)).toEqual(['next']);
  });

  it('the JWKS handler serves the keys in force after a reload', async () => {
    const old = await generateSigningKey('ES256', 'old');
    const next = await generateSigningKey('ES256', 'next');
    const loaded = await SigningKeySet.fromJson(JSON.stringify([old]));
    if (!loaded.ok) throw new Error(loaded.error.message);
    const handler = createJwksHandler(loaded.keys);
    const served = (): string[] => {
      let body = '';
      const res = { writeHead: () => res, end: (text?: string) => void (body = text ?? '') } as unknown as ServerResponse;
      handler({ method: 'GET' } as IncomingMessage, res);
      return (JSON.parse(body) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
    };
    expect(served()).toEqual(['old']);
    await loaded.keys.reload(JSON.stringify([next, old]));
    expect(served()).toEqual(['next', 'old']);
  });

  it('keeps the keys in force when the new text is invalid, and says why', async () => {
    const old = await generateSigningKey('ES256', 'old');
    const loaded = await SigningKeySet.fromJson(JSON.stringify([old]));
    if (!loaded.ok) throw new Error(loaded.error.message);
    const result = await loaded.keys.reload('[{"kid":"x"');
    expect(result).toMatchObject({ ok: false, error: { code: 'signing_keys_invalid', retryable: false } });
    expect(loaded.keys.all.map((k) => k.kid)).toEqual(['old']);
  });
});
