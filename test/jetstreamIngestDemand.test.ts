import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { Redis } from 'ioredis';
import { INGEST_DEMAND_KEY } from '@streamgate/demand';
import { ingestKeys } from '@streamgate/ingest-core/redis';
import { ingestEventSchema } from '@streamgate/ingest-events';
import { defineStream, jetStreamId, jetStreamSubject } from '@streamgate/protocol';
import type { TokenIssuer } from '@streamgate/server';
import { ensureJetStream } from '@streamgate/server/jetstream';
import { spawnIngest, startAnvil, startFaultProxy, startNatsCluster, startRedis, waitFor } from '@streamgate/testkit';
import type { AnvilNode, AppProcess, FaultProxy, NatsCluster, RedisServer, RelayProcess } from '@streamgate/testkit';
import { openFrameLog } from './support/frameLog.js';
import type { WireFrame } from './support/frameLog.js';
import { testChain } from './support/ingestHarness.js';
import { auditBlocks, readJetStreamEvents } from './support/jetStreamIngestEvents.js';
import { mineEvery } from './support/mineEvery.js';
import type { Miner } from './support/mineEvery.js';
import { spawnFileKeyRelay } from './support/spawnFileKeyRelay.js';
import { fileKeyTokens } from './support/fileKeyTokens.js';
import type { FileKeyTokens } from './support/fileKeyTokens.js';

/*
 * Issue 25, Deliver 4: "Demand and leases work when a stream's target is NATS", end to end and
 * with no demand held by the test. A relay serving a Redis target and a JetStream target (R3 on a
 * 3-node nats-server cluster) heartbeats the demand of its JetStream stream into the Redis one
 * ingest worker reads demand from and keeps its leases in; anvil mines throughout, reached through
 * a proxy that counts upstream subscriptions. Idle without demand; a client's subscription makes
 * ingest take the lease and write blocks the client receives in order; once the client has left
 * and the demand lapsed, ingest releases the stream and writes no more.
 */

const ISSUER = 'js-ingest-demand-auth';
const AUDIENCE = 'js-ingest-demand-relay';
const JETSTREAM = 'EVMDEMAND';
const WORKER = 'js-demand-ingest';
const heads = defineStream<unknown>('evm').for('anvil', 'heads');
const STREAM = heads.name;
const DEMAND = { intervalMs: 200, ttlMs: 1_000 };
const INGEST = { tickMs: 300, leaseTtlMs: 1_500, graceMs: 500 };
const MINE_EVERY_MS = 200;
/** Blocks mined while nothing may happen: at 200 ms each, well over three ingest ticks. */
const QUIET_BLOCKS = 6;
const BLOCKS_WANTED = 10;

let anvil: AnvilNode | undefined;
let proxy: FaultProxy | undefined;
let nats: NatsCluster | undefined;
let jsm: JetStreamManager;
let redisServer: RedisServer | undefined;
let redis: Redis;
let relay: RelayProcess | undefined;
let ingest: AppProcess | undefined;
let tokens: TokenIssuer;
let miner: Miner | undefined;
let keyFile: FileKeyTokens | undefined;

