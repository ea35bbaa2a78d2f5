import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { ingestSnapshotSchema } from '@streamgate/ops';
import type { IngestSnapshot } from '@streamgate/ops';
import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import type { IngestOpsSource } from './collectIngestSnapshot.js';
import { startIngestOps } from './startIngestOps.js';

let server: RedisServer;
let client: Redis;
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  server = await startRedis();
  client = server.client();
  // The test's own connection sees the outage the second test makes; its retries are expected.
  client.on('error', () => undefined);
});
afterAll(async () => {
  await server?.stop();
});

function source(over: Partial<IngestOpsSource> = {}): IngestOpsSource {
  return { pod: 'ingest-unit', startedAt: 1, now: Date.now, leasesHeld: () => 2, chains: () => [], venues: () => [], ...over };
}

async function snapshots(stream: string): Promise<IngestSnapshot[]> {
  const entries = await client.xrange(stream, '-', '+');
  return entries.map(([, fields]) => {
    expect(fields[0]).toBe('data');
    return ingestSnapshotSchema.parse(JSON.parse(fields[1] ?? 'null'));
  });
}

describe('startIngestOps', () => {
  it('XADDs one schema-valid snapshot a second into the stream on its own connection', async () => {
    const failures: string[] = [];
    const ops = startIngestOps({
      redisUrl: server.url,
      stream: 'ops:a',
      source: source(),
      log: quiet,
      countFailure: (c) => failures.push(c),
    });
    try {
      await waitFor(async () => (await client.xlen('ops:a')) >= 3, { timeoutMs: 10_000, message: 'three snapshots' });
      expect(String(await client.client('LIST'))).toContain('name=streamgate-ingest-ops:ingest-unit');
    } finally {
      await ops.stop();
    }
    await waitFor(async () => !String(await client.client('LIST')).includes('streamgate-ingest-ops:ingest-unit'), {
      timeoutMs: 5_000,
      message: 'the ops connection closed by stop()',
    });
    const written = await snapshots('ops:a');
    expect(written.map((s) => s.seq)).toEqual(written.map((_, i) => i));
    expect(written[0]).toMatchObject({ kind: 'ingest', pod: 'ingest-unit', leasesHeld: 2, chains: [], venues: [] });
    expect(failures).toEqual([]);
  });

  it('counts snapshots the ops Redis does not take, carries on, and publishes again once it is back', async () => {
    const failures: string[] = [];
    const ops = startIngestOps({
      redisUrl: server.url,
      stream: 'ops:b',
      source: source(),
      log: quiet,
      countFailure: (c) => failures.push(c),
    });
    try {
      await waitFor(async () => (await client.xlen('ops:b')) >= 1, { timeoutMs: 10_000, message: 'a first snapshot' });
      await server.kill();
      await waitFor(() => failures.length >= 2, { timeoutMs: 10_000, message: 'failures while Redis is down' });
      expect(new Set(failures)).toEqual(new Set(['sink_failed']));
      await server.restart();
      await waitFor(async () => (await client.xlen('ops:b')) >= 2, { timeoutMs: 15_000, message: 'snapshots again' });
    } finally {
      await ops.stop();
    }
    // The restarted server is empty: what it holds was published after the outage, numbered on.
    const after = await snapshots('ops:b');
    expect(after[0]?.seq).toBeGreaterThan(failures.length);
  });

  it('skips a snapshot whose collection throws, counts it, and publishes the next ones', async () => {
    const failures: string[] = [];
    let calls = 0;
    const flaky = source({
      chains: () => {
        if (calls++ === 1) throw new Error('view broke');
        return [];
      },
    });
    const ops = startIngestOps({ redisUrl: server.url, stream: 'ops:c', source: flaky, log: quiet, countFailure: (c) => failures.push(c) });
    try {
      await waitFor(async () => (await client.xlen('ops:c')) >= 3, { timeoutMs: 10_000, message: 'snapshots around the failure' });
    } finally {
      await ops.stop();
    }
    expect(failures).toEqual(['collect_failed']);
    const seqs = (await snapshots('ops:c')).map((s) => s.seq);
    expect(seqs.slice(0, 3)).toEqual([0, 2, 3]);
  });
});
