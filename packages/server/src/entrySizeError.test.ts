import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ENTRY_DATA_BYTES, defineStream } from '@streamgate/protocol';
import { startRedis } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { createPublisher } from './createPublisher.js';
import { entrySizeError } from './entrySizeError.js';

const blobs = defineStream<string>('blobs');

/** A JSON string payload whose encoded `data` text (quotes included) is exactly `bytes` long in UTF-8, of `unit`s. */
function payloadOf(bytes: number, unit: 'a' | 'é' = 'a'): string {
  const unitBytes = Buffer.byteLength(unit);
  const body = bytes - 2;
  if (body % unitBytes !== 0) throw new Error(`${bytes} bytes cannot be made of ${unit}`);
  return unit.repeat(body / unitBytes);
}

describe('entrySizeError', () => {
  it('counts UTF-8 bytes, not characters: at the limit passes, one byte over is refused naming both sizes', () => {
    expect(entrySizeError(JSON.stringify(payloadOf(MAX_ENTRY_DATA_BYTES)))).toBeNull();
    const twoByte = JSON.stringify(payloadOf(MAX_ENTRY_DATA_BYTES, 'é'));
    expect(Buffer.byteLength(twoByte)).toBe(MAX_ENTRY_DATA_BYTES);
    expect(entrySizeError(twoByte)).toBeNull();
    // Far fewer characters than the limit, but two bytes each: still over.
    const over = JSON.stringify(payloadOf(MAX_ENTRY_DATA_BYTES + 2, 'é'));
    expect(over.length).toBeLessThan(MAX_ENTRY_DATA_BYTES);
    expect(entrySizeError(over)).toEqual({
      code: 'payload_too_large',
      retryable: false,
      field: 'payload',
      bytes: MAX_ENTRY_DATA_BYTES + 2,
      limitBytes: MAX_ENTRY_DATA_BYTES,
      message: `payload: its JSON is ${MAX_ENTRY_DATA_BYTES + 2} bytes, over the ${MAX_ENTRY_DATA_BYTES}-byte limit on an entry's data (MAX_ENTRY_DATA_BYTES); nothing was written`,
    });
  });
});

describe('publish of an oversized payload (real redis-server)', () => {
  let server: RedisServer;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedis();
    redis = server.client();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses a 5 MiB payload with payload_too_large and writes nothing; a payload at the limit is written whole', async () => {
    const publisher = createPublisher({ redis });
    try {
      const huge = await publisher.publish(blobs.for('huge'), payloadOf(5 * 1024 * 1024));
      expect(huge.ok).toBe(false);
      if (huge.ok) return;
      expect(huge.error).toMatchObject({
        code: 'payload_too_large',
        retryable: false,
        bytes: 5 * 1024 * 1024,
        limitBytes: MAX_ENTRY_DATA_BYTES,
      });
      expect(huge.error.message).toContain(`${MAX_ENTRY_DATA_BYTES}-byte limit`);
      expect(await redis.exists('blobs:huge')).toBe(0);

      const atLimit = payloadOf(MAX_ENTRY_DATA_BYTES);
      const fits = await publisher.publish(blobs.for('fits'), atLimit);
      expect(fits.ok).toBe(true);
      const stored = await redis.xrange('blobs:fits', '-', '+');
      expect(stored[0]?.[1]).toEqual(['data', JSON.stringify(atLimit)]);
    } finally {
      await publisher.close();
    }
  });
});