beforeAll(async () => {
  [anvil, nats, redisServer] = await Promise.all([startAnvil(), startNatsCluster(), startRedis()]);
  proxy = await startFaultProxy(anvil);
  redis = redisServer.client();
  jsm = await jetstreamManager(await nats.connect());
  const ensured = await ensureJetStream(jsm, { stream: JETSTREAM }, { replicas: 3 });
  if (!ensured.ok) throw new Error(ensured.error.message);
  const target = nats.jetStreamTarget(JETSTREAM);
  keyFile = await fileKeyTokens({ kid: 'js-ingest-demand-key', issuer: ISSUER, audience: AUDIENCE, redis: target });
  tokens = keyFile.tokens;
  [relay, ingest] = await Promise.all([
    spawnFileKeyRelay({
      name: 'relay-js-ingest-demand',
      issuer: ISSUER,
      audience: AUDIENCE,
      redisAllowlist: redisServer.url,
      jwksFile: keyFile?.jwksFile ?? '',
      env: {
        RELAY_JETSTREAM_ALLOWLIST: target,
        RELAY_JETSTREAM_DEMAND_TARGET: redisServer.url,
        RELAY_DEMAND_PREFIXES: 'evm:',
        RELAY_DEMAND_INTERVAL_MS: String(DEMAND.intervalMs),
        RELAY_DEMAND_TTL_MS: String(DEMAND.ttlMs),
      },
    }),
    spawnIngest({
      name: WORKER,
      redisUrl: redisServer.url,
      topology: { chains: { anvil: testChain([proxy]) }, streams: [{ stream: STREAM, chain: 'anvil', kind: 'newHeads' }] },
      env: {
        INGEST_JETSTREAM_TARGET: target,
        INGEST_DEMAND_PREFIXES: 'evm:',
        INGEST_LEASE_TTL_MS: String(INGEST.leaseTtlMs),
        INGEST_TICK_MS: String(INGEST.tickMs),
        INGEST_DEMAND_GRACE_MS: String(INGEST.graceMs),
      },
    }),
  ]);
  const ingestUrl = ingest.httpUrl;
  await waitFor(async () => (await fetch(`${ingestUrl}/readyz`)).status === 200, { timeoutMs: 15_000, message: 'ingest never ready' });
}, 60_000);

afterAll(async () => {
  await miner?.stop().catch((error: unknown) => console.error(error));
  await Promise.all([relay?.service.stop(), ingest?.service.stop()]);
  await proxy?.close();
  await Promise.all([nats?.stop(), redisServer?.stop(), anvil?.stop()]);
  await keyFile?.remove();
});

const leaseKey = ingestKeys('sg:ingest:', STREAM).lease;

/** The subject's last JetStream sequence; 0 while it holds nothing. */
async function lastSequence(): Promise<number> {
  const last = await jsm.streams.getMessage(JETSTREAM, { last_by_subj: jetStreamSubject(JETSTREAM, STREAM) });
  return last?.seq ?? 0;
}

/** The stream's event frames as the client received them, each with its block number (null: not a block). */
function delivered(frames: readonly WireFrame[]): { id: string; block: number | null }[] {
  return frames
    .filter((f) => f.op === 'event' && f.stream === STREAM)
    .map((f) => {
      const event = ingestEventSchema.parse(f.data);
      return { id: f.id ?? '', block: event.type === 'block' ? event.number : null };
    });
}

/** Waits until anvil has mined `blocks` more blocks: the window in which nothing may happen. */
async function whileMining(running: Miner, blocks: number): Promise<void> {
  const from = running.head();
  await waitFor(() => running.head() >= from + blocks, {
    timeoutMs: blocks * MINE_EVERY_MS + 5_000,
    message: () => `anvil never mined ${blocks} blocks past ${from} (head ${running.head()})`,
  });
}

