import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { spawnIngest, startRedis, waitFor } from '@streamgate/testkit';
import type { AppProcess, RedisServer } from '@streamgate/testkit';
import type { IngestEvent } from '@streamgate/ingest-events';
import { FAST_WORKER_ENV, holdDemand, readEvents } from './support/ingestHarness.js';
import { prng } from '@streamgate/testkit';
import { SCRIPTED_ADDRESS, SCRIPTED_TOPIC, ScriptedChain } from './support/scriptedChain.js';
import { ingestKeys } from '@streamgate/ingest-core/redis';

/*
 * Random reorg sequences (depths 1–5, new branches and flips back to branches written before)
 * against a chain the test scripts over real sockets. After each sequence the streams, replayed
 * as a consumer would (adds minus retractions, blocks minus a reorg's dropped ones), must equal
 * the chain's canonical view from the anchor on.
 */
const SEQUENCES = Number(process.env.FLIPS ?? 200);
const SEED = 16_2;
const HEADS = 'evm:script:heads';
const LOGS = 'evm:script:logs';

let redis: RedisServer;
let client: Redis;
let chain: ScriptedChain;
let worker: AppProcess;
const random = prng(SEED);

beforeAll(async () => {
  redis = await startRedis();
  client = redis.client();
  chain = new ScriptedChain(random);
  await chain.listen();
  chain.mine(3);
  worker = await spawnIngest({
    name: 'ingest-flips',
    redisUrl: redis.url,
    topology: {
      chains: {
        script: {
          providers: [{ id: 'script', wsUrl: chain.wsUrl, httpUrl: chain.httpUrl }],
          blockTimeMs: 400,
          headPollMs: 100,
          lagBlocks: 8,
          requestTimeoutMs: 1_000,
          maxFailovers: 20,
          degradedRecoverMs: 1_000,
        },
      },
      streams: [
        { stream: HEADS, chain: 'script', kind: 'newHeads' },
        { stream: LOGS, chain: 'script', kind: 'logs', filter: { address: SCRIPTED_ADDRESS, topics: [SCRIPTED_TOPIC] } },
      ],
    },
    env: FAST_WORKER_ENV,
  });
});

afterAll(async () => {
  await worker?.service.stop();
  await chain?.close();
  await redis?.stop();
});

const stateKey = (stream: string) => ingestKeys('sg:ingest:', stream).state;

async function checkpointHash(stream: string): Promise<string | null> {
  const cp = await client.hget(stateKey(stream), 'cp');
  return cp === null ? null : (JSON.parse(cp) as { hash: string | null }).hash;
}

/** A consumer's view of one stream, applied entry by entry as they are read. */
class Replay {
  private lastId = '-';
  readonly blocks = new Map<number, string>();
  readonly logs = new Map<string, string>();
  anomalies: string[] = [];

  async pull(stream: string): Promise<void> {
    const all = await readEvents(client, stream);
    const fresh = this.lastId === '-' ? all : all.filter((e) => compareIds(e.id, this.lastId) > 0);
    for (const { id, event } of fresh) {
      this.apply(event);
      this.lastId = id;
    }
  }

  private apply(e: IngestEvent): void {
    if (e.type === 'block') {
      if (this.blocks.has(e.number)) this.anomalies.push(`block ${e.number} written over a live block`);
      this.blocks.set(e.number, e.hash);
    } else if (e.type === 'reorg') {
      for (const d of e.dropped) {
        if (this.blocks.has(d.number) && this.blocks.get(d.number) !== d.hash)
          this.anomalies.push(`reorg drops ${d.number} ${d.hash}, not the live block`);
        this.blocks.delete(d.number);
      }
    } else if (e.type === 'log') {
      const id = `${e.blockHash}:${e.logIndex}`;
      if (e.removed) {
        if (!this.logs.delete(id)) this.anomalies.push(`retraction of a log that is not live: ${id}`);
      } else {
        if (this.logs.has(id)) this.anomalies.push(`second add of a live log: ${id}`);
        this.logs.set(id, e.data);
      }
    } else {
      this.anomalies.push(`unexpected ${e.type}`);
    }
  }
}

function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

