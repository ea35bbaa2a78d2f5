import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import type { StreamEntry } from '../core/StreamSource.js';
import { DATA_NOT_UTF8 } from './parseReplies.js';
import { RedisStreamSource } from './RedisStreamSource.js';
import { testSourceOptions } from './testing/testSourceOptions.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const invalid = Buffer.concat([Buffer.from('{"s":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);

describe('RedisStreamSource and a data value that is not UTF-8', () => {
  it('marks it malformed in live reads and in catch-up pages, and leaves its neighbours alone', async () => {
    const got: StreamEntry[] = [];
    const src = new RedisStreamSource(
      testSourceOptions(redis.url, 'utf8-test', {
        listener: { entries: (_, entries) => got.push(...entries), failed: () => undefined, reset: () => undefined },
      }),
    );
    const r = redis.client();
    try {
      src.watch('utf8', '0-0');
      await waitFor(() => src.healthy, { timeoutMs: 5_000, message: 'source never became healthy' });
      const before = String(await r.xadd('utf8', '*', 'data', '{"s":"é"}'));
      const bad = String(await r.xadd('utf8', '*', 'data', invalid));
      const after = String(await r.xadd('utf8', '*', 'data', '{"s":"ü"}'));
      await waitFor(() => got.length === 3, { timeoutMs: 5_000, message: 'live reads never got the three entries' });
      expect(got.map((e) => [e.id, e.malformed])).toEqual([
        [before, undefined],
        [bad, DATA_NOT_UTF8],
        [after, undefined],
      ]);
      expect(got[0]?.fields).toEqual(['data', '{"s":"é"}']);
      const page = await src.range('utf8', '0-0', 10);
      expect(page.ok && page.value.entries.map((e) => [e.id, e.malformed])).toEqual([
        [before, undefined],
        [bad, DATA_NOT_UTF8],
        [after, undefined],
      ]);
    } finally {
      await src.close();
    }
  });
});
