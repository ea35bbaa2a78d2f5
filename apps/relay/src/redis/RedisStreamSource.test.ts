import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import type { SourceError, StreamEntry } from '../core/StreamSource.js';
import { RedisStreamSource } from './RedisStreamSource.js';
import { testSourceOptions } from './testing/testSourceOptions.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

function source(blockMs: number) {
  const got = new Map<string, string[]>();
  const failed: Array<[string, SourceError]> = [];
  const errors: string[] = [];
  const src = new RedisStreamSource(
    testSourceOptions(redis.url, 'source-test', {
      blockMs,
      listener: {
        entries: (stream: string, entries: readonly StreamEntry[]) =>
          got.set(stream, [...(got.get(stream) ?? []), ...entries.map((e) => e.id)]),
        failed: (stream, error) => failed.push([stream, error]),
        reset: () => undefined,
      },
      onError: (operation, error) => errors.push(`${operation}: ${error.message}`),
    }),
  );
  return { src, got, failed, errors };
}

describe('RedisStreamSource', () => {
  it('reports a frozen server unhealthy once a PING goes unanswered, healthy again when it answers, and counts reconnects', async () => {
    await using frozen = await startRedis();
    const reconnects: string[] = [];
    const src = new RedisStreamSource(
      testSourceOptions(frozen.url, 'probe-test', {
        blockMs: 1_000,
        onReconnect: (connection) => reconnects.push(connection),
        probeIntervalMs: 100,
        probeTimeoutMs: 300,
      }),
    );
    try {
      src.watch('probe-a', '0-0');
      await waitFor(() => src.healthy, { timeoutMs: 5_000, message: 'source never became healthy' });
      const service = frozen.service;
      if (service === undefined) throw new Error('redis not running');
      service.signal('SIGSTOP');
      try {
        await waitFor(() => !src.healthy, { timeoutMs: 5_000, message: 'a frozen Redis still looked healthy' });
      } finally {
        service.signal('SIGCONT');
      }
      await waitFor(() => src.healthy, { timeoutMs: 5_000, message: 'source stayed unhealthy after Redis resumed' });
      expect(reconnects).toEqual([]);
      await frozen.client().call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      await waitFor(() => reconnects.includes('command') && reconnects.includes('reader'), {
        timeoutMs: 10_000,
        message: 'reconnects were not reported',
      });
    } finally {
      await src.close();
    }
  });

  it('adds a stream to a blocked batched read at once, not after the block timeout', async () => {
    const { src, got } = source(30_000);
    const r = redis.client();
    try {
      src.watch('join-a', '0-0');
      await waitFor(() => src.healthy, { timeoutMs: 5_000, message: 'source never became healthy' });
      // The reader is now blocked for up to 30 s on join-a alone.
      src.watch('join-b', '0-0');
      const id = await r.xadd('join-b', '*', 'data', '1');
      await waitFor(() => got.get('join-b')?.[0] === id, { timeoutMs: 3_000, message: 'new stream waited for the block timeout' });
    } finally {
      await src.close();
    }
  });

  it('still wakes its read after the reader connection was killed and came back', async () => {
    const { src, got } = source(30_000);
    const r = redis.client();
    try {
      src.watch('kill-a', '0-0');
      await waitFor(() => src.healthy, { timeoutMs: 5_000, message: 'source never became healthy' });
      await r.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      await waitFor(() => src.healthy, { timeoutMs: 10_000, message: 'source never reconnected' });
      const before = String(await r.xadd('kill-a', '*', 'data', '0'));
      await waitFor(() => got.get('kill-a')?.includes(before) === true, { timeoutMs: 10_000, message: 'reader never resumed' });
      src.watch('kill-b', '0-0');
      const id = await r.xadd('kill-b', '*', 'data', '1');
      await waitFor(() => got.get('kill-b')?.[0] === id, {
        timeoutMs: 3_000,
        message: 'stale CLIENT ID: new stream waited for the block timeout',
      });
    } finally {
      await src.close();
    }
  });

  it('drops a key that stops being a stream and keeps reading the others', async () => {
    const { src, got, failed } = source(200);
    const r = redis.client();
    try {
      src.watch('typed-bad', '0-0');
      src.watch('typed-good', '0-0');
      await waitFor(() => src.healthy, { timeoutMs: 5_000, message: 'source never became healthy' });
      await r.set('typed-bad', 'not a stream');
      await waitFor(() => failed.length > 0, { timeoutMs: 5_000, message: 'wrong type never reported' });
      expect(failed).toEqual([['typed-bad', expect.objectContaining({ code: 'source_wrong_type' })]]);
      const id = String(await r.xadd('typed-good', '*', 'data', '1'));
      await waitFor(() => got.get('typed-good')?.includes(id) === true, { timeoutMs: 5_000, message: 'good stream stopped' });
    } finally {
      await src.close();
    }
  });

  it('reports a trimmed head with the page, so a catch-up can tell', async () => {
    const { src } = source(200);
    const r = redis.client();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push(String(await r.xadd('paged', '*', 'data', String(i))));
      await r.xtrim('paged', 'MAXLEN', 5);
      const page = await src.range('paged', ids[1] ?? '', 3);
      expect(page.ok && page.value.afterExists).toBe(false);
      expect(page.ok && page.value.info).toMatchObject({ firstEntryId: ids[5], entriesAdded: 10, length: 5 });
      expect(page.ok && page.value.entries.map((e) => e.id)).toEqual(ids.slice(5, 8));
    } finally {
      await src.close();
    }
  });
});
