import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import { spawnIngest, startAnvil, startFaultProxy, waitFor } from '@streamgate/testkit';
import type { AnvilNode, AppProcess, FaultProxy } from '@streamgate/testkit';
import { FAST_WORKER_ENV, testChain } from './support/ingestHarness.js';
import { LOG_TOPIC, deployLogEmitter, emitLog } from '@streamgate/fleet';
import { mintToken } from './support/mintToken.js';
import { useFleet } from './support/startFleet.js';
import { ingestKeys } from '@streamgate/ingest-core/redis';

const getFleet = useFleet({
  relays: 2,
  relayEnv: { RELAY_DEMAND_PREFIXES: 'evm:', RELAY_DEMAND_INTERVAL_MS: '300', RELAY_DEMAND_TTL_MS: '2000' },
});
let anvil: AnvilNode;
let proxy: FaultProxy;
let emitter: string;
const workers: AppProcess[] = [];
const STREAM = 'evm:anvil:fanin';

beforeAll(async () => {
  anvil = await startAnvil();
  proxy = await startFaultProxy(anvil);
  emitter = await deployLogEmitter(anvil);
});
afterAll(async () => {
  for (const w of workers) await w.service.stop();
  await proxy?.close();
  await anvil?.stop();
});

const totalSubscribes = () => [...proxy.subscribeCalls.values()].reduce((a, b) => a + b, 0);

describe('demand from relays drives one upstream subscription per key', () => {
  it('1,000 subscribers of one filter on two relays make one eth_subscribe, ended after the grace period', async () => {
    const fleet = getFleet();
    for (const name of ['fanin-a', 'fanin-b']) {
      workers.push(
        await spawnIngest({
          name,
          redisUrl: fleet.redis.url,
          topology: {
            chains: { anvil: testChain([proxy]) },
            streams: [{ stream: STREAM, chain: 'anvil', kind: 'logs', filter: { address: emitter, topics: [LOG_TOPIC] } }],
          },
          env: FAST_WORKER_ENV,
        }),
      );
    }
    expect(totalSubscribes()).toBe(0);
    const clients: RelayClient[] = [];
    const subs: { state: string }[] = [];
    let received = 0;
    for (let c = 0; c < 10; c++) {
      const relay = fleet.relays[c % 2];
      if (relay === undefined) throw new Error('no relay');
      const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
      clients.push(client);
      for (let s = 0; s < 100; s++) {
        subs.push(
          client.subscribe({
            getToken: async () => ({
              token: await mintToken(fleet.signingKey, { stream: STREAM, redis: fleet.redis.url, sub: `viewer-${c}-${s}` }),
              stream: STREAM,
              expiresAt: Date.now() + 300_000,
            }),
            onEvent: () => (received += 1),
          }),
        );
      }
    }
    try {
      await waitFor(() => subs.every((s) => s.state === 'live'), { timeoutMs: 60_000, message: 'all 1,000 subscriptions live' });
      await waitFor(() => totalSubscribes() === 1, { timeoutMs: 15_000, message: 'ingest subscribed upstream' });
      // Wait for the owner to anchor its checkpoint, so the next log is written live.
      const redis = fleet.redis.client();
      await waitFor(async () => (await redis.hexists(ingestKeys('sg:ingest:', STREAM).state, 'cp')) === 1, {
        timeoutMs: 10_000,
        message: 'checkpoint',
      });
      await emitLog(anvil, emitter, 42);
      await waitFor(() => received === 1_000, { timeoutMs: 30_000, message: () => `every subscriber gets the log (${received}/1000)` });
      expect(totalSubscribes()).toBe(1);
      expect(proxy.subscribeCalls.get('newHeads')).toBe(1);
    } finally {
      for (const c of clients) c.close();
    }
    // Demand ends: after the grace period the owner unsubscribes and lets the lease go.
    await waitFor(() => workers.some((w) => w.service.lines.some((l) => l.includes('demand ended; lease released'))), {
      timeoutMs: 20_000,
      message: 'upstream subscription ended after the grace period',
    });
    await waitFor(() => proxy.openSockets === 0, { timeoutMs: 5_000, message: 'upstream socket closed' });
    expect(totalSubscribes()).toBe(1);
  });
});