describe('demand and leases for a stream on a JetStream target', () => {
  it('ingest serves the stream only while a relay client wants it', async () => {
    if (anvil === undefined || proxy === undefined || ingest === undefined || relay === undefined) throw new Error('not started');
    const upstream = proxy;
    const worker = ingest.service;
    miner = mineEvery(anvil, MINE_EVERY_MS);
    const mining = miner;

    // 1. No client, no demand: while blocks are mined, no lease, no upstream subscription, nothing written.
    await whileMining(mining, QUIET_BLOCKS);
    expect(await redis.zscore(INGEST_DEMAND_KEY, STREAM)).toBeNull();
    expect(await redis.get(leaseKey)).toBeNull();
    expect(upstream.subscribeCalls.get('newHeads') ?? 0).toBe(0);
    expect(upstream.openSockets).toBe(0);
    expect(await lastSequence()).toBe(0);
    expect(worker.lines.some((line) => line.includes('"lease acquired"'))).toBe(false);

    // 2. A client subscribes through the relay: its demand reaches the Redis, ingest takes the lease and writes.
    const log = await openFrameLog(relay.url);
    const subscribedAt = Date.now();
    let received: { id: string; block: number | null }[];
    let demandMs: number;
    let leaseMs: number;
    let firstBlockMs: number;
    try {
      log.send({ op: 'subscribe', sid: 'h', token: (await tokens.issue(heads, { subject: 'alice' })).token });
      await log.until((fs) => fs.some((f) => f.op === 'live' && f.sid === 'h'), 'the client never went live on the JetStream stream');
      await waitFor(async () => (await redis.zscore(INGEST_DEMAND_KEY, STREAM)) !== null, {
        timeoutMs: DEMAND.intervalMs + 5_000,
        message: `the relay's demand for ${STREAM} never reached the Redis ingest reads demand from`,
      });
      demandMs = Date.now() - subscribedAt;
      const lease = await waitFor(() => redis.get(leaseKey), {
        timeoutMs: INGEST.tickMs * 3 + 5_000,
        message: `ingest never took the lease of ${STREAM} while it was wanted`,
      });
      leaseMs = Date.now() - subscribedAt;
      expect(lease.startsWith(`${WORKER}|`)).toBe(true);
      await log.until((fs) => delivered(fs).length > 0, 'no block reached the client within 10 s of its subscribe', 10_000);
      firstBlockMs = Date.now() - subscribedAt;
      await log.until(
        (fs) => delivered(fs).length >= BLOCKS_WANTED,
        `the client received fewer than ${BLOCKS_WANTED} blocks within 10 s of the first`,
        10_000,
      );
      received = delivered(log.frames);
    } finally {
      log.close();
    }
    const leftAt = Date.now();
    const fromLine = worker.lineCount;
    const numbers = received.map((r) => r.block);
    expect(numbers).not.toContain(null);
    const first = numbers[0] ?? 0;
    expect(numbers).toEqual(numbers.map((_, i) => first + i));

    // 3. The client has left: once its demand lapses and the grace ends, ingest lets the stream go.
    const releaseBound = DEMAND.ttlMs + INGEST.graceMs + INGEST.tickMs * 2 + 5_000;
    await worker.waitForLine(/"demand ended; lease released"/, releaseBound, { fromLine });
    await waitFor(async () => (await redis.get(leaseKey)) === null, {
      timeoutMs: 5_000,
      message: `ingest said it released ${STREAM} but its lease is still held`,
    });
    const releasedMs = Date.now() - leftAt;
    await waitFor(() => upstream.openSockets === 0, { timeoutMs: 5_000, message: 'ingest kept its upstream WebSocket after the release' });
    const stoppedAt = await lastSequence();
    const subscribes = upstream.subscribeCalls.get('newHeads') ?? 0;
    await whileMining(mining, QUIET_BLOCKS);
    expect(await lastSequence()).toBe(stoppedAt);
    expect(upstream.subscribeCalls.get('newHeads') ?? 0).toBe(subscribes);
    expect(await redis.get(leaseKey)).toBeNull();

    // What the subject holds: each block once, in order, canonical; the client got its first entries exactly.
    const stored = await readJetStreamEvents(jsm, JETSTREAM, STREAM);
    const last = stored.at(-1)?.event;
    if (last?.type !== 'block') throw new Error('the subject does not end with a block');
    const audit = await auditBlocks(stored, anvil, last.number);
    expect(audit).toMatchObject({ duplicates: 0, gaps: 0, wrong: [] });
    expect(received.map((r) => r.id)).toEqual(stored.slice(0, received.length).map((s) => jetStreamId(s.seq)));
    console.log(
      `jetstream demand: idle before demand (${QUIET_BLOCKS} blocks mined), demand in Redis ${demandMs} ms and lease ${leaseMs} ms ` +
        `after subscribe, first block delivered ${firstBlockMs} ms after subscribe, ` +
        `blocks ${received.length} in order (${first}–${first + received.length - 1}), released ${releasedMs} ms after the client left, ` +
        `subject still at sequence ${stoppedAt} after ${QUIET_BLOCKS} more blocks`,
    );
  }, 40_000);
});
