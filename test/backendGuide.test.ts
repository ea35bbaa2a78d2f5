import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import type { RelaySubscription } from '@streamgate/protocol';
import { createPublisher, generateSigningKey } from '@streamgate/server';
import { spawnRelay, startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer, RelayProcess } from '@streamgate/testkit';
import { orderUpdates, startProductBackend } from './examples/productBackend.js';
import type { ProductBackend, ProductRouter } from './examples/productBackend.js';

const ISSUER = 'https://shop.example';
const AUDIENCE = 'streamgate-relay';
const sessions = new Map([
  ['s-alice', { id: 'alice' }],
  ['s-bob', { id: 'bob' }],
]);
const owners = new Map([['o-1', 'alice']]);

describe('docs/backend-guide.md: a product backend mounting relayTokenProcedure, against a real relay', () => {
  let redis: RedisServer;
  let backend: ProductBackend;
  let relay: RelayProcess;
  let keyDir = '';

  const clientFor = (session: string | null) =>
    createTRPCClient<ProductRouter>({
      links: [
        httpBatchLink({
          url: `${backend.url}/trpc`,
          headers: session === null ? {} : { authorization: `Bearer ${session}` },
          fetch: (url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(5000) }),
        }),
      ],
    });

  beforeAll(async () => {
    redis = await startRedis();
    keyDir = await mkdtemp(join(tmpdir(), 'backend-guide-'));
    await writeFile(join(keyDir, 'keys.json'), JSON.stringify([await generateSigningKey('ES256', 'shop-1')]));
    backend = await startProductBackend({
      services: {
        userFromSession: (token) => Promise.resolve(sessions.get(token) ?? null),
        ownerOfOrder: (orderId) => Promise.resolve(owners.get(orderId) ?? null),
      },
      signingKeysFile: join(keyDir, 'keys.json'),
      issuer: ISSUER,
      audience: AUDIENCE,
      redisUrl: redis.url,
      host: '127.0.0.1',
      port: 0,
    });
    // The relay trusts the product backend's JWKS: no streamgate auth service in between.
    relay = await spawnRelay({ name: 'guide-relay', authUrl: backend.url, issuer: ISSUER, audience: AUDIENCE, redisAllowlist: redis.url });
    await waitFor(async () => (await fetch(`${relay.httpUrl}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      message: 'the relay never became ready against the product backend JWKS',
    });
  });
  afterAll(async () => {
    await relay?.service.stop();
    await backend?.close();
    await redis?.stop();
    if (keyDir !== '') await rm(keyDir, { recursive: true, force: true });
  });

  it("runs the product's own authorization: no session, someone else's order", async () => {
    await expect(clientFor(null).orders.updatesToken.query({ orderId: 'o-1' })).rejects.toMatchObject({ data: { code: 'UNAUTHORIZED' } });
    const error: unknown = await clientFor('s-bob')
      .orders.updatesToken.query({ orderId: 'o-1' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({ message: 'not your order', data: { code: 'FORBIDDEN' } });
    // Outside development the error carries no stack trace.
    expect(JSON.stringify(error)).not.toContain('"stack"');
    expect(await clientFor('s-bob').orders.owner.query({ orderId: 'o-1' })).toBe('alice');
  });

  it("delivers the stream's events to the owner through the relay, typed from the router", async () => {
    const alice = clientFor('s-alice');
    const sub = await alice.orders.updatesToken.query({ orderId: 'o-1' });
    expectTypeOf(sub).toEqualTypeOf<RelaySubscription<{ orderId: string; status: string }>>();
    expect(sub.stream).toBe('orders:o-1');

    const client = new RelayClient({ urls: [relay.url], WebSocket });
    const seen: string[] = [];
    client.subscribe({
      getToken: () => alice.orders.updatesToken.query({ orderId: 'o-1' }),
      onEvent: (event) => seen.push(event.status),
    });
    const publisher = createPublisher({ redis: redis.client() });
    try {
      await waitFor(
        async () => {
          const result = await publisher.publish(orderUpdates.for('o-1'), { orderId: 'o-1', status: 'shipped' });
          if (!result.ok) throw new Error(result.error.message);
          return seen.includes('shipped');
        },
        { timeoutMs: 20_000, intervalMs: 200, message: 'the owner never received the order update' },
      );
    } finally {
      client.close();
      await publisher.close();
    }
  });
});
