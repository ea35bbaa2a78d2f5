import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { isWrongType, redisFailure, sourceError, toError } from './redisFailure.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (thrown) {
    return toError(thrown);
  }
  throw new Error('the command did not fail');
}

describe('redisFailure', () => {
  it('takes the code from what the server replied, not from the wording', async () => {
    const r = redis.client();
    await r.set('failure-string', 'x');
    const wrongType = await rejection(r.xrange('failure-string', '-', '+'));
    expect(redisFailure(wrongType)).toEqual({ kind: 'reply', code: 'WRONGTYPE' });
    expect(isWrongType(wrongType)).toBe(true);
    expect(sourceError(wrongType)).toMatchObject({ code: 'source_wrong_type', retryable: false });
    const noScript = await rejection(r.evalsha('0000000000000000000000000000000000000000', 0));
    expect(redisFailure(noScript)).toEqual({ kind: 'reply', code: 'NOSCRIPT' });
    expect(sourceError(noScript)).toMatchObject({ code: 'source_unavailable', retryable: true });
  });

  it('calls an error that never reached the server a connection failure, whatever it says', async () => {
    const r = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
    const closed = await rejection(r.xrange('WRONGTYPE', '-', '+'));
    expect(redisFailure(closed)).toEqual({ kind: 'connection' });
    expect(redisFailure(new Error('WRONGTYPE looks like a code but is not a reply'))).toEqual({ kind: 'connection' });
    expect(sourceError(closed)).toMatchObject({ code: 'source_unavailable', retryable: true });
    r.disconnect();
  });
});
