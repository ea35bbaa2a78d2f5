import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { OPS_STREAM_DEFAULT, opsSnapshotSchema } from '@streamgate/ops';
import type { IngestChainStream } from '@streamgate/ops';
import { spawnIngest, startAnvil, startFaultProxy, startRedis, waitFor } from '@streamgate/testkit';
import type { AnvilNode, AppProcess, FaultProxy, RedisServer } from '@streamgate/testkit';
import { FAST_WORKER_ENV, assertExactBlocks, holdDemand, readEvents, testChain } from './support/ingestHarness.js';

/*
 * Failback across processes: a worker following a real anvil through two fault proxies loses its
 * preferred provider (p0), fails over to p1, and returns to p0 only after p0 has been healthy for
 * the hold-down (`failbackHoldMs`), with every block written exactly once; the operations
 * snapshot says which provider is preferred and whether the stream is on it.
 */

let redis: RedisServer;
let opsRedis: RedisServer;
let anvil: AnvilNode;
let primary: FaultProxy;
let secondary: FaultProxy;
let worker: AppProcess;
let client: Redis;
let ops: Redis;
const STREAM = 'evm:anvil:heads';
const HOLD_MS = 3_000;

beforeAll(async () => {
  redis = await startRedis();
  opsRedis = await startRedis();
  anvil = await startAnvil();
  primary = await startFaultProxy(anvil);
  secondary = await startFaultProxy(anvil);
  client = redis.client();
  ops = opsRedis.client();
  worker = await spawnIngest({
    name: 'ingest-failback',
    redisUrl: redis.url,
    topology: {
      chains: { anvil: testChain([primary, secondary], { failbackHoldMs: HOLD_MS }) },
      streams: [{ stream: STREAM, chain: 'anvil', kind: 'newHeads' }],
    },
    env: { ...FAST_WORKER_ENV, INGEST_OPS_REDIS_URL: opsRedis.url },
  });
});

afterAll(async () => {
  await worker?.service.stop();
  await primary?.close();
  await secondary?.close();
  await anvil?.stop();
  await opsRedis?.stop();
  await redis?.stop();
});

async function chainNow(): Promise<IngestChainStream | undefined> {
  const last = (await ops.xrevrange(OPS_STREAM_DEFAULT, '+', '-', 'COUNT', 1))[0];
  if (last === undefined) return undefined;
  const snapshot = opsSnapshotSchema.parse(JSON.parse(last[1][1] ?? 'null'));
  return snapshot.kind === 'ingest' ? snapshot.chains.find((c) => c.stream === STREAM) : undefined;
}

async function chainUntil(test: (c: IngestChainStream) => boolean, message: string, timeoutMs = 20_000): Promise<IngestChainStream> {
  let last: IngestChainStream | undefined;
  try {
    await waitFor(
      async () => {
        last = await chainNow();
        return last !== undefined && test(last);
      },
      { timeoutMs, intervalMs: 200, message },
    );
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; last seen ${JSON.stringify(last)}`, { cause: error });
  }
  if (last === undefined) throw new Error(message);
  return last;
}

async function settledAt(head: number): Promise<void> {
  await waitFor(async () => (await readEvents(client, STREAM)).at(-1)?.event.type === 'block' && (await chainNow())?.lastWritten === head, {
    timeoutMs: 20_000,
    message: `stream reaches block ${head}`,
  });
}

describe('ingest failback to the preferred provider', () => {
  it('returns to p0 after the hold-down once p0 is healthy again, shown in the snapshot, with no block lost or doubled', async () => {
    await using _demand = holdDemand(client, [STREAM]);
    await chainUntil((c) => c.state === 'active' && c.provider === 'p0', 'the stream active on p0');
    expect(await chainNow()).toMatchObject({ preferredProvider: 'p0', onPreferred: true });
    let head = 0;
    for (let i = 0; i < 2; i++) head = await anvil.mine(1);
    await settledAt(head);

    primary.setMode('down');
    for (let i = 0; i < 2; i++) head = await anvil.mine(1);
    await chainUntil((c) => c.state === 'active' && c.provider === 'p1', 'failed over to p1');
    expect(await chainNow()).toMatchObject({ preferredProvider: 'p0', onPreferred: false });
    await settledAt(head);

    // p0 is back: the stream stays on p1 for the hold-down, then returns to p0.
    const back = Date.now();
    primary.setMode('pass');
    const returned = await chainUntil((c) => c.provider === 'p0', 'failed back to p0', HOLD_MS + 15_000);
    expect(Date.now() - back).toBeGreaterThanOrEqual(HOLD_MS);
    expect(returned).toMatchObject({ state: 'active', preferredProvider: 'p0', onPreferred: true, failovers: 1 });
    expect(primary.subscribeCalls.get('newHeads')).toBe(2);
    await waitFor(() => secondary.openSockets === 0, { timeoutMs: 5_000, message: "p1's socket closed after the failback" });

    for (let i = 0; i < 3; i++) head = await anvil.mine(1);
    await settledAt(head);
    await assertExactBlocks(client, anvil, STREAM, head);
    const metrics = await (await fetch(`${worker.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/ingest_failbacks_total\{stream="evm:anvil:heads",from="p1",to="p0"\} 1/);
  });
});