/** What differs between the replayed streams and the chain's canonical view from `anchor` on. */
function differences(heads: Replay, logs: Replay, anchor: number): string[] {
  const out: string[] = [...heads.anomalies, ...logs.anomalies];
  heads.anomalies = [];
  logs.anomalies = [];
  const canonical = chain.blocks().slice(anchor);
  if (heads.blocks.size !== canonical.length) out.push(`${heads.blocks.size} live blocks, the chain has ${canonical.length}`);
  for (const b of canonical)
    if (heads.blocks.get(b.number) !== b.hash) out.push(`block ${b.number}: stream has ${String(heads.blocks.get(b.number))}`);
  const want = chain.logsFrom(anchor);
  if (logs.logs.size !== want.length) out.push(`${logs.logs.size} live logs, the chain has ${want.length}`);
  for (const l of want)
    if (logs.logs.get(`${l.blockHash}:${l.logIndex}`) !== l.data) out.push(`log ${l.blockNumber}/${l.logIndex} of ${l.blockHash} missing`);
  return out;
}

const pick = (n: number) => Math.floor(random() * n);

/** One random operation on the chain; `anchor` bounds how deep a reorg may reach. */
function randomStep(anchor: number, seenTips: string[]): string {
  const tip = chain.tip;
  const roll = random();
  if (roll < 0.45) {
    const candidates = seenTips.filter((t) => {
      // A tip that is an ancestor of the canonical one makes the chain shorter with no new block.
      return chain.commonAncestor(t) >= Math.max(anchor, tip.number - 5);
    });
    const target = candidates[pick(candidates.length)];
    if (target !== undefined) {
      const depth = tip.number - chain.commonAncestor(target);
      chain.switchTo(target);
      return `flip back to ${target.slice(0, 10)} (depth ${depth})`;
    }
  }
  if (roll < 0.85) {
    const depth = 1 + pick(Math.min(5, tip.number - anchor));
    const length = Math.max(1, depth + pick(3) - 1);
    chain.reorg(depth, length, random() < 0.3);
    return `reorg depth ${depth} → ${length} new`;
  }
  const count = 1 + pick(2);
  chain.mine(count, random() < 0.5);
  return `mine ${count}`;
}

describe('reorg sequences that flip back and forth (scripted chain over real sockets)', () => {
  it(`after each of ${SEQUENCES} random sequences the replayed streams equal the canonical chain`, async () => {
    await using _demand = holdDemand(client, [HEADS, LOGS]);
    await waitFor(async () => (await checkpointHash(HEADS)) === chain.tip.hash && (await checkpointHash(LOGS)) === chain.tip.hash, {
      timeoutMs: 20_000,
      message: 'both streams anchored on the tip',
    });
    const anchor = chain.tip.number;
    chain.mine(8);
    const heads = new Replay();
    const logs = new Replay();
    const seenTips: string[] = [chain.tip.hash];
    const failures: string[] = [];
    let mismatches = 0;
    let flips = 0;
    const started = Date.now();
    for (let s = 0; s < SEQUENCES; s++) {
      const steps: string[] = [];
      for (let n = 1 + pick(4); n > 0; n--) {
        const before = chain.tip.hash;
        const step = randomStep(anchor, seenTips);
        if (step.startsWith('flip')) flips += 1;
        steps.push(step);
        if (random() < 0.2) chain.pushStale(before);
        seenTips.push(chain.tip.hash);
        if (seenTips.length > 40) seenTips.shift();
      }
      const tip = chain.tip.hash;
      let settled = true;
      try {
        await waitFor(async () => (await checkpointHash(HEADS)) === tip && (await checkpointHash(LOGS)) === tip, {
          timeoutMs: 2_000,
          intervalMs: 5,
          message: `sequence ${s} settles on the tip`,
        });
      } catch {
        settled = false;
      }
      await heads.pull(HEADS);
      await logs.pull(LOGS);
      const diff = differences(heads, logs, anchor);
      if (!settled) diff.unshift('never settled on the tip');
      if (diff.length > 0) {
        mismatches += 1;
        console.log(`sequence ${s} [${steps.join('; ')}]: ${diff.slice(0, 4).join('; ')}`);
        if (failures.length < 5) failures.push(`sequence ${s} [${steps.join('; ')}]: ${diff.slice(0, 4).join('; ')}`);
      }
    }
    const elapsed = Date.now() - started;
    if (mismatches > 0)
      console.log(
        worker.service
          .output()
          .split('\n')
          .filter((l) => !l.includes('lease'))
          .slice(-30)
          .join('\n'),
      );
    console.log(`${SEQUENCES} sequences (${flips} flips back) in ${elapsed} ms: ${mismatches} mismatches`);
    expect(flips).toBeGreaterThan(SEQUENCES / 4);
    expect(failures).toEqual([]);
    expect(mismatches).toBe(0);
  }, 100_000);
});
