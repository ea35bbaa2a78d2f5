import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJwksHandler } from './createJwksHandler.js';
import { generateSigningKey } from './generateSigningKey.js';
import { jwksDocument } from './jwksDocument.js';
import { SigningKeySet } from './SigningKeySet.js';

describe('createJwksHandler', () => {
  let keys: SigningKeySet;
  const server = createServer();
  let url = '';

  beforeAll(async () => {
    const result = await SigningKeySet.fromJwks([await generateSigningKey('ES256', 'k')]);
    if (!result.ok) throw new Error(result.error.message);
    keys = result.keys;
    server.on('request', createJwksHandler(keys, { maxAgeSeconds: 60 }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('serves the public JWKS with a cache lifetime', async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    expect(res.headers.get('content-type')).toBe('application/jwk-set+json');
    expect(await res.json()).toEqual(jwksDocument(keys));
  });

  it('refuses other methods', async () => {
    const res = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(5000) });
    expect(res.status).toBe(405);
  });
});
