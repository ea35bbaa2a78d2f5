import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import type { StreamEntry } from '../core/StreamSource.js';
import type { ReadMode } from './LiveReader.js';
import { RedisStreamSource } from './RedisStreamSource.js';
import { testSourceOptions } from './testing/testSourceOptions.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis({ args: ['--notify-keyspace-events', 'Kt'] });
});
afterAll(async () => {
  await redis?.stop();
});

function source(name: string) {
  const got = new Map<string, string[]>();
  const modes: ReadMode[] = [];
  const reads: string[] = [];
  const src = new RedisStreamSource(
    testSourceOptions(redis.url, name, {
      // A blocking read of 10 s would show as a 10 s delay if the notified path failed.
      blockMs: 10_000,
      readModeCheckMs: 100,
      notifySweepMs: 60_000,
      listener: {
        entries: (stream: string, entries: readonly StreamEntry[]) =>
          got.set(stream, [...(got.get(stream) ?? []), ...entries.map((e) => e.id)]),
        failed: () => undefined,
        reset: () => undefined,
      },
      onRead: (kind) => reads.push(kind),
      onReadMode: (mode) => modes.push(mode),
    }),
  );
  return { src, got, modes, reads };
}

describe('RedisStreamSource with keyspace notifications', () => {
  it('reads woken keys only, and switches to batched reads and back as the server setting changes, losing and repeating nothing', async () => {
    const { src, got, modes } = source('notify-switch');
    const writer = redis.client();
    const admin = redis.client();
    try {
      await waitFor(() => src.readMode === 'notify', { timeoutMs: 5_000, message: 'never chose notify mode' });
      const streams = ['nt-a', 'nt-b', 'nt-c'];
      for (const s of streams) src.watch(s, '0-0');
      const written = new Map<string, string[]>(streams.map((s) => [s, []]));
      const write = async (n: number): Promise<void> => {
        for (let i = 0; i < n; i++) {
          for (const s of streams) written.get(s)?.push(String(await writer.xadd(s, '*', 'data', `${i}`)));
        }
      };
      const allRead = () => streams.every((s) => JSON.stringify(got.get(s) ?? []) === JSON.stringify(written.get(s)));
      await write(20);
      await waitFor(allRead, { timeoutMs: 3_000, message: 'notified reads missed entries' });

      await admin.config('SET', 'notify-keyspace-events', '');
      const writing = write(50);
      await waitFor(() => src.readMode === 'batch', { timeoutMs: 5_000, message: 'never fell back to batch' });
      await writing;
      await write(10);
      await waitFor(allRead, { timeoutMs: 5_000, message: 'entries lost or repeated across the switch to batch' });

      await admin.config('SET', 'notify-keyspace-events', 'Kt');
      const again = write(50);
      await waitFor(() => src.readMode === 'notify', { timeoutMs: 5_000, message: 'never went back to notify' });
      await again;
      await write(10);
      await waitFor(allRead, { timeoutMs: 5_000, message: 'entries lost or repeated across the switch to notify' });
      expect(modes).toEqual(['notify', 'batch', 'notify']);
    } finally {
      await admin.config('SET', 'notify-keyspace-events', 'Kt');
      await src.close();
    }
  });

  // Each watched key holds two channels: its keyspace channel and its live channel.
  it('follows the watched set with its channels', async () => {
    const { src } = source('notify-channels');
    const admin = redis.client();
    try {
      await waitFor(() => src.readMode === 'notify', { timeoutMs: 5_000, message: 'never chose notify mode' });
      const keys = Array.from({ length: 1_200 }, (_, i) => `nc-${i}`);
      for (const k of keys) src.watch(k, '0-0');
      const numpat = async (): Promise<number> => Number(/pubsub_channels:(\d+)/.exec(String(await admin.info('stats')))?.[1]);
      await waitFor(async () => (await numpat()) === 2 * 1_200, { timeoutMs: 5_000, message: 'channels never reached the watched set' });
      for (const k of keys.slice(0, 1_000)) src.unwatch(k);
      await waitFor(async () => (await numpat()) === 2 * 200, { timeoutMs: 5_000, message: 'channels did not follow unwatch' });
    } finally {
      await src.close();
    }
  });
});
