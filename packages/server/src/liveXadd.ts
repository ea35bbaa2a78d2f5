import { createHash } from 'node:crypto';
import { LIVE_PUBLISH_LUA, livePublishArgs } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import { isNoScript } from './idempotentXadd.js';

/*
 * A plain publish: the XADD and, in the same script, the entry on the stream's live channel with
 * the id before it (LIVE_PUBLISH_LUA), so relays deliver it without reading the stream; a
 * relay that misses the message reads the entry from the stream as before.
 * KEYS: stream.  ARGV: MAXLEN (approximate), entry data (JSON text), live channel ('' for
 * none), PUBLISH or SPUBLISH.  Reply: the entry's id.
 */
export const LIVE_XADD_SCRIPT = `${LIVE_PUBLISH_LUA}
local prev = live_prev(KEYS[1])
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'data', ARGV[2])
live_publish(ARGV[3], ARGV[4], prev, id, ARGV[2])
return id
`;

export const LIVE_XADD_SHA = createHash('sha1').update(LIVE_XADD_SCRIPT).digest('hex');

export type LiveXaddRequest = { readonly stream: string; readonly maxLen: number; readonly data: string };

/** The script's KEYS count and arguments, in EVAL/EVALSHA order after the script, for a write through `redis`. */
export function liveXaddArgs(redis: RedisClient, request: LiveXaddRequest): [1, string, number, string, string, string] {
  return [1, request.stream, request.maxLen, request.data, ...livePublishArgs(redis, request.stream)];
}

/** Runs the script by its digest, and as text when the server does not know it. Rejects as ioredis does. */
export async function liveXadd(redis: RedisClient, request: LiveXaddRequest): Promise<unknown> {
  const args = liveXaddArgs(redis, request);
  try {
    return await redis.evalsha(LIVE_XADD_SHA, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return redis.eval(LIVE_XADD_SCRIPT, ...args);
  }
}
