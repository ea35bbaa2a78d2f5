import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { spawnIngest, startAnvil, startFaultProxy, startRedis, waitFor } from '@streamgate/testkit';
import type { AnvilNode, AppProcess, FaultProxy, RedisServer } from '@streamgate/testkit';
import { FAST_WORKER_ENV, assertExactBlocks, holdDemand, readEvents, testChain } from './support/ingestHarness.js';

let redis: RedisServer;
let anvil: AnvilNode;
let primary: FaultProxy;
let secondary: FaultProxy;
let worker: AppProcess;
let client: Redis;
const STREAM = 'evm:anvil:heads';

beforeAll(async () => {
  redis = await startRedis();
  anvil = await startAnvil();
  primary = await startFaultProxy(anvil);
  secondary = await startFaultProxy(anvil);
  client = redis.client();
  worker = await spawnIngest({
    name: 'ingest-a',
    redisUrl: redis.url,
    topology: { chains: { anvil: testChain([primary, secondary]) }, streams: [{ stream: STREAM, chain: 'anvil', kind: 'newHeads' }] },
    env: FAST_WORKER_ENV,
  });
});

afterAll(async () => {
  await worker?.service.stop();
  await primary?.close();
  await secondary?.close();
  await anvil?.stop();
  await redis?.stop();
});

async function mineAndSettle(blocks: number): Promise<number> {
  let head = 0;
  for (let i = 0; i < blocks; i++) head = await anvil.mine(1);
  await waitFor(
    async () =>
      (await readEvents(client, STREAM)).at(-1)?.event.type === 'block' &&
      ((await readEvents(client, STREAM)).at(-1)?.event as { number: number }).number === head,
    {
      timeoutMs: 20_000,
      message: `stream reaches block ${head}`,
    },
  );
  return head;
}

describe('ingest failover against a real anvil behind fault proxies', () => {
  it('starts on demand with one newHeads subscription on the primary', async () => {
    await using _demand = holdDemand(client, [STREAM]);
    await waitFor(() => primary.subscribeCalls.get('newHeads') === 1, {
      timeoutMs: 15_000,
      message: 'primary got eth_subscribe(newHeads)',
    });
    const head = await mineAndSettle(3);
    await assertExactBlocks(client, anvil, STREAM, head);
    expect(secondary.subscribeCalls.get('newHeads') ?? 0).toBe(0);

    // cut: the primary's socket is torn down while blocks keep coming
    primary.setMode('down');
    let h = 0;
    for (let i = 0; i < 4; i++) h = await anvil.mine(1);
    await waitFor(() => secondary.subscribeCalls.get('newHeads') === 1, { timeoutMs: 10_000, message: 'failover to secondary' });
    h = await mineAndSettle(2);
    await assertExactBlocks(client, anvil, STREAM, h);

    // stall: the secondary stays connected but goes silent; the primary is back
    primary.setMode('pass');
    secondary.setMode('stall');
    for (let i = 0; i < 5; i++) h = await anvil.mine(1);
    await waitFor(() => primary.subscribeCalls.get('newHeads') === 2, { timeoutMs: 10_000, message: 'failover away from a silent socket' });
    h = await mineAndSettle(2);
    await assertExactBlocks(client, anvil, STREAM, h);

    // lag: the primary delivers 3 s late
    secondary.setMode('pass');
    primary.setMode('lag', { lagMs: 3_000 });
    for (let i = 0; i < 5; i++) h = await anvil.mine(1);
    await waitFor(() => secondary.subscribeCalls.get('newHeads') === 2, {
      timeoutMs: 10_000,
      message: 'failover away from a lagging socket',
    });
    primary.setMode('pass');
    h = await mineAndSettle(3);
    const { count } = await assertExactBlocks(client, anvil, STREAM, h);
    expect(count).toBeGreaterThan(20);
    const metrics = await (await fetch(`${worker.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/ingest_failovers_total\{[^}]*\} [1-9]/);
  });

  it('a provider that answers garbage is failed over with a typed error, and the worker keeps running', async () => {
    await using _demand = holdDemand(client, [STREAM]);
    const owner = [primary, secondary].find((p) => p.openSockets > 0);
    const other = owner === primary ? secondary : primary;
    if (owner === undefined) throw new Error('no live upstream socket');
    const before = other.subscribeCalls.get('newHeads') ?? 0;
    owner.setMode('garbage');
    let h = await anvil.mine(1);
    await waitFor(() => (other.subscribeCalls.get('newHeads') ?? 0) > before, { timeoutMs: 10_000, message: 'failover away from garbage' });
    owner.setMode('pass');
    for (let i = 0; i < 3; i++) h = await mineAndSettle(1);
    await assertExactBlocks(client, anvil, STREAM, h);
    expect(worker.service.exitStatus).toBeUndefined();
    const metrics = await (await fetch(`${worker.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/ingest_provider_errors_total\{provider="p[01]",code="garbage"\} [1-9]/);
  });

  it('with no WebSocket provider left it goes degraded, follows the chain over HTTP, and recovers', async () => {
    await using _demand = holdDemand(client, [STREAM]);
    const metricsText = async () => (await fetch(`${worker.httpUrl}/metrics`)).text();
    primary.setMode('down', { only: 'ws' });
    secondary.setMode('down', { only: 'ws' });
    let h = await anvil.mine(1);
    await waitFor(async () => /ingest_degraded\{stream="evm:anvil:heads"\} 1/.test(await metricsText()), {
      timeoutMs: 10_000,
      message: 'degraded mode',
    });
    // Blocks keep coming while no socket is possible: the stream follows them over HTTP.
    for (let i = 0; i < 3; i++) h = await mineAndSettle(1);
    primary.setMode('pass', { only: 'ws' });
    secondary.setMode('pass', { only: 'ws' });
    await waitFor(() => primary.openSockets + secondary.openSockets > 0, { timeoutMs: 10_000, message: 'a socket again after recovery' });
    await waitFor(async () => /ingest_degraded\{stream="evm:anvil:heads"\} 0/.test(await metricsText()), {
      timeoutMs: 10_000,
      message: 'left degraded mode',
    });
    for (let i = 0; i < 2; i++) h = await mineAndSettle(1);
    await assertExactBlocks(client, anvil, STREAM, h);
  });
});
