import type { Cluster, Redis } from 'ioredis';
import { RedisDemandRegistry } from '@streamgate/demand';
import { ingestEventSchema } from '@streamgate/ingest-events';
import type { IngestEvent } from '@streamgate/ingest-events';
import type { AnvilNode, FaultProxy } from '@streamgate/testkit';

/** Fast timings so failovers, stalls and lease hand-overs happen within a test's patience. */
export function testChain(proxies: readonly FaultProxy[], overrides: Record<string, unknown> = {}) {
  return {
    providers: proxies.map((p, i) => ({ id: `p${i}`, wsUrl: p.wsUrl, httpUrl: p.httpUrl, priority: i })),
    blockTimeMs: 400,
    headPollMs: 100,
    stallMs: 800,
    lagBlocks: 3,
    requestTimeoutMs: 1_000,
    maxFailovers: 20,
    failoverWindowMs: 5_000,
    degradedRecoverMs: 1_000,
    ...overrides,
  };
}

export const FAST_WORKER_ENV = {
  INGEST_LEASE_TTL_MS: '1500',
  INGEST_TICK_MS: '300',
  INGEST_DEMAND_GRACE_MS: '2000',
  LOG_LEVEL: 'info',
};

export async function readEvents(redis: Redis | Cluster, stream: string): Promise<{ id: string; event: IngestEvent }[]> {
  const entries = await redis.xrange(stream, '-', '+');
  return entries.map(([id, fields]) => {
    const data = fields[fields.indexOf('data') + 1] ?? 'null';
    return { id, event: ingestEventSchema.parse(JSON.parse(data)) };
  });
}

/** Keeps demand for `streams` alive like a relay with subscribers would, until disposed. */
export function holdDemand(redis: Redis | Cluster, streams: readonly string[]): AsyncDisposable & { stop(): void } {
  const registry = new RedisDemandRegistry(redis);
  const beat = () => void registry.heartbeat(streams, 3_000).catch(() => undefined);
  beat();
  const timer = setInterval(beat, 500);
  const stop = () => clearInterval(timer);
  return {
    stop,
    [Symbol.asyncDispose]: () => {
      stop();
      return Promise.resolve();
    },
  };
}

/** The canonical hash of each block in [from, to] according to the node itself. */
export async function canonicalHashes(anvil: AnvilNode, from: number, to: number): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (let n = from; n <= to; n++) {
    const block = await anvil.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
    out.set(n, block.hash);
  }
  return out;
}

/**
 * Checks a newHeads stream block by block against the node: every block from the first written
 * to `head` appears exactly once, with the node's hash, in order, and nothing else was written.
 */
export async function assertExactBlocks(
  redis: Redis | Cluster,
  anvil: AnvilNode,
  stream: string,
  head: number,
): Promise<{ first: number; count: number }> {
  const events = await readEvents(redis, stream);
  const blocks = events.map((e) => e.event).filter((e) => e.type === 'block');
  if (blocks.length !== events.length)
    throw new Error(`unexpected non-block events: ${JSON.stringify(events.filter((e) => e.event.type !== 'block'))}`);
  const first = blocks[0]?.number;
  if (first === undefined) throw new Error('stream is empty');
  const expected = await canonicalHashes(anvil, first, head);
  const numbers = blocks.map((b) => b.number);
  const want = [...expected.keys()];
  if (JSON.stringify(numbers) !== JSON.stringify(want)) {
    throw new Error(`block numbers differ from the node:\n got  ${numbers.join(',')}\n want ${want.join(',')}`);
  }
  for (const b of blocks) if (expected.get(b.number) !== b.hash) throw new Error(`block ${b.number} hash ${b.hash} is not canonical`);
  return { first, count: blocks.length };
}
