import { initTRPC } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { generateSigningKey, SigningKeySet } from '@streamgate/server';
import { createAuthServer } from './createAuthServer.js';

async function serve(cors: { origins: string[]; credentials: boolean; maxAgeSeconds: number }) {
  const loaded = await SigningKeySet.fromJwks([await generateSigningKey('ES256', 'k')]);
  if (!loaded.ok) throw new Error(loaded.error.message);
  const t = initTRPC.create({ isDev: false });
  const router = t.router({ ping: t.procedure.query(() => 'pong') });
  return createAuthServer({ trpc: { router }, keys: loaded.keys, host: '127.0.0.1', port: 0, cors });
}

const preflight = (port: number, origin: string) =>
  fetch(`http://127.0.0.1:${port}/trpc/ping`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'GET' },
    signal: AbortSignal.timeout(5000),
  });

describe('CorsPolicy in the auth server', () => {
  it('answers any origin with * and never with credentials', async () => {
    // The config refuses credentials with *; the policy holds the line on its own as well.
    await using server = await serve({ origins: ['*'], credentials: true, maxAgeSeconds: 60 });
    const res = await preflight(server.port, 'https://anyone.example');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('access-control-max-age')).toBe('60');
    const get = await fetch(`http://127.0.0.1:${server.port}/trpc/ping`, {
      headers: { origin: 'https://anyone.example' },
      signal: AbortSignal.timeout(5000),
    });
    expect(await get.json()).toEqual({ result: { data: 'pong' } });
    expect(get.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('matches origins exactly: another port or scheme is another origin', async () => {
    await using server = await serve({ origins: ['https://app.example'], credentials: false, maxAgeSeconds: 600 });
    expect((await preflight(server.port, 'https://app.example')).status).toBe(204);
    expect((await preflight(server.port, 'http://app.example')).status).toBe(403);
    expect((await preflight(server.port, 'https://app.example:8443')).status).toBe(403);
    expect((await preflight(server.port, 'https://app.example.evil.example')).status).toBe(403);
  });

  it('leaves paths outside /trpc alone', async () => {
    await using server = await serve({ origins: ['https://app.example'], credentials: false, maxAgeSeconds: 600 });
    const res = await fetch(`http://127.0.0.1:${server.port}/healthz`, {
      headers: { origin: 'https://app.example' },
      signal: AbortSignal.timeout(5000),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
